"""Reference cycles through autograd state are collected (issue 5, item 1).

Python objects held by C++ autograd state (hooks, packed saved tensors,
``metadata`` dicts, Function contexts, multi-grad-hook state) are visible to
Python's cyclic GC, and a full ``gc.collect()`` also frees the cycles made of
C++ state only, like ``(x * x).sum().backward(create_graph=True)`` (torch's
issue #7343). Each case checks, after ``del`` and ``gc.collect()``, that a
weakref to every tensor is dead and that the NumPy buffer behind the tensor
was freed (a weakref to the array given to ``from_numpy``).

The cases torch itself leaks are npgrad-only (skipped when the library under
test is torch, with the reason).
"""

from __future__ import annotations

import gc
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import oracle

TORCH_LEAKS = pytest.mark.skipif(oracle.AGAINST_TORCH, reason="torch leaks this cycle (npgrad collects it)")


def live_nodes(ng: Any) -> int:
    return ng._C._live_node_count() if not oracle.AGAINST_TORCH else 0


def leaf(ng: Any, n: int = 3) -> tuple[Any, weakref.ref]:
    """A leaf that requires grad on a fresh NumPy buffer, and a weakref to the buffer."""
    arr = np.linspace(0.5, 1.5, n)
    t = ng.from_numpy(arr).requires_grad_()
    return t, weakref.ref(arr)


def assert_collected(ng: Any, make: Callable[[], list[weakref.ref]]) -> None:
    gc.collect()
    before = live_nodes(ng)
    refs = make()
    gc.collect()
    alive = [i for i, r in enumerate(refs) if r() is not None]
    assert alive == [], f"still alive after gc.collect(): {alive}"
    assert live_nodes(ng) == before


# ------------------------------------------------------------ Python-held cycles


