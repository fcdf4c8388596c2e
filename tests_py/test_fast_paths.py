"""The shapes at the edges of npgrad's fast paths, against torch.

Elementwise ops with one value per row (``x op r`` for ``r`` of shape ``(..., 1)``,
either side, into a new tensor and in place, of at least 16 and fewer than 16 elements
per row, with a bool result); layer_norm rows that are not a multiple of the row sums'
eight lanes; attention rows whose keys are all masked, in the forward and the backward;
attention below and above the size where its loops for small inputs give way to batched
matmuls, with every kind of mask, grouped heads and strided inputs, and a mask that
would grow the scores; (log_)softmax over each dim of tensors with few lanes (taken
lane by lane) and many, with a plain and an expanded gradient, and of empty tensors; a
strided, dilated, grouped convolution's gradients from the direct loops of small
convolutions and from the im2col and col2im loops, with and without ``create_graph``,
every kind of convolution at both sizes, and float32 convolutions through the GEMM
passes of stride 1, at the edges of what they take.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, assert_same_result, from_np, run_both, to_np

RNG = np.random.default_rng(0)


def _arr(*shape: int, dtype: str = "float32") -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 16, 37])
def test_row_broadcast_ops(dtype: str, n: int) -> None:
    x, r = _arr(4, 5, n, dtype=dtype), _arr(4, 5, 1, dtype=dtype)

    def fn(lib):
        a, b = from_np(lib, x), from_np(lib, r)
        return (a - b, b / a, a * b, lib.maximum(b, a), a.clone().sub_(b), a.clone().mul_(b), a > b, b >= a)

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        assert_same_result(g, e)


@pytest.mark.parametrize("n", [5, 8, 37])
def test_layer_norm_row_lengths(n: int) -> None:
    x, w, b, g = _arr(6, n, dtype="float64"), _arr(n, dtype="float64"), _arr(n, dtype="float64"), _arr(6, n)

    def fn(lib):
        xs, ws, bs = (from_np(lib, a, requires_grad=True) for a in (x, w, b))
        out = lib.nn.functional.layer_norm(xs, (n,), ws, bs)
        out.backward(from_np(lib, g.astype("float64")))
        return out, xs.grad, ws.grad, bs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-10, atol=1e-12)


def test_attention_fully_masked_rows() -> None:
    q, k, v = _arr(1, 2, 4, 8, dtype="float64"), _arr(1, 2, 5, 8, dtype="float64"), _arr(1, 2, 5, 8, dtype="float64")
    mask = RNG.standard_normal((4, 5)) > 0
    mask[2] = False  # query 2 sees no key

    def fn(lib):
        qs, ks, vs = (from_np(lib, a, requires_grad=True) for a in (q, k, v))
        additive = from_np(lib, np.where(mask, 0.0, -np.inf))
        out = lib.nn.functional.scaled_dot_product_attention(qs, ks, vs, attn_mask=additive)
        out.sum().backward()
        return out, qs.grad, ks.grad, vs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-10, atol=1e-12)
    assert np.all(to_np(got[0])[:, :, 2] == 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(3, 5, 4), (9, 10, 8), (2, 70)])
def test_softmax_lanes(shape: tuple[int, ...], log: bool, dtype: str) -> None:
    x = _arr(*shape, dtype=dtype) * 3
    x.flat[1] = -np.inf
    g = _arr(*shape, dtype=dtype)

    def fn(lib):
        results = []
        for dim in range(-len(shape), len(shape)):
            for grad in (g, None):
                xs = from_np(lib, x, requires_grad=True)
                out = lib.log_softmax(xs, dim) if log else lib.softmax(xs, dim)
                if grad is None:
                    out.sum().backward()  # an expanded gradient
                else:
                    out.backward(from_np(lib, grad))
                results += [out, xs.grad]
        return results

    got, expected = run_both(fn)
    tol = {"rtol": 1e-12, "atol": 1e-14} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-6}
    for a, e in zip(got, expected):
        assert_close(a, e, **tol)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("n", [64, 65, 79, 1000])
def test_softmax_float32_rows_with_every_kind_of_value(n: int, log: bool) -> None:
    """Long contiguous float32 rows take one fused pass of a vector exp where the CPU
    has AVX-512: each tail length, values far enough apart that exps underflow into
    subnormals and to zero, and rows with -inf, +inf, nan, all -inf."""
    x = _arr(9, n) * 40
    x[1, ::3] = -np.inf
    x[2, 5] = np.inf
    x[3, 7] = np.nan
    x[4] = -np.inf
    x[5] = np.linspace(-110, 0, n)  # exp(x - max) down to 0 through the subnormals
    g = _arr(9, n)

    def fn(lib):
        xs = from_np(lib, x, requires_grad=True)
        out = lib.log_softmax(xs, 1) if log else lib.softmax(xs, 1)
        out.backward(from_np(lib, g))
        return out, xs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-5, atol=1e-6)


def test_attention_float32_rows_past_the_small_loops() -> None:
    """Attention's row softmax and its backward's probabilities from the logsumexp, on
    float32 rows of 80 keys (the vector exp's fused pass), one query seeing no key."""
    q, k, v = _arr(2, 2, 8, 16), _arr(2, 2, 80, 16), _arr(2, 2, 80, 16)
    mask = np.zeros((8, 80), dtype="float32")
    mask[3] = -np.inf
    mask[5, ::2] = -np.inf
    grad = _arr(2, 2, 8, 16)

    def fn(lib):
        qs, ks, vs = (from_np(lib, a, requires_grad=True) for a in (q, k, v))
        out = lib.nn.functional.scaled_dot_product_attention(qs, ks, vs, attn_mask=from_np(lib, mask))
        out.backward(from_np(lib, grad))
        return out, qs.grad, ks.grad, vs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-4, atol=1e-5)


