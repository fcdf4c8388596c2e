"""``testing.assert_close`` and ``testing.make_tensor``: torch.testing's pairing rules,
default tolerances per dtype, and its messages word for word (each case states the
expected text, and is also run on installed torch to compare the two messages).

Runs on the library under test (``ng``): npgrad, or torch itself with
``NPGRAD_TESTS_AGAINST_TORCH=1``."""

from __future__ import annotations

import collections
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

NAN, INF = float("nan"), float("inf")


def T(lib: Any, values: Any, dtype: Any = None, **kwargs: Any) -> Any:
    return lib.tensor(values, dtype=dtype, **kwargs)


# id -> (lib -> (actual, expected, kwargs), exception type or None, message template).
# ``{lib}`` in a template is the library's module name.
Case = tuple[Callable[[Any], tuple[Any, Any, dict]], "type[BaseException] | None", str]
CASES: dict[str, Case] = {
    "equal": (lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0]), {}), None, ""),
    "float32-within-default-tolerance": (
        lambda L: (T(L, [1.0, 2.0, 3.0]), T(L, [1.0, 2.000001, 3.0]), {}),
        None,
        "",
    ),
    "float32-mismatch": (
        lambda L: (T(L, [1.0, 2.1, 3.0]), T(L, [1.0, 2.0, 3.0]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 0.09999990463256836 at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.04999995231628418 at index (1,) (up to 1.3e-06 allowed)"
        ),
    ),
    "bfloat16-within-default-tolerance": (
        lambda L: (T(L, [1.0, 2.0], L.bfloat16), T(L, [1.0, 2.0078125], L.bfloat16), {}),
        None,
        "",
    ),
    "bfloat16-mismatch": (
        lambda L: (T(L, [1.0, 2.5, 3.0], L.bfloat16), T(L, [1.0, 2.0, 3.0], L.bfloat16), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.25 at index (1,) (up to 0.016 allowed)"
        ),
    ),
    "float64-mismatch": (
        lambda L: (T(L, [1.0, 1.0 + 1e-6], L.float64), T(L, [1.0, 1.0], L.float64), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 9.999999999177334e-07 at index (1,) (up to 1e-07 allowed)\n"
            "Greatest relative difference: 9.999999999177334e-07 at index (1,) (up to 1e-07 allowed)"
        ),
    ),
    "2d-index-and-division-by-zero": (
        lambda L: (T(L, [[1.0, 2.1], [3.0, 7.0]]), T(L, [[1.0, 2.0], [0.0, 4.0]]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 3 / 4 (75.0%)\n"
            "Greatest absolute difference: 3.0 at index (1, 0) (up to 1e-05 allowed)\n"
            "Greatest relative difference: inf at index (1, 0) (up to 1.3e-06 allowed)"
        ),
    ),
    "0-dim-is-a-scalar-message": (
        lambda L: (T(L, 1.5), T(L, 1.0), {}),
        AssertionError,
        (
            "Scalars are not close!\n\nExpected 1.0 but got 1.5.\n"
            "Absolute difference: 0.5 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)"
        ),
    ),
    "nan-is-not-nan": (
        lambda L: (T(L, NAN), T(L, NAN), {}),
        AssertionError,
        (
            "Scalars are not close!\n\nExpected nan but got nan.\n"
            "Absolute difference: nan (up to 1e-05 allowed)\nRelative difference: nan (up to 1.3e-06 allowed)"
        ),
    ),
    "equal-nan": (
        lambda L: (T(L, [NAN, 1.0]), T(L, [NAN, 1.0]), {"equal_nan": True}),
        None,
        "",
    ),
    "nan-in-a-vector": (
        lambda L: (T(L, [1.0, NAN]), T(L, [1.0, 2.0]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: nan at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: nan at index (1,) (up to 1.3e-06 allowed)"
        ),
    ),
    "opposite-infinities": (
        lambda L: (T(L, [INF, 1.0]), T(L, [-INF, 1.0]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: inf at index (0,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)"
        ),
    ),
    "same-infinities": (lambda L: (T(L, [INF, -INF]), T(L, [INF, -INF]), {}), None, ""),
    "int64-is-exact": (
        lambda L: (T(L, [1, 2, 3]), T(L, [1, 5, 3]), {}),
        AssertionError,
        (
            "Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 3 at index (1,)\nGreatest relative difference: 0.6000000238418579 at index (1,)"
        ),
    ),
    "int64-with-tolerances": (
        lambda L: (T(L, [1, 2, 3]), T(L, [1, 5, 3]), {"rtol": 0.1, "atol": 1}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 3 at index (1,) (up to 1 allowed)\n"
            "Greatest relative difference: 0.6000000238418579 at index (1,) (up to 0.1 allowed)"
        ),
    ),
    "bool": (
        lambda L: (T(L, [True, False]), T(L, [True, True]), {}),
        AssertionError,
        (
            "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 1.0 at index (1,)"
        ),
    ),
    "dtype": (
        lambda L: (T(L, [1.0]), T(L, [1.0], L.float64), {}),
        AssertionError,
        "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.",
    ),
    "dtype-unchecked-promotes": (
        lambda L: (
            T(L, [1.0, 2.0]),
            T(L, [1.0, 2.5], L.float64),
            {"check_dtype": False},
        ),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)"
        ),
    ),
    "int-meets-float-unchecked": (
        lambda L: (T(L, [1, 2]), T(L, [1.0, 2.0]), {"check_dtype": False}),
        None,
        "",
    ),
    "shape": (
        lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0, 3.0]), {}),
        AssertionError,
        "The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3]).",
    ),
    "stride": (
        lambda L: (
            T(L, [[1.0, 2.0], [3.0, 4.0]]).t(),
            T(L, [[1.0, 3.0], [2.0, 4.0]]),
            {"check_stride": True},
        ),
        AssertionError,
        "The values for attribute 'stride()' do not match: (1, 2) != (2, 1).",
    ),
    "stride-unchecked": (
        lambda L: (
            T(L, [[1.0, 2.0], [3.0, 4.0]]).t(),
            T(L, [[1.0, 3.0], [2.0, 4.0]]),
            {},
        ),
        None,
        "",
    ),
    "requires-grad-is-fine": (
        lambda L: (T(L, [1.0, 2.0], requires_grad=True) * 2, T(L, [2.0, 4.0]), {}),
        None,
        "",
    ),
    "empty": (lambda L: (T(L, []), T(L, []), {}), None, ""),
    "msg-replaces": (
        lambda L: (T(L, [1.0, 2.1]), T(L, [1.0, 2.0]), {"msg": "custom"}),
        AssertionError,
        "custom",
    ),
    "msg-callable-gets-the-item": (
        lambda L: (
            [T(L, [1.0]), T(L, [1.0, 2.1])],
            [T(L, [1.0]), T(L, [1.0, 2.0])],
            {"msg": lambda m: "H\n" + m},
        ),
        AssertionError,
        (
            "H\nTensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 0.09999990463256836 at index (1,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.04999995231628418 at index (1,) (up to 1.3e-06 allowed)\n\n"
            "The failure occurred for item [1]"
        ),
    ),
    "mapping-names-the-key": (
        lambda L: ({"a": T(L, [1.0]), "b": 2.0}, {"b": 2.0, "a": T(L, [1.5])}, {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)\n"
            "Greatest absolute difference: 0.5 at index (0,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.3333333432674408 at index (0,) (up to 1.3e-06 allowed)\n\n"
            "The failure occurred for item ['a']"
        ),
    ),
    "mapping-keys": (
        lambda L: ({"a": 1, "c": 2}, {"a": 1, "b": 2}, {}),
        AssertionError,
        (
            "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['b']\n"
            "Additional keys in the actual mapping: ['c']"
        ),
    ),
    "ordered-dict-and-dict": (
        lambda L: (collections.OrderedDict(a=1.0), {"a": 1.0}, {}),
        None,
        "",
    ),
    "sequence-length": (
        lambda L: ([1, 2], [1, 2, 3], {}),
        AssertionError,
        "The length of the sequences mismatch: 2 != 3",
    ),
    "tuple-and-list": (
        lambda L: ((T(L, [1.0]), 2.0), [T(L, [1.0]), 2.0], {}),
        None,
        "",
    ),
    "size-and-tuple": (lambda L: (L.Size([2, 3]), (2, 3), {}), None, ""),
    "tensor-and-ndarray": (
        lambda L: (T(L, [1.0]), np.array([1.0], dtype=np.float32), {}),
        TypeError,
        "No comparison pair was able to handle inputs of type <class '{lib}.Tensor'> and <class 'numpy.ndarray'>.",
    ),
    "tensor-and-number": (
        lambda L: (T(L, 1.0), 1.0, {}),
        TypeError,
        "No comparison pair was able to handle inputs of type <class '{lib}.Tensor'> and <class 'float'>.",
    ),
    "strings": (
        lambda L: ("a", "a", {}),
        TypeError,
        "No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>.",
    ),
    "ndarrays-float64": (
        lambda L: (np.array([1.0, 2.0]), np.array([1.0, 2.5]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)\n"
            "Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)"
        ),
    ),
    "ndarrays-dtype": (
        lambda L: (np.array([1.0], dtype=np.float32), np.array([1.0]), {}),
        AssertionError,
        "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.",
    ),
    "ndarrays-int32": (
        lambda L: (
            np.array([1, 2], dtype=np.int32),
            np.array([1, 3], dtype=np.int32),
            {},
        ),
        AssertionError,
        (
            "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 0.3333333432674408 at index (1,)"
        ),
    ),
    "ndarray-0-dim": (
        lambda L: (np.array(3.0), np.array(3.5), {}),
        AssertionError,
        (
            "Scalars are not close!\n\nExpected 3.5 but got 3.0.\n"
            "Absolute difference: 0.5 (up to 1e-07 allowed)\nRelative difference: 0.14285714285714285 (up to 1e-07 allowed)"
        ),
    ),
    "floats": (
        lambda L: (1.0, 1.1, {}),
        AssertionError,
        (
            "Scalars are not close!\n\nExpected 1.1 but got 1.0.\nAbsolute difference: 0.10000000000000009 "
            "(up to 1e-07 allowed)\nRelative difference: 0.09090909090909098 (up to 1e-07 allowed)"
        ),
    ),
    "floats-with-zero-tolerance": (
        lambda L: (1e-9, 1e-10, {"rtol": 0, "atol": 0}),
        AssertionError,
        (
            "Scalars are not equal!\n\nExpected 1e-10 but got 1e-09.\n"
            "Absolute difference: 9.000000000000001e-10\nRelative difference: 9.0"
        ),
    ),
    "ints": (
        lambda L: (1, 2, {}),
        AssertionError,
        "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\nRelative difference: 0.5",
    ),
    "float-and-int": (
        lambda L: (1.0, 1, {}),
        AssertionError,
        "The (d)types do not match: <class 'float'> != <class 'int'>.",
    ),
    "float-and-int-unchecked": (lambda L: (1.0, 1, {"check_dtype": False}), None, ""),
    "numpy-scalars-are-numbers": (lambda L: (np.float32(1.0), 1.0, {}), None, ""),
    "booleans": (
        lambda L: (True, False, {}),
        AssertionError,
        "Booleans mismatch: True is not False",
    ),
    "numpy-bool": (lambda L: (np.bool_(True), True, {}), None, ""),
    "none": (lambda L: (None, None, {}), None, ""),
    "none-and-number": (
        lambda L: (None, 1, {}),
        AssertionError,
        "None mismatch: None is not 1",
    ),
    "rtol-alone": (
        lambda L: (T(L, [1.0]), T(L, [1.0]), {"rtol": 1e-3}),
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.",
    ),
    "atol-alone-nested": (
        lambda L: ([T(L, [1.0])], [T(L, [1.0])], {"atol": 1e-3}),
        ValueError,
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.\n\nThe failure occurred for item [0]",
    ),
    "first-of-equal-maxima": (
        lambda L: (T(L, [1.0, 3.0, 5.0]), T(L, [2.0, 4.0, 6.0]), {}),
        AssertionError,
        (
            "Tensor-likes are not close!\n\nMismatched elements: 3 / 3 (100.0%)\n"
            "Greatest absolute difference: 1.0 at index (0,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.5 at index (0,) (up to 1.3e-06 allowed)"
        ),
    ),
}


