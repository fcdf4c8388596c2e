"""Reductions over dims against torch: amax/amin, argmax/argmin, any/all, var/std (and
their ``_mean`` forms), logsumexp, prod and nansum. Dims as an int, a tuple, negative, empty or
out of range; keepdim; result dtypes for every input dtype; gradients at ties and
zeros (first and second order); torch's errors for bad input.

The op_specs rows (``DIM_REDUCTIONS``) add the node names, saved values, gradients and
second order for the differentiable forms on ordinary inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, run_both, same_value, to_np
from oracle import lib as lib_under_test

DTYPES = ["float64", "float32", "float16", "int64", "bool"]


def _data(dtype: str) -> np.ndarray:
    """A 2 x 3 x 4 input with ties and zeros in every dtype."""
    base = np.arange(24, dtype=np.float64).reshape(2, 3, 4) % 5 - 1.5
    if dtype == "bool":
        return base > 0
    if dtype == "int64":
        return np.rint(base).astype(np.int64)
    return base.astype(dtype)


def _input(lib: Any, dtype: str) -> Any:
    return from_np(lib, _data(dtype))


# Calls valid for every input dtype.
ANY_DTYPE: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("amax()", lambda lib, x: x.amax()),
    ("amax(1)", lambda lib, x: lib.amax(x, 1)),
    ("amax((0, -1), keepdim)", lambda lib, x: x.amax((0, -1), keepdim=True)),
    ("amax(dim=())", lambda lib, x: x.amax(dim=())),
    ("amin(-2)", lambda lib, x: x.amin(-2)),
    ("amin([2, 0])", lambda lib, x: lib.amin(x, [2, 0])),
    ("argmax()", lambda lib, x: x.argmax()),
    ("argmax(keepdim)", lambda lib, x: lib.argmax(x, keepdim=True)),
    ("argmax(1)", lambda lib, x: x.argmax(1)),
    ("argmin(-1, keepdim)", lambda lib, x: lib.argmin(x, -1, keepdim=True)),
    ("argmin()", lambda lib, x: x.argmin()),
    ("any()", lambda lib, x: x.any()),
    ("any(1)", lambda lib, x: lib.any(x, 1)),
    ("any((0, 2), keepdim)", lambda lib, x: x.any((0, 2), keepdim=True)),
    ("any(dim=())", lambda lib, x: x.any(dim=())),
    ("all()", lambda lib, x: lib.all(x)),
    ("all(-1, keepdim)", lambda lib, x: x.all(-1, keepdim=True)),
    ("all(None, keepdim)", lambda lib, x: lib.all(x, None, keepdim=True)),
    ("logsumexp(1)", lambda lib, x: x.logsumexp(1)),
    ("logsumexp((0, 2), keepdim)", lambda lib, x: lib.logsumexp(x, (0, 2), keepdim=True)),
    ("prod()", lambda lib, x: x.prod()),
    ("prod(1)", lambda lib, x: lib.prod(x, 1)),
    ("prod(-1, keepdim)", lambda lib, x: x.prod(-1, keepdim=True)),
    ("prod(dtype=float64)", lambda lib, x: x.prod(dtype=lib.float64)),
    ("prod(0, dtype=float32)", lambda lib, x: lib.prod(x, 0, dtype=lib.float32)),
    ("nansum()", lambda lib, x: x.nansum()),
    ("nansum(1)", lambda lib, x: lib.nansum(x, 1)),
    ("nansum((0, -1), keepdim)", lambda lib, x: x.nansum((0, -1), keepdim=True)),
    ("nansum(keepdim)", lambda lib, x: lib.nansum(x, keepdim=True)),
    ("nansum(0, dtype=float64)", lambda lib, x: x.nansum(0, dtype=lib.float64)),
]

# var and std refuse integer and bool inputs.
FLOAT_ONLY: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("var()", lambda lib, x: x.var()),
    ("var(1)", lambda lib, x: lib.var(x, 1)),
    ("var((0, 2), correction=0, keepdim)", lambda lib, x: x.var((0, 2), correction=0, keepdim=True)),
    ("var(-1, False)", lambda lib, x: x.var(-1, False)),
    ("var(unbiased=False)", lambda lib, x: lib.var(x, unbiased=False)),
    ("var(correction=2.5)", lambda lib, x: x.var(correction=2.5)),
    ("std()", lambda lib, x: x.std()),
    ("std(0, keepdim)", lambda lib, x: lib.std(x, 0, keepdim=True)),
    ("std(dim=(1,), correction=0)", lambda lib, x: x.std(dim=(1,), correction=0)),
    ("var_mean(1)", lambda lib, x: lib.var_mean(x, 1)),
    ("var_mean()", lambda lib, x: lib.var_mean(x)),
    ("std_mean((0, 1), keepdim)", lambda lib, x: lib.std_mean(x, (0, 1), keepdim=True)),
    ("std_mean(unbiased=False)", lambda lib, x: lib.std_mean(x, unbiased=False)),
]


def _cases(calls: list[tuple[str, Callable[[Any, Any], Any]]], dtypes: list[str]) -> list[Any]:
    """(call, dtype) pairs, without argmax/argmin of bool (an error in torch, tested below)."""
    return [
        pytest.param(fn, dtype, id=f"{name}-{dtype}")
        for name, fn in calls
        for dtype in dtypes
        if not (name.startswith("argm") and dtype == "bool")
    ]


@pytest.mark.parametrize(("fn", "dtype"), _cases(ANY_DTYPE, DTYPES))
def test_values_and_dtypes_match_torch(fn, dtype):
    got, expected = run_both(lambda lib: fn(lib, _input(lib, dtype)))
    assert_same_result(got, expected)


# Full reductions and dims 0 / -1: valid on 1-dim inputs.
ONE_DIM: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("amax(-1)", lambda lib, x: x.amax(-1)),
    ("amin((0,), keepdim)", lambda lib, x: x.amin((0,), keepdim=True)),
    ("argmax(0)", lambda lib, x: x.argmax(0)),
    ("argmin()", lambda lib, x: x.argmin()),
    ("any(0, keepdim)", lambda lib, x: x.any(0, keepdim=True)),
    ("all()", lambda lib, x: x.all()),
    ("logsumexp(-1)", lambda lib, x: x.logsumexp(-1)),
    ("prod()", lambda lib, x: x.prod()),
    ("prod(0, keepdim)", lambda lib, x: x.prod(0, keepdim=True)),
]


@pytest.mark.parametrize(("fn", "dtype"), _cases(ONE_DIM, ["float64", "int64", "bool"]))
def test_one_dim_input_matches_torch(fn, dtype):
    got, expected = run_both(lambda lib: fn(lib, from_np(lib, _data(dtype)[1, 2])))
    assert_same_result(got, expected)


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("call", FLOAT_ONLY, ids=[c[0] for c in FLOAT_ONLY])
def test_var_std_values_match_torch(call, dtype):
    fn = call[1]
    got, expected = run_both(lambda lib: fn(lib, _input(lib, dtype)))
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.amax(0),
        lambda lib, x: x.amin(-1),
        lambda lib, x: x.argmax(0),
        lambda lib, x: x.any(0),
        lambda lib, x: x.all(),
        lambda lib, x: x.prod(0),
        lambda lib, x: x.logsumexp(0),
    ],
)
def test_zero_dim_tensor_reduces_over_dim_0(fn):
    got, expected = run_both(lambda lib: fn(lib, lib.tensor(-1.5)))
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.zeros(0, 3).amax(1),
        lambda lib: lib.zeros(0, 3).argmin(1),
        lambda lib: lib.zeros(0, 3).any(0),
        lambda lib: lib.zeros(0, 3).all(),
        lambda lib: lib.zeros(0, 3).all(1),
        lambda lib: lib.zeros(2, 0).prod(1),
        lambda lib: lib.zeros(0, 3).prod(),
        lambda lib: lib.zeros(2, 0).logsumexp(1),
        lambda lib: lib.zeros(0, 3).logsumexp(1),
    ],
)
def test_empty_inputs_match_torch(fn):
    got, expected = run_both(fn)
    assert_same_result(got, expected)


def test_logsumexp_with_infinities_matches_torch():
    rows = [[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0], [np.nan, 0.0]]
    got, expected = run_both(lambda lib: lib.tensor(rows).logsumexp(1))
    assert_same_result(got, expected)


def test_logsumexp_is_stable_for_large_values():
    got, expected = run_both(lambda lib: lib.tensor([1000.0, 1000.0], dtype=lib.float64).logsumexp(0))
    assert_same_result(got, expected)
    assert np.isfinite(to_np(got))


def test_argmax_and_any_record_no_graph(ng):
    x = ng.tensor([[1.0, 3.0], [2.0, 0.0]], requires_grad=True)
    for out in (x.argmax(), x.argmin(1), x.any(), x.all(0), ng.any(x, (0, 1))):
        assert out.grad_fn is None and not out.requires_grad


def test_argmax_of_ties_is_the_first_index():
    got, expected = run_both(lambda lib: lib.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]).argmax(1))
    assert_same_result(got, expected)


def _grads(lib: Any, fn: Callable[[Any, Any], Any], data: np.ndarray, second: bool = False) -> list[Any]:
    """fn's gradient with a weighted grad_output; with ``second``, also the gradient of
    the sum of squares of that gradient (a double backward), or whether the gradient
    requires grad when it does not."""
    x = from_np(lib, data, requires_grad=True)
    out = fn(lib, x)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o * from_np(lib, np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape)))).sum() for o in outs)
    (g,) = lib.autograd.grad(loss, x, create_graph=second)
    if not second or not g.requires_grad:  # amax's gradient is piecewise constant
        return [g, g.requires_grad]
    (gg,) = lib.autograd.grad((g * g).sum(), x)
    return [g, gg]


GRAD_CASES: list[tuple[str, Callable[[Any, Any], Any], list[Any]]] = [
    ("amax ties", lambda lib, x: x.amax(), [[1.0, 3.0, 3.0], [3.0, 0.0, 1.0]]),
    ("amax dim ties", lambda lib, x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]),
    ("amin dims keepdim ties", lambda lib, x: x.amin((0, 1), keepdim=True), [[0.0, 3.0, 0.0], [2.0, 0.0, 1.0]]),
    ("amax negative dim", lambda lib, x: lib.amax(x, -2), [[1.0, 3.0, 3.0], [2.0, 3.0, 1.0]]),
    ("prod one zero", lambda lib, x: x.prod(), [[1.5, 0.0, 2.0], [3.0, -1.0, 0.5]]),
    ("prod two zeros", lambda lib, x: x.prod(), [[1.5, 0.0, 2.0], [0.0, -1.0, 0.5]]),
    ("prod dim zeros", lambda lib, x: x.prod(1), [[1.5, 0.0, 2.0], [0.0, 0.0, 0.5]]),
    ("prod dim keepdim zeros", lambda lib, x: lib.prod(x, 0, keepdim=True), [[1.5, 0.0, 2.0], [0.0, -1.0, 0.5]]),
    ("prod no zeros", lambda lib, x: x.prod(-1), [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]]),
    ("var", lambda lib, x: x.var(1), [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]]),
    ("std of constant rows", lambda lib, x: x.std(1), [[1.0, 1.0, 1.0], [3.0, -1.0, 0.5]]),
    ("var_mean both outputs", lambda lib, x: lib.var_mean(x, 0), [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]]),
    (
        "std_mean both outputs",
        lambda lib, x: lib.std_mean(x, (0, 1), keepdim=True),
        [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]],
    ),
    ("logsumexp", lambda lib, x: x.logsumexp((0, 1)), [[1.5, 0.5, 2.0], [3.0, -1.0, 0.5]]),
    ("nansum with NaN", lambda lib, x: x.nansum(1), [[1.5, np.nan, 2.0], [np.nan, -1.0, 0.5]]),
    ("nansum all with NaN", lambda lib, x: lib.nansum(x), [[1.5, np.nan, 2.0], [3.0, -1.0, np.nan]]),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_first_and_second_order_gradients_match_torch(case):
    _, fn, data = case
    got, expected = run_both(lambda lib: _grads(lib, fn, np.array(data), second=True))
    assert_same_result(got[0], expected[0])
    if isinstance(expected[1], bool):
        assert got[1] is expected[1]
    else:
        assert_same_result(got[1], expected[1])


def test_prod_with_dtype_gives_the_gradient_in_the_input_dtype():
    def build(lib: Any) -> tuple[Any, Any, str]:
        x = lib.tensor([[1.5, 0.0], [2.0, 3.0]], requires_grad=True)
        out = x.prod(1, dtype=lib.float64)
        out.sum().backward()
        return out, x.grad, out.grad_fn.name()

    got, expected = run_both(build)
    assert_same_result(got[:2], expected[:2])
    assert got[2] == expected[2]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.mean(dtype=lib.float64),
        lambda lib, x: x.mean(1, True, dtype=lib.float64),
        lambda lib, x: lib.mean(x, (0, 1), dtype=lib.float64),
        lambda lib, x: x.mean(0, dtype=lib.float16),
    ],
)
def test_mean_with_dtype_matches_torch(call):
    # torch's mean takes dtype= (the input is converted); the gradient comes
    # back in the input's dtype.
    def build(lib: Any) -> tuple[Any, Any, str]:
        x = lib.tensor([[1.5, -2.25, 0.5], [2.0, 3.0, 7.0]], requires_grad=True)
        out = call(lib, x)
        out.sum().backward()
        return out, x.grad, out.grad_fn.name()

    got, expected = run_both(build)
    assert_same_result(got[:2], expected[:2])
    assert got[2] == expected[2]


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.sum(),
        lambda lib, x: x.sum(None),
        lambda lib, x: x.sum(None, True),
        lambda lib, x: lib.sum(x, dim=None, keepdim=True, dtype=lib.float64),
        lambda lib, x: lib.sum(x),
        lambda lib, x: x.mean(),
        lambda lib, x: x.mean(None, keepdim=True),
        lambda lib, x: lib.mean(x, dim=None),
        lambda lib, x: x.nansum(None, True),
    ],
)
def test_dim_none_is_the_overload_with_dim(call):
    # torch has sum() (SumBackward0, no dim saved) and sum(dim, keepdim)
    # (SumBackward1), where dim=None reduces everything and keepdim holds.
    def build(lib: Any) -> tuple[Any, Any, str, Any]:
        x = lib.tensor([[1.5, -2.25, 0.5], [2.0, 3.0, 7.0]], requires_grad=True)
        out = call(lib, x)
        (out * lib.arange(1, out.numel() + 1).reshape(out.shape)).sum().backward()
        saved = tuple(getattr(out.grad_fn, a, "-") for a in ("_saved_dim", "_saved_keepdim"))
        return out, x.grad, out.grad_fn.name(), saved

    got, expected = run_both(build)
    assert_same_result(got[:2], expected[:2])
    assert got[2:] == expected[2:]


@pytest.mark.parametrize("name", ["amax", "amin", "logsumexp", "nansum"])
def test_a_mistyped_dim_keyword_is_torch_type_error(name):
    # One torch overload: the argument is named (sum and mean, with two,
    # get "received an invalid combination of arguments").
    assert_same_error(lambda lib: getattr(lib.ones(2, 3), name)(dim="a"), length=200)


def test_mean_of_integers_with_a_floating_dtype_matches_torch():
    got, expected = run_both(lambda lib: lib.tensor([[1, 2], [4, 7]]).mean(0, dtype=lib.float64))
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(3).mean(dtype=lib.int64),
        lambda lib: lib.tensor([1, 2]).mean(0, dtype=lib.bool),
        lambda lib: lib.tensor([1, 2]).mean(),
    ],
)
def test_mean_with_a_non_floating_dtype_is_torch_error(fn):
    assert_same_error(fn, length=200)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.amax(5),
        lambda lib, x: lib.amin(x, (0, -4)),
        lambda lib, x: x.argmax(3),
        lambda lib, x: x.any(-4),
        lambda lib, x: lib.all(x, (1, 7)),
        lambda lib, x: x.var(3),
        lambda lib, x: lib.std_mean(x, -4),
        lambda lib, x: x.logsumexp(3),
        lambda lib, x: lib.prod(x, -4),
    ],
)
def test_dim_out_of_range_is_torch_index_error(fn):
    assert_same_error(
        lambda lib: fn(lib, _input(lib, "float32")),
        "Dimension out of range (expected to be in range of [-3, 2], but got",
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib, x: x.amax((0, 0)),
        lambda lib, x: lib.amin(x, (1, -2)),
        lambda lib, x: x.any((2, 2)),
        lambda lib, x: x.var((0, -3)),
        lambda lib, x: lib.logsumexp(x, (1, 1)),
    ],
)
def test_repeated_dims_are_torch_errors(fn):
    assert_same_error(lambda lib: fn(lib, _input(lib, "float32")), "appears multiple times in the list of dims")


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.zeros(0, 3).amax(),
        lambda lib: lib.zeros(0, 3).amin(0),
        lambda lib: lib.zeros(0, 3).amax(-2),
        lambda lib: lib.zeros(3, 0).amax((0, 1)),
        lambda lib: lib.zeros(0, 3).argmax(),
        lambda lib: lib.zeros(0, 3).argmin(-2),
    ],
)
def test_reducing_an_empty_dim_is_torch_error(fn):
    assert_same_error(fn, length=200)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.tensor([1, 2]).var(),
        lambda lib: lib.tensor([True, False]).std(0),
        lambda lib: lib.var_mean(lib.tensor([1, 2])),
        lambda lib: lib.std_mean(lib.tensor([[1, 2]]), 1),
        lambda lib: lib.tensor([True, False]).argmax(),
        lambda lib: lib.argmin(lib.tensor([True, False]), 0),
        lambda lib: lib.ones(2, 3).logsumexp(()),
    ],
)
def test_bad_dtypes_and_dims_are_torch_errors(fn):
    assert_same_error(fn, length=200)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.ones(2).logsumexp(),
        lambda lib: lib.logsumexp(lib.ones(2)),
        lambda lib: lib.ones(2).argmax((0,)),
    ],
)
def test_missing_or_mistyped_dim_is_torch_type_error(fn):
    assert_same_error(fn, length=20)


def test_tensors_and_engine_work_after_errors(ng):
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    for bad in (lambda: x.amax(4), lambda: x.var((0, 0)), lambda: ng.zeros(0).argmax()):
        with pytest.raises((IndexError, RuntimeError)):
            bad()
    x.prod().backward()
    assert to_np(x.grad).tolist() == [[24.0, 12.0], [8.0, 6.0]]


@pytest.mark.parametrize(
    "build",
    [
        lambda lib, x: x.var(),
        lambda lib, x: x.var(1),
        lambda lib, x: x.var(dim=(0,)),
        lambda lib, x: x.var(0, True, True),
        lambda lib, x: x.var(True),
        lambda lib, x: x.std(unbiased=False),
        lambda lib, x: x.std(correction=0.5),
        lambda lib, x: lib.var_mean(x, 0, correction=0.5)[0],
        lambda lib, x: x.amax(-1),
        lambda lib, x: x.amax(()),
        lambda lib, x: lib.logsumexp(x, [-1, 0]),
        lambda lib, x: x.prod(-1),
    ],
)
def test_saved_arguments_read_as_torch_shows_them(build):
    def saved(lib: Any) -> dict[str, Any]:
        x = from_np(lib, np.arange(6.0).reshape(2, 3) - 2, requires_grad=True)
        node = build(lib, x).grad_fn
        names = [
            n
            for n in dir(node)
            if n.startswith("_saved_") and n not in ("_saved_self", "_saved_result", "_saved_result0")
        ]
        return {n: getattr(node, n) for n in names}

    got, expected = run_both(saved)
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert same_value(got[name], value), (name, got[name], value)


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.tensor([1.0]).var(),
        lambda lib: lib.ones(2, 3).std(0, correction=2),
        lambda lib: lib.var_mean(lib.ones(2, 3), 1, correction=3),
        lambda lib: lib.std_mean(lib.ones(0)),
    ],
)
def test_no_degrees_of_freedom_warns_as_torch(fn):
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning) as expected:
        want = fn(torch)
    with pytest.warns(UserWarning) as got:
        have = fn(lib_under_test())
    # torch appends where its C++ code warned: "(Triggered internally at ...)".
    message = str(got[0].message).split(" (Triggered internally")[0]
    assert message.endswith("(input numel divided by output numel).")
    assert str(expected[0].message).startswith(message)
    assert_same_result(have, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("dims", "keepdim"), [((1,), False), ((0, 2), False), ((0, 2), True), ((-1,), True)])
def test_logsumexp_of_infinite_and_nan_lanes_matches_torch(dims, keepdim, dtype):
    """Lanes whose max is -inf or +inf (shifted by 0, not by the infinity) or nan, with
    the reduced dims kept and dropped, and the gradient."""
    x = np.arange(24, dtype=dtype).reshape(2, 3, 4) * 0.5 - 3
    x[0, 0, :] = -np.inf
    x[0, 1, 2] = np.inf
    x[1, 2, 1] = np.nan
    x[1, 0, :] = [-np.inf, np.inf, -np.inf, 0.0]

    def run(lib):
        xs = from_np(lib, x, requires_grad=True)
        out = lib.logsumexp(xs, dims, keepdim=keepdim)
        out.backward(lib.ones_like(out))
        return out, xs.grad

    got, expected = run_both(run)
    for g, e in zip(got, expected):
        assert_same_result(g, e)
