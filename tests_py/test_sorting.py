"""Scans, sorting and norms against torch: cumsum/cumprod (and their in-place forms),
sort/argsort/msort, topk, median, kthvalue and norm. Dims as int, negative or out of
range; keepdim; result dtypes; NaN ordering; gradients (first and second order) at
zeros and ties; torch's errors for bad input.

The op_specs rows (``SORTING``) add the node names, saved values, gradients and second
order on ordinary inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, run_both, to_np

DTYPES = ["float64", "float32", "float16", "int64", "bool"]
NAN = float("nan")


def _data(dtype: str) -> np.ndarray:
    """A 2 x 3 x 4 input without ties, with a zero, in every dtype."""
    base = (np.arange(24, dtype=np.float64) * 7 % 24 - 11.0).reshape(2, 3, 4) / 4
    if dtype == "bool":
        return base > 0
    if dtype == "int64":
        return (base * 4).astype(np.int64)
    return base.astype(dtype)


ANY_DTYPE: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("cumsum(1)", lambda lib, x: x.cumsum(1)),
    ("cumsum(-1, dtype)", lambda lib, x: lib.cumsum(x, -1, dtype=lib.float64)),
    ("cumprod(0)", lambda lib, x: lib.cumprod(x, 0)),
    ("cumprod(2, dtype)", lambda lib, x: x.cumprod(2, dtype=lib.float32)),
    ("sort()", lambda lib, x: x.sort()),
    ("sort(1, descending)", lambda lib, x: lib.sort(x, 1, True)),
    ("sort(0, stable)", lambda lib, x: lib.sort(x, dim=0, stable=True)),
    ("argsort(-2)", lambda lib, x: x.argsort(-2)),
    ("argsort(descending, stable)", lambda lib, x: lib.argsort(x, descending=True, stable=True)),
    ("msort", lambda lib, x: lib.msort(x)),
]

NUMERIC: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("topk(2)", lambda lib, x: x.topk(2)),
    ("topk(2, 1, largest=False)", lambda lib, x: lib.topk(x, 2, 1, largest=False)),
    ("topk(0, 0)", lambda lib, x: x.topk(0, 0)),
    ("median()", lambda lib, x: x.median()),
    ("median(1)", lambda lib, x: lib.median(x, 1)),
    ("median(-1, keepdim)", lambda lib, x: x.median(-1, keepdim=True)),
    ("kthvalue(3)", lambda lib, x: x.kthvalue(3)),
    ("kthvalue(2, 0, keepdim)", lambda lib, x: lib.kthvalue(x, 2, 0, True)),
]

FLOATING: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("norm()", lambda lib, x: x.norm()),
    ("norm(1)", lambda lib, x: lib.norm(x, 1)),
    ("norm(inf, dim=1)", lambda lib, x: x.norm(float("inf"), dim=1)),
    ("norm(-inf, (0, 2), keepdim)", lambda lib, x: lib.norm(x, float("-inf"), (0, 2), True)),
    ("norm(0, -1)", lambda lib, x: x.norm(0, -1)),
    ("norm(3.5, [0, 1])", lambda lib, x: lib.norm(x, 3.5, [0, 1])),
    ("norm(0.5)", lambda lib, x: x.norm(0.5)),
    ("norm(fro, (1, 2))", lambda lib, x: lib.norm(x, "fro", (1, 2))),
    ("norm(None, dtype)", lambda lib, x: lib.norm(x, None, dtype=lib.float64)),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_values_and_dtypes_match_torch(dtype):
    cases = ANY_DTYPE + (NUMERIC if dtype != "bool" else []) + (FLOATING if "float" in dtype else [])
    got, expected = run_both(lambda lib: [fn(lib, from_np(lib, _data(dtype))) for _, fn in cases])
    for (name, _), g, e in zip(cases, got, expected):
        if name.startswith("cumprod") and dtype == "float16":
            continue  # torch's float16 products round per step; both overflow to inf alike
        assert_same_result(g, e)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sort(),
        lambda lib, x: x.sort(descending=True),
        lambda lib, x: x.topk(3),
        lambda lib, x: x.topk(2, largest=False),
        lambda lib, x: x.median(1),
        lambda lib, x: x.median(),
        lambda lib, x: x.kthvalue(3, 1),
        lambda lib, x: x.kthvalue(1, 1),
    ],
)
def test_nan_sorts_as_the_largest_value(fn):
    data = np.array([[1.0, NAN, 2.0, NAN], [3.0, 1.0, -2.0, 0.5]])
    got, expected = run_both(lambda lib: fn(lib, from_np(lib, data)))
    assert_same_result(got, expected)


def test_stable_sort_keeps_the_order_of_equal_elements():
    data = np.array([[2.0, 1.0, 2.0, 1.0, 2.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    got, expected = run_both(
        lambda lib: [lib.sort(from_np(lib, data), stable=True, descending=d) for d in (False, True)]
    )
    assert_same_result(tuple(got), tuple(expected))


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.sort(0),
        lambda lib, x: x.argsort(-1),
        lambda lib, x: x.topk(1),
        lambda lib, x: x.median(0),
        lambda lib, x: x.median(),
        lambda lib, x: x.kthvalue(1, -1),
        lambda lib, x: x.cumsum(0),
        lambda lib, x: x.cumprod(-1),
        lambda lib, x: x.norm(1, 0),
    ],
)
def test_zero_dim_tensor_matches_torch(fn):
    got, expected = run_both(lambda lib: fn(lib, lib.tensor(2.5)))
    assert_same_result(got, expected)


def test_empty_inputs_match_torch():
    got, expected = run_both(
        lambda lib: [
            lib.zeros(0, 3).sort(0),
            lib.zeros(0, 3).cumsum(0),
            lib.zeros(0, 3).topk(0, 0),
            lib.zeros(0).median(),
            lib.zeros(0, 3).norm(float("inf"), 1),
            lib.zeros(0, 3).norm(),
        ]
    )
    for g, e in zip(got, expected):
        assert_same_result(g, e)


def _grads(lib: Any, fn: Callable[[Any, Any], Any], data: np.ndarray) -> list[Any]:
    """The gradient of a weighted sum of fn's values, and the gradient of its square
    sum (second order)."""
    x = from_np(lib, data, requires_grad=True)
    out = fn(lib, x)
    out = out[0] if isinstance(out, tuple) else out
    loss = (out * from_np(lib, np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))).sum()
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    if not g.requires_grad:
        return [g]
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return [g, gg + 0]  # + 0: torch's zero second order of the inf norm is a ZeroTensor


GRAD_CASES: list[tuple[str, Callable[[Any, Any], Any], list[Any]]] = [
    ("cumsum", lambda lib, x: x.cumsum(1), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("cumsum dtype", lambda lib, x: x.cumsum(0, dtype=lib.float32), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("cumprod no zeros", lambda lib, x: x.cumprod(1), [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]]),
    ("cumprod one zero", lambda lib, x: x.cumprod(-1), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.0]]),
    ("cumprod two zeros", lambda lib, x: x.cumprod(0), [[1.5, 0.0, 2.0], [0.0, 0.0, 0.5]]),
    ("sort descending", lambda lib, x: x.sort(1, descending=True), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("topk", lambda lib, x: x.topk(2, 0), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5], [0.7, 0.2, -3.0]]),
    ("median ties", lambda lib, x: x.median(), [[1.0, 2.0, 2.0], [2.0, 0.0, 3.0]]),
    ("median dim", lambda lib, x: x.median(1, keepdim=True), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("kthvalue", lambda lib, x: x.kthvalue(2, 0), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("norm 2 with a zero row", lambda lib, x: x.norm(dim=1), [[0.0, 0.0, 0.0], [3.0, -1.0, 0.5]]),
    ("norm inf ties", lambda lib, x: x.norm(float("inf")), [[1.5, -3.0, 2.0], [3.0, -1.0, 0.5]]),
    ("norm 1", lambda lib, x: lib.norm(x, 1, 0), [[1.5, -3.0, 2.0], [3.0, -1.0, 0.5]]),
    ("norm 3", lambda lib, x: x.norm(3), [[1.5, -3.0, 2.0], [3.0, -1.0, 0.5]]),
    ("norm 0.5", lambda lib, x: x.norm(0.5, 1), [[1.5, -3.0, 2.0], [3.0, -1.0, 0.5]]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_first_and_second_order_gradients_match_torch(case):
    _, fn, data = case
    got, expected = run_both(lambda lib: _grads(lib, fn, np.array(data)))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_same_result(g, e)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.cumsum(3),
        lambda lib, x: lib.cumprod(x, -4),
        lambda lib, x: x.sort(3),
        lambda lib, x: x.argsort(-4),
        lambda lib, x: x.topk(1, 3),
        lambda lib, x: x.median(3),
        lambda lib, x: x.kthvalue(1, -4),
        lambda lib, x: x.norm(2, 3),
    ],
)
def test_dim_out_of_range_is_torch_index_error(fn):
    assert_same_error(lambda lib: fn(lib, lib.ones(2, 3, 4)), "Dimension out of range")


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2, 3).topk(4),
        lambda lib: lib.ones(2, 3).topk(-1),
        lambda lib: lib.tensor(1.0).topk(2),
        lambda lib: lib.ones(2, 3).kthvalue(0),
        lambda lib: lib.ones(2, 3).kthvalue(3, 0),
        lambda lib: lib.zeros(0, 3).kthvalue(1, 0),
        lambda lib: lib.zeros(0, 3).median(0),
        lambda lib: lib.tensor([True, False]).topk(1),
        lambda lib: lib.tensor([True, False]).median(),
        lambda lib: lib.tensor([True, False]).kthvalue(1),
        lambda lib: lib.tensor([1, 2]).norm(),
        lambda lib: lib.ones(2).norm(dtype=lib.int64),
        lambda lib: lib.ones(2).norm(dtype=lib.float16),
        lambda lib: lib.ones(2, 2).norm("abc"),
        lambda lib: lib.ones(2, 2, 2).norm("fro", (0, 1, 0)),
        lambda lib: lib.ones(2, 2).norm(2, (0, 0)),
        lambda lib: lib.zeros(0, 3).norm(float("inf")),
        lambda lib: lib.zeros(0, 3).norm(-1, 0),
        lambda lib: lib.tensor([1, 2]).cumsum_(0, dtype=lib.float32),
        lambda lib: lib.ones(2).cumprod_(0, dtype=lib.int64),
    ],
)
def test_bad_arguments_are_torch_errors(fn):
    assert_same_error(fn, length=200)


def test_inplace_scans_match_torch_and_bump_the_version():
    def build(lib: Any) -> list[Any]:
        x = from_np(lib, np.array([[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]), requires_grad=True)
        outs = []
        for name in ("cumsum_", "cumprod_"):
            y = x * 1
            version = y._version
            r = getattr(y, name)(1)
            assert r is y and y._version == version + 1
            assert y.grad_fn.name() == ("CumsumBackward0" if name == "cumsum_" else "CumprodBackward0")
            (g,) = lib.autograd.grad((y * y).sum(), x)
            outs += [y, g]
        i = lib.tensor([1, 2, 3])
        outs.append(i.cumsum_(0))
        return outs

    got, expected = run_both(build)
    for g, e in zip(got, expected):
        assert_same_result(g, e)


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_inplace_scan_of_a_leaf_is_torch_error(name):
    assert_same_error(
        lambda lib: getattr(lib.ones(3, requires_grad=True), name)(0), "a leaf Variable that requires grad"
    )


def test_saved_arguments_read_as_torch_shows_them():
    def build(lib: Any) -> list[Any]:
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        fns = [
            x.cumsum(-1).grad_fn,
            x.cumprod(1).grad_fn,
            x.sort(-1).values.grad_fn,
            x.topk(2, 0).values.grad_fn,
            x.median(-1, True).values.grad_fn,
            x.kthvalue(1, 0).values.grad_fn,
            lib.norm(x, 1, -1).grad_fn,
            x.norm().grad_fn,
            lib.norm(x, None, (0, 1), True).grad_fn,
        ]
        return [
            (
                f.name(),
                {
                    k: tuple(getattr(f, k).shape) if hasattr(getattr(f, k), "shape") else getattr(f, k)
                    for k in dir(f)
                    if k.startswith("_saved_")
                },
            )
            for f in fns
        ] + [lib.sort(x, stable=False).values.grad_fn.name(), x.msort().grad_fn._saved_dim]

    got, expected = run_both(build)
    assert got == expected


def test_zero_norm_gives_no_gradient():
    def build(lib: Any) -> list[Any]:
        x = lib.tensor([[1.5, 0.0], [3.0, -1.0]], requires_grad=True)
        y = x.norm(0, 1)
        y.sum().backward()
        return [y, y.grad_fn.name(), x.grad]

    got, expected = run_both(build)
    assert_same_result(got[0], expected[0])
    assert got[1:] == expected[1:] == ["LinalgVectorNormBackward0", None]


def test_indices_record_no_graph(ng):
    x = ng.ones(2, 3, requires_grad=True)
    assert x.argsort().requires_grad is False
    assert x.sort().indices.requires_grad is False
    assert x.topk(1).indices.grad_fn is None


def test_tensors_and_engine_work_after_errors(ng):
    x = ng.tensor([3.0, 1.0, 2.0], requires_grad=True)
    for bad in (lambda: x.topk(5), lambda: x.kthvalue(0), lambda: x.norm("abc"), lambda: x.sort(2)):
        with pytest.raises((RuntimeError, IndexError)):
            bad()
    x.sort().values.cumsum(0).sum().backward()
    assert to_np(x.grad).tolist() == [1.0, 3.0, 2.0]
