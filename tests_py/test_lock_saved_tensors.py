"""``npgrad.autograd.graph.lock_saved_tensors()``: while a tensor saved under it is still
saved, its memory cannot be written (npgrad's in-place ops raise a RuntimeError naming
the saving node, NumPy writes raise NumPy's read-only error); the graph letting it go
makes it writeable again, unless it was read-only before.

npgrad-only: torch cannot lock its storage, so these tests skip with
``NPGRAD_TESTS_AGAINST_TORCH=1``."""

from __future__ import annotations

import gc
import re
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH, run_in_threads

pytestmark = pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own lock_saved_tensors")

LOCKED = re.escape("is saved by MulBackward0 under lock_saved_tensors() and cannot be modified in place")
READ_ONLY = "assignment destination is read-only"


def lock(ng):
    return ng.autograd.graph.lock_saved_tensors()


def saved_by_mul(ng, x: Any) -> tuple[Any, Any]:
    """(w, y): y = (w * x).sum() saved x under the lock."""
    w = ng.ones(x.shape, dtype=x.dtype, requires_grad=True)
    with lock(ng):
        y = (w * x).sum()
    return w, y


def writeable(t: Any) -> bool:
    return t.numpy().flags.writeable


WRITES: list[tuple[str, Callable[[Any], Any]]] = [
    ("add_", lambda t: t.add_(1)),
    ("iadd", lambda t: t.__iadd__(1)),
    ("setitem", lambda t: t.__setitem__(0, 5.0)),
    ("setitem_mask", lambda t: t.__setitem__(t > 1, 5.0)),
    ("copy_", lambda t: t.copy_(t.detach() * 2)),
    ("zero_", lambda t: t.zero_()),
    ("fill_", lambda t: t.fill_(3.0)),
    ("normal_", lambda t: t.normal_()),
    ("bernoulli_", lambda t: t.bernoulli_(0.5)),
    ("exp_", lambda t: t.exp_()),
    ("relu_", lambda t: t.relu_()),
    ("clamp_", lambda t: t.clamp_(0, 1)),
    ("masked_fill_", lambda t: t.masked_fill_(t > 1, 0.0)),
    ("index_put_", lambda t: t.index_put_(((t[:1] * 0).long(),), t.detach()[:1])),
    ("addcmul_", lambda t: t.addcmul_(t.detach(), t.detach())),
    ("cumsum_", lambda t: t.cumsum_(0)),
    ("t_", lambda t: t.t_()),
]


@pytest.mark.parametrize(("name", "write"), WRITES, ids=[n for n, _ in WRITES])
def test_every_write_raises_before_writing(ng, name, write):
    x = ng.tensor([1.0, 2.0, 3.0])
    w, y = saved_by_mul(ng, x)
    version = x._version
    with pytest.raises(RuntimeError, match=LOCKED):
        write(x)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    assert x._version == version
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0, 3.0])
    write(x)  # released: the write goes through


def test_alias_writes_raise(ng):
    base = ng.tensor([1.0, 2.0, 3.0, 4.0])
    view = base[1:3]
    w, y = saved_by_mul(ng, view)
    for alias in (base, view, base[2:], view.detach(), base.view(2, 2)):
        with pytest.raises(RuntimeError, match=LOCKED):
            alias.mul_(2)
    np.testing.assert_array_equal(base.numpy(), [1.0, 2.0, 3.0, 4.0])
    y.backward()
    base.mul_(2)
    np.testing.assert_array_equal(base.numpy(), [2.0, 4.0, 6.0, 8.0])


def test_numpy_writes_raise(ng):
    array = np.array([1.0, 2.0, 3.0])
    x = ng.from_numpy(array)
    other_view = x[1:]  # made before the lock
    w, y = saved_by_mul(ng, x)
    for target in (x.numpy(), other_view.numpy(), x.detach().numpy(), array):
        with pytest.raises(ValueError, match=READ_ONLY):
            target[0] = 7.0
    np.testing.assert_array_equal(array, [1.0, 2.0, 3.0])
    y.backward()
    assert array.flags.writeable
    array[0] = 7.0
    assert x[0].item() == 7.0


def test_writeable_again_after_backward_and_views_made_meanwhile(ng):
    x = ng.tensor([1.0, 2.0, 3.0])
    w, y = saved_by_mul(ng, x)
    view = x[1:]  # made while locked
    assert not writeable(x)
    assert not writeable(view)
    y.backward()
    assert writeable(x)
    assert writeable(view)
    view.add_(1)
    view.numpy()[0] = 9.0
    np.testing.assert_array_equal(x.numpy(), [1.0, 9.0, 4.0])


def test_writeable_again_when_graph_freed(ng):
    x = ng.tensor([1.0, 2.0, 3.0])
    w, y = saved_by_mul(ng, x)
    assert not writeable(x)
    del y
    assert writeable(x)
    x.add_(1)


