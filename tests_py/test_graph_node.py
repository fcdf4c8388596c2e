"""Backward nodes as seen from Python: identity, name(), next_functions, metadata,
the Node ABC, AccumulateGrad and sequence numbers."""

from __future__ import annotations

import pytest

UINT64_MAX = 2**64 - 1


@pytest.fixture
def graph(ng):
    x = ng.ones(3, requires_grad=True)
    c = ng.ones(3)
    y = x * c
    z = y.sin() + x
    return x, c, y, z


def test_grad_fn_identity_is_stable(ng, graph):
    x, _, y, z = graph
    assert y.grad_fn is y.grad_fn
    assert z.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0]
    assert x.grad_fn is None


def test_name(ng, graph):
    _, _, y, z = graph
    assert y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.name() == "AddBackward0"
    assert z.grad_fn.next_functions[0][0].name() == "SinBackward0"


def test_next_functions(ng, graph):
    x, _, y, z = graph
    nf = y.grad_fn.next_functions
    assert isinstance(nf, tuple) and len(nf) == 2
    (acc, acc_nr), (none, none_nr) = nf
    assert type(acc).__name__ == "AccumulateGrad" and acc_nr == 0
    assert none is None and none_nr == 0
    (sin_node, sin_nr), (acc2, acc2_nr) = z.grad_fn.next_functions
    assert type(sin_node).__name__ == "SinBackward0" and sin_nr == 0
    assert sin_node.next_functions[0][0] is y.grad_fn
    assert acc2 is acc and acc2_nr == 0
    assert acc.next_functions == ()


def test_metadata_is_the_same_dict(ng, graph):
    _, _, y, z = graph
    meta = y.grad_fn.metadata
    assert isinstance(meta, dict)
    assert meta is y.grad_fn.metadata
    meta["key"] = "value"
    sin_node = z.grad_fn.next_functions[0][0]
    assert sin_node.next_functions[0][0].metadata == {"key": "value"}
    assert z.grad_fn.metadata == {}


def test_nodes_are_instances_of_node(ng, graph):
    _, _, y, z = graph
    Node = ng.autograd.graph.Node
    acc = y.grad_fn.next_functions[0][0]
    for node in (y.grad_fn, z.grad_fn, acc, z.grad_fn.next_functions[0][0]):
        assert isinstance(node, Node)
    assert not isinstance(y, Node)
    assert not isinstance(object(), Node)


def test_accumulate_grad(ng, graph):
    x, _, y, _ = graph
    acc = y.grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad"
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x


def test_same_accumulate_grad_from_two_consumers(ng):
    x = ng.ones(2, requires_grad=True)
    a = x * 2
    b = x.exp()
    acc_a = a.grad_fn.next_functions[0][0]
    acc_b = b.grad_fn.next_functions[0][0]
    assert acc_a is acc_b
    acc_a.metadata["seen"] = True
    assert acc_b.metadata["seen"] is True


def test_leaf_used_twice_by_one_node(ng):
    x = ng.ones(2, requires_grad=True)
    (e0, n0), (e1, n1) = (x * x).grad_fn.next_functions
    assert e0 is e1 and n0 == n1 == 0


def test_sequence_numbers_increase(ng):
    x = ng.ones(2, requires_grad=True)
    a = x * 2
    b = a.sin()
    c = b + a
    seq = [t.grad_fn._sequence_nr() for t in (a, b, c)]
    assert seq == sorted(seq) and len(set(seq)) == 3


def test_accumulate_grad_sequence_number_is_uint64_max(ng):
    x = ng.ones(2, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc._sequence_nr() == UINT64_MAX


def test_node_is_abstract(ng):
    with pytest.raises(TypeError):
        ng.autograd.graph.Node()


def test_dir_lists_raw_saved_names_for_saved_tensors(ng):
    x = ng.ones(2, requires_grad=True)
    names = dir((x * x).grad_fn)
    for n in ("_saved_self", "_saved_other", "_raw_saved_self", "_raw_saved_other"):
        assert n in names
    names = dir(x.sum().grad_fn)
    assert not [n for n in names if n.startswith("_raw_saved")]
