"""The kernels call NumPy's own inner loops directly for contiguous float operands
(Note [Calling NumPy's inner loops directly] in kernels/inner_loops.cpp). These tests pin what
that shortcut promises: results bit-for-bit equal to the NumPy ufunc on the same
data, on the direct path and on the fallback path (strided, broadcast, cast), and
no floating-point state leaking into the user's own NumPy code."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import npgrad as ng
from oracle import run_in_threads

SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 1e-30, 1e30, np.inf, -np.inf, np.nan]

UNARY = [
    ("neg", np.negative),
    ("exp", np.exp),
    ("log", np.log),
    ("sin", np.sin),
    ("cos", np.cos),
    ("tanh", np.tanh),
    ("sqrt", np.sqrt),
    ("abs", np.absolute),
]

BINARY = [
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.true_divide),
    ("pow", np.power),
    ("eq", np.equal),
    ("ne", np.not_equal),
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
]


def call_binary(name, a, b):
    if name in ("eq", "ne", "lt", "le", "gt", "ge"):
        return getattr(operator, name)(a, b)
    return getattr(ng, name)(a, b)


def data(dtype, n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, n).astype(dtype)
    x[: len(SPECIALS)] = np.array(SPECIALS, dtype=dtype)
    return x


def same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype == np.bool_:
        np.testing.assert_array_equal(got, expected)
    else:
        # Bitwise: NaN payloads and signed zeros included.
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ufunc", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "0-dim", "empty", "large"])
def test_unary_is_numpys_loop_bit_for_bit(name, ufunc, dtype, layout):
    x = data(dtype, n=3000 if layout == "large" else 40)
    if layout == "strided":
        x = x[::3]  # a view: the NumPy fallback path
    elif layout == "0-dim":
        x = np.array(x[5])
    elif layout == "empty":
        x = x[:0]
    t = ng.from_numpy(x)
    with np.errstate(all="ignore"):
        expected = ufunc(x)
    same_bits(getattr(ng, name)(t).numpy(), np.asarray(expected))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, ufunc", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("other", ["tensor", "python_float", "python_int", "0-dim", "broadcast_row"])
def test_binary_is_numpys_loop_bit_for_bit(name, ufunc, dtype, other):
    x = data(dtype, seed=1).reshape(8, 5)
    y = data(dtype, seed=2)[::-1].copy().reshape(8, 5)
    if other == "tensor":
        a, b = ng.from_numpy(x), ng.from_numpy(y)
        rhs = y
    elif other == "python_float":
        a, b, rhs = ng.from_numpy(x), 0.3, 0.3  # not exact in float32: rounding matters
    elif other == "python_int":
        a, b, rhs = ng.from_numpy(x), 3, 3
    elif other == "0-dim":
        z = np.array(y[0, 1])
        a, b, rhs = ng.from_numpy(x), ng.from_numpy(z), z
    else:
        r = y[0].copy()
        a, b, rhs = ng.from_numpy(x), ng.from_numpy(r), r
    with np.errstate(all="ignore"):
        expected = np.asarray(ufunc(x, rhs))
    same_bits(call_binary(name, a, b).numpy(), expected)
    # The same with the scalar on the left (weak scalar, reflected operator).
    if other in ("python_float", "python_int") and name in ("add", "sub", "mul", "div", "pow"):
        op = {"add": "__radd__", "sub": "__rsub__", "mul": "__rmul__", "div": "__rtruediv__", "pow": "__rpow__"}[name]
        with np.errstate(all="ignore"):
            if name == "div":
                # torch's __rtruediv__ is self.reciprocal() * other: so is npgrad's.
                expected = np.asarray(np.multiply(np.reciprocal(x), rhs))
            else:
                expected = np.asarray(ufunc(rhs, x))
        same_bits(getattr(a, op)(b).numpy(), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clamp_is_numpys_maximum_and_minimum(dtype):
    x = data(dtype, seed=8)
    got = ng.clamp(ng.from_numpy(x), min=-0.7, max=2.3).numpy()
    with np.errstate(all="ignore"):
        expected = np.minimum(np.maximum(x, -0.7), 2.3)
    same_bits(got, expected)


def test_python_float_beyond_float32_range_rounds_to_inf_like_numpy():
    x = np.array([1.0, -2.0, 0.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        expected = x * np.float32(np.inf)
        expected_neg = x * np.float32(-np.inf)
    same_bits((ng.from_numpy(x) * 1e300).numpy(), expected)
    same_bits((ng.from_numpy(x) * -1e300).numpy(), expected_neg)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_in_place_ops_match_numpy_including_aliasing(dtype):
    x = data(dtype, seed=3)
    y = data(dtype, seed=4)
    t = ng.from_numpy(x.copy())
    t.mul_(ng.from_numpy(y))  # direct loop, out is the first input
    with np.errstate(all="ignore"):
        same_bits(t.numpy(), x * y)
    t = ng.from_numpy(x.copy())
    t.add_(t)  # out aliases both inputs exactly
    same_bits(t.numpy(), x + x)
    t = ng.from_numpy(x.copy())
    # A 0-dim divisor inside the output is a partial overlap: torch refuses it,
    # before anything is written.
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        t.div_(t[3])
    same_bits(t.numpy(), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mixed_dtypes_take_numpys_path_and_promote_like_torch(dtype):
    other = np.float64 if dtype == np.float32 else np.float32
    x, y = data(dtype, seed=5), data(other, seed=6)
    got = (ng.from_numpy(x) * ng.from_numpy(y)).numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x.astype(np.float64) * y.astype(np.float64))


def test_floating_point_flags_do_not_reach_the_users_numpy():
    """0/0 and overflow inside npgrad are silent (as in torch), and afterwards the
    user's own NumPy code, even under errstate(all='raise'), sees no stale flag."""
    z = ng.zeros(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = z / z  # invalid
        e = ng.exp(ng.full((8,), 1000.0))  # overflow
        assert np.isnan(r.numpy()).all() and np.isinf(e.numpy()).all()
        big = ng.full((2, 2), 3e38)
        assert np.isinf((big @ big).numpy()).all()  # overflow in matmul
        assert np.isinf(big.sum().item()) and np.isinf(big.mean(0).numpy()).all()  # in reduce
        with np.errstate(all="raise"):
            a = np.ones(8, dtype=np.float32)
            np.add(a, a)
            np.multiply(a, 2.0)
            np.sin(a)
        with np.errstate(all="raise"), pytest.raises(FloatingPointError):
            np.divide(np.zeros(2), np.zeros(2))  # the user's own 0/0 still raises


def test_large_loops_run_concurrently_and_correctly():
    """Long loops drop the GIL (like NumPy's): results stay exact under threads."""
    x = data(np.float64, n=200_000, seed=7)
    with np.errstate(all="ignore"):
        expected = np.sin(x) * 2.0 + x
    out = [None] * 4

    def work(i):
        t = ng.from_numpy(x)
        for _ in range(5):
            r = ng.sin(t) * 2.0 + t
        out[i] = r.numpy()

    run_in_threads(work, 4)
    for r in out:
        same_bits(r, expected)


def test_gradients_through_the_direct_loops_match_finite_differences():
    x = ng.tensor([0.3, 1.7, 2.2, 0.9], dtype=ng.float64, requires_grad=True)

    def f(v):
        return (ng.sin(v) * ng.exp(v) / (v + 2.0) - ng.sqrt(v) ** 3 + ng.tanh(v) * ng.log(v)).sum()

    f(x).backward()
    xs = x.detach().numpy().copy()
    h = 1e-6
    fd = []
    for i in range(len(xs)):
        p, m = xs.copy(), xs.copy()
        p[i] += h
        m[i] -= h
        fd.append((f(ng.from_numpy(p)).item() - f(ng.from_numpy(m)).item()) / (2 * h))
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6, atol=1e-8)


