"""einsum against torch: the graphs it records (node names and their saved sizes,
dims and flags), its argument forms (operands, one list, the sublist format), dtypes,
the contraction path, and torch's errors for bad equations and operands.

Values, node, saved attributes, gradients and second order of the common equations
are the ``einsum_*`` rows of ``op_specs.LINALG`` (test_ops.py, test_gradients.py,
test_higher_order.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, dtype_name, from_np, run_both, to_np, torch_or_skip


def _operands(
    lib: Any, shapes: list[tuple[int, ...]], dtype: Any = np.float64, requires_grad: bool = True
) -> list[Any]:
    rng = np.random.default_rng(0)
    return [from_np(lib, rng.uniform(-1, 1, s).astype(dtype), requires_grad) for s in shapes]


def _graph(node: Any) -> str:
    """The node names below ``node`` with their saved ints and flags."""
    if node is None:
        return "None"
    saved = []
    for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
        value = getattr(node, attr)
        if isinstance(value, (bool, int, tuple, list)):
            saved.append(f"{attr[7:]}={tuple(value) if isinstance(value, (tuple, list)) else value}")
    children = ", ".join(_graph(child) for child, _ in node.next_functions)
    return f"{node.name()}[{' '.join(saved)}]({children})"


# fmt: off
EQUATIONS = [
    pytest.param("ij,jk->ik", [(2, 3), (3, 4)], id="mm"),
    pytest.param("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)], id="bmm"),
    pytest.param("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)], id="attention_scores"),
    pytest.param("ii->i", [(3, 3)], id="diagonal"),
    pytest.param("ii", [(3, 3)], id="trace"),
    pytest.param("i,i->", [(3,), (3,)], id="dot"),
    pytest.param("ij->ji", [(2, 3)], id="transpose"),
    pytest.param("ij", [(2, 3)], id="identity"),
    pytest.param("ij->", [(2, 3)], id="sum"),
    pytest.param("...ij,...jk", [(2, 2, 3), (3, 4)], id="ellipsis_broadcast"),
    pytest.param("i...,i...->...", [(3, 1, 2), (3, 4, 1)], id="ellipsis_size_one"),
    pytest.param("i,j->ij", [(2,), (3,)], id="outer"),
    pytest.param("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], id="chain"),
    pytest.param("iij->j", [(3, 3, 2)], id="repeated_then_sum"),
    pytest.param("fd,bd->bf", [(4, 3), (2, 3)], id="operands_swapped_for_layout"),
    pytest.param("acd,bed->beac", [(2, 3, 5), (4, 6, 5)], id="operands_swapped_4d"),
    pytest.param("acd,bed->baec", [(2, 3, 5), (4, 6, 5)], id="interleaved_kept"),
    pytest.param("ijk,j->i", [(2, 3, 2), (3,)], id="sum_in_one_operand"),
    pytest.param("Ab,bA->", [(2, 3), (3, 2)], id="upper_case_labels"),
    pytest.param(" i j , j k -> i k ", [(2, 3), (3, 2)], id="spaces"),
]
# fmt: on


@pytest.mark.parametrize(("equation", "shapes"), EQUATIONS)
def test_graph_values_and_gradients_match_torch(equation, shapes):
    def run(lib):
        ops = _operands(lib, shapes)
        out = lib.einsum(equation, *ops)
        graph = _graph(out.grad_fn)  # before backward frees the saved tensors
        out.backward(from_np(lib, np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        return graph, out, [op.grad for op in ops]

    (got_graph, got, got_grads), (expected_graph, expected, expected_grads) = run_both(run)
    assert got_graph == expected_graph
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected, rtol=1e-12, atol=1e-12)
    for g, e in zip(got_grads, expected_grads):
        assert_close(g, e, rtol=1e-12, atol=1e-12)


def test_argument_forms_match_torch():
    def run(lib):
        a, b = _operands(lib, [(2, 3), (3, 4)], requires_grad=False)
        return [
            lib.einsum("ij,jk", [a, b]),
            lib.einsum("ij,jk", (a, b)),
            lib.einsum(a, [0, 1], b, [1, 2]),
            lib.einsum(a, [0, 1], b, [1, 2], [2, 0]),
            lib.einsum(a, [Ellipsis, 30]),
            lib.einsum(a, [51, 0], [0]),
        ]

    got, expected = run_both(run)
    for g, e in zip(got, expected):
        assert tuple(g.shape) == tuple(e.shape)
        assert_close(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("equation", "dtypes"),
    [
        pytest.param("i->", [np.int32], id="int32_sum_widens"),
        pytest.param("i,i->", [np.int32, np.int32], id="int32_product"),
        pytest.param("ij,jk", [np.float32, np.float32], id="float32"),
        pytest.param("i,j->ij", [np.float32, np.float64], id="outer_promotes"),
    ],
)
def test_dtypes_match_torch(equation, dtypes):
    shapes = [(3,), (3,)] if equation.startswith("i,") else [(3,)] if equation == "i->" else [(2, 3), (3, 2)]

    def run(lib):
        rng = np.random.default_rng(1)
        ops = [from_np(lib, (rng.uniform(-4, 4, s)).astype(d)) for s, d in zip(shapes, dtypes)]
        return lib.einsum(equation, *ops)

    got, expected = run_both(run)
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    np.testing.assert_allclose(to_np(got), to_np(expected), rtol=1e-6)


def _vf_einsum(lib: Any) -> Any:
    """The native einsum, which takes torch's ``path`` (opt_einsum's format)."""
    return lib._VF.einsum if lib is torch_or_skip() else lib._C.einsum


def test_contraction_path_matches_torch():
    def run(lib):
        ops = _operands(lib, [(2, 3), (3, 4), (4, 5)])
        return _vf_einsum(lib)("ij,jk,kl->il", ops, path=[1, 2, 0, 1])

    got, expected = run_both(run)
    assert _graph(got.grad_fn) == _graph(expected.grad_fn)
    assert_close(got, expected, rtol=1e-12, atol=1e-12)
    assert_same_error(lambda lib: _vf_einsum(lib)("ij,jk", _operands(lib, [(2, 3), (3, 4)]), path=[0]))
    assert_same_error(lambda lib: _vf_einsum(lib)("ij,jk", _operands(lib, [(2, 3), (3, 4)]), path=[0, 0]))
    assert_same_error(lambda lib: _vf_einsum(lib)("ij,jk", _operands(lib, [(2, 3), (3, 4)]), path=[0, 5]))


# fmt: off
BAD_EQUATIONS = [
    pytest.param("ij,jk", [(2, 3)], id="fewer_operands"),
    pytest.param("ij", [(2, 3), (3,)], id="more_operands"),
    pytest.param("ij->k", [(2, 3)], id="output_label_unknown"),
    pytest.param("ij->ii", [(2, 3)], id="output_label_twice"),
    pytest.param("i1", [(2, 3)], id="bad_input_subscript"),
    pytest.param("ij->j1", [(2, 3)], id="bad_output_subscript"),
    pytest.param("ié", [(2, 3)], id="non_ascii_subscript"),
    pytest.param("ijk", [(2, 3)], id="too_many_subscripts"),
    pytest.param("...ijk", [(2, 3)], id="too_many_with_ellipsis"),
    pytest.param("..i", [(2, 3)], id="broken_ellipsis"),
    pytest.param("...i...", [(2, 3)], id="two_ellipses"),
    pytest.param("ij->.", [(2, 3)], id="broken_output_ellipsis"),
    pytest.param("...ij->......", [(2, 3)], id="two_output_ellipses"),
    pytest.param("ii", [(2, 3)], id="diagonal_sizes"),
    pytest.param("ij,ij", [(2, 3), (3, 3)], id="size_mismatch"),
    pytest.param("...i,...i", [(2, 3), (3, 3)], id="ellipsis_mismatch"),
]
# fmt: on


@pytest.mark.parametrize(("equation", "shapes"), BAD_EQUATIONS)
def test_bad_equations_raise_torchs_errors(equation, shapes):
    assert_same_error(lambda lib: lib.einsum(equation, *_operands(lib, shapes)), length=200)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda lib, a: lib.einsum(), id="no_arguments"),
        pytest.param(lambda lib, a: lib.einsum("ij"), id="no_operands"),
        pytest.param(lambda lib, a: lib.einsum("ij", []), id="empty_list"),
        pytest.param(lambda lib, a: lib.einsum(3, a), id="equation_not_str"),
        pytest.param(lambda lib, a: lib.einsum("i,i", a[0], 3), id="operand_not_tensor"),
        pytest.param(lambda lib, a: lib.einsum(a, [0, 60]), id="sublist_out_of_range"),
        pytest.param(lambda lib, a: lib.einsum("i,i->", a[0], a[0].double()), id="dtype_mismatch"),
    ],
)
def test_bad_arguments_raise_torchs_errors(call):
    assert_same_error(lambda lib: call(lib, _operands(lib, [(2, 3)], np.float32, False)[0]), length=200)