# (batch, query heads, key heads, queries, keys, features): the first three take
# the loops for small inputs (at most 8192 multiply-adds), the last two the matmuls.
_ATTENTION_SIZES = [
    (1, 2, 2, 3, 5, 4),
    (2, 4, 2, 4, 3, 2),
    (1, 2, 1, 16, 16, 8),
    (1, 4, 2, 16, 16, 16),
    (2, 2, 2, 9, 33, 8),
]
# attn_mask: its shape relative to (batch, query heads, queries, keys), or a bool
# mask; with is_causal, none (torch takes one or the other).
_ATTENTION_MASKS = [
    (None, False),
    (None, True),
    ("2d", False),
    ("heads_broadcast", False),
    ("full", False),
    ("bool", False),
]


def _attention_mask(kind: str | None, b: int, h: int, lq: int, lk: int) -> np.ndarray | None:
    if kind is None:
        return None
    if kind == "2d":
        return _arr(lq, lk, dtype="float64")
    if kind == "heads_broadcast":
        return _arr(1, h, 1, lk, dtype="float64")
    if kind == "full":
        return _arr(b, h, lq, lk, dtype="float64")
    keep = RNG.standard_normal((b, 1, lq, lk)) > -0.5
    keep[..., 0] = True  # every query sees a key
    return keep


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("mask_kind", "is_causal"), _ATTENTION_MASKS)
@pytest.mark.parametrize("sizes", _ATTENTION_SIZES)
def test_attention_small_and_large(sizes: tuple[int, ...], mask_kind: str | None, is_causal: bool, dtype: str) -> None:
    b, hq, hk, lq, lk, e = sizes
    # key and value are made (batch, keys, heads, features) and transposed: strided inputs.
    q = _arr(b, hq, lq, e, dtype=dtype)
    k, v = _arr(b, lk, hk, e, dtype=dtype), _arr(b, lk, hk, e, dtype=dtype)
    mask = _attention_mask(mask_kind, b, hq, lq, lk)
    g = _arr(b, hq, lq, e, dtype=dtype)

    def fn(lib):
        qs, ks, vs = (from_np(lib, a, requires_grad=True) for a in (q, k, v))
        m = None if mask is None else from_np(lib, mask if mask.dtype == bool else mask.astype(dtype))
        out = lib.nn.functional.scaled_dot_product_attention(
            qs, ks.transpose(1, 2), vs.transpose(1, 2), attn_mask=m, is_causal=is_causal, scale=0.6, enable_gqa=hq != hk
        )
        out.backward(from_np(lib, g))
        return out, qs.grad, ks.grad, vs.grad

    got, expected = run_both(fn)
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == "float64" else {"rtol": 2e-5, "atol": 2e-5}
    for a, x in zip(got, expected):
        assert_close(a, x, **tol)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("batch", [3, 12])  # direct loops (up to 8192 multiply-adds), im2col
