"""npgrad.nn.functional's normalizations, embedding and cosine_similarity against torch.

Values, nodes, saved attributes and gradients (first and second order) come from the
op_specs rows (``NORMALIZATION``); here: dtypes, affine or not, the running statistics
of batch_norm and instance_norm over several steps and in evaluation, embedding's
padding_idx, max_norm and index dtypes, and torch's errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_same_error, from_np, run_both, to_np

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5))
W = RNG.standard_normal(4)
B = RNG.standard_normal(4)


def _t(lib, a, dtype="float64", requires_grad=False):
    return from_np(lib, a, False).to(getattr(lib, dtype)).requires_grad_(requires_grad)


def _close(got, want, dtype):
    np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-5 if dtype == "float32" else 1e-10, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm", "instance_norm"])
def test_values_and_dtype_with_and_without_affine(name, affine, dtype):
    def run(lib):
        F = lib.nn.functional
        x = _t(lib, X, dtype, requires_grad=True)
        w = _t(lib, W, dtype) if affine else None
        b = _t(lib, B, dtype) if affine else None
        if name == "layer_norm":
            out = F.layer_norm(
                x, (5,), w if w is None else _t(lib, X[0, 0], dtype), None if b is None else _t(lib, X[1, 1], dtype)
            )
        elif name == "group_norm":
            out = F.group_norm(x, 2, w, b, eps=1e-3)
        elif name == "batch_norm":
            out = F.batch_norm(x, None, None, w, b, training=True)
        else:
            out = F.instance_norm(x, weight=w, bias=b)
        out.backward(_t(lib, np.cos(X), dtype))
        return str(out.dtype), out.detach(), x.grad

    (gd, got, ggrad), (wd, want, wgrad) = run_both(run)
    assert gd == wd
    _close(got, want, dtype)
    _close(ggrad, wgrad, dtype)


@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_statistics_over_steps_then_eval(momentum):
    def run(lib):
        F = lib.nn.functional
        mean, var = lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64)
        versions = []
        for step in range(3):
            x = _t(lib, X * (step + 1) + step)
            F.batch_norm(x, mean, var, training=True, momentum=momentum)
            versions.append((mean._version, var._version))
        out = F.batch_norm(_t(lib, X), mean, var, _t(lib, W), _t(lib, B), training=False)
        return to_np(mean), to_np(var), versions, to_np(out)

    got, want = run_both(run)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10)


def test_batch_norm_eval_gradient_uses_running_statistics():
    def run(lib):
        x = _t(lib, X, requires_grad=True)
        w = _t(lib, W, requires_grad=True)
        out = lib.nn.functional.batch_norm(x, _t(lib, B), _t(lib, np.abs(W) + 0.5), w, None)
        saved_mean = out.grad_fn._saved_result1
        out.backward(_t(lib, np.sin(X)))
        return to_np(x.grad), to_np(w.grad), saved_mean.shape

    (gx, gw, gs), (wx, ww, ws) = run_both(run)
    np.testing.assert_allclose(gx, wx, rtol=1e-10)
    np.testing.assert_allclose(gw, ww, rtol=1e-10)
    assert tuple(gs) == tuple(ws) == (0,)


def test_instance_norm_updates_running_statistics_with_the_batch_average():
    def run(lib):
        mean, var = lib.zeros(4, dtype=lib.float64), lib.ones(4, dtype=lib.float64)
        lib.nn.functional.instance_norm(_t(lib, X), mean, var, momentum=0.2)
        return to_np(mean), to_np(var), mean._version > 0

    (gm, gv, gb), (wm, wv, wb) = run_both(run)
    np.testing.assert_allclose(gm, wm, rtol=1e-10)
    np.testing.assert_allclose(gv, wv, rtol=1e-10)
    assert gb and wb


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_rms_norm_default_eps_is_the_dtypes(dtype):
    def run(lib):
        x = _t(lib, X * 1e-4, dtype)
        out = lib.nn.functional.rms_norm(x, (4, 5))
        return str(out.dtype), to_np(out).astype(np.float64)

    (gd, got), (wd, want) = run_both(run)
    assert gd == wd
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == "float16" else 1e-5)


def test_embedding_scale_grad_by_freq_divides_by_each_index_count():
    weight = RNG.standard_normal((4, 2))

    def run(lib):
        w = _t(lib, weight, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([[1, 3, 1], [1, 0, 3]]), w, 0, scale_grad_by_freq=True)
        out.backward(_t(lib, np.arange(12.0).reshape(2, 3, 2)))
        return to_np(w.grad)

    got, want = run_both(run)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_padding_row_gets_no_gradient(index_dtype):
    weight = RNG.standard_normal((5, 3))

    def run(lib):
        w = _t(lib, weight, requires_grad=True)
        idx = lib.tensor([[1, 2], [4, 1]]).to(getattr(lib, index_dtype))
        out = lib.nn.functional.embedding(idx, w, padding_idx=1)
        out.backward(lib.ones_like(out))
        return to_np(out), to_np(w.grad)

    (go, gg), (wo, wg) = run_both(run)
    np.testing.assert_allclose(go, wo)
    np.testing.assert_allclose(gg, wg)
    assert not gg[1].any() and gg[4].all()


def test_embedding_max_norm_renormalizes_the_named_rows_in_place():
    weight = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])

    def run(lib):
        w = _t(lib, weight)
        before = w._version
        out = lib.nn.functional.embedding(lib.tensor([0, 1, 0]), w, max_norm=1.0)
        return to_np(out), to_np(w), w._version > before

    (go, gw, gv), (wo, ww, wv) = run_both(run)
    np.testing.assert_allclose(go, wo, rtol=1e-6)
    np.testing.assert_allclose(gw, ww, rtol=1e-6)
    assert gw[2, 0] == 6.0 and gv and wv


def test_cosine_similarity_broadcasts_and_clamps_small_norms():
    def run(lib):
        a = _t(lib, np.array([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]]), requires_grad=True)
        b = _t(lib, np.array([2.0, -1.0, 0.5]))
        out = lib.nn.functional.cosine_similarity(a, b)
        out.sum().backward()
        return to_np(out), to_np(a.grad)

    (go, gg), (wo, wg) = run_both(run)
    np.testing.assert_allclose(go, wo, rtol=1e-12)
    np.testing.assert_allclose(gg, wg, rtol=1e-12)


Q = RNG.standard_normal((2, 2, 3, 4))
K = RNG.standard_normal((2, 2, 5, 4))
V = RNG.standard_normal((2, 2, 5, 4))
MASKS = {
    "none": None,
    "bool": np.array([[True, False, True, True, False], [False, False, False, False, False], [True] * 5]),
    "float": RNG.standard_normal((2, 1, 3, 5)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("mask", sorted(MASKS))
def test_attention_masks_and_causal(mask, is_causal, dtype):
    """A bool mask hides the keys marked False (a query with none left gets zeros), a
    float mask adds to the scores; is_causal hides the keys after each query."""

    def run(lib):
        q, k, v = (_t(lib, a, dtype, requires_grad=True) for a in (Q, K, V))
        m = MASKS[mask]
        m = None if m is None else (lib.tensor(m) if m.dtype == bool else _t(lib, m, dtype))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, m, is_causal=is_causal)
        out.backward(_t(lib, np.cos(np.arange(out.numel())).reshape(out.shape), dtype))
        return str(out.dtype), out.grad_fn.name(), [to_np(t) for t in (out.detach(), q.grad, k.grad, v.grad)]

    (gd, gn, got), (wd, wn, want) = run_both(run)
    assert (gd, gn) == (wd, wn)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-5)


def test_attention_double_backward_raises_as_torch():
    """torch's flash backward has no derivative: a second order raises."""
    assert_same_error(_attention_gradgrad)


