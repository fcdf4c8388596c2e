"""split, split_with_sizes, chunk and unbind: several views that share one
backward node (SplitBackward0, SplitWithSizesBackward0, UnbindBackward0).

Values, node names, saved attributes, gradients and second order of one piece
come from the rows of op_specs.py; here: every piece at once, pieces without a
gradient, the ban on writing to them in place, the edge sizes and the errors,
each against torch."""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_same_error, from_np, run_both, to_np

DATA = np.arange(24, dtype=np.float64).reshape(4, 6) / 10

# fmt: off
SPLITS = [
    pytest.param(lambda t: t.split(4, 1), id="split_uneven"),
    pytest.param(lambda t: t.split(2), id="split_even"),
    pytest.param(lambda t: t.split([1, 0, 3]), id="sections_with_empty"),
    pytest.param(lambda t: t.split_with_sizes([5, 1], -1), id="split_with_sizes"),
    pytest.param(lambda t: t.chunk(4, 1), id="chunk"),
    pytest.param(lambda t: t.chunk(5), id="chunk_fewer_pieces"),
    pytest.param(lambda t: t.unbind(), id="unbind"),
    pytest.param(lambda t: t.unbind(-1), id="unbind_last_dim"),
]
# fmt: on


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("used", ["all", "first", "last", "middle"])
def test_gradient_of_the_used_pieces(ng, split, used):
    """Each piece weighted by its index; pieces that take no part get zeros."""

    def grad(lib):
        x = from_np(lib, DATA, requires_grad=True)
        pieces = split(x)
        keep = {"all": range(len(pieces)), "first": [0], "last": [len(pieces) - 1], "middle": [len(pieces) // 2]}[used]
        loss = sum((pieces[i] * (i + 1)).sum() for i in keep)
        loss.backward()
        return [p.shape for p in pieces], to_np(x.grad)

    (shapes, got), (expected_shapes, expected) = run_both(grad)
    assert [tuple(s) for s in shapes] == [tuple(s) for s in expected_shapes]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("split", SPLITS)
def test_pieces_are_views_sharing_one_node(ng, split):
    x = from_np(ng, DATA, requires_grad=True)
    pieces = split(x)
    assert all(p._is_view() and p._base is x for p in pieces)
    # Held in a list: a wrapper freed between two reads could hand its id to
    # the next one, or a new wrapper at a new address could stand for the node.
    nodes = [p.grad_fn for p in pieces]
    assert all(node is nodes[0] for node in nodes)
    assert [p.output_nr for p in pieces] == list(range(len(pieces)))
    plain = split(from_np(ng, DATA))
    assert all(p.grad_fn is None and not p.requires_grad for p in plain)


def test_pieces_share_memory_with_the_input(ng):
    x = ng.zeros(2, 4)
    a, b = x.split(2, 1)
    with ng.no_grad():
        x.add_(1)  # the pieces see the write
    b.mul_(3)  # made without grad: writable in place, as in torch
    assert x.tolist() == [[1.0, 1.0, 3.0, 3.0], [1.0, 1.0, 3.0, 3.0]]
    assert a.tolist() == [[1.0, 1.0], [1.0, 1.0]]


# fmt: off
WRITES = [
    pytest.param(lambda lib: lib.ones(4, 2, requires_grad=True).clone().split(2)[1].add_(1), id="split_piece"),
    pytest.param(lambda lib: lib.ones(4, 2, requires_grad=True).split(2)[0].mul_(2), id="piece_of_a_leaf"),
    pytest.param(lambda lib: lib.ones(4, 2, requires_grad=True).clone().chunk(2)[1].zero_(), id="chunk_piece"),
    pytest.param(lambda lib: lib.ones(4, 2, requires_grad=True).clone().unbind(1)[1].exp_(), id="unbind_piece"),
    pytest.param(lambda lib: lib.ones(4, 2).split([1, 3])[1].add_(lib.ones(3, 2, requires_grad=True)), id="gains_grad"),
]
# fmt: on


@pytest.mark.parametrize("write", WRITES)
def test_writing_to_a_piece_in_place_is_refused(ng, write):
    err = assert_same_error(write, length=400)  # torch's whole message
    assert "This view is the output of a function that returns multiple views." in str(err)


def test_reading_grad_fn_after_the_base_was_written_is_refused(ng):
    def run(lib):
        y = lib.ones(4, 2, requires_grad=True).clone()
        pieces = y.split(2)
        y.mul_(2)
        return pieces[0].grad_fn

    err = assert_same_error(run, length=80)
    assert "its base or another view of its base has been modified inplace" in str(err)


def test_a_no_grad_view_of_a_leaf_reports_the_no_grad_rule_first(ng):
    """torch checks how a view was made before whether its base is a leaf."""

    def run(lib):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = x[:1]
        v.add_(lib.ones(1, requires_grad=True))

    assert_same_error(run, length=200)


# fmt: off
EDGES = [
    pytest.param(lambda lib: lib.zeros(0, 3).split(0), id="split_0_of_empty"),
    pytest.param(lambda lib: lib.zeros(0, 3).split(2), id="split_of_empty"),
    pytest.param(lambda lib: lib.zeros(0, 3).chunk(2), id="chunk_of_empty"),
    pytest.param(lambda lib: lib.zeros(5).chunk(6), id="chunk_more_than_size"),
    pytest.param(lambda lib: lib.zeros(3, 0).unbind(1), id="unbind_empty_dim"),
    pytest.param(lambda lib: lib.zeros(2, 3).split([3], 1), id="one_section"),
]
# fmt: on


@pytest.mark.parametrize("build", EDGES)
def test_edge_sizes(ng, build):
    got, expected = run_both(lambda lib: [tuple(p.shape) for p in build(lib)])
    assert got == expected


# fmt: off
ERRORS = [
    pytest.param(lambda lib: lib.ones(4, 6).split(-1, 5), id="negative_split_size"),
    pytest.param(lambda lib: lib.ones(4, 6).split(0), id="zero_split_size"),
    pytest.param(lambda lib: lib.ones(4, 6).split([1, 2]), id="sections_do_not_sum"),
    pytest.param(lambda lib: lib.ones(4, 6).split([5, -1]), id="negative_section"),
    pytest.param(lambda lib: lib.ones(4, 6).split(2, 2), id="dim_out_of_range"),
    pytest.param(lambda lib: lib.tensor(1.0).split(1), id="split_0_dim"),
    pytest.param(lambda lib: lib.tensor(1.0).split([1]), id="split_with_sizes_0_dim"),
    pytest.param(lambda lib: lib.split(lib.ones(3), 1.5), id="float_split_size"),
    pytest.param(lambda lib: lib.split_with_sizes(lib.ones(3), 1), id="int_split_sizes"),
    pytest.param(lambda lib: lib.ones(3).chunk(0), id="zero_chunks"),
    pytest.param(lambda lib: lib.tensor(1.0).chunk(0), id="chunk_0_dim_first"),
    pytest.param(lambda lib: lib.ones(3).chunk(1, -2), id="chunk_dim_out_of_range"),
    pytest.param(lambda lib: lib.chunk(lib.ones(3), 2.0), id="float_chunks"),
    pytest.param(lambda lib: lib.tensor(1.0).unbind(), id="unbind_0_dim"),
    pytest.param(lambda lib: lib.ones(2).unbind(1), id="unbind_dim_out_of_range"),
    pytest.param(lambda lib: lib.ones(2).unbind(None), id="unbind_none_dim"),
    pytest.param(lambda lib: lib.unbind(None), id="unbind_none"),
]
# fmt: on


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_torch(ng, call):
    assert_same_error(call, length=200)