def _run(lib: Any, case: Case) -> BaseException | None:
    build, _, _ = case
    actual, expected, kwargs = build(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as e:  # noqa: BLE001  (the type is what the test checks)
        return e
    return None


@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_assert_close(ng, name):
    case = CASES[name]
    error = _run(ng, case)
    _, kind, template = case
    if kind is None:
        assert error is None, error
    else:
        assert type(error) is kind
        assert str(error) == template.format(lib=ng.__name__)


@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_assert_close_says_what_torch_says(ng, torch_ref, name):
    ours, theirs = _run(ng, CASES[name]), _run(torch_ref, CASES[name])
    assert type(ours) is type(theirs)
    assert str(ours).replace(ng.__name__ + ".Tensor", "torch.Tensor") == str(theirs)


def test_signature_is_torchs(ng, torch_ref):
    for name in ("assert_close", "make_tensor"):
        ours = inspect.signature(getattr(ng.testing, name))
        theirs = inspect.signature(getattr(torch_ref.testing, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
            (p.name, p.kind, p.default) for p in theirs.parameters.values()
        ]


@pytest.mark.parametrize(("dtype_name", "rtol", "atol"), [("float32", 1.3e-6, 1e-5), ("float64", 1e-7, 1e-7)])
def test_default_tolerances_per_dtype(ng, dtype_name, rtol, atol):
    dtype = getattr(ng, dtype_name)
    base = 1000.0
    allowed = atol + rtol * base
    expected = T(ng, [base], dtype)
    # Just inside, then clearly outside, the default allowance for the dtype.
    ng.testing.assert_close(T(ng, [base + 0.5 * allowed], dtype), expected)
    with pytest.raises(AssertionError, match=rf"\(up to {atol} allowed\)\n.*\(up to {rtol} allowed\)$"):
        ng.testing.assert_close(T(ng, [base + 4 * allowed], dtype), expected)
    # Mixed dtypes use the looser of the two.
    ng.testing.assert_close(
        T(ng, [base + 0.5 * (1e-5 + 1.3e-6 * base)]),
        T(ng, [base], ng.float64),
        check_dtype=False,
    )


def test_the_first_failure_wins_and_origination_errors_come_first(ng):
    # An unsupported leaf anywhere aborts before any value is compared.
    with pytest.raises(TypeError, match="No comparison pair"):
        ng.testing.assert_close([T(ng, [1.0]), "x"], [T(ng, [2.0]), "x"])
    with pytest.raises(AssertionError, match=r"item \[0\]$"):
        ng.testing.assert_close([T(ng, [1.0]), T(ng, [5.0])], [T(ng, [2.0]), T(ng, [6.0])])
    # A structural error ignores ``msg``.
    with pytest.raises(AssertionError, match="The length of the sequences mismatch"):
        ng.testing.assert_close([1], [1, 2], msg="never shown")


def test_allow_subclasses(ng):
    # An ndarray subclass meets its base class only while subclasses are allowed.
    arr = np.array([1.0])
    view = arr.view(np.ma.MaskedArray)
    ng.testing.assert_close(view, arr)
    with pytest.raises(TypeError, match="No comparison pair"):
        ng.testing.assert_close(view, arr, allow_subclasses=False)


# ---------------------------------------------------------------- make_tensor


def test_make_tensor_defaults_and_ranges(ng):
    make = ng.testing.make_tensor
    ng.manual_seed(0)
    t = make(3, 4, dtype=ng.float64, device="cpu")
    assert tuple(t.shape) == (3, 4) and t.dtype == ng.float64 and not t.requires_grad
    values = np.array(t.tolist())
    assert values.min() >= -9 and values.max() < 9 and len(np.unique(values)) == 12
    assert tuple(make((2, 2), dtype=ng.float32, device="cpu").shape) == (2, 2)
    assert tuple(make([5], dtype=ng.float32, device="cpu").shape) == (5,)
    assert make((), dtype=ng.float64, device="cpu").dim() == 0

    ints = np.array(make(1000, dtype=ng.int64, device="cpu").tolist())
    assert ints.min() >= -9 and ints.max() <= 9 and ints.min() < 0 < ints.max()
    bools = make(100, dtype=ng.bool, device="cpu")
    assert bools.dtype == ng.bool and {True, False} == set(bools.tolist())

    narrow = np.array(make(1000, dtype=ng.float64, device="cpu", low=-1, high=1).tolist())
    assert narrow.min() >= -1 and narrow.max() < 1


def test_make_tensor_options(ng):
    make = ng.testing.make_tensor
    g = make(2, 3, dtype=ng.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf
    nc = make(2, 3, dtype=ng.float64, device="cpu", noncontiguous=True)
    assert tuple(nc.shape) == (2, 3) and not nc.is_contiguous()
    assert make(1, dtype=ng.float64, device="cpu", noncontiguous=True).is_contiguous()
    nz = make(2000, dtype=ng.int64, device="cpu", low=0, high=2, exclude_zero=True)
    assert set(nz.tolist()) == {1}
    tiny = make(100, dtype=ng.float32, device="cpu", low=0, high=1e-40, exclude_zero=True)
    assert min(tiny.tolist()) > 0


def test_make_tensor_seeded(ng):
    ng.manual_seed(3)
    a = ng.testing.make_tensor(4, dtype=ng.float64, device="cpu").tolist()
    ng.manual_seed(3)
    assert ng.testing.make_tensor(4, dtype=ng.float64, device="cpu").tolist() == a


def test_make_tensor_errors(ng):
    make = ng.testing.make_tensor
    with pytest.raises(
        ValueError,
        match="^`requires_grad=True` is not supported for boolean and integral dtypes",
    ):
        make(2, dtype=ng.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match=r"^`low` must be less than `high`, but got 2 >= 1$"):
        make(2, dtype=ng.float64, device="cpu", low=2, high=1)
    with pytest.raises(ValueError, match="^`low` and `high` cannot be NaN"):
        make(2, dtype=ng.float64, device="cpu", low=math.nan)
    with pytest.raises(
        ValueError,
        match=r"^The value interval specified by `low` and `high` is \[5, 7\), but torch.bool only supports \[0, 2\)$",
    ):
        make(2, dtype=ng.bool, device="cpu", low=5, high=7)
    with pytest.warns(FutureWarning, match="Passing `low==high`"):
        make(2, dtype=ng.float64, device="cpu", low=1, high=1)
    with pytest.raises(TypeError):
        make(2, dtype="float64", device="cpu")  # not a dtype
