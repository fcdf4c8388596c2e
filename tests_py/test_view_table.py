"""The view table: every entry of csrc/npgrad/ops/view_ops.h checked against torch.

``npgrad._C._op_table`` lists the view ops as rows of family "view". For every row and
each of its calls below (an input shape and the arguments after it): values, sizes and
strides, the shared storage (offset) and version counter, ``_base``, the node and its
``_saved_*`` attributes, the gradients (against torch, gradcheck and gradgradcheck in
float64, and the nodes a double backward records), the in-place view op, and the main
argument errors. A new entry fails ``test_every_view_row_has_calls`` until it has calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import npgrad
from oracle import assert_close, assert_same_error, graph_desc, run_both, to_np

VIEWS = tuple(op for op in npgrad._C._op_table if op["family"] == "view")
ROWS = {op["name"]: op for op in VIEWS}

# (input shape, arguments after the input) per op: every form of the call.
CALLS: dict[str, list[tuple[tuple[int, ...], tuple[Any, ...]]]] = {
    "view": [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3), ((3, 2),)), ((), (1, 1))],
    "expand": [((3, 1), (2, 3, 4)), ((3, 1), (-1, 2)), ((), (2,))],
    "t": [((2, 3), ()), ((3,), ()), ((), ())],
    "transpose": [((2, 3, 4), (0, 2)), ((2, 3), (-1, 0)), ((), (0, -1))],
    "permute": [((2, 3, 4), ((2, 0, 1),)), ((2, 3), ((-1, 0),))],
    "squeeze": [((1, 3, 1), ()), ((1, 3, 1), (0,)), ((1, 3, 1), ((0, 2),)), ((1, 3, 1), (1,)), ((), (0,))],
    "unsqueeze": [((2, 3), (0,)), ((2, 3), (-1,)), ((2, 3), (2,)), ((), (0,))],
    "select": [((2, 3, 4), (1, -1)), ((2, 3), (0, 1))],
    "diagonal": [((3, 4), ()), ((3, 4), (1,)), ((2, 3, 4), (-1, 2, 0))],
    "unfold": [((2, 5), (1, 2, 2)), ((5,), (0, 3, 1)), ((), (0, 1, 1))],
}

# The main argument error of each op: (input shape, arguments).
ERRORS: dict[str, tuple[tuple[int, ...], tuple[Any, ...]]] = {
    "view": ((2, 3), (4,)),
    "expand": ((2, 3), (3, 3)),
    "t": ((2, 3, 4), ()),
    "transpose": ((2, 3), (0, 2)),
    "permute": ((2, 3), ((0, 0),)),
    "squeeze": ((1, 3), (2,)),
    "unsqueeze": ((2, 3), (4,)),
    "select": ((2, 3), (0, 5)),
    "diagonal": ((2, 3), (0, 1, 1)),
    "unfold": ((2, 3), (1, 4, 1)),
}

CASES = [(op, shape, args) for op in VIEWS for shape, args in CALLS.get(op["name"], [])]
IDS = [f"{op['name']}{shape}{args}" for op, shape, args in CASES]
INPLACE_CASES = [case for case in CASES if case[0]["inplace"]]
INPLACE_IDS = [f"{op['inplace']}{shape}{args}" for op, shape, args in INPLACE_CASES]


def _data(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _call(lib: Any, op: dict[str, Any], x: Any, args: tuple[Any, ...]) -> Any:
    """The function where torch has one, else the method."""
    if op["function"]:
        return getattr(lib, op["name"])(x, *args)
    return getattr(x, op["name"])(*args)


def _saved(fn: Any) -> dict[str, Any]:
    return {name: getattr(fn, name) for name in dir(fn) if name.startswith("_saved_")}


def test_every_view_row_has_calls() -> None:
    assert VIEWS, "no view rows in _C._op_table"
    assert sorted(CALLS) == sorted(ROWS)
    assert sorted(ERRORS) == sorted(ROWS)


@pytest.mark.parametrize(("op", "shape", "args"), CASES, ids=IDS)
def test_view_matches_torch(op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]) -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        leaf = lib.tensor(_data(shape), requires_grad=True)
        x = leaf * 1
        y = _call(lib, op, x, args)
        facts = (
            tuple(y.shape),
            y.stride(),
            y.data_ptr() - x.data_ptr(),  # the same storage, at torch's offset
            y._is_view(),
            y._base is x,
            type(y.grad_fn).__name__,
            _saved(y.grad_fn),
        )
        with lib.no_grad():
            x.mul_(2)  # the version counter is shared
        return (*facts, y._version == x._version, to_np(y))

    got, expected = run_both(run)
    assert got[:-1] == expected[:-1]
    assert_close(got[-1], expected[-1])
    assert got[5] in op["nodes"]
    assert set(got[6]) <= {f"_saved_{name}" for name in op["saves"]}


BOTH = [case for case in CASES if case[0]["function"] and case[0]["method"]]


@pytest.mark.parametrize(("op", "shape", "args"), BOTH, ids=[f"{op['name']}{shape}{args}" for op, shape, args in BOTH])
def test_view_method_matches_function(
    ng: Any, op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    x = ng.tensor(_data(shape))
    assert_close(getattr(x, op["name"])(*args), getattr(ng, op["name"])(x, *args))


@pytest.mark.parametrize(("op", "shape", "args"), CASES, ids=IDS)
def test_view_gradients(op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]) -> None:
    """The gradient against torch's, and the graph that create_graph records."""

    def run(lib: Any) -> tuple[Any, ...]:
        leaf = lib.tensor(_data(shape), requires_grad=True)
        y = _call(lib, op, leaf, args)
        w = lib.tensor(_data(tuple(y.shape), seed=1))
        (g,) = lib.autograd.grad((y * w).sum(), leaf, create_graph=True)
        return to_np(g), graph_desc(g.grad_fn)

    got, expected = run_both(run)
    assert_close(got[0], expected[0])
    assert got[1] == expected[1]