def _attention_gradgrad(lib):
    q = _t(lib, Q, requires_grad=True)
    out = lib.nn.functional.scaled_dot_product_attention(q, _t(lib, K), _t(lib, V))
    (g,) = lib.autograd.grad(out.sum(), q, create_graph=True)
    lib.autograd.grad(g.sum(), q)


def _x(lib, *shape):
    return lib.ones(*shape)


ERRORS = {
    "layer_norm_shape": lambda lib: lib.nn.functional.layer_norm(_x(lib, 2, 3), (4,)),
    "layer_norm_empty_shape": lambda lib: lib.nn.functional.layer_norm(_x(lib, 2, 3), ()),
    "layer_norm_weight": lambda lib: lib.nn.functional.layer_norm(_x(lib, 2, 3), (2, 3), _x(lib, 3)),
    "layer_norm_bias": lambda lib: lib.nn.functional.layer_norm(_x(lib, 2, 3), (3,), None, _x(lib, 2)),
    "layer_norm_integer": lambda lib: lib.nn.functional.layer_norm(_x(lib, 2, 3).long(), (3,)),
    "rms_norm_shape": lambda lib: lib.nn.functional.rms_norm(_x(lib, 2, 3), (2, 2)),
    "group_norm_groups": lambda lib: lib.nn.functional.group_norm(_x(lib, 2, 3, 4), 2),
    "group_norm_weight": lambda lib: lib.nn.functional.group_norm(_x(lib, 2, 4, 4), 2, _x(lib, 2)),
    "group_norm_1d": lambda lib: lib.nn.functional.group_norm(_x(lib, 3), 1),
    "group_norm_one_value": lambda lib: lib.nn.functional.group_norm(_x(lib, 1, 2), 2),
    "batch_norm_one_value": lambda lib: lib.nn.functional.batch_norm(_x(lib, 1, 3), None, None, training=True),
    "batch_norm_eval_without_stats": lambda lib: lib.nn.functional.batch_norm(_x(lib, 2, 3), None, None),
    "batch_norm_stats_size": lambda lib: lib.nn.functional.batch_norm(_x(lib, 2, 3), _x(lib, 2), _x(lib, 3)),
    "batch_norm_weight_size": lambda lib: lib.nn.functional.batch_norm(
        _x(lib, 2, 3), None, None, _x(lib, 2), training=True
    ),
    # torch checks the running statistics before the affine parameters.
    "batch_norm_stats_before_weight": lambda lib: lib.nn.functional.batch_norm(
        _x(lib, 2, 4), _x(lib, 3), _x(lib, 3), _x(lib, 3), _x(lib, 3), training=True
    ),
    "batch_norm_mean_size_before_missing_var": lambda lib: lib.nn.functional.batch_norm(
        _x(lib, 2, 4), _x(lib, 3), None
    ),
    "batch_norm_momentum_none": lambda lib: lib.nn.functional.batch_norm(
        _x(lib, 2, 3), _x(lib, 3), _x(lib, 3), training=True, momentum=None
    ),
    "instance_norm_one_spatial": lambda lib: lib.nn.functional.instance_norm(_x(lib, 2, 3, 1)),
    "embedding_out_of_range": lambda lib: lib.nn.functional.embedding(lib.tensor([4]), _x(lib, 4, 2)),
    "embedding_negative_index": lambda lib: lib.nn.functional.embedding(lib.tensor([-1]), _x(lib, 4, 2)),
    "embedding_float_indices": lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]), _x(lib, 4, 2)),
    "embedding_1d_weight": lambda lib: lib.nn.functional.embedding(lib.tensor([1]), _x(lib, 4)),
    "embedding_padding_idx": lambda lib: lib.nn.functional.embedding(lib.tensor([1]), _x(lib, 4, 2), padding_idx=4),
    "embedding_negative_padding_idx": lambda lib: lib.nn.functional.embedding(
        lib.tensor([1]), _x(lib, 4, 2), padding_idx=-5
    ),
    "attention_dtypes": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _x(lib, 1, 1, 2, 2), _x(lib, 1, 1, 2, 2).double(), _x(lib, 1, 1, 2, 2)
    ),
    "attention_mask_dtype": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        _x(lib, 1, 1, 2, 2), _x(lib, 1, 1, 2, 2), _x(lib, 1, 1, 2, 2), _x(lib, 2, 2).long()
    ),
    "cosine_similarity_shapes": lambda lib: lib.nn.functional.cosine_similarity(_x(lib, 2, 3), _x(lib, 2)),
    "cosine_similarity_x1_not_a_tensor": lambda lib: lib.nn.functional.cosine_similarity(1, _x(lib, 2)),
    "cosine_similarity_x2_none": lambda lib: lib.nn.functional.cosine_similarity(_x(lib, 2), None),
    "cosine_similarity_dim_float": lambda lib: lib.nn.functional.cosine_similarity(_x(lib, 2), _x(lib, 2), 0.5),
    "cosine_similarity_eps_str": lambda lib: lib.nn.functional.cosine_similarity(_x(lib, 2), _x(lib, 2), 0, "x"),
    "cosine_similarity_dim_out_of_range": lambda lib: lib.nn.functional.cosine_similarity(_x(lib, 2), _x(lib, 2), 3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])


