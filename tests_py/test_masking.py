"""Logic, masking and selection ops against torch: logical_not, isnan, isinf, isfinite,
masked_fill, where with numbers and as a method, nan_to_num, clip, isclose, allclose and
equal (dtypes, broadcasting, in-place forms, errors).

Values, nodes, saved attributes and gradients of the differentiable ones also come from
their rows in op_specs.py (MASKING).
"""

from __future__ import annotations

from typing import Any

import pytest

from oracle import assert_same_error, to_np

INF = float("inf")
NAN = float("nan")


def _facts(t: Any) -> tuple[str, list[Any]]:
    """dtype and values, NaN spelled as a string (NaN != NaN in a list comparison)."""
    values = [("nan" if v != v else v) for v in to_np(t).reshape(-1).tolist()]
    return str(t.dtype).split(".")[-1], values


def _inputs(lib: Any) -> list[Any]:
    """Tensors of every dtype, with zeros, NaN and infinities where the dtype has them."""
    special = [0.0, -1.5, NAN, INF, -INF, 2.0]
    return [
        lib.tensor(special),
        lib.tensor(special, dtype=lib.float64),
        lib.tensor(special, dtype=lib.float16),
        lib.tensor([[0, 3], [-2, 0]]),
        lib.tensor([True, False]),
        lib.tensor(NAN),
    ]


# ---------------------------------------------------------------- bool-valued unary ops

