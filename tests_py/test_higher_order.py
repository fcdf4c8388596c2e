"""Higher-order gradients (create_graph=True): the gradient of the gradient of every op
of op_specs.py against central finite differences of the first gradient (float64),
against torch, Hessian-vector products of a small MLP, and double backward through
tensor hooks."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import op_specs
from oracle import assert_close, from_np, run_both, to_np

OPS = [pytest.param(op, id=op.id) for op in op_specs.ALL if op.double_backward]
EPS = 1e-6


def _np(t: Any) -> np.ndarray:
    """``to_np`` that also accepts torch's ZeroTensor (what torch returns e.g. for the
    second derivative of abs), which refuses ``.numpy()``; ``+ 0`` materializes it."""
    return to_np(t.detach() + 0)


def _rng(op_id: str, salt: int) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(op_id.encode()) + salt)


def _cotangent(op_id: str, shape: tuple[int, ...]) -> np.ndarray:
    """The fixed weighting of the op's output (the first backward's grad_output)."""
    return _rng(op_id, 1).uniform(-1.0, 1.0, shape)


def _directions(op: op_specs.Op) -> list[np.ndarray]:
    """The fixed weighting ``v`` of each first gradient (zero for shape-only inputs)."""
    rng = _rng(op.id, 2)
    return [
        rng.uniform(-1.0, 1.0, shape) if diff else np.zeros(shape) for (shape, _), diff in zip(op.inputs, op.grad_mask)
    ]


def _first_grads(lib_: Any, op: op_specs.Op, inputs: list[Any], weights: Any, create_graph: bool) -> list[Any]:
    wrt = [x for x, diff in zip(inputs, op.grad_mask) if diff]
    out = op.fn(lib_, *inputs)
    return list(lib_.autograd.grad([out], wrt, grad_outputs=[weights], create_graph=create_graph))


def _dot(grads: list[Any], directions: list[np.ndarray], lib_: Any) -> Any:
    """sum_i <grads_i, v_i> over the differentiable inputs, as a tensor."""
    total = None
    for g, v in zip(grads, directions):
        term = (g * from_np(lib_, v)).sum()
        total = term if total is None else total + term
    return total


def numerical_gradgrad(lib_: Any, op: op_specs.Op, arrays: list[np.ndarray], eps: float = EPS) -> list[np.ndarray]:
    """Central differences, w.r.t. each input, of ``sum_i <g_i(x), v_i>`` where ``g`` are
    the first gradients (computed by the library, without create_graph) of
    ``<op(x), w>`` for the op's fixed cotangent ``w``."""
    directions = [v for v, d in zip(_directions(op), op.grad_mask) if d]

    def value(arrs: list[np.ndarray]) -> float:
        inputs = [from_np(lib_, a, requires_grad=d) for a, d in zip(arrs, op.grad_mask)]
        with lib_.no_grad():
            shape = tuple(op.fn(lib_, *inputs).shape)
        weights = from_np(lib_, _cotangent(op.id, shape))
        grads = _first_grads(lib_, op, inputs, weights, create_graph=False)
        return float(sum(np.sum(to_np(g) * v) for g, v in zip(grads, directions)))

    result = []
    for i, base in enumerate(arrays):
        grad = np.zeros_like(base)
        if op.grad_mask[i]:
            for idx in np.ndindex(base.shape):
                shifted = [a.copy() for a in arrays]
                shifted[i][idx] = base[idx] + eps
                plus = value(shifted)
                shifted[i][idx] = base[idx] - eps
                minus = value(shifted)
                grad[idx] = (plus - minus) / (2 * eps)
        result.append(grad)
    return result