def test_tensors_are_usable_after_an_error(ng):
    x = ng.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError):
        ng.nn.functional.layer_norm(x, (4,))
    out = ng.nn.functional.layer_norm(x * 2, (3,))
    out.sum().backward()
    assert x.grad.shape == (2, 3)


# torch's CPU norms take parameters of the input's dtype, or float32 ones with a
# float16/bfloat16 input: (input dtype, weight dtype, running statistics dtype).
_MIXED_DTYPES = [
    ("float64", None, "float32"),
    ("float64", "float32", None),
    ("float32", "float64", None),
    ("float32", None, "float64"),
    ("float64", "float64", "float32"),
]


@pytest.mark.parametrize(("x_dtype", "w_dtype", "stats_dtype"), _MIXED_DTYPES)
@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_parameter_dtypes_match_torch(
    x_dtype: str, w_dtype: str | None, stats_dtype: str | None, training: bool
) -> None:
    if stats_dtype is None and not training:
        pytest.skip("evaluation needs running statistics")

    def fn(lib):
        x = lib.ones(3, 2, dtype=getattr(lib, x_dtype))
        w = None if w_dtype is None else lib.ones(2, dtype=getattr(lib, w_dtype))
        stats = (
            (None, None)
            if stats_dtype is None
            else (lib.zeros(2, dtype=getattr(lib, stats_dtype)), lib.ones(2, dtype=getattr(lib, stats_dtype)))
        )
        return lib.nn.functional.batch_norm(x, *stats, weight=w, training=training)

    assert_same_error(fn)


