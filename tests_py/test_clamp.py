"""clamp (and clip) with tensor bounds, clamp_min and clamp_max against torch: the
overload torch's parser picks (number or tensor bounds, a 0-dim tensor next to a
number), type promotion, broadcasting, NaN, min > max, gradients of the bounds,
in-place forms and errors.

Values, nodes, saved attributes, gradients and second order of the differentiable
forms also come from their rows in op_specs.py (CLAMP).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oracle import assert_same_error, run_both, same_value, to_np

NAN = float("nan")


def _facts(t: Any) -> tuple[str, tuple[int, ...], list[Any]]:
    """dtype, shape and values (NaN spelled as a string)."""
    values = [("nan" if v != v else v) for v in to_np(t).reshape(-1).tolist()]
    return str(t.dtype).split(".")[-1], tuple(t.shape), values


@pytest.mark.usefixtures("torch_ref")
def test_result_dtype_follows_torchs_promotion() -> None:
    """A float bound promotes an integer tensor (number or tensor); a 0-dim tensor
    bound of a higher float kind does not, a dimensioned one does."""

    def run(lib: Any) -> list[Any]:
        i = lib.tensor([0, 3, 5], dtype=lib.int32)
        f = lib.tensor([0.0, 3.0, 5.0])
        h = lib.tensor([0.0, 3.0, 5.0], dtype=lib.float16)
        cases = [
            lib.clamp(i, 2.5),
            lib.clamp(i, 2),
            lib.clamp(i, lib.tensor(1)),
            lib.clamp(i, lib.tensor([1])),
            lib.clamp(i, lib.tensor(1.5)),
            lib.clamp(i, None, 1.5),
            lib.clamp(f, lib.tensor(2, dtype=lib.float64), 4.5),
            lib.clamp(h, lib.tensor([1.0], dtype=lib.float64)),
            lib.clamp(lib.tensor([True, False]), 1),
            lib.clamp(lib.tensor([True, False]), lib.tensor(True)),
            lib.clamp_min(i, 2.5),
            lib.clamp_max(i, lib.tensor([2.5])),
            i.clamp_min(lib.tensor(1)),
        ]
        return [_facts(t) for t in cases]

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.usefixtures("torch_ref")
def test_bounds_broadcast_propagate_nan_and_max_wins_over_min() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([1.0, 5.0, NAN, 0.5])
        nan_bound = lib.tensor([NAN, 1.0, 1.0, NAN])
        return [
            _facts(lib.clamp(x, min=nan_bound)),
            _facts(lib.clamp(x, max=nan_bound)),
            _facts(lib.clamp_min(x, nan_bound)),
            _facts(lib.clamp(x, NAN)),
            _facts(lib.clamp(lib.tensor([1.0, 5.0]), lib.tensor([3.0, 3.0]), lib.tensor([2.0, 2.0]))),
            _facts(lib.clamp(lib.arange(3.0), lib.zeros(2, 1), lib.ones(1, 1, 3))),
        ]

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.usefixtures("torch_ref")
def test_gradients_of_broadcast_bounds_match_torch() -> None:
    """self, min and max each get torch's gradient, summed to their own shape, also
    where min > max (max wins) and with one bound only."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[-1.0, 0.2, 0.9], [0.5, 2.0, -0.1]], requires_grad=True)
        lo = lib.tensor([0.0, 0.3, 1.0], requires_grad=True)
        hi = lib.tensor([[0.8], [0.4]], requires_grad=True)
        weights = lib.arange(1.0, 7.0).reshape(2, 3)
        cases = [
            (lib.clamp(x, lo, hi), [x, lo, hi]),
            (x.clamp(lo), [x, lo]),
            (x.clamp(max=hi), [x, hi]),
            (lib.clamp_min(x, lo), [x, lo]),
            (x.clamp_max(hi), [x, hi]),
        ]
        return [[to_np(g).tolist() for g in lib.autograd.grad((y * weights).sum(), inputs)] for y, inputs in cases]

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.usefixtures("torch_ref")
def test_number_next_to_a_0dim_tensor_is_the_number_overload() -> None:
    """torch's parser reads a 0-dim tensor next to a Python number as a number:
    ClampBackward1 saves its value; with two tensors it is ClampBackward0."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([0.5, 1.5, 3.0], requires_grad=True)
        a = lib.clamp(x, 1, lib.tensor(2.5))
        b = x.clamp(lib.tensor(1.0), None)
        c = lib.clamp(x, 1.0)
        return [
            (a.grad_fn.name(), a.grad_fn._saved_min, a.grad_fn._saved_max),
            (b.grad_fn.name(), b.grad_fn._saved_max),
            (c.grad_fn.name(), c.grad_fn._saved_min, c.grad_fn._saved_max),
        ]

    got, expected = run_both(run)
    assert got[1][0] == expected[1][0] and got[1][1] is expected[1][1] is None
    assert got[0] == expected[0] and got[2] == expected[2]
    assert same_value(got[1], expected[1])


@pytest.mark.parametrize(
    "fn",
    [
        lambda lib: lib.clamp(lib.ones(3)),
        lambda lib: lib.ones(3).clamp_(),
        lambda lib: lib.clamp(lib.ones(3), "a"),
        lambda lib: lib.ones(3).clamp("a"),
        lambda lib: lib.clip(lib.ones(3), [1]),
        lambda lib: lib.clamp(lib.ones(3), 1, lib.zeros(2)),
        lambda lib: lib.clamp(lib.ones(3), 1, lib.tensor(1.0, requires_grad=True)),
        lambda lib: lib.clamp_min(lib.ones(3), None),
        lambda lib: lib.clamp_min(None, 1),
        lambda lib: lib.ones(3).clamp_max_(),
        lambda lib: lib.clamp(lib.ones(3), lib.zeros(2)),
        lambda lib: lib.clamp_max(lib.ones(3), lib.zeros(2, 2)),
        lambda lib: lib.clamp(lib.zeros(3, dtype=lib.bool), True, True),
        lambda lib: lib.clamp(lib.zeros(3, dtype=lib.bool), None, True),
        lambda lib: lib.clamp_min(lib.zeros(3, dtype=lib.bool), True),
        lambda lib: lib.arange(3).clamp_(2.5),
        lambda lib: lib.arange(3).clamp_(lib.tensor(2.5)),
        lambda lib: lib.arange(3).clamp_max_(0.5),
        lambda lib: lib.arange(3).clamp_min_(lib.tensor([0.5])),
        lambda lib: lib.arange(3.0).clamp_(lib.zeros(2, 1)),
        lambda lib: lib.ones(3, requires_grad=True).clamp_min_(0),
        # A number bound is converted to the result's dtype, with c10's overflow check.
        lambda lib: lib.tensor([5], dtype=lib.int32).clamp(1, 2**40),
        lambda lib: lib.tensor([5], dtype=lib.int8).clamp_max(300),
        lambda lib: lib.tensor([5], dtype=lib.int32).clamp_(max=2**40),
        lambda lib: lib.tensor([5.0], dtype=lib.float16).clamp(min=-1e10),
        lambda lib: lib.tensor([5.0]).clamp_min(1e300),
    ],
)
def test_errors_match_torch(ng: Any, fn: Any) -> None:
    assert_same_error(fn)


@pytest.mark.usefixtures("torch_ref")
def test_inplace_forms_write_bump_the_version_and_record_the_tensor_overload() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([-1.0, 0.2, 0.9], requires_grad=True)
        lo = lib.tensor([0.0, 0.3, 0.1], requires_grad=True)
        out = []
        for name, args in (
            ("clamp_", (lo, 0.5)),
            ("clamp_", (lo, None)),
            ("clamp_min_", (lo,)),
            ("clamp_max_", (0.5,)),
        ):
            y = x * 1
            v = y._version
            if name == "clamp_" and args[1] is not None:
                args = (lo, lib.tensor([0.5, 0.5, 0.5]))
            z = getattr(y, name)(*args)
            grads = lib.autograd.grad(z.sum(), [x, lo], allow_unused=True)
            out.append(
                (
                    z is y,
                    y._version - v,
                    y.grad_fn.name(),
                    to_np(y).tolist(),
                    [None if g is None else to_np(g).tolist() for g in grads],
                )
            )
        i = lib.tensor([0, 5], dtype=lib.int32)
        i.clamp_(lib.tensor([1]), lib.tensor(3))
        out.append(_facts(i))
        return out

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.usefixtures("torch_ref")
def test_second_order_through_tensor_bounds_matches_torch() -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([-1.0, 0.2, 0.9], requires_grad=True)
        lo = lib.tensor([0.0, 0.3, 0.1], requires_grad=True)
        y = lib.clamp(x * x, lo * lo, 0.5 + lo)
        (gx,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        gg = lib.autograd.grad(gx.sum(), [x, lo], allow_unused=True)
        return [None if g is None else np.round(to_np(g), 6).tolist() for g in gg]

    got, expected = run_both(run)
    assert got == expected


# Tensor bounds' backward is one loop up to 4096 gradient elements, without a graph
# (Note [Small clamp backward in one loop]); each case on both sides of that limit.
@pytest.mark.parametrize("rows", [3, 1500])  # 9 and 4500 gradient elements
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "bounds",
    ["both", "min only", "max only", "clamp_min", "clamp_max"],
)
def test_tensor_bounds_gradients_on_both_sides_of_the_loop(rows, dtype, bounds):
    """Broadcast bounds, min above max in some columns, a nan and an infinity in self,
    values on the bounds, and an expanded incoming gradient (from sum)."""
    rng = np.random.default_rng(rows)
    x = rng.uniform(-2, 2, (rows, 3)).astype(dtype)
    x[0] = [np.nan, np.inf, 0.5]
    lo = np.array([-1.0, 0.5, 1.0], dtype)
    hi = np.tile(np.array([[1.0], [0.0], [2.0]], dtype), (rows // 3, 1))  # row 1: max < min
    x[1, 0] = -1.0  # on min

    def run(lib):
        xs = lib.tensor(x, requires_grad=True)
        los = lib.tensor(lo, requires_grad=True)
        his = lib.tensor(hi, requires_grad=True)
        if bounds == "both":
            out, leaves = lib.clamp(xs, los, his), [xs, los, his]
        elif bounds == "min only":
            out, leaves = lib.clamp(xs, los), [xs, los]
        elif bounds == "max only":
            out, leaves = lib.clamp(xs, max=his), [xs, his]
        elif bounds == "clamp_min":
            out, leaves = lib.clamp_min(xs, los), [xs, los]
        else:
            out, leaves = xs.clamp_max(his), [xs, his]
        return [out, *lib.autograd.grad(out.sum(), leaves)]

    got, want = run_both(run)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(to_np(g), to_np(w))
