"""Graph extremes: very deep chains and very wide nodes.

A 1,000,000-node chain must build, run backward and be freed without recursion
(no native stack overflow in the engine or in node teardown); one node may have
100,000 consumers, and a graph may have 100,000 leaves. Wall-clock scaling is not
asserted here: ``scripts/scaling_report.py`` prints it.

``npgrad._C._live_node_count()`` (npgrad only, absent from torch) must come back to
its starting value once a graph is dropped; those assertions are skipped when the
suite runs against torch.
"""

from __future__ import annotations

import gc
import math
import weakref

import numpy as np
import pytest

from oracle import AGAINST_TORCH, to_np

MILLION = 1_000_000
WIDE = 100_000


def live_nodes(ng):
    """npgrad's count of live autograd nodes, or None under torch (no such API)."""
    if AGAINST_TORCH:
        return None
    gc.collect()
    return ng._C._live_node_count()


def assert_nodes_back_to(ng, start):
    if start is not None:
        assert live_nodes(ng) == start


# ----------------------------------------------------------------------------------
# Deep


def test_million_node_chain_builds_runs_backward_and_is_freed(ng):
    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    y = x
    for _ in range(MILLION):
        y = y * 1.0001  # MulBackward0 saving only the scalar: the cheapest node
    if start is not None:
        assert live_nodes(ng) - start >= MILLION
    y.backward()
    expected = math.exp(MILLION * math.log(1.0001))
    assert x.grad.item() == pytest.approx(expected, rel=1e-9)
    del y  # tears down a million nodes; recursion here would overflow the stack
    assert_nodes_back_to(ng, start)
    assert x.grad.item() == pytest.approx(expected, rel=1e-9)


def test_million_node_chain_freed_without_running_backward(ng):
    start = live_nodes(ng)
    x = ng.tensor(2.0, dtype=ng.float64, requires_grad=True)
    y = x
    for _ in range(MILLION):
        y = y + 1.0
    assert y.item() == MILLION + 2.0
    del y
    assert_nodes_back_to(ng, start)
    assert x.grad is None


