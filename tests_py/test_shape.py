"""The shape ops: flip, fliplr, flipud, roll, repeat, tile, repeat_interleave, narrow,
select, flatten, unflatten, movedim/moveaxis, swapaxes/swapdims, triu/tril (and their
in-place forms), diag, diagonal, diag_embed, unfold and the T/mT/H/mH properties.

Values, node names, saved attributes, gradients and second order of one call of each
come from the SHAPE rows of op_specs.py; here, each against torch: which results are
views (and what writing through them does), other dtypes, empty and 0-dim inputs, the
in-place forms, the deprecation warnings and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import assert_same_error, from_np, graph_desc, run_both, to_np

DATA = np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 10

# fmt: off
VIEWS = [
    pytest.param(lambda t: t.narrow(2, 1, 2), id="narrow"),
    pytest.param(lambda t: t.select(1, 2), id="select"),
    pytest.param(lambda t: t.flatten(1), id="flatten"),
    pytest.param(lambda t: t.unflatten(2, (2, 2)), id="unflatten"),
    pytest.param(lambda t: t.movedim(0, 2), id="movedim"),
    pytest.param(lambda t: t.moveaxis((0, 1), (1, 0)), id="moveaxis"),
    pytest.param(lambda t: t.swapdims(0, 2), id="swapdims"),
    pytest.param(lambda t: t.diagonal(1, 1, 2), id="diagonal"),
    pytest.param(lambda t: t.unfold(2, 2, 2), id="unfold"),
    pytest.param(lambda t: t.mT, id="mT"),
    pytest.param(lambda t: t[0].T, id="T"),
    pytest.param(lambda t: t[0].H, id="H"),
]
COPIES = [
    pytest.param(lambda t: t.flip(0), id="flip"),
    pytest.param(lambda t: t.roll(1, 2), id="roll"),
    pytest.param(lambda t: t.repeat(1, 1, 1), id="repeat_once"),
    pytest.param(lambda t: t.tile((1,)), id="tile_once"),
    pytest.param(lambda t: t.repeat_interleave(1, 0), id="repeat_interleave"),
    pytest.param(lambda t: t.triu(), id="triu"),
    pytest.param(lambda t: t[0].diag(), id="diag"),
    pytest.param(lambda t: t.flatten(0, 1).t().flatten(), id="flatten_of_a_transpose"),
]
# fmt: on


@pytest.mark.parametrize("make", VIEWS)
def test_views_share_memory_and_version_with_the_input(ng, make):
    x = from_np(ng, DATA)
    v = make(x)
    assert v._is_view() and v._base is x
    before = v._version
    with ng.no_grad():
        x.add_(1)
    assert v._version == before + 1
    np.testing.assert_allclose(to_np(v), to_np(make(from_np(ng, DATA + 1))))


@pytest.mark.parametrize("make", VIEWS)
def test_writing_through_a_view_rebases_the_input_history(ng, make):
    """An in-place op on the view reaches the base: its grad_fn is CopySlices."""

    def run(lib):
        leaf = from_np(lib, DATA, requires_grad=True)
        base = leaf * 1
        make(base).mul_(3)
        (base * base).sum().backward()
        return base.grad_fn.name(), to_np(leaf.grad)

    (node, grad), (expected_node, expected_grad) = run_both(run)
    assert node == expected_node
    np.testing.assert_allclose(grad, expected_grad)


@pytest.mark.parametrize("make", COPIES)
def test_copies_do_not_alias_the_input(ng, make):
    x = from_np(ng, DATA)
    y = make(x)
    assert y._base is not x
    with ng.no_grad():
        y.zero_()
    np.testing.assert_array_equal(to_np(x), DATA)


# fmt: off
VALUES = [
    pytest.param(lambda lib, t: lib.flip(t, (0, 2)), id="flip"),
    pytest.param(lambda lib, t: t.flip(()), id="flip_no_dims"),
    pytest.param(lambda lib, t: lib.flipud(t), id="flipud"),
    pytest.param(lambda lib, t: t.fliplr(), id="fliplr"),
    pytest.param(lambda lib, t: t.roll((1, -5), (2, 0)), id="roll_dims"),
    pytest.param(lambda lib, t: lib.roll(t, 7), id="roll_flat"),
    pytest.param(lambda lib, t: t.roll(-1, dims=-1), id="roll_negative"),
    pytest.param(lambda lib, t: t.repeat((2, 1, 1, 2)), id="repeat_new_dim"),
    pytest.param(lambda lib, t: t.repeat(1, 0, 2), id="repeat_zero"),
    pytest.param(lambda lib, t: t.tile(2, 1), id="tile_padded"),
    pytest.param(lambda lib, t: lib.repeat_interleave(t, 2), id="repeat_interleave_flat"),
    pytest.param(lambda lib, t: t.repeat_interleave(lib.tensor([1, 0, 2]), dim=1), id="repeat_interleave_tensor"),
    pytest.param(lambda lib, t: t.repeat_interleave(lib.tensor(2), dim=-1, output_size=8), id="repeat_interleave_0dim_repeats"),
    pytest.param(lambda lib, t: t.repeat_interleave(lib.tensor([3]), dim=0), id="repeat_interleave_one_count"),
    pytest.param(lambda lib, t: t.narrow(1, lib.tensor(1), 2), id="narrow_tensor_start"),
    pytest.param(lambda lib, t: lib.narrow(t, 0, 2, 0), id="narrow_empty"),
    pytest.param(lambda lib, t: lib.flatten(t, -2, -1), id="flatten_negative"),
    pytest.param(lambda lib, t: lib.unflatten(t, 1, [3, 1]), id="unflatten_list"),
    pytest.param(lambda lib, t: lib.moveaxis(t, -1, 0), id="moveaxis"),
    pytest.param(lambda lib, t: lib.swapaxes(t, 0, -1), id="swapaxes"),
    pytest.param(lambda lib, t: lib.triu(t, -1), id="triu_below"),
    pytest.param(lambda lib, t: t.tril(10), id="tril_far"),
    pytest.param(lambda lib, t: t.triu(-10), id="triu_far"),
    pytest.param(lambda lib, t: t.tril(-(2**62)), id="tril_huge"),
    pytest.param(lambda lib, t: lib.diag(t[0], -2), id="diag_matrix_below"),
    pytest.param(lambda lib, t: lib.diag(t[0, 0], 2), id="diag_vector_above"),
    pytest.param(lambda lib, t: lib.diagonal(t, 0, -1, 0), id="diagonal_dims"),
    pytest.param(lambda lib, t: t.diagonal(5), id="diagonal_empty"),
    pytest.param(lambda lib, t: t.diag_embed(-1, 1, 0), id="diag_embed"),
    pytest.param(lambda lib, t: t.unfold(-1, 4, 3), id="unfold_whole"),
    pytest.param(lambda lib, t: t.unfold(1, 0, 1), id="unfold_size_0"),
]
# fmt: on


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("op", VALUES)
def test_values_and_dtypes_match_torch(ng, op, dtype):
    def run(lib):
        t = from_np(lib, DATA * 10 % 3).to(getattr(lib, dtype))
        out = op(lib, t)
        return to_np(out), str(out.dtype).rsplit(".", 1)[-1]

    (got, got_dtype), (expected, expected_dtype) = run_both(run)
    assert got_dtype == expected_dtype
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


# fmt: off
EDGES = [
    pytest.param(lambda lib, t: t.flip(0), id="flip_0dim"),
    pytest.param(lambda lib, t: t.roll(3), id="roll_0dim"),
    pytest.param(lambda lib, t: t.repeat(()), id="repeat_0dim_no_repeats"),
    pytest.param(lambda lib, t: t.repeat(2, 3), id="repeat_0dim"),
    pytest.param(lambda lib, t: t.repeat_interleave(3), id="repeat_interleave_0dim"),
    pytest.param(lambda lib, t: t.flatten(), id="flatten_0dim"),
    pytest.param(lambda lib, t: t.unfold(0, 1, 1), id="unfold_0dim"),
    pytest.param(lambda lib, t: t.movedim(0, -1), id="movedim_0dim"),
]
# fmt: on


@pytest.mark.parametrize("op", EDGES)
def test_0dim_inputs_and_their_gradients(ng, op):
    def run(lib):
        t = lib.tensor(1.5, requires_grad=True)
        out = op(lib, t)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        return to_np(out), to_np(t.grad), graph_desc(out.grad_fn)

    (got, grad, graph), (expected, expected_grad, expected_graph) = run_both(run)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(grad, expected_grad)
    assert graph == expected_graph


# fmt: off
GRAPHS = [
    pytest.param(lambda lib, t: t.repeat_interleave(2), id="repeat_interleave_flat"),
    pytest.param(lambda lib, t: t.repeat_interleave(lib.tensor([1, 2, 0] * 4)), id="repeat_interleave_tensor_flat"),
    pytest.param(lambda lib, t: t.flatten(), id="flatten_is_a_view"),
    pytest.param(lambda lib, t: t.t().flatten(), id="flatten_copies"),
    pytest.param(lambda lib, t: t.t().unflatten(0, (2, 2)), id="unflatten_of_a_transpose"),
    pytest.param(lambda lib, t: t.flatten(1, 1), id="flatten_nothing"),
    pytest.param(lambda lib, t: t.diag().diag(), id="diag_diag"),
]
# fmt: on


@pytest.mark.parametrize("op", GRAPHS)
def test_recorded_graphs_match_torch(ng, op):
    def run(lib):
        t = from_np(lib, DATA[0], requires_grad=True)
        out = op(lib, t)
        out.sum().backward()
        return graph_desc(out.grad_fn), out is t, to_np(t.grad)

    (graph, same, grad), (expected_graph, expected_same, expected_grad) = run_both(run)
    assert (graph, same) == (expected_graph, expected_same)
    np.testing.assert_array_equal(grad, expected_grad)


# fmt: off
LAYOUTS = [
    pytest.param(lambda t: t.flip(0), id="flip"),
    pytest.param(lambda t: t.roll(1, 0), id="roll"),
    pytest.param(lambda t: t.triu(), id="triu"),
    pytest.param(lambda t: t.repeat(1, 1), id="repeat"),
    pytest.param(lambda t: t.diag_embed(), id="diag_embed"),
]
# fmt: on


@pytest.mark.parametrize("make", LAYOUTS)
def test_result_strides_of_a_transposed_input(ng, make):
    """flip keeps a transposed layout (torch's preserve_format), the others are
    contiguous."""
    got, expected = run_both(lambda lib: tuple(make(lib.ones(3, 4).t()).stride()))
    assert got == expected


@pytest.mark.parametrize("name", ["triu_", "tril_"])
def test_inplace_triangle(ng, name):
    def run(lib):
        leaf = from_np(lib, DATA, requires_grad=True)
        y = leaf * 2
        version = y._version
        out = getattr(y, name)(diagonal=1)
        (y * y).sum().backward()
        return out is y, y._version - version, y.grad_fn.name(), y.grad_fn._saved_diagonal, to_np(y), to_np(leaf.grad)

    got, expected = run_both(run)
    assert got[:4] == expected[:4]
    np.testing.assert_array_equal(got[4], expected[4])
    np.testing.assert_array_equal(got[5], expected[5])


@pytest.mark.parametrize("name", ["triu_", "tril_"])
def test_inplace_triangle_of_a_leaf_is_refused(ng, name):
    assert_same_error(lambda lib: getattr(lib.ones(2, 2, requires_grad=True), name)(), length=200)


def test_inplace_triangle_through_a_view(ng):
    def run(lib):
        leaf = from_np(lib, DATA, requires_grad=True)
        y = leaf.clone()
        y[1].triu_()
        y.sum().backward()
        return y.grad_fn.name(), to_np(leaf.grad)

    (node, grad), (expected_node, expected_grad) = run_both(run)
    assert node == expected_node
    np.testing.assert_array_equal(grad, expected_grad)


def test_repeat_interleave_of_counts_alone(ng):
    got, expected = run_both(
        lambda lib: [
            to_np(lib.repeat_interleave(lib.tensor([2, 0, 3]))),
            to_np(lib.repeat_interleave(lib.tensor([2]), output_size=2)),
        ]
    )
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize(
    ("shape", "warns"),
    [((2, 3), None), ((2, 1, 3), "dimension other than 2"), ((), "0-D")],
)
def test_T_warns_as_torch_does(ng, shape, warns):
    """(torch warns once per process, so one case for each of its two warnings.)"""
    x = ng.zeros(shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.T
    assert tuple(y.shape) == tuple(reversed(shape))
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert bool(messages) == bool(warns)
    assert all(warns in m for m in messages)


@pytest.mark.parametrize("name", ["mT", "H", "mH"])
def test_0dim_matrix_properties_are_the_identity_with_a_warning(ng, name):
    x = ng.tensor(2.0)
    with pytest.warns(UserWarning, match=f"Tensor.{name} is deprecated on 0-D tensors"):
        assert getattr(x, name) is x


# fmt: off
ERRORS = [
    pytest.param(lambda lib, x: x.flip(2), None, id="flip_dim_out_of_range"),
    pytest.param(lambda lib, x: x.flip(0, -2), None, id="flip_repeated_dim"),
    pytest.param(lambda lib, x: lib.flip(x, 0), None, id="flip_int_dims"),
    pytest.param(lambda lib, x: x[0].fliplr(), None, id="fliplr_1d"),
    pytest.param(lambda lib, x: x[0, 0].flipud(), None, id="flipud_0d"),
    pytest.param(lambda lib, x: x.roll((1, 2)), None, id="roll_shifts_without_dims"),
    pytest.param(lambda lib, x: x.roll((1, 2), (0,)), None, id="roll_shifts_and_dims_differ"),
    pytest.param(lambda lib, x: x.roll((), ()), None, id="roll_no_shifts"),
    pytest.param(lambda lib, x: x.roll(1, 2), None, id="roll_dim_out_of_range"),
    pytest.param(lambda lib, x: x[0, 0].roll(1, 0), None, id="roll_0d_with_dim"),
    pytest.param(lambda lib, x: lib.roll(x, 1.5), None, id="roll_float_shift"),
    pytest.param(lambda lib, x: x.flip(), None, id="flip_no_dims"),
    pytest.param(lambda lib, x: x.repeat(), None, id="repeat_no_repeats"),
    pytest.param(lambda lib, x: x.tile(), None, id="tile_no_dims"),
    pytest.param(lambda lib, x: x.repeat(2), None, id="repeat_fewer_dims"),
    pytest.param(lambda lib, x: x.repeat(2, -1), None, id="repeat_negative"),
    pytest.param(lambda lib, x: x.repeat(1.5), None, id="repeat_float"),
    pytest.param(lambda lib, x: x.tile((-1,)), None, id="tile_negative"),
    pytest.param(lambda lib, x: x.repeat_interleave(-1), None, id="repeat_interleave_negative"),
    pytest.param(lambda lib, x: x.repeat_interleave(2, 2), None, id="repeat_interleave_dim_out_of_range"),
    pytest.param(lambda lib, x: x.repeat_interleave(lib.tensor([1, -1, 1]), 0), None, id="repeat_interleave_negative_count"),
    pytest.param(lambda lib, x: x.repeat_interleave(lib.tensor([1, 1]), 0), None, id="repeat_interleave_count_size"),
    pytest.param(lambda lib, x: x.repeat_interleave(lib.tensor([[1]]), 0), None, id="repeat_interleave_2d_counts"),
    pytest.param(lambda lib, x: x.repeat_interleave(lib.tensor([1.0, 1.0, 1.0]), 0), None, id="repeat_interleave_float_counts"),
    pytest.param(lambda lib, x: x.repeat_interleave(2, output_size=23), None, id="repeat_interleave_output_size"),
    pytest.param(lambda lib, x: lib.repeat_interleave(lib.tensor([[2]])), None, id="repeat_interleave_counts_2d"),
    pytest.param(lambda lib, x: x.narrow(0, 2, 2), None, id="narrow_past_the_end"),
    pytest.param(lambda lib, x: x.narrow(0, 0, -1), None, id="narrow_negative_length"),
    pytest.param(lambda lib, x: x.narrow(0, 4, 0), None, id="narrow_start_out_of_range"),
    pytest.param(lambda lib, x: x.narrow(0, -4, 1), None, id="narrow_negative_start_out_of_range"),
    pytest.param(lambda lib, x: x[0, 0].narrow(0, 0, 1), None, id="narrow_0d"),
    pytest.param(lambda lib, x: x.narrow(2, 0, 1), None, id="narrow_dim_out_of_range"),
    pytest.param(lambda lib, x: lib.select(x, 0, 3), None, id="select_index_out_of_range"),
    pytest.param(lambda lib, x: x.select(-3, 0), None, id="select_dim_out_of_range"),
    pytest.param(lambda lib, x: x.flatten(1, 0), None, id="flatten_start_after_end"),
    pytest.param(lambda lib, x: x.flatten(0, 2), None, id="flatten_dim_out_of_range"),
    pytest.param(lambda lib, x: x.unflatten(1, (3, 2)), None, id="unflatten_bad_sizes"),
    pytest.param(lambda lib, x: x.unflatten(1, (0, -1)), None, id="unflatten_zero_and_minus_one"),
    pytest.param(lambda lib, x: x.unflatten(1, ()), None, id="unflatten_no_sizes"),
    pytest.param(lambda lib, x: x.unflatten(1, (-1, -1)), "unflatten got an unexpected error:\nonly one dimension can be inferred", id="unflatten_two_inferred"),
    pytest.param(lambda lib, x: x[0, 0].unflatten(0, (1,)), "unexpected error:\nDimension specified as 0 but tensor has no dimensions", id="unflatten_0d"),
    pytest.param(lambda lib, x: x.unflatten(0, 3), None, id="unflatten_int_sizes"),
    pytest.param(lambda lib, x: x.movedim((0, 1), (0,)), None, id="movedim_lengths_differ"),
    pytest.param(lambda lib, x: x.movedim((0, -2), (0, 1)), None, id="movedim_repeated_source"),
    pytest.param(lambda lib, x: x.movedim((0, 1), (1, 1)), None, id="movedim_repeated_destination"),
    pytest.param(lambda lib, x: x.movedim(2, 0), None, id="movedim_dim_out_of_range"),
    pytest.param(lambda lib, x: x.swapaxes(0, 2), None, id="swapaxes_dim_out_of_range"),
    pytest.param(lambda lib, x: x[0].triu(), None, id="triu_1d"),
    pytest.param(lambda lib, x: x[0, 0].tril(), None, id="tril_0d"),
    pytest.param(lambda lib, x: x.unsqueeze(0).diag(), None, id="diag_3d"),
    pytest.param(lambda lib, x: x[0, 0].diag(), None, id="diag_0d"),
    pytest.param(lambda lib, x: x.diagonal(0, 1, -1), None, id="diagonal_same_dims"),
    pytest.param(lambda lib, x: x.diagonal(0, 0, 2), None, id="diagonal_dim_out_of_range"),
    pytest.param(lambda lib, x: x[0].diagonal(), None, id="diagonal_1d"),
    pytest.param(lambda lib, x: x.diag_embed(0, 1, 1), None, id="diag_embed_same_dims"),
    pytest.param(lambda lib, x: x.diag_embed(0, 0, 3), None, id="diag_embed_dim_out_of_range"),
    pytest.param(lambda lib, x: x.unfold(1, 5, 1), None, id="unfold_size_too_large"),
    pytest.param(lambda lib, x: x.unfold(1, 2, 0), None, id="unfold_step_0"),
    pytest.param(lambda lib, x: x.unfold(1, -1, 1), None, id="unfold_negative_size"),
    pytest.param(lambda lib, x: x.unfold(2, 1, 1), None, id="unfold_dim_out_of_range"),
    pytest.param(lambda lib, x: x[0, 0].unfold(0, 2, 1), None, id="unfold_0d_too_large"),
    pytest.param(lambda lib, x: x[0].mT, None, id="mT_1d"),
    pytest.param(lambda lib, x: x[0].mH, None, id="mH_1d"),
    pytest.param(lambda lib, x: x.unsqueeze(0).H, None, id="H_3d"),
    pytest.param(lambda lib, x: x[0].H, None, id="H_1d"),
    pytest.param(lambda lib, x: x[0, 0].diag_embed(), None, id="diag_embed_0d"),
]
# fmt: on


@pytest.mark.parametrize(("call", "key"), ERRORS)
def test_errors_match_torch(ng, call, key):
    """torch's message (its first 120 characters, or the key phrase for those that
    go on with torch's C++ stack)."""

    def run(lib):
        call(lib, lib.ones(3, 4))

    assert_same_error(run, key=key, length=120)
    # the library stays usable
    assert ng.ones(2, 2).triu().sum().item() == 3.0