def test_conv_grads_through_the_window_loops(create_graph: bool, batch: int) -> None:
    x, w = _arr(batch, 4, 9, 7, dtype="float64"), _arr(6, 2, 3, 2, dtype="float64")
    g = _arr(batch, 6, 5, 5, dtype="float64")

    def fn(lib):
        xs, ws = from_np(lib, x, requires_grad=True), from_np(lib, w, requires_grad=True)
        out = lib.nn.functional.conv2d(xs, ws, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
        return lib.autograd.grad(out, (xs, ws), from_np(lib, g), create_graph=create_graph)

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-10, atol=1e-12)


# (name, call, input shape, weight shape): each at a small batch (the direct loops)
# and a large one (im2col and BLAS).
_CONVS = [
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2), (3, 11), (4, 3, 3)),
    ("conv2d_groups", lambda F, x, w, b: F.conv2d(x, w, b, padding="same", groups=2), (4, 6, 5), (6, 2, 3, 3)),
    (
        "conv_transpose2d",
        lambda F, x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2),
        (4, 3, 4),
        (4, 3, 3, 3),
    ),
    (
        "conv_transpose1d",
        lambda F, x, w, b: F.conv_transpose1d(x, w, b, stride=3, output_padding=2, dilation=2),
        (2, 5),
        (2, 3, 2),
    ),
]


@pytest.mark.parametrize("batch", [1, 200])
@pytest.mark.parametrize(("name", "call", "x_shape", "w_shape"), _CONVS, ids=[c[0] for c in _CONVS])
def test_convolutions_small_and_large(name: str, call, x_shape, w_shape, batch: int) -> None:
    x, w = _arr(batch, *x_shape, dtype="float64"), _arr(*w_shape, dtype="float64")
    out_channels = (
        w_shape[1] * (2 if name == "conv_transpose2d" else 1) if name.startswith("conv_transpose") else w_shape[0]
    )
    b = _arr(out_channels, dtype="float64")

    def fn(lib):
        xs, ws, bs = (from_np(lib, a, requires_grad=True) for a in (x, w, b))
        out = call(lib.nn.functional, xs, ws, bs)
        (out * out).sum().backward()
        return out, xs.grad, ws.grad, bs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-10, atol=1e-10)


# float32 convolutions of stride 1 large enough for the GEMM passes (the forward over
# padded rows read in place, the weight's gradient from packed transposed columns, the
# input's gradient as the flipped convolution), at the edges of what they take: no
# padding and the most they take (dilation * (kernel - 1)), rows of windows not a
# multiple of 16, groups, 1-d, a transposed convolution with output_padding (more
# windows than the padded input has), and the neighbours they leave to im2col (stride
# 2, padding past the kernel).
_GEMM_CONVS = [
    ("same_3x3", lambda F, x, w, b: F.conv2d(x, w, b, padding=1), (8, 13, 11), (16, 8, 3, 3)),
    ("valid_5x3", lambda F, x, w, b: F.conv2d(x, w, b), (6, 17, 19), (10, 6, 5, 3)),
    (
        "dilated_max_pad",
        lambda F, x, w, b: F.conv2d(x, w, b, padding=(4, 2), dilation=(2, 1)),
        (5, 12, 9),
        (7, 5, 3, 3),
    ),
    ("groups", lambda F, x, w, b: F.conv2d(x, w, b, padding=(0, 1), groups=3), (9, 10, 10), (12, 3, 3, 3)),
    ("pointwise", lambda F, x, w, b: F.conv2d(x, w, b), (16, 9, 9), (20, 16, 1, 1)),
    ("conv1d", lambda F, x, w, b: F.conv1d(x, w, b, padding=2, dilation=2), (6, 70), (9, 6, 3)),
    (
        "transposed",
        lambda F, x, w, b: F.conv_transpose2d(x, w, b, padding=1, dilation=2, output_padding=1),
        (8, 9, 10),
        (8, 6, 3, 3),
    ),
    ("stride_2", lambda F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (8, 13, 11), (16, 8, 3, 3)),
    ("padding_past_kernel", lambda F, x, w, b: F.conv2d(x, w, b, padding=3), (8, 13, 11), (16, 8, 3, 3)),
]


