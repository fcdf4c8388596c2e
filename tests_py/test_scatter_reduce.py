"""scatter_reduce(_) against torch: values for every reduce with and without self,
integer mean's floor, ties in amax/amin sharing the gradient, prod's gradient with
zeros (in both operands, or in one), double backward, the in-place form's version bump, and
torch's errors. The op_specs rows cover node names, saved attributes and gradcheck/gradgradcheck."""

from __future__ import annotations

from typing import Any

import pytest

from oracle import assert_same_error, run_both

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _case(lib: Any, reduce: str, include_self: bool) -> list[Any]:
    x = lib.tensor([[1.0, 2, 0, 4], [5, 6, 7, 8]], dtype=lib.float64, requires_grad=True)
    s = lib.tensor([[2.0, 0, 3, 3], [1, 1, 4, 0]], dtype=lib.float64, requires_grad=True)
    i = lib.tensor([[0, 1, 1, 3], [2, 2, 0, 0]])
    y = x.scatter_reduce(1, i, s, reduce, include_self=include_self)
    y.backward(lib.arange(1.0, 9, dtype=lib.float64).reshape(2, 4))
    return [y.tolist(), x.grad.tolist(), s.grad.tolist(), y.grad_fn.name()]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_values_and_gradients(reduce: str, include_self: bool) -> None:
    got, want = run_both(lambda lib: _case(lib, reduce, include_self))
    assert got == want


@pytest.mark.parametrize("reduce", REDUCES)
def test_integer_values(reduce: str) -> None:
    def f(lib: Any) -> Any:
        x = lib.tensor([7, -7, 3, 10])
        return [
            lib.scatter_reduce(
                x, 0, lib.tensor([0, 0, 1, 1, 3]), lib.tensor([2, 3, -2, 5, 1]), reduce, include_self=inc
            ).tolist()
            for inc in (True, False)
        ]

    got, want = run_both(f)
    assert got == want


def test_amax_ties_share_the_gradient() -> None:
    def f(lib: Any) -> Any:
        x = lib.tensor([3.0, 1.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor([3.0, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.scatter_reduce(0, lib.tensor([0, 0, 1]), s, "amax").sum().backward()
        return x.grad.tolist(), s.grad.tolist()

    got, want = run_both(f)
    assert got == want
    assert want == ([1 / 3, 0.0], [1 / 3, 1 / 3, 1.0])


@pytest.mark.parametrize("reduce", REDUCES)
def test_double_backward(reduce: str) -> None:
    def f(lib: Any) -> Any:
        x = lib.tensor([[1.5, -2.0, 3.0]], dtype=lib.float64, requires_grad=True)
        s = lib.tensor([[0.5, 2.5, -1.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = x.scatter_reduce(1, lib.tensor([[0, 0, 2, 1]]), s, reduce)
        (gx, gs) = lib.autograd.grad((y * y).sum(), (x, s), create_graph=True)
        return [v for t in lib.autograd.grad((gx * gx).sum() + (gs * gs).sum(), (x, s)) for v in t.flatten().tolist()]

    got, want = run_both(f)
    assert got == pytest.approx(want)


def test_inplace_bumps_version_and_records_node(ng: Any) -> None:
    x = ng.zeros(3, requires_grad=True).clone()
    v = x._version
    out = x.scatter_reduce_(0, ng.tensor([1, 1]), ng.tensor([2.0, 5.0]), "amax", include_self=False)
    assert out is x
    assert x._version == v + 1
    assert x.grad_fn.name() == "ScatterReduceBackward0"
    assert x.tolist() == [0.0, 5.0, 0.0]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([3]), lib.ones(1), "sum"),
        lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64), "mean"),
        lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1), "amin"),
        lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "bogus"),
    ],
    ids=["index_out_of_range", "src_dtype", "float_index", "reduce_name"],
)
def test_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)


# prod's gradient when only self, only src or neither has a zero (npgrad skips the
# masking steps of an operand without one when no graph is recorded).
@pytest.mark.parametrize(("self_zero", "src_zero"), [(True, False), (False, True), (False, False)])
@pytest.mark.parametrize("include_self", [True, False])
def test_prod_gradient_with_zeros_in_one_operand(self_zero: bool, src_zero: bool, include_self: bool) -> None:
    def f(lib: Any) -> Any:
        x = lib.tensor([[1.5, 2, 0 if self_zero else -3, 4]], dtype=lib.float64, requires_grad=True)
        s = lib.tensor([[2.0, 0 if src_zero else 0.5, 3, -1.5]], dtype=lib.float64, requires_grad=True)
        y = x.scatter_reduce(1, lib.tensor([[0, 1, 1, 2]]), s, "prod", include_self=include_self)
        y.backward(lib.tensor([[1.0, -2.0, 3.0, 0.5]], dtype=lib.float64))
        return [y.tolist(), x.grad.tolist(), s.grad.tolist()]

    got, want = run_both(f)
    assert got == want
