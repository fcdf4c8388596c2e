"""The in-place comparisons and logical ops, pow_/square_/sgn_, remainder(Number, Tensor),
remainder's signed zeros, broadcast_shapes and broadcast_tensors, each against torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

COMPARISONS = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_"]


def _error(fn: Any) -> tuple[str, str]:
    """The type and message of the exception fn raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is the result compared
        return type(e).__name__, str(e)
    raise AssertionError("no exception raised")


def _node_names(t: Any) -> tuple[Any, ...]:
    fn = t.grad_fn
    return (fn.name(), tuple(None if f is None else f.name() for f, _ in fn.next_functions))


@pytest.mark.parametrize("name", COMPARISONS)
def test_inplace_comparison_matches_torch(ng: Any, torch_ref: Any, name: str) -> None:
    """Values in self's dtype, the version bumped once, the zero-gradient node (Backward0 for a
    number, Backward1 for a tensor) and zero gradients of both operands' shapes."""

    def run(lib: Any) -> list[Any]:
        facts = []
        for x, other in (
            (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([2.0, 2.0, 2.0])),
            (lib.tensor([[1, 2], [3, 4]]), 2.5),
            (lib.tensor([True, False]), 0.5),
            (lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([2, 3])),
        ):
            returned = getattr(x, name)(other)
            facts.append((returned is x, str(x.dtype), x.tolist(), x._version))
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([[2.0], [1.0]], requires_grad=True)
        y = a * lib.ones(2, 1)
        getattr(y, name)(b)
        facts.append((_node_names(y), y.requires_grad, y.tolist()))
        y.sum().backward()
        facts.append((a.grad.tolist(), b.grad.tolist()))
        z = a * 1
        getattr(z, name)(2)
        facts.append(_node_names(z))
        # self without grad, other with: the node still records (other's edge).
        w = lib.tensor([1.0, 2.0, 3.0])
        getattr(w, name)(a)
        facts.append((_node_names(w), w.requires_grad))
        return facts

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("name", ["eq_", "lt_"])
def test_inplace_comparison_errors(ng: Any, torch_ref: Any, name: str) -> None:
    def run(lib: Any) -> list[Any]:
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([1.0, 2.0])
        errors = [
            _error(lambda: getattr(leaf, name)(1.0)),
            _error(lambda: getattr(y, name)(lib.ones(3, 2))),
            # torch's parser lists the overloads (Tensor other), (Number other) after it.
            _error(lambda: getattr(y, name)(None))[1].split(", but")[0],
            _error(lambda: getattr(lib.ones(1).expand(2), name)(1.0)),
        ]
        return [errors, leaf._version, y._version, y.tolist()]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("name", ["logical_and_", "logical_or_", "logical_xor_"])
