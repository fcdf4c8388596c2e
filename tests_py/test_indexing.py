"""Indexing by index tensors and masks against torch: gather, scatter(_), scatter_add(_),
index_select, index_add(_), index_copy(_), masked_select, masked_scatter(_),
take_along_dim, nonzero, where(condition), index_put(_) (dims, dtypes, broadcasting,
in-place forms, errors, tensors unchanged after an error).

Values, nodes, saved attributes, gradients and second order also come from their rows
in op_specs.py (INDEXING).
"""

from __future__ import annotations

from typing import Any

import pytest

import oracle
from oracle import assert_same_error

npgrad_only = pytest.mark.skipif(oracle.AGAINST_TORCH, reason="npgrad's documented deviation from torch")


def _x(lib: Any, dtype: Any = None) -> Any:
    return lib.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]], dtype=dtype)


def _facts(t: Any) -> Any:
    return (str(t.dtype).split(".")[-1], tuple(t.shape), t.tolist())


# ---------------------------------------------------------------- values and dtypes


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_values_and_dtypes(ng: Any, torch_ref: Any, dtype: str) -> None:
    """Every op on every dtype, with negative dims and 0-dim operands."""

    def run(lib: Any) -> list[Any]:
        dt = getattr(lib, dtype)
        x = _x(lib, dt)
        i = lib.tensor([[0, 3], [2, 2], [1, 0]])
        rows = lib.tensor([2, 0])
        mask = lib.tensor([True, False, True, False])
        src = (_x(lib) * 3).to(dt)
        out = [
            lib.gather(x, 1, i),
            x.gather(-1, i[:2, :1]),
            lib.scatter(x, 1, i, src),
            x.scatter(-1, i, 7),
            lib.scatter_add(x, 0, i[1:2], src[:1, :2]),
            lib.index_select(x, -1, lib.tensor([3, 3, 0])),
            x.index_select(0, lib.tensor(1)),
            lib.index_copy(x, 0, rows, src[:2]),
            x.masked_select(mask),
            lib.masked_select(x, x.bool()),
            lib.masked_scatter(x, mask, src),
            x.masked_scatter(mask[:3].view(3, 1), src),
            lib.take_along_dim(x, i[:, :1], 1),
            lib.take_along_dim(x, lib.tensor([11, 0])),
            lib.nonzero(x),
            x.index_put((rows, rows), src[0, :2]),
            lib.index_put(x, (x.bool(),), src[0, 0]),
            lib.gather(lib.tensor(3, dtype=dt), 0, lib.tensor([0, 0])),
            lib.gather(lib.tensor(3, dtype=dt), 0, lib.tensor(0)),
            lib.nonzero(lib.tensor(1, dtype=dt)),
        ]
        if dtype != "bool":
            out.append(lib.index_add(x, 1, rows, src[:, :2], alpha=2))
            out.append(x.index_add(0, rows, src[:2]))
        return [_facts(t) for t in out]

    assert run(ng) == run(torch_ref)