@pytest.mark.parametrize("norm", ["layer_norm", "group_norm"])
@pytest.mark.parametrize(
    ("x_dtype", "w_dtype", "b_dtype"),
    [("float64", "float32", None), ("float32", "float64", None), ("float32", "float32", "float64")],
)
def test_layer_and_group_norm_parameter_dtypes_match_torch(
    norm: str, x_dtype: str, w_dtype: str, b_dtype: str | None
) -> None:
    def fn(lib):
        x = lib.ones(3, 2, dtype=getattr(lib, x_dtype))
        w = lib.ones(2, dtype=getattr(lib, w_dtype))
        b = None if b_dtype is None else lib.zeros(2, dtype=getattr(lib, b_dtype))
        if norm == "layer_norm":
            return lib.nn.functional.layer_norm(x, (2,), w, b)
        return lib.nn.functional.group_norm(x, 1, w, b)

    assert_same_error(fn)


def test_reduced_float_input_with_float32_parameters_is_allowed() -> None:
    def fn(lib):
        x = lib.ones(3, 2, dtype=lib.bfloat16)
        w = lib.ones(2)
        return (
            lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), weight=w),
            lib.nn.functional.layer_norm(x, (2,), w),
            lib.nn.functional.group_norm(x, 1, w),
        )

    got, expected = run_both(fn)
    for a, e in zip(got, expected):
        assert str(a.dtype) == str(e.dtype)
        np.testing.assert_allclose(to_np(a).astype("float64"), to_np(e).astype("float64"))


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_updates_running_statistics_in_place_as_torch(layout, dtype):
    """The running statistics are written in place (the same tensors, their version
    unchanged, as torch's kernel), contiguous ones directly, strided views through a
    copy."""
    x = RNG.standard_normal((5, 3, 2)).astype(dtype)

    def run(lib):
        if layout == "strided":
            store = from_np(lib, np.stack([np.arange(6.0), np.ones(6)]).astype(dtype))
            mean, var = store[0, ::2], store[1, ::2]
        else:
            mean, var = from_np(lib, np.arange(3.0).astype(dtype)), from_np(lib, np.ones(3, dtype))
        versions = (mean._version, var._version)
        out = lib.nn.functional.batch_norm(from_np(lib, x), mean, var, training=True, momentum=0.3)
        return to_np(out), to_np(mean), to_np(var), versions == (mean._version, var._version)

    got, want = run_both(run)
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    assert got[3] == want[3]