def test_deep_chain_with_saved_tensors_is_freed_when_dropped(ng):
    """Every MulBackward0 saves the previous output (whose grad_fn is the previous
    node) and the shared leaf ``w``: teardown crosses saved variables 200,000 times."""
    n = 200_000
    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    w = ng.tensor(1.000001, dtype=ng.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = y * w
        if i == n // 2:
            middle = weakref.ref(y)
    del y
    gc.collect()
    assert middle() is None
    assert_nodes_back_to(ng, start)


def test_deep_chain_with_saved_tensors_backward_retained_then_dropped(ng):
    n = 200_000
    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    w = ng.tensor(1.000001, dtype=ng.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = y * w
        if i == n // 2:
            middle = weakref.ref(y)
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    w_n = 1.000001**n
    assert x.grad.item() == pytest.approx(2 * w_n, rel=1e-9)
    # d(x * w^n)/dw = n * w^(n-1), accumulated over 200,000 paths into one leaf
    assert w.grad.item() == pytest.approx(2 * n * 1.000001 ** (n - 1), rel=1e-9)
    del y
    gc.collect()
    assert middle() is None
    assert_nodes_back_to(ng, start)


def test_deep_chain_saved_tensors_freed_by_backward(ng):
    n = 200_000
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = y.sin() + x  # SinBackward0 saves its input
        if i == n // 2:
            middle = weakref.ref(y)
    y.backward()
    gc.collect()
    assert middle() is None  # released by the pass, before the graph is dropped
    assert np.isfinite(x.grad.item())


def test_saved_tensor_keeps_its_python_object_alive(ng):
    """What makes the weakref checks above meaningful: as in torch (PyObject
    preservation), a tensor the graph still holds keeps its Python object, so a
    weakref to it stays alive and its Python attributes survive until the graph
    releases it."""
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.note = "kept"
    ref = weakref.ref(h)
    y = h.sin()  # SinBackward0 saves h
    del h
    gc.collect()
    assert ref() is not None
    saved = y.grad_fn._saved_self
    assert saved is ref()
    assert saved.note == "kept"
    del saved
    y.sum().backward()  # releases the saved h
    gc.collect()
    assert ref() is None


def test_deep_chain_grad_to_a_middle_tensor_prunes_the_rest(ng):
    n = 300_000
    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = y * 1.00001
        if i == n // 2 - 1:
            middle = y
    (g_mid, g_x) = ng.autograd.grad(y, (middle, x), retain_graph=True)
    assert g_mid.item() == pytest.approx(1.00001 ** (n // 2), rel=1e-9)
    assert g_x.item() == pytest.approx(1.00001**n, rel=1e-9)
    (g_x_only,) = ng.autograd.grad(y, x)
    assert g_x_only.item() == pytest.approx(1.00001**n, rel=1e-9)
    assert x.grad is None
    del y, middle
    assert_nodes_back_to(ng, start)


def test_deep_chain_dropped_while_a_node_wrapper_is_held(ng):
    n = 200_000
    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0
    root = y.grad_fn
    del y
    gc.collect()
    assert root.name() == "MulBackward0"
    node, depth = root, 0
    while node is not None and depth < 10:  # the graph below the held node is alive
        node = node.next_functions[0][0]
        depth += 1
    assert depth == 10
    del root, node
    assert_nodes_back_to(ng, start)


def test_deep_chain_of_custom_functions(ng):
    n = 100_000

    class Scale(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1.0001

        @staticmethod
        def backward(ctx, g):
            (saved,) = ctx.saved_tensors
            assert saved.dim() == 0
            return g * 1.0001

    start = live_nodes(ng)
    x = ng.tensor(1.0, dtype=ng.float64, requires_grad=True)
    y = x
    for i in range(n):
        y = Scale.apply(y)
        if i == n // 2:
            middle = weakref.ref(y)
    y.backward(retain_graph=True)
    assert x.grad.item() == pytest.approx(1.0001**n, rel=1e-9)
    del y
    gc.collect()
    assert middle() is None
    assert_nodes_back_to(ng, start)


def test_deep_chain_with_create_graph(ng):
    """create_graph=True records a second deep chain for the backward itself."""
    n = 100_000
    start = live_nodes(ng)
    x = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
    w = ng.tensor(1.00001, dtype=ng.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * w
    (g,) = ng.autograd.grad(y, x, create_graph=True)  # w ** n, as a 100,000-node graph
    assert g.requires_grad
    assert g.item() == pytest.approx(1.00001**n, rel=1e-9)
    (gw,) = ng.autograd.grad(g, w)
    assert gw.item() == pytest.approx(n * 1.00001 ** (n - 1), rel=1e-9)
    del y, g
    assert_nodes_back_to(ng, start)


def test_deep_chain_of_views_and_an_in_place_write_at_the_end(ng):
    n = 50_000
    start = live_nodes(ng)
    x = ng.tensor([1.0, 2.0, 3.0, 4.0], dtype=ng.float64, requires_grad=True)
    base = x.clone()
    v = base
    for i in range(n):
        v = v.view(2, 2) if i % 2 == 0 else v.view(4)
    assert v._base is base  # a view of a view points at the root base
    v.mul_(3.0)
    assert type(base.grad_fn).__name__ == "CopySlices"
    base.sum().backward()
    assert to_np(x.grad).tolist() == [3.0, 3.0, 3.0, 3.0]
    del base, v
    assert_nodes_back_to(ng, start)


# ----------------------------------------------------------------------------------
# Wide


def test_node_with_100k_consumers(ng):
    start = live_nodes(ng)
    x = ng.tensor([0.1, 0.2, 0.3], dtype=ng.float64, requires_grad=True)
    h = x.exp()  # one node whose output feeds 100,000 MulBackward0 nodes
    coeffs = [float(i % 7 + 1) for i in range(WIDE)]
    outs = [h * c for c in coeffs]
    total = ng.stack(outs).sum()  # one StackBackward0 with 100,000 next edges
    assert len(total.grad_fn.next_functions[0][0].next_functions) == WIDE
    total.backward()
    expected = np.exp([0.1, 0.2, 0.3]) * sum(coeffs)
    np.testing.assert_allclose(to_np(x.grad), expected, rtol=1e-12)
    del h, outs, total
    assert_nodes_back_to(ng, start)


def test_100k_roots_through_one_graph_root(ng):
    start = live_nodes(ng)
    x = ng.tensor(0.25, dtype=ng.float64, requires_grad=True)
    h = x.sin()
    coeffs = [float(i % 5) - 2.0 for i in range(WIDE)]
    outs = [h * c for c in coeffs]
    ng.autograd.backward(outs, retain_graph=True)  # 100,000 scalar roots, implicit grads
    assert x.grad.item() == pytest.approx(math.cos(0.25) * sum(coeffs), abs=1e-9)
    x.grad = None
    (g,) = ng.autograd.grad(outs[: WIDE // 2], x, grad_outputs=[ng.tensor(2.0, dtype=ng.float64)] * (WIDE // 2))
    assert g.item() == pytest.approx(2 * math.cos(0.25) * sum(coeffs[: WIDE // 2]), abs=1e-9)
    del h, outs
    assert_nodes_back_to(ng, start)


def test_graph_with_100k_leaves(ng):
    start = live_nodes(ng)
    values = np.linspace(-1.0, 1.0, WIDE)
    leaves = [ng.tensor(float(v), dtype=ng.float64, requires_grad=True) for v in values]
    s = ng.stack(leaves)
    out = (s * s).sum()
    out.backward(retain_graph=True)
    grads = np.array([leaf.grad.item() for leaf in leaves])
    np.testing.assert_allclose(grads, 2 * values, rtol=1e-12)

    every_other = leaves[::2]
    out.backward(inputs=every_other, retain_graph=True)  # pruning with 50,000 inputs
    grads = np.array([leaf.grad.item() for leaf in leaves])
    expected = 2 * values
    expected[::2] *= 2
    np.testing.assert_allclose(grads, expected, rtol=1e-12)

    result = ng.autograd.grad(out, leaves)
    assert len(result) == WIDE
    np.testing.assert_allclose([g.item() for g in result], 2 * values, rtol=1e-12)
    del s, out, result
    assert_nodes_back_to(ng, start)
    refs = [weakref.ref(leaf) for leaf in leaves[:100]]
    del leaves, every_other
    gc.collect()
    assert all(r() is None for r in refs)


def test_100k_leaves_summed_by_a_python_chain(ng):
    """``sum(leaves)`` is both wide (100,000 AccumulateGrads) and deep (a chain of
    100,000 AddBackward0 nodes)."""
    start = live_nodes(ng)
    leaves = [ng.tensor(float(i), dtype=ng.float64, requires_grad=True) for i in range(WIDE)]
    total = sum(leaves)
    assert total.item() == WIDE * (WIDE - 1) / 2
    total.backward()
    assert all(leaf.grad.item() == 1.0 for leaf in leaves)
    del total
    assert_nodes_back_to(ng, start)
