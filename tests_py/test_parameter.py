"""Tensor subclasses (Tensor._make_subclass), nn.Parameter and nn.Buffer.

A subclass instance is the Python object of its TensorImpl while it lives: the
graph hands it back (saved inputs, hooks). Its lifetime, GC traversal and the
misuse of _make_subclass must not leak or crash.
"""

from __future__ import annotations

import copy
import gc
import pickle
import weakref

import pytest

from oracle import assert_same_error


def _sub(ng):
    class MyTensor(ng.Tensor):
        pass

    return MyTensor


def test_make_subclass_is_a_detached_alias_of_the_subclass(ng):
    MyTensor = _sub(ng)
    a = ng.zeros(2, requires_grad=True)
    m = ng.Tensor._make_subclass(MyTensor, a)
    assert type(m) is MyTensor and isinstance(m, ng.Tensor)
    assert not m.requires_grad and m.is_leaf and m.grad_fn is None
    assert m.data_ptr() == a.data_ptr()
    a.detach().add_(1)  # the version counter is shared, as detach's
    assert m._version == 1 and m.tolist() == [1.0, 1.0]
    r = ng.Tensor._make_subclass(MyTensor, a, True)
    assert r.requires_grad and r.is_leaf
    assert type(ng.Tensor._make_subclass(ng.Tensor, a)) is ng.Tensor
    assert repr(m) == "MyTensor([1., 1.])"


@pytest.mark.parametrize(
    "call",
    [
        lambda ng: ng.Tensor._make_subclass(int, ng.zeros(1)),
        lambda ng: ng.Tensor._make_subclass("x", ng.zeros(1)),
        lambda ng: ng.Tensor._make_subclass(ng.nn.Parameter, 3),
        lambda ng: ng.Tensor._make_subclass(ng.nn.Parameter),
        lambda ng: ng.Tensor._make_subclass(ng.nn.Parameter, ng.zeros(1), require_grad=1),
        lambda ng: ng.Tensor._make_subclass(ng.nn.Parameter, ng.zeros(1, dtype=ng.int64), True),
        lambda ng: ng.nn.Parameter(ng.ones(2, dtype=ng.int64)),
    ],
)
def test_make_subclass_errors(call):
    assert_same_error(call)


def test_graph_hands_back_the_parameter(ng):
    p = ng.nn.Parameter(ng.ones(2))
    y = p * p
    assert y.grad_fn._saved_self is p
    seen = []
    p.register_post_accumulate_grad_hook(seen.append)
    y.sum().backward()
    assert seen == [p] and p.grad.tolist() == [2.0, 2.0]
    assert type(p.grad) is ng.Tensor


def test_parameter_repr_ops_and_defaults(ng):
    p = ng.nn.Parameter(ng.ones(2))
    assert repr(p) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"
    assert str(p) == f"{p}" == repr(p)  # print(model.weight) shows the same
    assert repr(ng.nn.Parameter()) == "Parameter containing:\ntensor([], requires_grad=True)"
    q = ng.nn.Parameter(ng.ones(2, dtype=ng.int64), requires_grad=False)
    assert repr(q) == "Parameter containing:\ntensor([1, 1])"
    for result in (p * 2, p + 0, p.detach(), p.data, p[0]):
        assert type(result) is ng.Tensor
    with ng.no_grad():
        assert p.add_(1) is p  # in place: the parameter itself
        r = ng.nn.Parameter(ng.ones(1))
    assert r.requires_grad  # no_grad does not apply to Parameter()
    assert ng.nn.Parameter.__init__ is ng.Tensor.__init__


def test_parameter_of_a_parameter_and_of_a_non_leaf(ng):
    x = ng.ones(2, requires_grad=True)
    p = ng.nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and type(p) is ng.nn.Parameter
    q = ng.nn.Parameter(p)
    assert type(q) is ng.nn.Parameter and q is not p and q.data_ptr() == p.data_ptr()


def test_deepcopy_and_pickle(ng):
    p = ng.nn.Parameter(ng.tensor([1.0, 2.0]))
    p.tag = "w"
    p.grad = ng.ones(2)
    c = copy.deepcopy(p)
    assert type(c) is ng.nn.Parameter and c.requires_grad and c.tolist() == [1.0, 2.0]
    assert c.data_ptr() != p.data_ptr() and c.grad is None
    assert copy.deepcopy([p, p])[0] is not p
    pair = copy.deepcopy([p, p])
    assert pair[0] is pair[1]
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is ng.nn.Parameter and r.tolist() == [1.0, 2.0] and r.tag == "w" and r.requires_grad
    f = pickle.loads(pickle.dumps(ng.nn.Parameter(ng.ones(1), requires_grad=False)))
    assert not f.requires_grad
    s = copy.copy(p)
    assert type(s) is ng.nn.Parameter and s is not p and s.data_ptr() == p.data_ptr() and s.tag == "w"


def test_buffer(ng):
    b = ng.nn.Buffer(ng.ones(2))
    assert type(b) is ng.Tensor and isinstance(b, ng.nn.Buffer) and b.persistent and b._is_buffer
    assert not isinstance(ng.ones(1), ng.nn.Buffer)
    assert ng.nn.Buffer(ng.ones(1), persistent=False).persistent is False
    assert ng.nn.Buffer(ng.ones(1, requires_grad=True)).requires_grad
    assert ng.nn.Buffer().shape == (0,)
    assert not isinstance(ng.nn.Parameter(ng.ones(1)), ng.nn.Buffer)
    flagged = ng.ones(1)
    flagged._is_param = True
    assert isinstance(flagged, ng.nn.Parameter) and not isinstance(flagged, ng.nn.Buffer)


def test_subclass_objects_are_freed(ng):
    MyTensor = _sub(ng)
    a = ng.ones(2, requires_grad=True)
    m = ng.Tensor._make_subclass(MyTensor, a, True)
    m.cycle = m  # a cycle through the instance __dict__
    y = m * 2  # the graph shares m's TensorImpl
    y.sum().backward()
    ref = weakref.ref(m)
    del m, y
    gc.collect()
    assert ref() is None
    p = ng.nn.Parameter(ng.ones(2))
    refp = weakref.ref(p)
    z = p * 3
    del p, z
    gc.collect()
    assert refp() is None


def test_saved_parameter_outlived_by_the_graph(ng):
    p = ng.nn.Parameter(ng.ones(2))
    y = p * p
    del p
    gc.collect()
    saved = y.grad_fn._saved_self  # a plain tensor over the same data now
    assert isinstance(saved, ng.Tensor) and saved.tolist() == [1.0, 1.0]
    y.sum().backward()