@pytest.mark.parametrize(("name", "call", "x_shape", "w_shape"), _GEMM_CONVS, ids=[c[0] for c in _GEMM_CONVS])
def test_float32_convolutions_of_model_size(name: str, call, x_shape, w_shape) -> None:
    x, w = _arr(3, *x_shape), _arr(*w_shape)
    out_channels = w_shape[1] if name == "transposed" else w_shape[0]
    b = _arr(out_channels)

    def fn(lib):
        xs, ws, bs = (from_np(lib, a, requires_grad=True) for a in (x, w, b))
        out = call(lib.nn.functional, xs, ws, bs)
        g = from_np(lib, np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
        out.backward(g)
        return out, xs.grad, ws.grad, bs.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("name", "call", "x_shape", "w_shape"), _GEMM_CONVS, ids=[c[0] for c in _GEMM_CONVS])
def test_float32_convolutions_of_model_size_match_float64(ng, name: str, call, x_shape, w_shape) -> None:
    # The same program in float32 (the GEMM passes) and float64 (im2col and BLAS),
    # without torch: this one also runs under the sanitizers.
    x, w = _arr(3, *x_shape), _arr(*w_shape)
    b = _arr(w_shape[1] if name == "transposed" else w_shape[0])
    results = []
    for dtype in (ng.float32, ng.float64):
        xs, ws, bs = (ng.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w, b))
        out = call(ng.nn.functional, xs, ws, bs)
        out.backward(ng.linspace(-1, 1, out.numel(), dtype=dtype).reshape(out.shape))
        results.append([t.detach().double() for t in (out, xs.grad, ws.grad, bs.grad)])
    for got, want in zip(*results):
        assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_float32_convolution_of_model_size_with_infinities_and_nan() -> None:
    # Only the real windows may see them: the positions the forward computes past
    # each row of windows (and drops) read the next row's values.
    x, w = _arr(2, 4, 10, 10), _arr(8, 4, 3, 3)
    x[0, 1, 3, 9] = np.inf
    x[1, 2, 0, 0] = -np.inf
    x[1, 3, 9, 4] = np.nan

    def fn(lib):
        xs, ws = from_np(lib, x, requires_grad=True), from_np(lib, w, requires_grad=True)
        out = lib.nn.functional.conv2d(xs, ws, padding=1)
        out.backward(lib.ones_like(out))
        return out, xs.grad, ws.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_close(a, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("shape", "dim"), [((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((2, 0, 4), 0)])
def test_softmax_of_an_empty_tensor(shape: tuple[int, ...], dim: int) -> None:
    def fn(lib):
        x = lib.zeros(*shape, requires_grad=True)
        y, z = lib.softmax(x, dim), lib.log_softmax(x, dim)
        (y.sum() + z.sum()).backward()
        return y, z, x.grad

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert_same_result(a, e)


def test_attention_mask_that_would_grow_the_scores_is_refused() -> None:
    def fn(lib):
        q = lib.ones(1, 2, 3, 4)
        return lib.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=lib.zeros(2, 1, 2, 3, 3))

    assert_same_error(fn)