def test_retain_graph_then_del(ng):
    x = ng.tensor([1.0, 2.0, 3.0])
    w, y = saved_by_mul(ng, x)
    y.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match=LOCKED):
        x.add_(1)
    y.backward()  # the second pass frees it
    assert writeable(x)
    w2, y2 = saved_by_mul(ng, x)
    y2.backward(retain_graph=True)
    del y2
    assert writeable(x)


def test_read_only_before_stays_read_only(ng):
    array = np.array([1.0, 2.0, 3.0])
    array.flags.writeable = False
    x = ng.from_numpy(array)
    w, y = saved_by_mul(ng, x)
    with pytest.raises(RuntimeError, match=LOCKED):
        x.add_(1)
    y.backward()
    assert not array.flags.writeable
    assert not x[1:]._array.flags.writeable  # views of it stay read-only too


def test_several_saves_of_one_buffer(ng):
    x = ng.tensor([1.0, 2.0, 3.0])
    w1, y1 = saved_by_mul(ng, x)
    w2 = ng.ones(2, requires_grad=True)
    with lock(ng):
        y2 = (w2 * x[1:]).exp().sum()  # saves a view of x (and exp's result)
    y1.backward()
    with pytest.raises(RuntimeError, match=LOCKED):
        x.add_(1)
    assert not writeable(x)
    y2.backward()
    assert writeable(x)
    x.add_(1)


def test_error_counts_other_saves(ng):
    x = ng.tensor([1.0, 2.0])
    w1, y1 = saved_by_mul(ng, x)
    w2, y2 = saved_by_mul(ng, x)
    with pytest.raises(RuntimeError, match=re.escape("MulBackward0 (and 1 other save) under")):
        x.add_(1)


def test_nested_contexts_and_outside(ng):
    x = ng.tensor([1.0, 2.0])
    w = ng.ones(2, requires_grad=True)
    graph = ng.autograd.graph
    with graph.lock_saved_tensors():
        with graph.lock_saved_tensors():
            y1 = (w * x).sum()
        y2 = (w * x * 2).sum()  # still locked: the outer context is on
    y3 = (w * x).sum()  # outside: not locked
    y1.backward()
    with pytest.raises(RuntimeError, match=LOCKED):
        x.add_(1)
    y2.backward()
    x.add_(1)  # y3 saved x without the lock; the write breaks y3 as in torch
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y3.backward()


def test_pack_hooks_take_precedence(ng):
    x = ng.tensor([1.0, 2.0])
    w = ng.ones(2, requires_grad=True)
    with lock(ng), ng.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (w * x).sum()
    x.add_(1)  # the pack hook kept a copy; nothing is locked
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])


def test_grad_accumulation_into_a_locked_grad(ng):
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    v = ng.ones(2, requires_grad=True)
    with lock(ng):
        z = (v * w.grad).sum()  # saves w.grad
    (w * 2).sum().backward()  # accumulates: makes a new .grad, not an error
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 5.0])
    z.backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0])  # the saved grad was not written


def test_saved_output_is_locked(ng):
    a = ng.tensor([0.5, 1.0], requires_grad=True)
    with lock(ng):
        b = a.exp()  # exp saves its result
    with pytest.raises(RuntimeError, match=re.escape("saved by ExpBackward0 under")):
        b.add_(1)
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)
    b.detach().add_(1)


def test_custom_function_saves(ng):
    class Square(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with lock(ng):
        y = Square.apply(x)
    with pytest.raises(RuntimeError, match=re.escape("saved by SquareBackward under lock_saved_tensors()")):
        x.detach().add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    x.detach().add_(1)


def test_threads(ng):
    def work(i: int) -> None:
        for _ in range(20):
            x = ng.full((4,), float(i))
            w = ng.ones(4, requires_grad=True)
            with lock(ng):
                y = (w * x).sum()
            with pytest.raises(RuntimeError, match=LOCKED):
                x.add_(1)
            with pytest.raises(ValueError, match=READ_ONLY):
                x.numpy()[0] = 1.0
            y.backward()
            x.add_(1)
            assert w.grad[0].item() == float(i)

    run_in_threads(work, 8)
    assert not ng._C._is_lock_saved_tensors_enabled()


def test_mode_is_thread_local(ng):
    seen = []
    with lock(ng):
        run_in_threads(lambda i: seen.append(ng._C._is_lock_saved_tensors_enabled()), 2)
        assert ng._C._is_lock_saved_tensors_enabled()
    assert seen == [False, False]
    assert not ng._C._is_lock_saved_tensors_enabled()


def test_no_leaks(ng):
    gc.collect()  # nodes of earlier tests waiting for the collector count too
    start = ng._C._live_node_count()
    x = ng.tensor([1.0, 2.0])
    for _ in range(3):
        w, y = saved_by_mul(ng, x)
        with pytest.raises(RuntimeError, match=LOCKED):
            x.add_(1)
        y.backward()
    w, y = saved_by_mul(ng, x)
    ref = weakref.ref(y.grad_fn)
    del w, y
    gc.collect()
    assert ref() is None
    assert ng._C._live_node_count() == start
    assert writeable(x)
    probe = weakref.ref(x)
    del x
    gc.collect()
    assert probe() is None