@pytest.mark.parametrize(("op", "shape", "args"), CASES, ids=IDS)
def test_view_gradcheck_and_gradgradcheck(
    ng: Any, op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    x = ng.tensor(_data(shape), requires_grad=True)

    def f(t: Any) -> Any:
        return _call(ng, op, t, args) * 1  # a copy: gradcheck writes into inputs, not views

    assert ng.autograd.gradcheck(f, (x,))
    assert ng.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize(("op", "shape", "args"), INPLACE_CASES, ids=INPLACE_IDS)
def test_inplace_view_matches_torch(op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]) -> None:
    """Note [In-place view ops]: self's geometry changes, not its elements; the version
    is bumped and the in-place node stacked on self's history."""

    def run(lib: Any) -> tuple[Any, ...]:
        leaf = lib.tensor(_data(shape), requires_grad=True)
        x = leaf * 1
        ptr = x.data_ptr()
        returned = getattr(x, op["inplace"])(*args)
        facts = (
            returned is x,
            tuple(x.shape),
            x.stride(),
            x.data_ptr() - ptr,
            x._version,
            type(x.grad_fn).__name__,
            _saved(x.grad_fn),
        )
        w = lib.tensor(_data(tuple(x.shape), seed=1))
        (x * w).sum().backward()
        return (*facts, to_np(x), to_np(leaf.grad))

    got, expected = run_both(run)
    assert got[:-2] == expected[:-2]
    assert got[0]
    assert got[5] in op["inplace_view_nodes"]
    assert_close(got[-2], expected[-2])
    assert_close(got[-1], expected[-1])


@pytest.mark.parametrize(("op", "shape", "args"), INPLACE_CASES, ids=INPLACE_IDS)
def test_inplace_view_on_a_view_keeps_the_base(
    op: dict[str, Any], shape: tuple[int, ...], args: tuple[Any, ...]
) -> None:
    """No CopySlices: the view keeps its base, the base its history."""

    def run(lib: Any) -> tuple[Any, ...]:
        leaf = lib.tensor(_data(shape), requires_grad=True)
        base = leaf * 1
        v = base.view(shape)
        getattr(v, op["inplace"])(*args)
        w = lib.tensor(_data(tuple(v.shape), seed=1))
        (v * w).sum().backward()
        return v._base is base, type(base.grad_fn).__name__, graph_desc(v.grad_fn), to_np(leaf.grad)

    got, expected = run_both(run)
    assert got[:-1] == expected[:-1]
    assert_close(got[-1], expected[-1])


@pytest.mark.parametrize("op", VIEWS, ids=[op["name"] for op in VIEWS])
def test_main_argument_error(op: dict[str, Any]) -> None:
    shape, args = ERRORS[op["name"]]
    assert_same_error(lambda lib: _call(lib, op, lib.zeros(shape), args))


@pytest.mark.parametrize("op", [op for op in VIEWS if op["inplace"]], ids=lambda op: op["inplace"])
def test_inplace_argument_error_leaves_self(op: dict[str, Any]) -> None:
    shape, args = ERRORS[op["name"]]

    def call(lib: Any) -> Any:
        return getattr(lib.zeros(shape), op["inplace"])(*args)

    assert_same_error(call)

    def after(lib: Any) -> tuple[Any, ...]:
        x = lib.zeros(shape)
        with pytest.raises((RuntimeError, IndexError)):
            getattr(x, op["inplace"])(*args)
        return tuple(x.shape), x.stride(), x._version

    got, expected = run_both(after)
    assert got == expected


@pytest.mark.parametrize("op", [op for op in VIEWS if op["function"]], ids=lambda op: op["name"])
def test_function_refuses_none(op: dict[str, Any]) -> None:
    args = CALLS[op["name"]][0][1]
    assert_same_error(lambda lib: getattr(lib, op["name"])(None, *args))


def test_typed_argument_errors() -> None:
    assert_same_error(lambda lib: lib.zeros(2, 3).transpose("a", 1))
    for call in (
        lambda lib: lib.squeeze(lib.zeros(2, 3), "a"),
        lambda lib: lib.zeros(2, 3).squeeze(1.5),
        lambda lib: lib.zeros(2, 3).squeeze_("a"),
    ):
        assert_same_error(call, length=45)
    assert_same_error(lambda lib: lib.zeros(2, 3).view("a"), "view() received an invalid combination")


@pytest.mark.parametrize("op", VIEWS, ids=[op["name"] for op in VIEWS])
def test_view_row_is_exported_and_documented(ng: Any, op: dict[str, Any]) -> None:
    if ng.__name__ == "torch":
        pytest.skip("the rows and docstrings are npgrad's")
    assert op["function"] or op["method"]
    assert op["function"] == hasattr(npgrad, op["name"])
    assert op["method"] == hasattr(npgrad.Tensor, op["name"])
    documented = [getattr(npgrad, op["name"])] if op["function"] else []
    documented += [getattr(npgrad.Tensor, op["name"])] if op["method"] else []
    for obj in documented:
        assert op["example_output"] in (obj.__doc__ or "")
        assert op["node"] in (obj.__doc__ or "")
    if op["inplace"]:
        doc = getattr(npgrad.Tensor, op["inplace"]).__doc__ or ""
        assert all(node in doc for node in op["inplace_view_nodes"])