def test_leaf_tensor_hook_capturing_its_tensor(ng):
    def make():
        x, buf = leaf(ng)
        x.register_hook(lambda g: g * x)
        return [weakref.ref(x), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_nonleaf_tensor_hook_capturing_its_tensor(ng):
    def make():
        x, buf = leaf(ng)
        y = x * 2
        y.register_hook(lambda g: g + y.detach())
        return [weakref.ref(x), weakref.ref(y), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_post_accumulate_grad_hook_capturing_its_tensor(ng):
    def make():
        x, buf = leaf(ng)
        x.register_post_accumulate_grad_hook(lambda p: x)
        return [weakref.ref(x), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_pack_hook_returning_the_output(ng):
    # The packed object is the output itself: output -> grad_fn -> saved
    # variable -> packed output.
    def make():
        x, buf = leaf(ng)
        with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.exp()
        return [weakref.ref(x), weakref.ref(y), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_pack_hook_capturing_the_output(ng):
    def make():
        x, buf = leaf(ng)
        box: list[Any] = []
        with ng.autograd.graph.saved_tensors_hooks(lambda t: (t, box), lambda p: p[0]):
            y = x.exp()
        box.append(y)
        return [weakref.ref(x), weakref.ref(y), buf]

    assert_collected(ng, make)


def test_node_hook_capturing_the_node(ng):
    def make():
        x, buf = leaf(ng)
        y = x * 2
        node = y.grad_fn
        node.register_hook(lambda gi, go: node and None)
        node.register_prehook(lambda go: node and None)
        r = [weakref.ref(x), weakref.ref(y), buf]
        del y
        return r

    assert_collected(ng, make)


@TORCH_LEAKS
def test_node_metadata_holding_the_output(ng):
    def make():
        x, buf = leaf(ng)
        y = x.exp()
        y.grad_fn.metadata["out"] = y
        return [weakref.ref(x), weakref.ref(y), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_multi_grad_hook_capturing_its_tensors(ng):
    def make():
        a, buf_a = leaf(ng)
        b, buf_b = leaf(ng)
        seen: list[Any] = []
        ng.autograd.graph.register_multi_grad_hook((a, b), lambda grads: seen.append((a, b)))
        (a * b).sum().backward()
        assert len(seen) == 1
        return [weakref.ref(a), weakref.ref(b), buf_a, buf_b]

    assert_collected(ng, make)


def test_function_ctx_holding_its_output(ng):
    # The ctx is an instance of a Python subclass of a native type: its
    # __dict__ must be reported to the GC exactly once.
    class Double(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def make():
        x, buf = leaf(ng)
        y = Double.apply(x)
        y.grad_fn.kept = y
        return [weakref.ref(x), weakref.ref(y), buf]

    assert_collected(ng, make)


def test_ctx_kept_after_its_node_went_is_collected(ng):
    # A ctx that outlives the graph owns its node, which refers back to it:
    # a cycle the GC collects, with everything the two keep, in either order
    # of dropping the ctx and a tensor read from it.
    class Exp(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[1]

    def make(drop_ctx_first: bool) -> Callable[[], list[weakref.ref]]:
        def run() -> list[weakref.ref]:
            x, buf = leaf(ng)
            out = Exp.apply(x)
            ctx = out.grad_fn
            del out
            y = ctx.saved_tensors[1]
            assert y.grad_fn is ctx
            refs = [weakref.ref(x), weakref.ref(ctx), weakref.ref(y), buf]
            if drop_ctx_first:
                del ctx
                assert y.grad_fn.name() == "ExpBackward"
            return refs

        return run

    assert_collected(ng, make(True))
    assert_collected(ng, make(False))


@TORCH_LEAKS
def test_kept_function_ctx_in_a_cycle_through_its_saved_tensor(ng):
    # The ctx owns its saved tensors (they outlive the node when the ctx is
    # kept): the GC sees them through the ctx, here packed into an object
    # that refers back to the ctx.
    class Double(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def make():
        x, buf = leaf(ng)
        boxes = []

        def pack(t):
            boxes.append([t])
            return boxes[-1]

        with ng.autograd.graph.saved_tensors_hooks(pack, lambda box: box[0]):
            y = Double.apply(x)
        ctx = y.grad_fn
        boxes[0].append(ctx)  # packed object -> ctx -> saved tensor -> packed object
        del y  # the node is gone, the ctx (kept by the cycle) keeps x saved
        assert ctx.saved_tensors[0].tolist() == x.tolist()
        return [weakref.ref(x), weakref.ref(ctx), buf]

    assert_collected(ng, make)


# ----------------------------------------------------------- C++-only cycles


def backward_create_graph(loss: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's create_graph warning
        loss.backward(create_graph=True)


@TORCH_LEAKS
def test_grad_with_graph_referencing_its_leaf_issue_7343(ng):
    # x -> x.grad -> MulBackward0 -> saved x (and -> AccumulateGrad -> x).
    def make():
        x, buf = leaf(ng)
        backward_create_graph((x * x).sum())
        assert x.grad.grad_fn is not None
        return [weakref.ref(x), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_assigned_grad_with_graph_referencing_its_leaf(ng):
    def make():
        x, buf = leaf(ng)
        x.grad = x * 3
        return [weakref.ref(x), buf]

    assert_collected(ng, make)


@TORCH_LEAKS
def test_retained_grad_of_nonleaf_referencing_it(ng):
    def make():
        x, buf = leaf(ng)
        h = x * 2
        h.retain_grad()
        backward_create_graph((h * h).sum())
        assert h.grad.grad_fn is not None
        return [weakref.ref(x), weakref.ref(h), buf]

    assert_collected(ng, make)


def find_accumulate_grad(node: Any) -> Any:
    stack, seen, keep = [node], set(), []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        keep.append(fn)  # ids are unique only among live objects
        seen.add(id(fn))
        if type(fn).__name__ == "AccumulateGrad":
            return fn
        stack.extend(f for f, _ in fn.next_functions)
    return None


def test_cycle_kept_while_the_grad_is_reachable(ng):
    # The gradient's graph still reaches x, so x must survive a collection: a
    # later backward through the gradient accumulates into x.grad.
    x, buf = leaf(ng)
    backward_create_graph((x * x).sum())
    g = x.grad
    del x
    gc.collect()
    assert buf() is not None
    acc = find_accumulate_grad(g.grad_fn)
    assert acc is not None
    x_again = acc.variable
    assert x_again.grad is g
    g.sum().backward()
    # x.grad was 2x; d(sum(2x))/dx = 2 is added.
    np.testing.assert_allclose(x_again.grad.detach().numpy(), 2 * np.linspace(0.5, 1.5, 3) + 2)


def test_cycle_kept_while_its_leaf_is_alive(ng):
    x, _ = leaf(ng)
    backward_create_graph((x * x).sum())
    gc.collect()
    assert x.grad is not None and x.grad.grad_fn is not None
    np.testing.assert_allclose(x.grad.detach().numpy(), 2 * np.linspace(0.5, 1.5, 3))
    # Double backward through the kept graph still works.
    (gx,) = ng.autograd.grad(x.grad.sum(), x)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0, 2.0])


# ------------------------------------------------------------ saved tensors


def test_saved_tensors_released_after_backward(ng):
    x, _ = leaf(ng)
    arr = np.linspace(1.0, 2.0, 3)
    w = ng.from_numpy(arr)  # saved by mul, does not require grad
    buf = weakref.ref(arr)
    del arr
    y = (x * w).sum()
    del w
    gc.collect()
    assert buf() is not None, "the graph holds the saved tensor"
    y.backward()
    gc.collect()
    assert buf() is None, "backward released the saved tensor"
    np.testing.assert_allclose(x.grad.numpy(), np.linspace(1.0, 2.0, 3))


def test_saved_tensors_kept_with_retain_graph_then_freed_with_the_graph(ng):
    x, _ = leaf(ng)
    arr = np.linspace(1.0, 2.0, 3)
    w = ng.from_numpy(arr)
    buf = weakref.ref(arr)
    del arr
    y = (x * w).sum()
    del w
    y.backward(retain_graph=True)
    gc.collect()
    assert buf() is not None
    del y
    gc.collect()
    assert buf() is None


def test_gc_while_the_first_ctx_of_a_new_function_is_made(ng):
    # Note [Traversing half-made instances]: with a collection at every allocation,
    # the GC runs while pybind11 lays out the first ctx of each new Function class
    # (its type cache allocates a weakref) and traverses that half-made ctx.
    x = ng.ones(2, requires_grad=True)
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    try:
        for _ in range(10):

            class Double(ng.autograd.Function):
                @staticmethod
                def forward(ctx, t):
                    return t * 2

                @staticmethod
                def backward(ctx, g):
                    return g * 2

            Double.apply(x).sum().backward()
    finally:
        gc.set_threshold(*threshold)
    assert x.grad.tolist() == [20.0, 20.0]