def test_inplace_logical_ops_match_torch(ng: Any, torch_ref: Any, name: str) -> None:
    """Written in self's dtype with the version bumped, no history; tensors only."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[0.0, 2.0], [3.0, 0.0]])
        getattr(x, name)(lib.tensor([1, 0]))
        leaf = lib.tensor([0.0, 1.0], requires_grad=True)
        getattr(leaf, name)(lib.tensor([1.0, 1.0]))
        return [
            x.tolist(),
            x._version,
            leaf.tolist(),
            leaf.grad_fn,
            leaf.requires_grad,
            _error(lambda: getattr(x, name)(2)),
            _error(lambda: getattr(x, name)(lib.ones(3))),
        ]

    assert run(ng) == run(torch_ref)


def _saved(t: Any) -> dict[str, Any]:
    fn = t.grad_fn
    out = {}
    for attribute in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        value = getattr(fn, attribute)
        out[attribute] = value.tolist() if hasattr(value, "tolist") else value
    return out


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, y: y.square_(),
        lambda lib, y: y.pow_(3),
        lambda lib, y: y.pow_(0.5),
        lambda lib, y: y.pow_(lib.tensor([2.0, 1.0, 0.5], requires_grad=True)),
        lambda lib, y: y.sgn_(),
    ],
    ids=["square_", "pow_int", "pow_float", "pow_tensor", "sgn_"],
)
def test_pow_square_sgn_inplace_match_torch(ng: Any, torch_ref: Any, call: Any) -> None:
    """Values, node, saved values (self is the original, cloned), version, gradients and
    second-order gradients."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([0.5, 2.0, 3.0], requires_grad=True)
        y = x * 1
        returned = call(lib, y)
        facts = [returned is y, y.tolist(), _node_names(y), _saved(y), y._version]
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        facts.append((g + 0).tolist())  # + 0: torch's zero gradient of sgn has no storage
        if g.requires_grad:
            (gg,) = lib.autograd.grad(g.sum(), x)
            facts.append(gg.tolist())
        return facts

    got, expected = run(ng), run(torch_ref)
    # Values to float32 rounding: NumPy's float32 power on AVX-512 CPUs is one
    # ulp away from torch's for 3 ** 0.5.
    assert got[0] == expected[0] and got[2] == expected[2] and got[4] == expected[4]
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    assert got[3].keys() == expected[3].keys()
    for key in got[3]:
        np.testing.assert_allclose(got[3][key], expected[3][key], rtol=1e-6)
    assert len(got) == len(expected)
    for a, b in zip(got[5:], expected[5:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_pow_square_sgn_inplace_dtypes_and_errors(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        i = lib.tensor([1, 2, 3])
        facts = [i.square_().tolist(), i.pow_(2).tolist(), i.sgn_().tolist(), str(i.dtype), i._version]
        f16 = lib.tensor([1.5, -2.0], dtype=lib.float16)
        facts.append((f16.pow_(2).tolist(), str(f16.dtype)))
        b = lib.tensor([True, False])
        facts.append((b.sgn_().tolist(), str(b.dtype)))
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        facts += [
            _error(lambda: lib.tensor([1, 2]).pow_(0.5)),
            _error(lambda: lib.tensor([1, 2]).pow_(-1)),
            _error(lambda: lib.tensor([1, 2]).pow_(lib.tensor(2.0))),
            _error(lambda: lib.tensor([True]).square_()),
            _error(lambda: lib.tensor([1.0, 2.0]).pow_(lib.ones(3))),
            _error(leaf.square_),
            _error(leaf.sgn_),
            _error(lambda: leaf.pow_(lib.tensor([1.0, 2.0]))),
            (leaf._version, leaf.tolist()),
        ]
        return facts

    assert run(ng) == run(torch_ref)


def test_pow_inplace_argument_error(ng: Any) -> None:
    x = ng.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"^pow_\(\) received an invalid combination of arguments - got \(str\)"):
        x.pow_("a")
    assert x._version == 0


def test_remainder_number_self_matches_torch(ng: Any, torch_ref: Any) -> None:
    """torch.remainder(Number, Tensor): values and dtype; torch differentiates it not
    (NotImplemented, whose backward raises)."""

    def run(lib: Any) -> list[Any]:
        facts = []
        for number, other in (
            (2, lib.tensor([1.5, -1.5, 3.0])),
            (2, lib.tensor([3, -4])),
            (2.5, lib.tensor([3, 4])),
            (True, lib.tensor([3, 4])),
            (-7, lib.tensor([3, 4], dtype=lib.uint8)),
            (2, lib.tensor([0.0, 1.0])),
        ):
            r = lib.remainder(number, other)
            facts.append((r.tolist(), str(r.dtype)))
        t = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
        r = lib.remainder(2, other=t)
        facts.append((r.grad_fn.name(), r.requires_grad))
        facts.append(_error(lambda: r.sum().backward()))
        facts.append(_error(lambda: lib.remainder(2, lib.tensor([0, 1]))))
        return facts

    got, expected = run(ng), run(torch_ref)
    assert str(got) == str(expected)


@pytest.mark.parametrize(
    "args",
    [(2, None), (2, 3), (None, None), ("a", 2.0)],
    ids=["number_none", "numbers", "nones", "str_float"],
)
def test_remainder_number_self_argument_errors(ng: Any, torch_ref: Any, args: tuple[Any, ...]) -> None:
    def run(lib: Any) -> tuple[str, str]:
        return _error(lambda: lib.remainder(*args))

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_remainder_signed_zeros_match_torch(ng: Any, torch_ref: Any, dtype: str) -> None:
    """A zero remainder has the sign of the dividend in torch (fmod's zero), where NumPy's
    has the sign of the divisor; compared bit for bit (np.signbit) in every path: tensor
    and number divisors, the in-place method, ``%`` and ``%=``, and a number dividend."""

    def bits(t: Any) -> list[tuple[float, bool]]:
        v = t.float().numpy() if hasattr(t, "numpy") else np.asarray(t)
        return [(float(x), bool(np.signbit(x))) for x in np.ravel(v)]  # no nan here

    def run(lib: Any) -> list[Any]:
        dt = getattr(lib, dtype)
        a = lib.tensor([-4.0, 4.0, -0.0, 0.0, -2.0, 2.0, 3.0, -3.0, 1.0], dtype=dt)
        facts = []
        for b in (
            2.0,
            -2.0,
            lib.tensor(-2.0, dtype=dt),
            lib.tensor([2.0, -2.0, 2.0, -2.0, -2.0, 2.0, 2.0, -2.0, 1.0], dtype=dt),
        ):
            facts.append(bits(lib.remainder(a, b)))
            facts.append(bits(a % b))
            c = a.clone()
            c.remainder_(b)
            facts.append(bits(c))
            c = a.clone()
            c %= b
            facts.append(bits(c))
        facts.append(bits(lib.remainder(-0.0, a[a != 0])))
        return facts

    assert run(ng) == run(torch_ref)


def test_remainder_of_integers_by_floats(ng: Any, torch_ref: Any) -> None:
    """An integer dividend promoted to float: the zero's sign is the integer's (+0 for 0)."""

    def run(lib: Any) -> list[Any]:
        r = lib.remainder(lib.tensor([-4, 4, 0]), -2.0)
        return [(float(x), bool(np.signbit(x))) for x in r.numpy()] + [str(r.dtype)]

    assert run(ng) == run(torch_ref)


# ---- broadcast_shapes and broadcast_tensors


@pytest.mark.parametrize(
    "shapes",
    [
        ((2, 1), (3,)),
        (2, (3, 1)),
        (),
        ((1, 4), [2, 1, 1], 4),
        ((0, 1), (3,)),
        ((2,), (3,)),
        ((2, 3), (4, 1, 1), (5, 1, 1)),
        ((-1,), (3,)),
        (-1,),
        ((2.0,),),
    ],
    ids=lambda shapes: repr(shapes),
)
def test_broadcast_shapes_matches_torch(ng: Any, torch_ref: Any, shapes: tuple[Any, ...]) -> None:
    def run(lib: Any) -> Any:
        try:
            result = lib.broadcast_shapes(*shapes)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
        return type(result).__name__, repr(result)

    assert run(ng) == run(torch_ref)


def test_broadcast_tensors_matches_torch(ng: Any, torch_ref: Any) -> None:
    """Outputs of the common shape; those that needed it are expanded views
    (ExpandBackward0), a tensor already of that shape is returned itself."""

    def run(lib: Any) -> list[Any]:
        a = lib.tensor([[1.0], [2.0]], requires_grad=True)
        b = lib.tensor([3.0, 4.0, 5.0])
        c = lib.ones(2, 3, requires_grad=True)
        out = lib.broadcast_tensors(a, b, c)
        facts: list[Any] = [type(out).__name__, [(o.tolist(), tuple(o.shape)) for o in out]]
        facts.append([None if o.grad_fn is None else o.grad_fn.name() for o in out])
        facts.append((out[2] is c, out[1]._is_view(), out[1]._base is b))
        (out[0] * out[2]).sum().backward()
        facts.append(a.grad.tolist())
        facts.append(lib.broadcast_tensors())
        facts.append(lib.broadcast_tensors(b)[0] is b)
        facts += [
            _error(lambda: lib.broadcast_tensors(lib.ones(2), lib.ones(3))),
            _error(lambda: lib.broadcast_tensors(lib.ones(2, 1), lib.ones(3), lib.ones(4, 1))),
            _error(lambda: lib.broadcast_tensors(lib.ones(2), None)),
            _error(lambda: lib.broadcast_tensors([lib.ones(2)])),
        ]
        return facts

    assert run(ng) == run(torch_ref)
