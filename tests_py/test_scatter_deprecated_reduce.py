"""torch's deprecated scatter(dim, index, src|value, reduce='add'|'multiply') against
torch: values of the function, method and in-place forms with a tensor src and a number,
repeated places, integer and bool dtypes; the NotImplemented node recorded when an input
requires grad (its backward raises); the deprecation warning (once per process, tensor
src only); torch's errors and their order. test_indexing.py checks that a bad index
leaves self unchanged. The op has no derivative, so it has no op_specs row (gradcheck
has nothing to check)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from oracle import assert_same_error, run_both

REDUCES = ["add", "multiply"]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The deprecation warning is torch's once per process; tests of values and errors
    ignore it (test_warning_once checks it in a fresh process)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The reduce argument of torch.scatter", UserWarning)
        yield


def _facts(t: Any) -> Any:
    return (str(t.dtype).split(".")[-1], t.tolist())


@pytest.mark.parametrize("reduce", REDUCES)
def test_forms_and_values(reduce: str) -> None:
    def f(lib: Any) -> list[Any]:
        x = lib.tensor([[2.0, 3, 4], [5, 6, 7]])
        i = lib.tensor([[0, 1, 0], [0, 0, 1]])  # place (0, 0) twice
        s = lib.tensor([[1.5, 2, 3], [4, 5, 6]])
        inplace = x.clone()
        r = inplace.scatter_(1, i, s, reduce=reduce)
        value = x.clone()
        value.scatter_(0, i, 3.0, reduce=reduce)
        return [
            _facts(x.scatter(1, i, s, reduce=reduce)),
            _facts(lib.scatter(x, 0, i, s, reduce=reduce)),
            _facts(x.scatter(-1, i, -2, reduce=reduce)),
            _facts(lib.scatter(x, 1, i, value=0.5, reduce=reduce)),
            _facts(x.scatter(0, index=i, value=2.0, reduce=reduce)),
            _facts(inplace),
            r is inplace,
            _facts(value),
            _facts(x),  # unchanged by the out-of-place forms
        ]

    got, want = run_both(f)
    assert got == want


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float16", "bfloat16"])
def test_dtypes(dtype: str) -> None:
    def f(lib: Any) -> list[Any]:
        dt = getattr(lib, dtype)
        x = lib.tensor([[1, 0, 3], [4, 5, 1]]).to(dt)
        i = lib.tensor([[1, 1, 0], [0, 1, 1]])
        s = lib.tensor([[3, 1, 0], [2, 1, 7]]).to(dt)
        return [_facts(x.scatter(0, i, s, reduce=r)) for r in REDUCES] + [
            _facts(x.scatter(0, i, 2.7, reduce=r))
            for r in REDUCES  # the number in self's dtype
        ]

    got, want = run_both(f)
    assert got == want


def test_zero_dim_and_empty_index() -> None:
    def f(lib: Any) -> list[Any]:
        x = lib.tensor(2.0)
        e = lib.ones(2, 2)
        return [
            x.scatter(0, lib.tensor(0), lib.tensor(3.0), reduce="multiply").tolist(),
            x.scatter(0, lib.tensor(0), 3.0, reduce="add").tolist(),
            e.scatter(0, lib.zeros(0, 2, dtype=lib.int64), lib.ones(1, 2), reduce="add").tolist(),
        ]

    got, want = run_both(f)
    assert got == want


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("number", [False, True])
def test_records_not_implemented(ng: Any, inplace: bool, number: bool) -> None:
    """torch's NotImplemented node, named after aten::scatter or aten::scatter_, with an
    edge per input that is a tensor; the backward raises, the forward does not."""
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = ng.tensor([[5.0, 6.0]], requires_grad=True)
    i = ng.tensor([[1, 0]])
    base = x.clone() if inplace else x
    fn = base.scatter_ if inplace else base.scatter
    y = fn(0, i, 2.0 if number else s, reduce="multiply")
    assert y.requires_grad
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    edges = [type(n).__name__ for n, _ in y.grad_fn.next_functions]
    assert edges == ["CloneBackward0" if inplace else "AccumulateGrad"] + ([] if number else ["AccumulateGrad"])
    name = "aten::scatter_" if inplace else "aten::scatter"
    with pytest.raises(RuntimeError, match=f"^derivative for {name} is not implemented$"):
        y.sum().backward()


def test_only_src_requires_grad_and_no_grad(ng: Any) -> None:
    s = ng.tensor([[5.0, 6.0]], requires_grad=True)
    y = ng.ones(2, 2).scatter(0, ng.tensor([[1, 0]]), s, reduce="add")
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with ng.no_grad():
        assert ng.ones(2, 2).scatter(0, ng.tensor([[1, 0]]), s, reduce="add").grad_fn is None
    x = ng.ones(2, 2, requires_grad=True)
    assert x.scatter(0, ng.tensor([[1, 0]]), ng.ones(1, 2), reduce="add").tolist() == [[1.0, 2.0], [2.0, 1.0]]


def test_inplace_version_and_leaf(ng: Any) -> None:
    x = ng.zeros(3)
    v = x._version
    x.scatter_(0, ng.tensor([1, 1]), ng.tensor([2.0, 5.0]), reduce="add")
    assert x._version == v + 1
    assert x.tolist() == [0.0, 7.0, 0.0]
    leaf = ng.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf.scatter_(0, ng.tensor([1]), 1.0, reduce="add")


ERRORS = {
    "reduce_name": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0, 1, 0]]), lib.ones(1, 3), reduce="sum"),
    "reduce_name_value": lambda lib: lib.ones(2, 3).scatter_(0, lib.tensor([[0]]), 1.0, reduce="mean"),
    "reduce_name_empty_index": lambda lib: lib.scatter(
        lib.ones(2, 3), 0, lib.zeros(0, 3, dtype=lib.int64), lib.ones(1, 3), reduce="bogus"
    ),
    # dtypes and shapes are checked before the name, the index's values after it
    "src_dtype_first": lambda lib: lib.ones(2, 3).scatter(
        0, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64), reduce="bogus"
    ),
    "index_dtype_first": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0.0]]), lib.ones(1, 1), reduce="bogus"),
    "rank_first": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([0]), 1.0, reduce="bogus"),
    "name_before_range": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[7]]), lib.ones(1, 1), reduce="bogus"),
    "index_out_of_range": lambda lib: lib.ones(2, 3).scatter_(0, lib.tensor([[7]]), 2.0, reduce="add"),
    "dim_out_of_range": lambda lib: lib.ones(2, 3).scatter(2, lib.tensor([[0]]), 2.0, reduce="bogus"),
    "reduce_not_str": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0]]), lib.ones(1, 1), reduce=1),
    "reduce_positional": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0]]), lib.ones(1, 1), "add"),
    "value_str": lambda lib: lib.scatter(lib.ones(2, 3), 0, lib.tensor([[0]]), "x", reduce="add"),
    "inplace_value_str": lambda lib: lib.ones(2, 3).scatter_(0, lib.tensor([[0]]), "x", reduce="add"),
    "value_and_src": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0]]), lib.ones(1, 1), value=1.0),
    "reduce_none": lambda lib: lib.ones(2, 3).scatter(0, lib.tensor([[0]]), lib.ones(1, 1), reduce=None),
    "value_none": lambda lib: lib.scatter(lib.ones(2, 3), 0, lib.tensor([[0]]), value=None),
    "no_src": lambda lib: lib.ones(2, 3).scatter_(0, lib.tensor([[0]]), reduce="add"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(ng: Any, name: str) -> None:
    assert_same_error(ERRORS[name])


_WARNING_PROGRAM = """
import warnings
import {lib} as lib
x, i = lib.ones(2, 2), lib.tensor([[1, 0]])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x.scatter(0, i, 2.0, reduce="add")  # a number: no warning
    x.scatter(0, i, 2.0, reduce="multiply")
    print(len(caught))
    x.scatter(0, i, lib.ones(1, 2), reduce="add")
    x.scatter_(0, i, lib.ones(1, 2), reduce="multiply")
    lib.scatter(x, 0, i, lib.ones(1, 2), reduce="add")
for w in caught:
    print(w.category.__name__, str(w.message).split(" (Triggered")[0])
"""


def test_warning_once(ng: Any) -> None:
    """The warning is torch's TORCH_WARN_ONCE: the first call with a tensor src in a
    process warns, later calls do not; a number never does. The expected output is
    torch's (NPGRAD_TESTS_AGAINST_TORCH=1 runs the program with torch)."""
    out = subprocess.run(
        [sys.executable, "-c", _WARNING_PROGRAM.format(lib=ng.__name__)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert out.splitlines() == [
        "0",
        "UserWarning The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
        "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
    ]