BOOL_UNARY = ["logical_not", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("name", BOOL_UNARY)
def test_bool_unary_op_matches_torch(ng: Any, torch_ref: Any, name: str) -> None:
    """Function and method over every dtype: bool results, torch's values, no graph."""

    def run(lib: Any) -> list[Any]:
        out = []
        for x in _inputs(lib):
            out.append(_facts(getattr(lib, name)(x)))
            out.append(_facts(getattr(x, name)()))
        x = lib.tensor([1.0, NAN], requires_grad=True)
        y = getattr(x * 2, name)()
        out.append((y.requires_grad, y.grad_fn, y.is_leaf))
        return out

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_value_tests_have_no_inplace_form(ng: Any, torch_ref: Any, name: str) -> None:
    assert hasattr(ng.Tensor, name + "_") is hasattr(torch_ref.Tensor, name + "_") is False


def test_logical_not_inplace_keeps_the_dtype(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        out = []
        for x in _inputs(lib):
            returned = x.logical_not_()
            out.append((returned is x, x._version, _facts(x)))
        return out

    assert run(ng) == run(torch_ref)


def test_logical_not_inplace_records_no_history(ng: Any, torch_ref: Any) -> None:
    """torch's logical_not_ is not differentiable: a leaf that requires grad may be
    written, a non-leaf keeps its grad_fn, and only the version moves."""

    def run(lib: Any) -> list[Any]:
        leaf = lib.tensor([1.0, 0.0], requires_grad=True)
        leaf.logical_not_()
        y = lib.tensor([2.0, 0.0], requires_grad=True) * 1
        y.logical_not_()
        return [
            (leaf.tolist(), leaf._version, leaf.requires_grad, leaf.grad_fn),
            (y.tolist(), y._version, y.requires_grad, type(y.grad_fn).__name__),
        ]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize("name", BOOL_UNARY)
def test_bool_unary_op_refuses_a_number(ng: Any, name: str) -> None:
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not float$"):
        getattr(ng, name)(1.0)


# ---------------------------------------------------------------- masked_fill


def _mask(lib: Any) -> Any:
    return lib.tensor([[True, False, True], [False, False, True]])


def test_masked_fill_values_and_dtypes(ng: Any, torch_ref: Any) -> None:
    """Numbers and 0-dim tensors of other dtypes are converted to self's dtype; the
    mask and self broadcast together."""

    def run(lib: Any) -> list[Any]:
        m = _mask(lib)
        floats = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        ints = lib.tensor([[1, 2, 3], [4, 5, 6]])
        cases = [
            floats.masked_fill(m, 0.5),
            floats.masked_fill(m, 2),
            floats.masked_fill(m, True),
            floats.masked_fill(m, NAN),
            floats.masked_fill(m, lib.tensor(7, dtype=lib.int64)),
            floats.masked_fill(m, lib.tensor(-1.5, dtype=lib.float64)),
            ints.masked_fill(m, 2.7),
            ints.masked_fill(m, lib.tensor(-2.7)),
            lib.tensor([True, False, True]).masked_fill(m[0], 0),
            floats.half().masked_fill(m, 0.25),
            lib.masked_fill(floats, m[1], -1.0),  # the mask broadcasts to self
            lib.masked_fill(lib.tensor([1.0, 2.0, 3.0]), m, 0.0),  # self broadcasts to the mask
            lib.masked_fill(floats, lib.tensor([[True], [False]]), 9.0),
            lib.tensor(5.0).masked_fill(lib.tensor(True), 1.0),
        ]
        return [(tuple(t.shape), _facts(t)) for t in cases]

    assert run(ng) == run(torch_ref)


def test_masked_fill_gradients(ng: Any, torch_ref: Any) -> None:
    """The filled places give self no gradient; a 0-dim tensor value gets their sum
    (MaskedFillBackward1 also when only self requires grad)."""

    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        w = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        y = x.masked_fill(_mask(lib), v)
        (y * w).sum().backward()
        only_self = x.masked_fill(_mask(lib), lib.tensor(0.0))
        only_value = lib.zeros(3).masked_fill(_mask(lib), v)
        only_value.sum().backward()
        return [
            to_np(x.grad).tolist(),
            v.grad.item(),
            only_self.grad_fn.name(),
            [None if fn is None else fn.name() for fn, _ in only_self.grad_fn.next_functions],
            only_value.grad_fn.name(),
            [None if fn is None else fn.name() for fn, _ in only_value.grad_fn.next_functions],
        ]

    assert run(ng) == run(torch_ref)


def test_masked_fill_inplace(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        returned = x.masked_fill_(_mask(lib)[0], 0.0)
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        y = leaf * 1
        v = lib.tensor(3.0, requires_grad=True)
        y.masked_fill_(lib.tensor([False, True]), v)
        y.sum().backward()
        return [returned is x, x._version, x.tolist(), y.grad_fn.name(), leaf.grad.tolist(), v.grad.item()]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.ones(3).masked_fill(lib.tensor([1, 0, 1]), 0.0),
        lambda lib: lib.ones(3).masked_fill(lib.tensor([1.0, 0.0, 1.0]), 0.0),
        lambda lib: lib.ones(3).masked_fill(lib.tensor([True, False, True]), lib.tensor([1.0])),
        lambda lib: lib.ones(3).masked_fill(lib.ones(2, dtype=lib.bool), 0.0),
        lambda lib: lib.ones(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 0.0),
        lambda lib: lib.ones(3, requires_grad=True).masked_fill_(lib.ones(3, dtype=lib.bool), 0.0),
        lambda lib: lib.ones(3).masked_fill(lib.ones(3, dtype=lib.bool), 1e39),
    ],
    ids=["int_mask", "float_mask", "1d_value", "mask_mismatch", "inplace_broadcast", "leaf", "overflow"],
)
def test_masked_fill_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)


@pytest.mark.parametrize(
    ("call", "got"),
    [
        (lambda lib: lib.masked_fill(lib.ones(2), lib.ones(2, dtype=lib.bool), None), "(Tensor, Tensor, NoneType)"),
        (lambda lib: lib.masked_fill(lib.ones(2), None, 1), "(Tensor, NoneType, int)"),
        (lambda lib: lib.masked_fill(None, lib.ones(2, dtype=lib.bool), 1), "(NoneType, Tensor, int)"),
        (lambda lib: lib.ones(2).masked_fill(lib.ones(2, dtype=lib.bool), "a"), "(Tensor, str)"),
        (lambda lib: lib.ones(2).masked_fill_(None, None), "(NoneType, NoneType)"),
    ],
)
def test_masked_fill_argument_errors(ng: Any, call: Any, got: str) -> None:
    x = ng.ones(2)
    with pytest.raises(TypeError) as error:
        call(ng)
    assert f"received an invalid combination of arguments - got {got}, but expected one of:\n" in str(error.value)
    assert x.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- where


