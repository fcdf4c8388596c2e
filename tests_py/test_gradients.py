"""Gradients of every differentiable op of the README's API surface against central finite differences
(float64), and the dtype of gradients in float32."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import op_specs
from oracle import assert_close, dtype_name, from_np, numerical_grad, to_np

OPS = [pytest.param(op, id=op.id) for op in op_specs.ALL]


def _cotangent(op_id, shape):
    """A fixed random weighting of the output, so every output element matters."""
    return np.random.default_rng(zlib.crc32(op_id.encode()) + 1).uniform(-1.0, 1.0, shape)


@pytest.mark.parametrize("op", OPS)
def test_gradient_matches_finite_differences(ng, op):
    inputs = op.tensors(ng, requires_grad=op.grad_mask)
    wrt = [x for x in inputs if x.requires_grad]
    out = op.fn(ng, *inputs)
    weights = _cotangent(op.id, tuple(out.shape))
    grads = ng.autograd.grad([out], wrt, grad_outputs=[from_np(ng, weights)])
    expected = numerical_grad(lambda *ts: op.fn(ng, *ts), inputs, weights)
    expected = [e for e, x in zip(expected, inputs) if x.requires_grad]
    assert len(grads) == len(wrt)
    for x, g, e in zip(wrt, grads, expected):
        assert dtype_name(g.dtype) == "float64"
        assert tuple(g.shape) == tuple(x.shape)
        assert_close(g, e, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", OPS)
def test_float32_gradients_are_float32_and_agree_with_float64(ng, op):
    grads = {}
    for dtype in (np.float32, np.float64):
        inputs = op.tensors(ng, dtype, requires_grad=op.grad_mask)
        out = op.fn(ng, *inputs)
        weights = _cotangent(op.id, tuple(out.shape)).astype(dtype)
        grads[dtype] = ng.autograd.grad(out, [x for x in inputs if x.requires_grad], from_np(ng, weights))
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        assert dtype_name(g32.dtype) == "float32"
        assert_close(g32, to_np(g64).astype(np.float32), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", OPS)
def test_backward_accumulates_the_same_gradient_into_leaves(ng, op):
    inputs = op.tensors(ng, requires_grad=op.grad_mask)
    wrt = [x for x in inputs if x.requires_grad]
    out = op.fn(ng, *inputs)
    weights = from_np(ng, _cotangent(op.id, tuple(out.shape)))
    expected = ng.autograd.grad(out, wrt, weights, retain_graph=True)
    out.backward(weights)
    for x, e in zip(wrt, expected):
        assert_close(x.grad, e, rtol=0, atol=0)


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
BROADCAST_SHAPES = [
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((2, 1), (1, 3)),
    ((2, 3), (1,)),
    ((2, 3), ()),
    ((), (2, 3)),
    ((2, 1, 3), (4, 1)),
    ((1, 3, 1), (2, 1, 2)),
    ((3, 1), (3, 1)),
]


@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(BINARY))
def test_broadcast_gradients_reduce_to_input_shapes(ng, shapes, op):
    rng = np.random.default_rng(7)
    inputs = [from_np(ng, rng.uniform(0.5, 1.5, s), requires_grad=True) for s in shapes]
    out = BINARY[op](*inputs)
    weights = rng.uniform(-1.0, 1.0, tuple(out.shape))
    grads = ng.autograd.grad(out, inputs, from_np(ng, weights))
    expected = numerical_grad(BINARY[op], inputs, weights)
    for x, g, e in zip(inputs, grads, expected):
        assert tuple(g.shape) == tuple(x.shape)
        assert_close(g, e, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("build", "grad_fn"),
    [
        (lambda x: (x * x).sum(), lambda a: 2 * a),
        (lambda x: (x * x + x.sin()).sum(), lambda a: 2 * a + np.cos(a)),
        (lambda x: (x.exp() * x.exp()).sum(), lambda a: 2 * np.exp(2 * a)),
        (
            lambda x: x[0] * x[1] * x[2],
            lambda a: np.array([a[1] * a[2], a[0] * a[2], a[0] * a[1]]),
        ),
        (lambda x: x.expand(2, 3).sum(), lambda a: np.full_like(a, 2.0)),
    ],
    ids=["square", "diamond", "shared_node", "selects", "expand"],
)
def test_gradient_of_reused_tensors_is_accumulated(ng, build, grad_fn):
    data = np.array([0.5, -1.5, 2.0])
    x = from_np(ng, data, requires_grad=True)
    build(x).backward()
    assert_close(x.grad, grad_fn(data), rtol=1e-12)


class _Counted:
    """What the pack hook below stores: the tensor and how often it was unpacked."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.unpacked = 0


@pytest.mark.parametrize("op", OPS)
def test_backward_unpacks_each_saved_tensor_once(ng, op):
    """A backward pass runs the unpack hook once per saved tensor, as torch's
    nodes do. utils.checkpoint relies on it: a second unpack of the same saved
    tensor is its CheckpointError."""
    packed = []

    def pack(t):
        packed.append(_Counted(t))
        return packed[-1]

    def unpack(saved):
        saved.unpacked += 1
        return saved.tensor

    inputs = op.tensors(ng, requires_grad=op.grad_mask)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = op.fn(ng, *inputs)
    ng.autograd.grad(out, [x for x in inputs if x.requires_grad], from_np(ng, _cotangent(op.id, tuple(out.shape))))
    assert [s.unpacked for s in packed if s.unpacked > 1] == []