def gradgrad(lib_: Any, op: op_specs.Op) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The library's second derivatives: ``d/dx sum_i <g_i, v_i>`` (zeros where the first
    gradient does not depend on an input) and ``d/dw sum_i <g_i, v_i>``."""
    inputs = op.tensors(lib_, requires_grad=op.grad_mask)
    wrt = [x for x in inputs if x.requires_grad]
    with lib_.no_grad():
        shape = tuple(op.fn(lib_, *inputs).shape)
    weights = from_np(lib_, _cotangent(op.id, shape), requires_grad=True)
    directions = [v for v, d in zip(_directions(op), op.grad_mask) if d]
    grads = _first_grads(lib_, op, inputs, weights, create_graph=True)
    if not any(g.requires_grad for g in grads):
        # A piecewise-constant op (floor, sign, ...): torch's gradient is zeros_like(grad),
        # recorded by no node, so both second derivatives are zero.
        assert not any(_np(g).any() for g in grads)
        return [np.zeros(tuple(x.shape)) for x in inputs], [np.zeros(shape)]
    assert all(g.requires_grad for g in grads)  # they depend on weights at least
    total = _dot(grads, directions, lib_)
    second = lib_.autograd.grad(total, wrt + [weights], allow_unused=True)
    as_np = [np.zeros(tuple(x.shape)) if s is None else _np(s) for x, s in zip(wrt, second)]
    wrt_x = iter(as_np)
    full = [next(wrt_x) if d else np.zeros(tuple(x.shape)) for x, d in zip(inputs, op.grad_mask)]
    return full, [_np(second[-1])]


@pytest.mark.parametrize("op", OPS)
def test_gradgrad_matches_finite_differences(ng, op):
    second, _ = gradgrad(ng, op)
    expected = numerical_gradgrad(ng, op, op.arrays())
    for got, exp in zip(second, expected):
        assert got.shape == exp.shape
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_grad_of_grad_wrt_grad_output_is_the_directional_derivative(ng, op):
    """d/dw <J^T w, v> = J v: the backward formula is differentiable in grad_output."""
    _, (got,) = gradgrad(ng, op)
    arrays = op.arrays()
    directions = _directions(op)

    def f(sign: float) -> np.ndarray:
        shifted = [a + sign * EPS * v for a, v in zip(arrays, directions)]
        with ng.no_grad():
            return to_np(op.fn(ng, *[from_np(ng, a) for a in shifted]))

    expected = (f(1.0) - f(-1.0)) / (2 * EPS)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", OPS)
def test_gradgrad_matches_torch(ng, op):
    (got_x, got_w), (exp_x, exp_w) = run_both(lambda lib_: gradgrad(lib_, op))
    for got, exp in zip(got_x + got_w, exp_x + exp_w):
        np.testing.assert_allclose(got, exp, rtol=1e-10, atol=1e-12)


def test_third_order_derivative(ng):
    x = from_np(ng, np.array([0.3, -0.8, 1.2]), requires_grad=True)
    (g1,) = ng.autograd.grad(x.sin().sum(), x, create_graph=True)
    (g2,) = ng.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = ng.autograd.grad(g2.sum(), x)
    data = np.array([0.3, -0.8, 1.2])
    assert_close(g1, np.cos(data), rtol=1e-12)
    assert_close(g2, -np.sin(data), rtol=1e-12)
    assert_close(g3, -np.cos(data), rtol=1e-12)


def test_backward_with_create_graph_accumulates_a_differentiable_grad(ng):
    import warnings

    x = from_np(ng, np.array([0.3, -0.8, 1.2]), requires_grad=True)
    with warnings.catch_warnings():
        # backward(create_graph=True) warns about the reference cycle it creates
        warnings.simplefilter("ignore", UserWarning)
        (x**3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = ng.autograd.grad(x.grad.sum(), x)
    assert_close(gg, 6 * np.array([0.3, -0.8, 1.2]), rtol=1e-12)


# ----------------------------------------------------------------------------------
# Hessian-vector products on a small MLP


def _mlp_params(lib_: Any) -> list[Any]:
    rng = np.random.default_rng(1234)
    shapes = [(3, 4), (4,), (4, 2), (2,)]
    return [from_np(lib_, rng.normal(0, 0.7, s), requires_grad=True) for s in shapes]


def _mlp_loss(lib_: Any, params: list[Any]) -> Any:
    w1, b1, w2, b2 = params
    x = from_np(lib_, np.random.default_rng(99).normal(0, 1, (5, 3)))
    target = from_np(lib_, np.random.default_rng(98).normal(0, 1, (5, 2)))
    hidden = (x @ w1 + b1).tanh()
    out = hidden @ w2 + b2
    return ((out - target) ** 2).mean()


def _hvp(lib_: Any) -> list[np.ndarray]:
    params = _mlp_params(lib_)
    rng = np.random.default_rng(4321)
    vs = [from_np(lib_, rng.normal(0, 1, tuple(p.shape))) for p in params]
    grads = lib_.autograd.grad(_mlp_loss(lib_, params), params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vs))
    hvp = lib_.autograd.grad(dot, params)
    return [to_np(g) for g in grads] + [to_np(h) for h in hvp]


def test_mlp_hessian_vector_product_matches_torch(ng):
    got, expected = run_both(_hvp)
    assert len(got) == len(expected) == 8
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_mlp_hessian_vector_product_matches_finite_differences(ng):
    params = _mlp_params(ng)
    rng = np.random.default_rng(4321)
    vs = [rng.normal(0, 1, tuple(p.shape)) for p in params]
    hvp = _hvp(ng)[4:]

    def grads_at(sign: float) -> list[np.ndarray]:
        shifted = [from_np(ng, to_np(p) + sign * EPS * v, requires_grad=True) for p, v in zip(params, vs)]
        return [to_np(g) for g in ng.autograd.grad(_mlp_loss(ng, shifted), shifted)]

    plus, minus = grads_at(1.0), grads_at(-1.0)
    for h, p, m in zip(hvp, plus, minus):
        np.testing.assert_allclose(h, (p - m) / (2 * EPS), rtol=1e-5, atol=1e-7)


def test_mlp_hessian_is_symmetric(ng):
    """Two HVPs: <e_i, H e_j> == <e_j, H e_i> for a few parameter coordinates."""
    params = _mlp_params(ng)
    loss = _mlp_loss(ng, params)
    grads = ng.autograd.grad(loss, params, create_graph=True)
    flat = [(0, (1, 2)), (1, (3,)), (2, (0, 1)), (3, (1,))]
    rows = []
    for k, idx in flat:
        row = ng.autograd.grad(grads[k][idx], params, retain_graph=True)
        rows.append([to_np(r) for r in row])
    for a, (ka, ia) in enumerate(flat):
        for b, (kb, ib) in enumerate(flat):
            assert rows[a][kb][ib] == pytest.approx(rows[b][ka][ia], rel=1e-10, abs=1e-12)


# ----------------------------------------------------------------------------------
# Double backward through tensor hooks


def _hooked(lib_: Any, scale: Callable[[Any, Any], Any]) -> tuple[Any, ...]:
    calls = []
    x = from_np(lib_, np.array([0.3, -0.8, 1.2]), requires_grad=True)
    s = from_np(lib_, np.array(1.5), requires_grad=True)
    h = x.sin()

    def hook(g):
        calls.append(tuple(g.shape))
        return scale(g, s)

    h.register_hook(hook)
    y = (h * h * h).sum()
    (g,) = lib_.autograd.grad(y, x, create_graph=True)
    first_calls = len(calls)
    gx, gs = lib_.autograd.grad((g * g).sum(), [x, s], allow_unused=True)
    return (
        to_np(g),
        to_np(gx),
        None if gs is None else to_np(gs),
        first_calls,
        len(calls),
        g.requires_grad,
    )


@pytest.mark.parametrize(
    "scale",
    [
        pytest.param(lambda g, s: g * 3, id="constant"),
        pytest.param(lambda g, s: g * s, id="by_grad_requiring_tensor"),
        pytest.param(lambda g, s: None, id="observer"),
    ],
)
def test_double_backward_through_tensor_hooks_matches_torch(ng, scale):
    got, expected = run_both(lambda lib_: _hooked(lib_, scale))
    for a, b in zip(got, expected):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        else:
            assert a == b


def test_double_backward_through_scaling_hook_values(ng):
    g, gx, gs, first, total, _ = _hooked(ng, lambda g, s: g * 3)
    data = np.array([0.3, -0.8, 1.2])
    sin, cos = np.sin(data), np.cos(data)
    assert_close(g, 9 * sin**2 * cos, rtol=1e-12)
    assert gs is None
    # the hook fires in both backward passes (the second one goes through SinBackward0)
    assert (first, total) == (1, 2)
    # d/dx sum(g^2), g = cos(x) * 3 * 3h^2 with h = sin(x): the path through h's node is
    # scaled by the hook a second time
    expected = -162 * sin**5 * cos + 972 * sin**3 * cos**3
    assert_close(gx, expected, rtol=1e-10)