def test_where_numbers_promote_as_torch(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        c = lib.tensor([True, False])
        floats = lib.tensor([1.0, 2.0])
        cases = [
            lib.where(c, 1, 2.5),
            lib.where(c, 1, 2),
            lib.where(c, True, False),
            lib.where(c, floats, 0),
            lib.where(c, 0, floats.double()),
            lib.where(c, lib.tensor([1, 2]), 0.5),
            lib.where(c, lib.tensor([1, 2]), True),
            lib.where(c, lib.tensor(1.0, dtype=lib.float64), floats),
            floats.where(c, 0),
            floats.where(c, lib.tensor([[5.0], [6.0]])),
            lib.tensor([1, 2]).where(c, 0.5),
        ]
        return [(tuple(t.shape), _facts(t)) for t in cases]

    assert run(ng) == run(torch_ref)


def test_where_method_gradients(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([[5.0], [6.0]], requires_grad=True)
        y = x.where(lib.tensor([True, False]), b)
        facts = [y.grad_fn.name(), y.grad_fn._saved_condition.tolist()]
        y.sum().backward()
        return [*facts, x.grad.tolist(), b.grad.tolist()]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.where(lib.tensor([1, 0]), lib.ones(2), 0.0),
        lambda lib: lib.ones(2).where(lib.tensor([1.0, 0.0]), 0.0),
        lambda lib: lib.where(lib.tensor([True, False]), lib.ones(2), lib.ones(3)),
    ],
    ids=["int_condition", "method_float_condition", "shapes"],
)
def test_where_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)


def test_where_method_argument_errors(ng: Any) -> None:
    x = ng.ones(2)
    with pytest.raises(TypeError) as error:
        x.where(ng.tensor([True, False]), None)
    assert str(error.value).startswith(
        "where() received an invalid combination of arguments - got (Tensor, NoneType), but expected one of:\n"
        " * (Tensor condition, Tensor other)\n"
    )
    with pytest.raises(TypeError, match="invalid combination of arguments - got \\(NoneType, int\\)"):
        x.where(None, 1)


# ---------------------------------------------------------------- nan_to_num


def test_nan_to_num_values(ng: Any, torch_ref: Any) -> None:
    """Defaults per dtype (the dtype's largest finite values), custom replacements,
    integer and bool tensors copied."""

    def run(lib: Any) -> list[Any]:
        out = []
        for x in _inputs(lib):
            out.append(_facts(lib.nan_to_num(x)))
            out.append(_facts(x.nan_to_num(1.5, 100.0, -100.0)))
            out.append(_facts(lib.nan_to_num(x, posinf=lib.tensor(3.0))))
        return out

    assert run(ng) == run(torch_ref)


def test_nan_to_num_of_integers_is_a_copy(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([1, 2])
        y = lib.nan_to_num(x)
        y.add_(1)
        return [x.tolist(), y.tolist(), str(y.dtype)]

    assert run(ng) == run(torch_ref)


def test_nan_to_num_gradient_is_zero_where_not_finite(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([NAN, INF, -INF, 2.0], requires_grad=True)
        y = x.nan_to_num()
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        z = x.clone()
        z.nan_to_num_(nan=0.0)
        z.sum().backward()
        return [_facts(g.detach()), x.grad.tolist(), z.grad_fn.name(), z._version]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.tensor([1.0], requires_grad=True).nan_to_num_(),
        lambda lib: lib.nan_to_num(lib.ones(2), nan="a"),
        lambda lib: lib.ones(2).nan_to_num_(posinf=[1.0]),
        lambda lib: lib.nan_to_num(None),
    ],
    ids=["leaf", "nan_str", "inplace_posinf_list", "none"],
)
def test_nan_to_num_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)


# ---------------------------------------------------------------- clip


