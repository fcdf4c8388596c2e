"""The matrix product table (csrc/npgrad/ops/linalg_ops.h), entry by entry against torch.

Every row of ``npgrad._C._op_table`` of family ``"linalg"`` gets, from its factors'
shapes below: values (function and method), the node and every saved attribute the
row declares with each subset of the operands requiring grad, the order in which pack
hooks see the saved factors, gradients, gradcheck and gradgradcheck in float64, the
dtype rules (integers, float16, bfloat16, bool and mixed dtypes), the main shape
error, a non-tensor factor, and for the ops that add the product to their input the
in-place form (values, version, node, gradients, its shape and leaf errors).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import npgrad
from oracle import assert_close, assert_same_error, assert_same_result, dtype_name, from_np, run_both, to_np

LINALG = [op for op in npgrad._C._op_table if op["family"] == "linalg"]
IDS = [op["name"] for op in LINALG]
ADDS = [op for op in LINALG if op["adds_input"]]


@dataclass
class Case:
    """An entry's operand shapes (input first), a set that fails torch's main shape
    check, and for an op that adds the product: an input that broadcasts to it."""

    shapes: list[tuple[int, ...]]
    bad: list[tuple[int, ...]]
    broadcast: tuple[int, ...] | None = None
    kwargs: dict[str, float] = field(default_factory=dict)


CASES = {
    "mm": Case([(2, 3), (3, 4)], bad=[(2, 3), (4, 3)]),
    "bmm": Case([(2, 2, 3), (2, 3, 4)], bad=[(2, 2, 3), (3, 3, 4)]),
    "dot": Case([(5,), (5,)], bad=[(5,), (4,)]),
    "mv": Case([(2, 3), (3,)], bad=[(2, 3), (2,)]),
    "addmm": Case(
        [(2, 4), (2, 3), (3, 4)], bad=[(2, 4), (2, 3), (4, 3)], broadcast=(4,), kwargs={"beta": 0.5, "alpha": -2}
    ),
    "baddbmm": Case(
        [(2, 2, 4), (2, 2, 3), (2, 3, 4)],
        bad=[(2, 2, 4), (2, 2, 3), (2, 4, 3)],
        broadcast=(2, 1, 4),
        kwargs={"alpha": 3},
    ),
    "addmv": Case([(2,), (2, 3), (3,)], bad=[(2,), (2, 3), (2,)], broadcast=(1,), kwargs={"beta": 2}),
}


def _values(shape: tuple[int, ...], seed: int, integers: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if integers:  # exact in every dtype, sums included
        return rng.integers(-3, 4, shape).astype(np.float64)
    return rng.uniform(-1.0, 1.0, shape)


def _operands(lib: Any, shapes: list[tuple[int, ...]], mask: tuple[bool, ...] | None = None, **kw: Any) -> list[Any]:
    mask = mask or (False,) * len(shapes)
    return [from_np(lib, _values(s, i, **kw), requires_grad=r) for i, (s, r) in enumerate(zip(shapes, mask))]


def _call(lib: Any, op: dict[str, Any], tensors: list[Any], method: bool = False) -> Any:
    kwargs = CASES[op["name"]].kwargs
    if method:
        return getattr(tensors[0], op["name"])(*tensors[1:], **kwargs)
    return getattr(lib, op["name"])(*tensors, **kwargs)


def _attribute(value: Any) -> Any:
    """A saved attribute comparable across the libraries."""
    if value is None:
        return None
    if hasattr(value, "detach"):
        return ("tensor", to_np(value).tolist())
    if isinstance(value, tuple):
        return tuple(value)
    return float(value)


def test_every_entry_has_a_case() -> None:
    assert sorted(IDS) == sorted(CASES), "add the entry's shapes to CASES"


@pytest.mark.parametrize("method", [False, True], ids=["function", "method"])
@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_values_node_and_saved_state_match_torch(op: dict[str, Any], method: bool) -> None:
    """Each subset of the operands requiring grad: value, node, the saved attributes
    (a factor only when the other one's gradient is needed), the pack order of the
    saved factors, and the gradients."""
    shapes = CASES[op["name"]].shapes

    def run(lib: Any, mask: tuple[bool, ...]) -> list[Any]:
        tensors = _operands(lib, shapes, mask)
        packed: list[int] = []

        def pack(t: Any) -> Any:
            packed.append(next(i for i, x in enumerate(tensors) if np.array_equal(to_np(x), to_np(t))))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = _call(lib, op, tensors, method)
        facts: list[Any] = [to_np(out), dtype_name(out.dtype), type(out.grad_fn).__name__ if out.grad_fn else None]
        if out.grad_fn is None:
            return facts
        facts.append({name: _attribute(getattr(out.grad_fn, f"_saved_{name}")) for name in op["saves"]})
        facts.append(packed)
        weight = from_np(lib, _values(tuple(out.shape), 9))
        (out * weight).sum().backward()
        facts.append([to_np(t.grad) if r else None for t, r in zip(tensors, mask)])
        return facts

    for mask in itertools.product([False, True], repeat=len(shapes)):
        got, expected = run_both(lambda lib, mask=mask: run(lib, mask))
        assert_close(got[0], expected[0])
        assert got[1:3] == expected[1:3], mask
        if expected[2] is None:
            continue
        assert got[2] == op["node"]
        assert got[3].keys() == expected[3].keys()
        for name, value in expected[3].items():
            if isinstance(value, tuple) and value and value[0] == "tensor":
                assert got[3][name][0] == "tensor", (name, mask)
                assert_close(np.array(got[3][name][1]), np.array(value[1]))
            else:
                assert got[3][name] == value, (name, mask)
        assert got[4] == expected[4], mask
        for g, e in zip(got[5], expected[5]):
            assert (g is None) == (e is None)
            if e is not None:
                assert_close(g, e)


@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_gradcheck_and_gradgradcheck(ng: Any, op: dict[str, Any]) -> None:
    tensors = _operands(ng, CASES[op["name"]].shapes, (True,) * len(CASES[op["name"]].shapes))

    def f(*xs: Any) -> Any:
        return _call(ng, op, list(xs))

    assert ng.autograd.gradcheck(f, tuple(tensors))
    assert ng.autograd.gradgradcheck(f, tuple(tensors))


@pytest.mark.parametrize("op", ADDS, ids=[op["name"] for op in ADDS])
def test_input_broadcasts_to_the_product(op: dict[str, Any]) -> None:
    case = CASES[op["name"]]
    shapes = [case.broadcast, *case.shapes[1:]]

    def run(lib: Any) -> list[Any]:
        tensors = _operands(lib, shapes, (True,) * len(shapes))
        out = _call(lib, op, tensors)
        out.sum().backward()
        return [to_np(out), *(to_np(t.grad) for t in tensors)]

    for g, e in zip(*run_both(run)):
        assert_close(g, e)


DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]


def _outcome(lib: Any, op: dict[str, Any], dtypes: list[str]) -> Any:
    """The op's result on integer-valued operands of ``dtypes``, or its error."""
    tensors = [t.to(getattr(lib, d)) for t, d in zip(_operands(lib, CASES[op["name"]].shapes, integers=True), dtypes)]
    try:
        return _call(lib, op, tensors)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return e


def _assert_same_outcome(got: Any, expected: Any) -> None:
    if isinstance(expected, Exception):
        assert type(got) is type(expected), (got, expected)
        assert str(expected)[:60] in str(got)
    else:
        assert not isinstance(got, Exception), got
        assert_same_result(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_dtype_rule_matches_torch(op: dict[str, Any], dtype: str) -> None:
    """One dtype for every operand: the result keeps it (integers included), or
    torch's error (bool: "not implemented")."""
    n = len(CASES[op["name"]].shapes)
    got, expected = run_both(lambda lib: _outcome(lib, op, [dtype] * n))
    _assert_same_outcome(got, expected)


@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_mixed_dtypes_are_torch_errors(op: dict[str, Any]) -> None:
    """No promotion: any operand of another dtype is torch's error, in torch's words."""
    n = len(CASES[op["name"]].shapes)
    for i in range(n):
        for other in ("float64", "int64"):
            dtypes = ["float32"] * n
            dtypes[i] = other
            got, expected = run_both(lambda lib, dtypes=dtypes: _outcome(lib, op, dtypes))
            assert isinstance(expected, RuntimeError), dtypes
            _assert_same_outcome(got, expected)


@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_shape_error_matches_torch(op: dict[str, Any]) -> None:
    bad = CASES[op["name"]].bad
    assert_same_error(lambda lib: _call(lib, op, _operands(lib, bad)))


@pytest.mark.parametrize("op", LINALG, ids=IDS)
def test_a_factor_that_is_not_a_tensor_is_torch_type_error(op: dict[str, Any]) -> None:
    """Without beta and alpha (given them, torch's addmm and baddbmm list their
    out_dtype overload instead)."""
    shapes = CASES[op["name"]].shapes
    assert_same_error(lambda lib: getattr(lib, op["name"])(*_operands(lib, shapes[:-1]), 2))
    assert_same_error(lambda lib: getattr(_operands(lib, shapes)[0], op["name"])(*_operands(lib, shapes[1:-1]), [1.0]))


@pytest.mark.parametrize("op", ADDS, ids=[op["name"] for op in ADDS])
def test_inplace_form_matches_torch(op: dict[str, Any]) -> None:
    """Values, self returned, the version bump, the node and its saved attributes,
    and the gradients through the rebased history."""
    shapes = CASES[op["name"]].shapes

    def run(lib: Any) -> list[Any]:
        leaf, *factors = _operands(lib, shapes, (True,) * len(shapes))
        x = leaf.clone()
        returned = getattr(x, op["inplace"])(*factors, **CASES[op["name"]].kwargs)
        saved = [_attribute(getattr(x.grad_fn, f"_saved_{name}")) for name in op["saves"]]
        facts = [returned is x, x._version, type(x.grad_fn).__name__, saved, to_np(x)]
        (x * x).sum().backward()
        return [*facts, *(to_np(t.grad) for t in (leaf, *factors))]

    got, expected = run_both(run)
    assert got[0] and expected[0]
    assert got[1:3] == expected[1:3] and got[2] == op["node"]
    for g, e in zip(got[3], expected[3]):
        if isinstance(e, tuple) and e and e[0] == "tensor":
            assert_close(np.array(g[1]), np.array(e[1]))
        else:
            assert g == e
    for g, e in zip(got[4:], expected[4:]):
        assert_close(g, e)


@pytest.mark.parametrize("op", ADDS, ids=[op["name"] for op in ADDS])
def test_inplace_form_errors_match_torch(op: dict[str, Any]) -> None:
    """An input that only broadcasts to the product cannot take it in place; a leaf
    that requires grad cannot be written. Either way self is left as it was."""
    case = CASES[op["name"]]

    def broadcast(lib: Any) -> Any:
        x, *factors = _operands(lib, [case.broadcast, *case.shapes[1:]])
        try:
            getattr(x, op["inplace"])(*factors)
        finally:
            assert x._version == 0

    def leaf(lib: Any) -> Any:
        x, *factors = _operands(lib, case.shapes, (True,) + (False,) * (len(case.shapes) - 1))
        getattr(x, op["inplace"])(*factors)

    assert_same_error(broadcast)
    assert_same_error(leaf)


@pytest.mark.parametrize("op", ADDS, ids=[op["name"] for op in ADDS])
def test_beta_zero_ignores_nan_in_input(op: dict[str, Any]) -> None:
    """torch does not read the input when beta is 0: a NaN in it does not propagate."""
    shapes = CASES[op["name"]].shapes

    def run(lib: Any) -> Any:
        x, *factors = _operands(lib, shapes)
        return getattr(lib, op["name"])(x * float("nan"), *factors, beta=0)

    got, expected = run_both(run)
    assert not np.isnan(to_np(expected)).any()
    assert_close(got, expected)
