"""PyObject preservation: a tensor's Python object lives as long as the tensor.

As in torch, when the last Python reference to a tensor goes while the graph (a
saved variable, a ``.grad``, a view's base) still holds the tensor, the Python
object is kept with it: its attributes, its weakrefs and its identity survive a
round trip through C++, and the object is freed when the graph lets the tensor go
(Note [PyObject preservation] in csrc/npgrad/tensor/tensor.h). Every test runs
against torch too (``NPGRAD_TESTS_AGAINST_TORCH=1``).
"""

from __future__ import annotations

import gc
import math
import subprocess
import sys
import threading
import weakref

import pytest

from oracle import AGAINST_TORCH, child_env, run_in_threads, to_np


def _saved_intermediate(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.note = "kept"
    ref = weakref.ref(h)
    y = h.sin()  # SinBackward0 saves h
    return x, ref, y


def test_round_trips_through_the_graph_keep_identity_and_attributes(ng):
    x, ref, y = _saved_intermediate(ng)
    gc.collect()
    first = y.grad_fn._saved_self
    assert first is ref()
    first_id = id(first)
    del first
    for i in range(3):  # given back to C++ and taken again, each time the same object
        again = y.grad_fn._saved_self
        assert id(again) == first_id and again.note == "kept" + "!" * i
        again.note += "!"
        del again
    assert y.grad_fn._saved_self.note == "kept!!!"


def test_object_is_freed_with_the_graph(ng):
    x, ref, y = _saved_intermediate(ng)
    assert ref() is not None
    y.sum().backward()  # frees the saved h: nothing holds the tensor any more
    gc.collect()
    assert ref() is None


def test_object_is_freed_when_an_unused_graph_is_dropped(ng):
    x, ref, y = _saved_intermediate(ng)
    del y
    assert ref() is None  # no gc needed: plain reference counting


def test_object_reached_through_a_weakref_outlives_the_graph(ng):
    """Python took the object back without npgrad (a weakref) and keeps it after
    the graph that owned the tensor is gone: it stays a complete tensor, with its
    data, history and attributes."""
    x, ref, y = _saved_intermediate(ng)
    obj = ref()
    del y
    gc.collect()
    assert ref() is obj and obj.note == "kept"
    assert to_np(obj).tolist() == [2.0, 4.0]
    assert obj.grad_fn.name() == "MulBackward0"
    (obj * 3).sum().backward()
    assert to_np(x.grad).tolist() == [6.0, 6.0]


def test_object_reached_through_a_weakref_and_used_keeps_the_graph_working(ng):
    x, ref, y = _saved_intermediate(ng)
    obj = ref()
    z = obj * 5  # npgrad takes the object back from the tensor
    del obj
    assert y.grad_fn._saved_self is ref()
    (y.sum() + z.sum()).backward()
    expected = [2 * math.cos(2.0) + 10, 2 * math.cos(4.0) + 10]
    assert to_np(x.grad).tolist() == pytest.approx(expected, rel=1e-6)


def test_grad_keeps_its_attributes(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    x.grad.note = "g"
    assert x.grad.note == "g"
    assert x.grad is x.grad
    ref = weakref.ref(x.grad)
    x.grad = None
    gc.collect()
    assert ref() is None


def test_view_base_keeps_its_attributes(ng):
    a = ng.tensor([1.0, 2.0, 3.0]) * 1
    a.tag = 5
    ref = weakref.ref(a)
    v = a[1:]
    del a
    assert v._base.tag == 5 and v._base is ref()
    del v
    assert ref() is None


def test_hook_registered_on_a_tensor_the_graph_keeps(ng):
    calls = []
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: calls.append(g.shape) or g * 10)
    h.marker = "m"
    ref = weakref.ref(h)
    y = h.sin()
    del h
    gc.collect()
    assert ref().marker == "m"
    y.sum().backward()
    assert len(calls) == 1
    gc.collect()
    assert ref() is None


def test_long_chain_frees_every_object(ng):
    x = ng.tensor([0.5, 0.25], dtype=ng.float64, requires_grad=True)
    y = x
    refs = []
    for _ in range(20_000):
        y = y.sin()  # each intermediate is saved by the next node
        refs.append(weakref.ref(y))
    assert sum(r() is not None for r in refs) == len(refs)
    y.sum().backward()
    del y
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_threads_free_their_objects(ng):
    refs = []
    lock = threading.Lock()

    def work(seed):
        x = ng.tensor([0.1 * seed, 0.2], dtype=ng.float64, requires_grad=True)
        y = x
        mine = []
        for _ in range(200):
            y = y.tanh()
            mine.append(weakref.ref(y))
        y.sum().backward()
        with lock:
            refs.extend(mine)

    run_in_threads(work, 8)
    gc.collect()
    assert len(refs) == 1600 and sum(r() is not None for r in refs) == 0


@pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's node counter")
def test_preserved_objects_do_not_keep_nodes_alive(ng):
    gc.collect()
    start = ng._C._live_node_count()
    x, ref, y = _saved_intermediate(ng)
    y.grad_fn._saved_self.extra = y  # a cycle through C++: graph -> h -> h.__dict__ -> y
    del y
    gc.collect()
    # As in torch, a cycle through a tensor the graph owns is not visible to the
    # GC; breaking it by hand frees everything.
    obj = ref()
    assert obj is not None
    del obj.extra, obj
    gc.collect()
    assert ref() is None
    assert ng._C._live_node_count() == start


def _object_outliving_its_graph(ng, setup):
    """A tensor whose Python object the graph kept and Python took back through a
    weakref only, then the graph let the tensor go: the object takes the
    tensor's state over."""
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    setup(h)
    ref = weakref.ref(h)
    y = h.sin()
    del h
    obj = ref()
    del y
    gc.collect()
    return x, obj


def test_retain_grad_survives_the_object_outliving_its_graph(ng):
    x, obj = _object_outliving_its_graph(ng, lambda h: h.retain_grad())
    (obj * 3).sum().backward()
    assert to_np(obj.grad).tolist() == [3.0, 3.0]


def test_collection_keeps_the_grad_of_an_object_python_reached_again(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    x.grad = x * 2  # a C++ cycle: x -> grad -> MulBackward0 -> AccumulateGrad -> x
    ref = weakref.ref(x)
    del x  # the object is kept by the tensor
    obj = ref()  # Python holds it again without npgrad's help
    gc.collect()
    assert obj.grad is not None and to_np(obj.grad).tolist() == [2.0, 4.0]


@pytest.mark.skipif(AGAINST_TORCH, reason="torch leaks C++ autograd cycles")
def test_cycle_through_an_object_outliving_its_graph_is_collected(ng):
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    x.grad = w * 1  # a grad that requires grad: x is a cycle candidate
    y = x.sin()  # the graph holds x
    ref = weakref.ref(x)
    del x
    obj = ref()
    del y  # the object takes the tensor's state over
    obj.grad = obj * 2  # a C++ cycle: obj -> grad -> MulBackward0 -> AccumulateGrad -> obj
    del obj
    gc.collect()
    assert ref() is None


def test_python_cycle_through_a_preserved_object_keeps_its_attributes(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    h.note = "kept"
    h.self = h  # a Python cycle through the tensor
    y = h.sin()
    ref = weakref.ref(h)
    del h
    gc.collect()
    saved = y.grad_fn._saved_self
    assert saved is ref() and saved.note == "kept"
    del saved.self, saved
    y.sum().backward()
    gc.collect()
    assert ref() is None


def test_finalizer_of_a_replaced_grad_may_use_its_leaf(ng):
    """The replaced .grad's object is freed by the accumulation: its finalizer
    runs no longer under the leaf's mutex (it deadlocked on it)."""
    code = f"""if True:
        import weakref, warnings
        import {ng.__name__} as ng
        warnings.simplefilter("ignore")
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward(create_graph=True)
        g = x.grad
        ran = []
        weakref.finalize(g, lambda: ran.append((x * 1).sum().item()))
        del g
        (x * 2).sum().backward(create_graph=True)
        assert ran == [3.0], ran
        print("ok")
    """
    out = subprocess.run(
        [sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_multi_grad_hook_follows_a_leaf_whose_object_outlived_its_graph(ng):
    """A leaf of an "all" multi-grad hook is reached through its Python object,
    which stays the tensor's identity when it takes the tensor's state over."""
    a = ng.ones(3, requires_grad=True)
    b = ng.ones(3, requires_grad=True)
    ref = weakref.ref(a)
    y = (a * 2).sum() + (b * 2).sum()  # the graph holds a (AccumulateGrad)
    calls = []

    def fn(grads):
        calls.append([None if g is None else to_np(g).tolist() for g in grads])

    ng.autograd.graph.register_multi_grad_hook([a, b], fn)
    del a
    obj = ref()  # Python holds the object again without npgrad's help
    del y  # the graph goes; the object takes the tensor's state over
    gc.collect()
    (obj * 3).sum().add((b * 5).sum()).backward()
    assert calls == [[[3.0, 3.0, 3.0], [5.0, 5.0, 5.0]]]
