"""Small ndarrays whose last reference a tensor drops are kept and handed out
again as new outputs (Note [Small ndarrays are recycled] in
kernels/array_recycling.cpp). Only an array nobody else can see may be reused:
these tests fail if one that Python can still reach, or that differs from a
fresh np.empty, is ever handed out again."""

from __future__ import annotations

import gc
import weakref

import numpy as np

import npgrad as ng


def churn(n=64, shape=(16,)):
    # Many outputs of the shape, freed at once: reuses whatever was kept.
    x = ng.ones(shape)
    outs = [x * float(i) for i in range(n)]
    for i, o in enumerate(outs):
        assert o.numpy().flags.writeable
        assert (o.numpy() == i).all()
    return outs


def test_arrays_python_holds_keep_their_values():
    held = []
    for i in range(32):
        t = ng.ones(16) * float(i)
        held.append(t.numpy())
        del t
    churn()
    for i, a in enumerate(held):
        assert (a == i).all()


def test_user_array_under_from_numpy_is_never_reused():
    a = np.full(16, 3.0, np.float32)
    t = ng.from_numpy(a)
    assert storage(t) is a
    del t
    churn()
    assert (a == 3.0).all()


def test_weakly_referenced_user_array_dies_with_its_tensor():
    a = np.full(16, 3.0, np.float32)
    w = weakref.ref(a)
    t = ng.from_numpy(a)
    del a
    assert w() is not None
    del t
    gc.collect()
    assert w() is None


def storage(t):
    # numpy() is a view of the tensor's own ndarray, its base.
    a = t.numpy().base
    assert isinstance(a, np.ndarray) and a.base is None
    return a


def test_weakly_referenced_array_dies_with_its_tensor():
    t = ng.ones(16) * 2.0
    w = weakref.ref(storage(t))
    del t
    gc.collect()
    assert w() is None
    churn()
    assert w() is None


def test_read_only_array_is_not_reused():
    t = ng.ones(16) * 2.0
    a = storage(t)
    a.flags.writeable = False
    del a, t
    outs = churn()
    for o in outs:
        assert o.numpy().flags.writeable
    outs[0].add_(1)  # writes through the kernels too
    assert (outs[0].numpy() == 1).all()


def test_views_and_other_shapes_get_their_own_arrays():
    x = ng.arange(32, dtype=ng.float32)
    v = x[::2]  # a view: its ndarray has a base and is never kept
    del v
    outs = churn(shape=(4, 4))
    for o in outs:
        assert o.shape == (4, 4)
        assert o.numpy().strides == (16, 4)
    assert x.tolist() == list(range(32))
    s = ng.ones(()) * 5.0
    assert s.item() == 5.0 and s.numpy().shape == ()


def test_gradients_through_reused_arrays_are_correct():
    for _ in range(3):
        x = ng.tensor([0.5] * 16, requires_grad=True)
        y = x
        for _ in range(50):
            y = (y * 1.01).sin()
        y.sum().backward()
        first = x.grad.numpy().copy()
        x2 = ng.tensor([0.5] * 16, requires_grad=True)
        y2 = x2
        for _ in range(50):
            y2 = (y2 * 1.01).sin()
        y2.sum().backward()
        assert (x2.grad.numpy() == first).all()