def test_clip_is_clamp(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        x = lib.tensor([-2.0, 0.5, 3.0], requires_grad=True)
        y = lib.clip(x, -1.0, 1.0)
        z = x.clip(max=0.0)
        w = x.clone()
        w.clip_(min=0.0)
        (y.sum() + z.sum() + w.sum()).backward()
        return [y.tolist(), z.tolist(), w.tolist(), y.grad_fn.name(), w.grad_fn.name(), x.grad.tolist()]

    assert run(ng) == run(torch_ref)


def test_clip_without_bounds_is_an_error(ng: Any) -> None:
    assert_same_error(lambda lib: lib.clip(lib.ones(2)))


# ---------------------------------------------------------------- isclose, allclose, equal


def _close_pairs(lib: Any) -> list[tuple[Any, Any]]:
    return [
        (lib.tensor([1.0, NAN, INF, 1e-9, 2.0, -INF]), lib.tensor([1.0 + 1e-6, NAN, INF, 0.0, 2.1, INF])),
        (lib.tensor([[1.0], [2.0]], dtype=lib.float64), lib.tensor([1.0, 2.0 + 1e-9], dtype=lib.float64)),
        (lib.tensor([5, 6, 7]), lib.tensor([6, 6, 0])),
        (lib.tensor([True, False]), lib.tensor([True, True])),
        (lib.tensor([1.0, 2.0], dtype=lib.float16), lib.tensor([1.001, 2.0], dtype=lib.float16)),
    ]


@pytest.mark.parametrize(
    "tolerances",
    [{}, {"equal_nan": True}, {"rtol": 0.1, "atol": 0.0}, {"rtol": 0.0, "atol": 0.0}, {"atol": 1.5}],
    ids=["defaults", "equal_nan", "rtol", "exact", "atol"],
)
def test_isclose_and_allclose_match_torch(ng: Any, torch_ref: Any, tolerances: dict[str, Any]) -> None:
    def run(lib: Any) -> list[Any]:
        out = []
        for a, b in _close_pairs(lib):
            out.append(_facts(lib.isclose(a, b, **tolerances)))
            out.append(_facts(a.isclose(b, **tolerances)))
            whole = lib.allclose(a, b, **tolerances)
            out.append((type(whole).__name__, whole, a.allclose(b, **tolerances)))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        close = lib.isclose(x, x * 1)
        out.append((close.requires_grad, close.grad_fn))
        return out

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
        lambda lib: lib.allclose(lib.ones(2, dtype=lib.int64), lib.ones(2)),
        lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-1),
        lambda lib: lib.isclose(lib.ones(2), lib.ones(2), atol=-0.5),
        lambda lib: lib.allclose(lib.ones(2), lib.ones(3)),
        lambda lib: lib.isclose(lib.ones(2), 1.0),
        lambda lib: lib.allclose(lib.ones(2), None),
    ],
    ids=["dtypes", "allclose_dtypes", "rtol", "atol", "shapes", "number", "none"],
)
def test_isclose_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)


def test_equal_matches_torch(ng: Any, torch_ref: Any) -> None:
    def run(lib: Any) -> list[Any]:
        a = lib.tensor([1.0, 2.0])
        cases = [
            lib.equal(a, lib.tensor([1.0, 2.0])),
            lib.equal(a, lib.tensor([1.0, 2.5])),
            lib.equal(lib.tensor([1, 2]), a),  # compared after promotion
            lib.equal(a, lib.tensor([[1.0, 2.0]])),  # other sizes: never equal
            lib.equal(lib.tensor([NAN]), lib.tensor([NAN])),
            lib.equal(lib.tensor([True]), lib.tensor([1])),
            a.equal(a),
            lib.equal(lib.zeros(0), lib.zeros(0)),
        ]
        return [(type(r).__name__, r) for r in cases]

    assert run(ng) == run(torch_ref)


@pytest.mark.parametrize(
    "call",
    [lambda lib: lib.equal(lib.ones(2), 1), lambda lib: lib.ones(2).equal(None)],
    ids=["number", "none"],
)
def test_equal_errors(ng: Any, call: Any) -> None:
    assert_same_error(call)