def test_nonzero_as_tuple_and_where(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
        out = []
        for parts in (
            lib.nonzero(x, as_tuple=True),
            x.nonzero(as_tuple=True),
            lib.where(x > 1),
            lib.where(lib.tensor(True)),
            lib.where(lib.tensor(0.0)),
            lib.nonzero(lib.zeros(2, 0), as_tuple=True),
        ):
            out.append([_facts(p) for p in parts])
        out.append(_facts(lib.nonzero(lib.zeros(2, 3))))
        return out

    assert run(ng) == run(torch_ref)


def test_duplicates_accumulate(ng: Any, torch_ref: Any) -> None:
    """scatter_add, index_add and index_put(accumulate=True) add every repeated position."""

    def run(lib: Any) -> list[Any]:
        z = lib.zeros(3)
        v = lib.tensor([1.0, 2.0, 4.0])
        i = lib.tensor([1, 1, 1])
        return [
            lib.scatter_add(z, 0, i, v).tolist(),
            lib.index_add(z, 0, i, v).tolist(),
            lib.index_put(z, (i,), v, accumulate=True).tolist(),
        ]

    assert run(ng) == run(torch_ref)


# ---------------------------------------------------------------- graphs


def test_take_along_dim_records_torch_composite(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.randn(3, 4, requires_grad=True)
        out = []
        for y in (
            lib.take_along_dim(x, lib.tensor([[0, 1]]), 1),
            x.take_along_dim(lib.tensor([[0], [1], [2]]), dim=-1),
            lib.take_along_dim(x, lib.tensor([[1, 2]])),
        ):
            below = y.grad_fn.next_functions[0][0]
            out.append((tuple(y.shape), y.grad_fn.name(), y.grad_fn._saved_dim, below.name()))
        return out

    assert run(ng) == run(torch_ref)


def test_saved_state_depends_on_which_input_requires_grad(ng: Any, torch_ref: Any) -> None:
    """index_add saves index and source, index_copy source, only for source's gradient."""

    def run(lib: Any) -> list[Any]:
        out = []
        for rx, rs in ((True, False), (False, True)):
            x = lib.zeros(3, 2, requires_grad=rx)
            s = lib.ones(1, 2, requires_grad=rs)
            i = lib.tensor([1])
            for y in (lib.index_add(x, 0, i, s), lib.index_copy(x, 0, i, s)):
                fn = y.grad_fn
                out.append((fn.name(), fn._saved_source is None, fn._saved_index is None, fn._saved_source_dim))
        return out

    assert run(ng) == run(torch_ref)


def test_gradients_with_repeats(ng: Any, torch_ref: Any) -> None:
    """Repeated positions: gather's and index_select's gradients accumulate, scatter's
    self gradient is zero where written, masked_scatter's unused source gets zeros."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        s = lib.tensor([[7.0, 8.0], [9.0, 10.0]], requires_grad=True)
        i = lib.tensor([[0, 0], [2, 1]])
        w = lib.arange(4.0).view(2, 2)
        out = []
        for y in (
            lib.gather(x, 1, i) * w,
            lib.index_select(x, 1, lib.tensor([2, 2, 0])),
            lib.scatter(x, 1, lib.tensor([[0, 2], [1, 0]]), s) * 2,
            lib.masked_scatter(x, x > 4, lib.arange(6.0, requires_grad=True)),
        ):
            x.grad = None
            y.sum().backward()
            out.append(x.grad.tolist())
        out.append(s.grad.tolist())
        return out

    assert run(ng) == run(torch_ref)


# ---------------------------------------------------------------- in place


INPLACE = [
    lambda lib, x: x.scatter_(1, lib.tensor([[0], [1], [2]]), 0.5),
    lambda lib, x: x.scatter_add_(0, lib.tensor([[2, 1]]), lib.ones(1, 2)),
    lambda lib, x: x.index_add_(1, lib.tensor([3]), lib.ones(3, 1), alpha=-1),
    lambda lib, x: x.index_copy_(0, lib.tensor([1]), lib.ones(1, 4)),
    lambda lib, x: x.masked_scatter_(lib.tensor([False, True, False, True]), lib.arange(6.0)),
    lambda lib, x: x.index_put_((lib.tensor([0, 2]),), lib.tensor(-1.0), accumulate=True),
]


@pytest.mark.parametrize(
    "op", INPLACE, ids=["scatter_", "scatter_add_", "index_add_", "index_copy_", "masked_scatter_", "index_put_"]
)
def test_inplace_forms(ng: Any, torch_ref: Any, op: Any) -> None:
    """Returns self, bumps the version once, rebases the history (also through a view),
    refuses a leaf that requires grad."""

    def run(lib: Any) -> list[Any]:
        x = _x(lib)
        returned = op(lib, x)
        leaf = _x(lib).requires_grad_()
        y = leaf * 1
        op(lib, y)
        y.sum().backward()
        base = _x(lib).requires_grad_()
        b = base * 1
        op(lib, b.view(3, 4))
        with pytest.raises(RuntimeError) as error:
            op(lib, _x(lib).requires_grad_())
        return [
            returned is x,
            x._version,
            x.tolist(),
            y.grad_fn.name(),
            leaf.grad.tolist(),
            b.grad_fn.name(),
            str(error.value),
        ]

    assert run(ng) == run(torch_ref)


# ---------------------------------------------------------------- errors


ERRORS = {
    "gather_oob": lambda lib: lib.gather(_x(lib), 1, lib.tensor([[0, 5]])),
    "gather_negative": lambda lib: _x(lib).gather(0, lib.tensor([[-1]])),
    "gather_float_index": lambda lib: lib.gather(_x(lib), 1, lib.tensor([[0.0]])),
    "gather_dim": lambda lib: lib.gather(_x(lib), 2, lib.tensor([[0]])),
    "gather_rank": lambda lib: lib.gather(_x(lib), 1, lib.tensor([0])),
    "gather_size": lambda lib: lib.gather(_x(lib), 1, lib.zeros(4, 1, dtype=lib.int64)),
    "scatter_oob": lambda lib: lib.scatter(_x(lib), 0, lib.tensor([[3]]), 1.0),
    "scatter_dtype": lambda lib: lib.scatter(_x(lib), 1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64)),
    "scatter_src_small": lambda lib: lib.scatter(_x(lib), 1, lib.tensor([[0, 1]]), lib.ones(1, 1)),
    "scatter_value_size": lambda lib: _x(lib).scatter(1, lib.zeros(4, 1, dtype=lib.int64), 1.0),
    "scatter_rank": lambda lib: _x(lib).scatter_(1, lib.tensor([0]), 1.0),
    "scatter_add_oob": lambda lib: _x(lib).scatter_add_(1, lib.tensor([[4]]), lib.ones(1, 1)),
    "scatter_add_float_index": lambda lib: lib.scatter_add(_x(lib), 1, lib.tensor([[0.0]]), lib.ones(1, 1)),
    "index_select_oob": lambda lib: lib.index_select(_x(lib), 0, lib.tensor([3])),
    "index_select_negative": lambda lib: _x(lib).index_select(0, lib.tensor([-1])),
    "index_select_2d": lambda lib: lib.index_select(_x(lib), 0, lib.tensor([[0]])),
    "index_select_float": lambda lib: lib.index_select(_x(lib), 0, lib.tensor([0.0])),
    "index_select_dim": lambda lib: lib.index_select(_x(lib), -3, lib.tensor([0])),
    "index_add_oob": lambda lib: lib.index_add(_x(lib), 0, lib.tensor([5]), lib.ones(1, 4)),
    "index_add_shape": lambda lib: _x(lib).index_add_(0, lib.tensor([0]), lib.ones(1, 3)),
    "index_add_count": lambda lib: lib.index_add(_x(lib), 0, lib.tensor([0, 1]), lib.ones(1, 4)),
    "index_add_dtype": lambda lib: lib.index_add(_x(lib), 0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64)),
    "index_add_float_index": lambda lib: lib.index_add(_x(lib), 0, lib.tensor([0.0]), lib.ones(1, 4)),
    "index_add_2d_index": lambda lib: lib.index_add(_x(lib), 0, lib.tensor([[0]]), lib.ones(1, 4)),
    "index_copy_oob": lambda lib: lib.index_copy(_x(lib), 0, lib.tensor([-1]), lib.ones(1, 4)),
    "index_copy_shape": lambda lib: _x(lib).index_copy_(0, lib.tensor([0]), lib.ones(1, 3)),
    "index_copy_count": lambda lib: lib.index_copy(_x(lib), 0, lib.tensor([0, 1]), lib.ones(1, 4)),
    "index_copy_rank": lambda lib: lib.index_copy(_x(lib), 0, lib.tensor([0]), lib.ones(4)),
    "index_copy_dtype": lambda lib: lib.index_copy(_x(lib), 0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64)),
    "index_copy_float_index": lambda lib: lib.index_copy(_x(lib), 0, lib.tensor([0.0]), lib.ones(1, 4)),
    "masked_select_float_mask": lambda lib: lib.masked_select(_x(lib), _x(lib)),
    "masked_select_broadcast": lambda lib: _x(lib).masked_select(lib.ones(3, dtype=lib.bool)),
    "masked_scatter_float_mask": lambda lib: lib.masked_scatter(_x(lib), _x(lib), _x(lib)),
    "masked_scatter_too_few": lambda lib: _x(lib).masked_scatter_(_x(lib) > 0, lib.ones(11)),
    "masked_scatter_dtype": lambda lib: lib.masked_scatter(_x(lib), _x(lib) > 0, lib.ones(12, dtype=lib.float64)),
    "take_along_dim_rank": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([1]), 1),
    "take_along_dim_float": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([[1.0]]), 1),
    "take_along_dim_broadcast": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([[1], [2]]), 1),
    "take_along_dim_flat_oob": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([12])),
    "take_along_dim_dim": lambda lib: lib.take_along_dim(_x(lib), lib.tensor([[1]]), dim=2),
    "index_put_oob": lambda lib: _x(lib).index_put_((lib.tensor([3]),), lib.tensor(1.0)),
    "index_put_dtype": lambda lib: lib.index_put(_x(lib), (lib.tensor([0]),), lib.tensor(1.0, dtype=lib.float64)),
    "index_put_float_index": lambda lib: _x(lib).index_put((lib.tensor([0.0]),), lib.tensor(1.0)),
    "index_put_indices_type": lambda lib: _x(lib).index_put(lib.tensor([0]), lib.tensor(1.0)),
    "index_put_none_index": lambda lib: _x(lib).index_put((lib.tensor([0]), None), lib.tensor(1.0)),
    "index_put_number": lambda lib: _x(lib).index_put((lib.tensor([0]),), 1.0),
    "gather_none": lambda lib: lib.gather(_x(lib), 0, None),
    "nonzero_none": lambda lib: lib.nonzero(None),
}


@pytest.mark.parametrize("call", list(ERRORS.values()), ids=list(ERRORS))
def test_errors(ng: Any, call: Any) -> None:
    assert_same_error(call, length=200)


WRITES = {
    "scatter_": lambda lib, x, s: x.scatter_(1, lib.tensor([[0, 1], [1, 4]]), s),
    "scatter_add_": lambda lib, x, s: x.scatter_add_(1, lib.tensor([[0, 1], [-1, 0]]), s),
    "scatter_reduce_multiply_": lambda lib, x, s: x.scatter_(1, lib.tensor([[0, 1], [1, 4]]), 2.0, reduce="multiply"),
    "index_add_": lambda lib, x, s: x.index_add_(0, lib.tensor([0, 3]), s.expand(2, 4)),
    "index_copy_": lambda lib, x, s: x.index_copy_(0, lib.tensor([1, 3]), s.expand(2, 4)),
    "index_put_": lambda lib, x, s: x.index_put_((lib.tensor([0, 3]),), s[0, 0]),
    "masked_scatter_": lambda lib, x, s: x.masked_scatter_(x > 0, s),
}


@npgrad_only
@pytest.mark.parametrize("call", list(WRITES.values()), ids=list(WRITES))
def test_a_bad_index_leaves_every_tensor_unchanged(ng: Any, call: Any) -> None:
    """npgrad checks every index before writing; torch's scatter_, scatter_add_,
    index_put_ and masked_scatter_ may have written part of self when they raise."""
    x = _x(ng)
    s = ng.ones(2, 2)
    y = x * 1
    with pytest.raises((RuntimeError, IndexError)):
        call(ng, y, s)
    assert y.tolist() == x.tolist() and y._version == 0
    assert s.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    # the tensors and the engine stay usable
    assert (y * 2).sum().item() == 2 * sum(range(1, 13))
    leaf = ng.ones(2, requires_grad=True)
    (leaf * y[0, :2]).sum().backward()
    assert leaf.grad.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    ("call", "got"),
    [
        (lambda lib: lib.scatter(lib.ones(2), 0, None, 1.0), "(Tensor, int, NoneType, float)"),
        (lambda lib: lib.scatter(lib.ones(2), 0, lib.tensor([0]), "a"), "(Tensor, int, Tensor, str)"),
        (lambda lib: lib.ones(2).scatter_(0, lib.tensor([0]), None), "(int, Tensor, NoneType)"),
        (lambda lib: lib.where(lib.ones(2) > 0, lib.ones(2)), "(Tensor, Tensor)"),
    ],
)
def test_argument_errors(ng: Any, torch_ref: Any, call: Any, got: str) -> None:
    for lib in (ng, torch_ref):
        with pytest.raises(TypeError) as error:
            call(lib)
        assert f"received an invalid combination of arguments - got {got}, but expected one of:\n" in str(error.value)


@pytest.mark.parametrize(
    "expr",
    [
        "lib.gather(x, 1, i32)",
        "x.index_select(1, i32[0])",
        "x.index_add(1, i32[0], lib.ones(2, 3))",
        "x.scatter(1, i32, 1.0)",
        "x.scatter_add(1, i32, lib.ones(1, 3))",
        "x.index_put((i32[0, 1:],), lib.tensor(1.0))",
    ],
)
def test_int32_indices(ng: Any, torch_ref: Any, expr: str) -> None:
    def facts(lib: Any) -> Any:
        env = {"lib": lib, "x": lib.arange(6.0).reshape(2, 3), "i32": lib.tensor([[2, 0, 1]], dtype=lib.int32)}
        return eval(expr, env).tolist()

    assert facts(ng) == facts(torch_ref)


@pytest.mark.parametrize(
    ("expr", "key"),
    [
        ("x.index_copy(1, i32[0], lib.ones(2, 3))", "index_copy_(): Expected a long tensor for index, but got Int"),
        ("lib.take_along_dim(x, i32, 1)", "dtype of indices should be Long but got Int"),
    ],
)
def test_int32_indices_where_torch_wants_int64(expr: str, key: str) -> None:
    def call(lib: Any) -> Any:
        env = {"lib": lib, "x": lib.arange(6.0).reshape(2, 3), "i32": lib.tensor([[2, 0, 1]], dtype=lib.int32)}
        return eval(expr, env)

    assert_same_error(call, key)