# ---- Note [Backward temporaries are reused] (pointwise_nodes.cpp) ----------------------


@pytest.mark.parametrize("numel", [5, 1 << 19])
def test_gradients_seen_by_hooks_are_never_overwritten_by_reuse(numel):
    """A formula writes into a gradient only when nobody else can see it: a hook
    that keeps the gradient, or retain_grad, must find the values it was given."""
    rng = np.random.default_rng(9)
    x0 = rng.uniform(0.5, 1.5, numel)
    x = ng.tensor(x0, requires_grad=True)
    y = ng.exp(x)
    z = ng.sin(y)
    t = ng.tanh(z)
    w = ng.sqrt(t + 2.0) ** 2 * 3.0
    seen = []
    z.register_hook(lambda g: seen.append(g))
    t.register_hook(lambda g: seen.append(g))
    y.retain_grad()
    w.sum().backward()
    zz = np.sin(np.exp(x0))
    tt = np.tanh(zz)
    g_t = np.full(numel, 3.0)  # d(3 (sqrt(t + 2))^2)/dt = 3
    g_z = g_t * (1 - tt * tt)
    g_y = g_z * np.cos(np.exp(x0))
    np.testing.assert_allclose(seen[0].numpy(), g_t, rtol=1e-12)  # t's hook runs first
    np.testing.assert_allclose(seen[1].numpy(), g_z, rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), g_y, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), g_y * np.exp(x0), rtol=1e-12)


def test_create_graph_still_records_every_backward_step():
    x = ng.tensor([0.3, 0.8, 1.1], dtype=ng.float64, requires_grad=True)
    y = (ng.tanh(ng.sin(x) * 2.0) / 3.0).sum()
    (g,) = ng.autograd.grad(y, x, create_graph=True)
    assert g.grad_fn is not None
    (gg,) = ng.autograd.grad(g.sum(), x)
    xs = x.detach().numpy()
    h = 1e-6

    def first(v):
        s = np.sin(v)
        return (1 - np.tanh(2 * s) ** 2) * 2 * np.cos(v) / 3

    np.testing.assert_allclose(gg.numpy(), (first(xs + h) - first(xs - h)) / (2 * h), rtol=1e-6)


@pytest.mark.parametrize("op", ["tanh", "sigmoid"])
def test_nested_backward_formulas_reuse_their_temporaries(op):
    """tanh's and sigmoid's backward build the gradient in one buffer: the
    temporary of the inner step is moved into the outer one, not copied (a copy
    left a second reference, so the outer step allocated again: 2x the peak)."""
    import tracemalloc

    n = 1 << 20  # 8 MiB of float64
    x = ng.tensor(np.linspace(-2, 2, n), requires_grad=True)
    loss = getattr(x, op)().sum()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        (g,) = ng.autograd.grad(loss, x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak < 1.25 * n * 8, peak / (n * 8)
    r = np.tanh(np.linspace(-2, 2, n)) if op == "tanh" else 1 / (1 + np.exp(-np.linspace(-2, 2, n)))
    expected = 1 - r * r if op == "tanh" else r * (1 - r)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)
