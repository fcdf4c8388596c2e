"""The convolutions and sliding windows of npgrad.nn.functional against torch.

Values, nodes, saved attributes and gradients of a few calls of each function come
from op_specs (``CONV``); here: combinations of stride, padding, dilation and groups,
unbatched inputs, dtypes, the fold/unfold round trip, torch's errors, and gradcheck /
gradgradcheck in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, graph_desc, run_both, to_np

# torch (and npgrad) note once per process that an even kernel under
# padding='same' pads a copy of the input.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths:UserWarning")

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.uniform(-1.0, 1.0, shape)


# (function, input shape, weight shape, bias, keyword arguments)
COMBINATIONS = [
    (
        "conv2d",
        (2, 4, 7, 6),
        (6, 2, 3, 2),
        True,
        {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2},
    ),
    ("conv2d", (1, 3, 6, 6), (3, 1, 3, 3), False, {"padding": "same", "dilation": 2, "groups": 3}),
    ("conv2d", (2, 2, 5, 5), (4, 2, 1, 1), True, {"stride": 3}),
    ("conv2d", (1, 2, 5, 5), (3, 2, 5, 5), True, {"padding": "valid"}),
    ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), True, {"padding": 1}),
    ("conv1d", (2, 4, 9), (4, 2, 3), True, {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}),
    ("conv1d", (1, 2, 6), (2, 2, 3), False, {"padding": "same"}),
    # an even kernel: the input padded by one more zero after it (ConstantPadNdBackward0)
    ("conv2d", (1, 2, 5, 6), (3, 2, 2, 3), True, {"padding": "same"}),
    ("conv1d", (2, 2, 7), (2, 1, 2), True, {"padding": "same", "dilation": 3, "groups": 2}),
    (
        "conv_transpose2d",
        (1, 4, 3, 4),
        (4, 3, 3, 2),
        True,
        {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2)},
    ),
    (
        "conv_transpose2d",
        (2, 4, 3, 3),
        (4, 1, 2, 3),
        False,
        {"groups": 2, "dilation": (2, 1), "stride": 2, "output_padding": 1},
    ),
    ("conv_transpose1d", (2, 2, 4), (2, 3, 3), True, {"stride": 2, "padding": 1, "output_padding": 1, "dilation": 2}),
]


@pytest.mark.parametrize(
    "name,xs,ws,has_bias,kwargs", COMBINATIONS, ids=[f"{c[0]}-{i}" for i, c in enumerate(COMBINATIONS)]
)
def test_values_and_gradients_match_torch(name, xs, ws, has_bias, kwargs):
    arrays = [_arr(*xs), _arr(*ws), _arr(ws[1] * kwargs.get("groups", 1) if "transpose" in name else ws[0])]

    def run(lib):
        x, w, b = (from_np(lib, a.astype(np.float32), True) for a in arrays)
        out = getattr(lib.nn.functional, name)(x, w, b if has_bias else None, **kwargs)
        (out * from_np(lib, np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(np.float32))).sum().backward()
        grads = [t.grad for t in (x, w, b)] if has_bias else [x.grad, w.grad]
        return out, grads, out.grad_fn.name()

    (out, grads, node), (want, want_grads, want_node) = run_both(run)
    assert node == want_node
    np.testing.assert_allclose(to_np(out), to_np(want), rtol=1e-5, atol=1e-5)
    for g, e in zip(grads, want_grads):
        np.testing.assert_allclose(to_np(g), to_np(e), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: lib.nn.functional.conv1d(x, lib.ones(3, 2, 2, dtype=x.dtype), stride=2),
        lambda lib, x: lib.nn.functional.conv2d(x.unsqueeze(0), lib.ones(1, 1, 2, 2, dtype=x.dtype), padding=1),
        lambda lib, x: lib.nn.functional.conv2d(x.unsqueeze(0), lib.ones(1, 1, 2, 2, dtype=x.dtype), padding="same"),
        lambda lib, x: lib.nn.functional.conv_transpose1d(x, lib.ones(2, 3, 2, dtype=x.dtype) / 3),
        lambda lib, x: lib.nn.functional.conv_transpose2d(
            x.unsqueeze(0), lib.ones(1, 2, 1, 2, dtype=x.dtype), stride=(1, 2)
        ),
    ],
    ids=["conv1d", "conv2d", "conv2d_same_even", "conv_transpose1d", "conv_transpose2d"],
)
def test_unbatched_input_records_torchs_graph(call):
    data = _arr(2, 4)

    def run(lib):
        x = from_np(lib, data, True)
        out = call(lib, x)
        out.sum().backward()
        return out, x.grad, graph_desc(out.grad_fn)

    (out, grad, desc), (want, want_grad, want_desc) = run_both(run)
    assert desc == want_desc
    assert_same_result(out, want)
    assert_same_result(grad, want_grad)


def test_top_level_functions_are_the_functional_ones(ng):
    x = ng.ones(1, 1, 3, 3)
    w = ng.ones(1, 1, 2, 2)
    assert to_np(ng.conv2d(x, w)).tolist() == [[[[4.0, 4.0], [4.0, 4.0]]]]
    assert to_np(ng.conv_transpose1d(ng.ones(1, 1, 3), ng.ones(1, 2, 2))).tolist() == [[[1.0, 2.0, 2.0, 1.0]] * 2]
    assert to_np(ng.conv_transpose2d(x, w)).shape == (1, 1, 4, 4)
    assert to_np(ng.conv1d(ng.ones(1, 1, 3), ng.ones(1, 1, 2))).tolist() == [[[2.0, 2.0]]]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64"])
def test_dtypes(dtype):
    x, w, b = _arr(1, 2, 4, 4) * 4, _arr(3, 2, 2, 2) * 4, _arr(3) * 4

    def run(lib):
        dt = getattr(lib, dtype)
        t = [from_np(lib, a).to(dt) for a in (x, w, b)]
        return lib.nn.functional.conv2d(*t, padding=1), lib.nn.functional.conv_transpose2d(
            t[0], t[1].transpose(0, 1), t[2]
        )

    got, want = run_both(run)
    for g, e in zip(got, want):
        assert str(g.dtype) == str(e.dtype).replace("torch", "npgrad") or str(g.dtype) == str(e.dtype)
        np.testing.assert_allclose(to_np(g).astype(np.float64), to_np(e).astype(np.float64), rtol=2e-3, atol=2e-2)


def test_fold_of_unfold_multiplies_by_the_window_count(ng):
    x = from_np(ng, _arr(2, 3, 5, 6))
    args = {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (1, 2)}
    blocks = ng.nn.functional.unfold(x, **args)
    back = ng.nn.functional.fold(blocks, (5, 6), **args)
    counts = ng.nn.functional.fold(ng.nn.functional.unfold(ng.ones_like(x), **args), (5, 6), **args)
    np.testing.assert_allclose(to_np(back), to_np(x) * to_np(counts), rtol=1e-12)
    assert to_np(counts).min() >= 1


def test_unfold_and_fold_values_match_torch():
    data = _arr(2, 2, 5, 4)

    def run(lib):
        x = from_np(lib, data.astype(np.float32))
        blocks = lib.nn.functional.unfold(x, (3, 2), padding=(1, 0), stride=2)
        return blocks, lib.nn.functional.fold(blocks, (5, 4), (3, 2), padding=(1, 0), stride=2)

    (blocks, back), (want_blocks, want_back) = run_both(run)
    assert_same_result(blocks, want_blocks)
    assert_same_result(back, want_back)


X = (1, 2, 5, 5)
W = (4, 2, 3, 3)


def _zeros(lib, *shape):
    return lib.zeros(*shape)


ERRORS = {
    "input_rank": lambda lib: lib.nn.functional.conv2d(_zeros(lib, 5, 5), _zeros(lib, *W)),
    "input_rank_conv1d": lambda lib: lib.nn.functional.conv1d(_zeros(lib, *X), _zeros(lib, 4, 2, 3)),
    "input_rank_transposed": lambda lib: lib.nn.functional.conv_transpose2d(_zeros(lib, 5, 5), _zeros(lib, 2, 4, 3, 3)),
    "weight_rank": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, 4, 2)),
    "stride_length": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), stride=(1, 1, 1)),
    "channels": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, 4, 3, 3, 3)),
    "groups_divide_weight": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, 3, 1, 3, 3), groups=2),
    "groups_at_least": lambda lib: lib.nn.functional.conv_transpose2d(
        _zeros(lib, *X), _zeros(lib, 2, 3, 3, 3), groups=3
    ),
    "groups_positive": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), groups=0),
    "kernel_too_large": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, 4, 2, 6, 6)),
    "stride_positive": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), stride=0),
    "padding_negative": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), padding=-1),
    "dilation_positive": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), dilation=0),
    "same_strided": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), padding="same", stride=2),
    "bad_padding_string": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), padding="full"),
    "bias_size": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), _zeros(lib, 3)),
    "dtype": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X).double(), _zeros(lib, *W)),
    "bias_dtype": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X), _zeros(lib, *W), _zeros(lib, 4).double()),
    "bool": lambda lib: lib.nn.functional.conv2d(_zeros(lib, *X).bool(), _zeros(lib, *W).bool()),
    "transposed_channels": lambda lib: lib.nn.functional.conv_transpose2d(_zeros(lib, *X), _zeros(lib, *W)),
    "transposed_output_padding": lambda lib: lib.nn.functional.conv_transpose2d(
        _zeros(lib, *X), _zeros(lib, 2, 4, 3, 3), output_padding=1
    ),
    "transposed_output_too_small": lambda lib: lib.nn.functional.conv_transpose2d(
        _zeros(lib, *X), _zeros(lib, 2, 4, 3, 3), padding=5
    ),
    "transposed_padding_string": lambda lib: lib.nn.functional.conv_transpose2d(
        _zeros(lib, *X), _zeros(lib, 2, 4, 3, 3), padding="same"
    ),
    "convolution_rank": lambda lib: lib.convolution(
        _zeros(lib, 2, 5, 5), _zeros(lib, *W), None, [1], [0], [1], False, [0], 1
    ),
    "unfold_rank": lambda lib: lib.nn.functional.unfold(_zeros(lib, 1, 1, 2, 5, 5), 2),
    "unfold_no_blocks": lambda lib: lib.nn.functional.unfold(_zeros(lib, *X), 6),
    "unfold_kernel_positive": lambda lib: lib.nn.functional.unfold(_zeros(lib, *X), 0),
    "unfold_kernel_pair": lambda lib: lib.nn.functional.unfold(_zeros(lib, *X), (2, 2, 2)),
    "fold_blocks": lambda lib: lib.nn.functional.fold(_zeros(lib, 1, 8, 15), (5, 5), 2),
    "fold_divisible": lambda lib: lib.nn.functional.fold(_zeros(lib, 1, 7, 16), (5, 5), 2),
    "fold_rank": lambda lib: lib.nn.functional.fold(_zeros(lib, 7), (5, 5), 2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


def test_tensors_stay_usable_after_an_error(ng):
    x = ng.ones(1, 2, 5, 5, requires_grad=True)
    w = ng.ones(4, 2, 3, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        ng.nn.functional.conv2d(x, w, stride=0)
    ng.nn.functional.conv2d(x, w).sum().backward()
    assert to_np(w.grad).tolist() == np.full((4, 2, 3, 3), 9.0).tolist()


GRADCHECKS = [
    ("conv2d", (1, 2, 5, 4), (2, 1, 3, 2), {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "groups": 2}),
    ("conv1d", (2, 2, 5), (3, 2, 2), {"padding": 1, "stride": 2}),
    ("conv_transpose2d", (1, 2, 3, 2), (2, 2, 2, 3), {"stride": 2, "output_padding": (1, 0), "padding": (0, 1)}),
    ("conv_transpose1d", (1, 4, 3), (4, 1, 3), {"groups": 2, "dilation": 2, "stride": 2, "output_padding": 1}),
]


@pytest.mark.parametrize("name,xs,ws,kwargs", GRADCHECKS, ids=[g[0] for g in GRADCHECKS])
def test_gradcheck_and_gradgradcheck(ng, name, xs, ws, kwargs):
    out_channels = ws[1] * kwargs.get("groups", 1) if "transpose" in name else ws[0]
    x, w, b = (from_np(ng, _arr(*s), True) for s in (xs, ws, (out_channels,)))
    fn = getattr(ng.nn.functional, name)

    def f(x, w, b):
        return fn(x, w, b, **kwargs)

    assert ng.autograd.gradcheck(f, (x, w, b))
    assert ng.autograd.gradgradcheck(f, (x, w, b))


def test_fold_and_unfold_gradcheck(ng):
    x = from_np(ng, _arr(1, 2, 4, 3), True)
    cols = from_np(ng, _arr(1, 8, 6), True)
    F = ng.nn.functional
    assert ng.autograd.gradgradcheck(lambda t: F.unfold(t, 2, padding=1, stride=(2, 1)).square(), (x,))
    assert ng.autograd.gradgradcheck(lambda t: F.fold(t, (3, 4), 2).square(), (cols,))
