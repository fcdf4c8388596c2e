"""``assert_close``: torch.testing's comparison, for npgrad tensors and NumPy data.

Mirrors ``torch/testing/_comparison.py`` (torch 2.13): the same pairing rules
(None, booleans, Python/NumPy numbers, tensor-likes; sequences and mappings
recursively), the same default tolerances per dtype and the same messages, so
``AssertionError`` text reads identically. Values are compared in NumPy; an
``np.ndarray`` plays the part ``torch.as_tensor(ndarray)`` plays in torch, so its
dtype is reported with torch's name (``torch.float32``).
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from .. import _C
from .._size import Size

_Msg = str | Callable[[str], str] | None

# {numpy dtype name: (rtol, atol)}; every other dtype compares exactly. torch's table.
_DTYPE_PRECISIONS: dict[str, tuple[float, float]] = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}

# Python number type -> the dtype torch associates with it (NumberPair).
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _ErrorMeta(Exception):
    """A comparison failure on its way out: the exception type, its message and the
    position (``id``) of the failing item inside nested containers."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: _Msg = None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    """A pair type cannot handle these inputs; the next one is tried."""


# ---------------------------------------------------------------- messages


def _make_mismatch_msg(
    *,
    default_identifier: str,
    identifier: str | Callable[[str], str] | None = None,
    extra: str | None = None,
    abs_diff: float,
    abs_diff_idx: tuple[int, ...] | None = None,
    atol: float,
    rel_diff: float,
    rel_diff_idx: tuple[int, ...] | None = None,
    rtol: float,
) -> str:
    equality = rtol == 0 and atol == 0

    def diff_line(kind: str, diff: float, idx: tuple[int, ...] | None, tol: float) -> str:
        line = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        if not equality:
            line += f" (up to {tol} allowed)"
        return line + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_diff_idx, atol)
    msg += diff_line("relative", rel_diff, rel_diff_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(
        default_identifier="Scalars",
        extra=f"Expected {expected} but got {actual}.",
        abs_diff=abs_diff,
        atol=atol,
        rel_diff=rel_diff,
        rtol=rtol,
    )


def _tensor_mismatch_msg(
    actual: np.ndarray,
    expected: np.ndarray,
    matches: np.ndarray,
    *,
    rtol: float,
    atol: float,
) -> str:
    total = matches.size
    mismatches = total - int(np.count_nonzero(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"

    a = actual.reshape(-1)
    e = expected.reshape(-1)
    flat_matches = matches.reshape(-1)
    floating = a.dtype.kind in "fc"
    if not floating:
        # Integers and booleans are widened first so differences cannot overflow.
        a = a.astype(np.int64)
        e = e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[flat_matches] = 0
        # torch divides in the tensor's dtype; integer division is true division in
        # the default float dtype (float32).
        num, den = (abs_diff, np.abs(e)) if floating else (abs_diff.astype(np.float32), np.abs(e).astype(np.float32))
        rel_diff = num / den
        rel_diff[flat_matches] = 0
    # argmax returns the first maximum, and the first NaN if any: torch.max does too.
    abs_idx = int(np.argmax(abs_diff))
    rel_idx = int(np.argmax(rel_diff))
    return _make_mismatch_msg(
        default_identifier="Tensor-likes",
        extra=extra,
        abs_diff=abs_diff[abs_idx].item(),
        abs_diff_idx=tuple(int(i) for i in np.unravel_index(abs_idx, matches.shape)),
        atol=atol,
        rel_diff=rel_diff[rel_idx].item(),
        rel_diff_idx=tuple(int(i) for i in np.unravel_index(rel_idx, matches.shape)),
        rtol=rtol,
    )


# ---------------------------------------------------------------- tolerances


def _tolerances(*dtype_names: str, rtol: float | None, atol: float | None, id: tuple[Any, ...]) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        # One tolerance alone would surprise: atol=0 still passes through rtol > 0.
        raise _ErrorMeta(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id=id,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    rtols, atols = zip(*(_DTYPE_PRECISIONS.get(name, (0.0, 0.0)) for name in dtype_names))
    return max(rtols), max(atols)


# ---------------------------------------------------------------- pairs


class _Pair:
    """Two leaves to compare; ``compare`` raises ``_ErrorMeta`` on a mismatch."""

    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...]) -> None:
        self.actual = actual
        self.expected = expected
        self.id = id

    def fail(self, type: type[Exception], msg: str) -> NoReturn:
        raise _ErrorMeta(type, msg, id=self.id)

    def compare(self) -> None:
        raise NotImplementedError


class _NonePair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...], **options: Any) -> None:
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self.fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class _BooleanPair(_Pair):
    def __init__(self, actual: Any, expected: Any, id: tuple[Any, ...], **options: Any) -> None:
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self.fail(
                AssertionError,
                f"Booleans mismatch: {self.actual} is not {self.expected}",
            )


class _NumberPair(_Pair):
    def __init__(
        self,
        actual: Any,
        expected: Any,
        id: tuple[Any, ...],
        *,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_dtype: bool,
        **options: Any,
    ) -> None:
        number_types = (int, float, complex, np.number)
        if not all(isinstance(x, number_types) for x in (actual, expected)):
            raise _Unsupported
        # NumPy scalars become the Python number they hold (np.float32 -> float).
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id)
        self.rtol, self.atol = _tolerances(
            *(_NUMBER_DTYPES[type(x)] for x in (actual, expected)),
            rtol=rtol,
            atol=atol,
            id=id,
        )
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self.fail(
                AssertionError,
                f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.",
            )
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(self.expected):
            return
        self.fail(
            AssertionError,
            _scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol, atol=self.atol),
        )


class _TensorLike:
    """A tensor-like as the comparison sees it: its values, dtype name and strides."""

    def __init__(self, obj: Any) -> None:
        if isinstance(obj, _C.Tensor):
            values = np.asarray(obj.detach().numpy())
            # The name of the dtype's tolerances; bfloat16 (ml_dtypes', which is
            # not of NumPy's kind "f") is compared in float32, which holds it exactly.
            self.precision = values.dtype.name
            self.values = values.astype(np.float32) if obj.dtype == _C.bfloat16 else values
            self.strides = tuple(obj.stride())
            self.dtype = str(obj.dtype)
        else:
            # Stands in for torch.as_tensor: NumPy data of a dtype torch has.
            values = np.asarray(obj)
            if values.dtype.kind not in "biufc" or values.dtype.itemsize > 16 or values.dtype.name == "longdouble":
                raise _Unsupported
            self.values = values
            self.precision = values.dtype.name
            self.strides = tuple(s // values.itemsize for s in values.strides)
            self.dtype = f"torch.{values.dtype.name}"
        self.shape = self.values.shape

    @property
    def np_dtype(self) -> np.dtype:
        return self.values.dtype


def _promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types on NumPy dtypes: an integer meeting a float gives that float
    (NumPy would widen int64 + float32 to float64)."""
    rank = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
    if rank[a.kind] != rank[b.kind] and min(rank[a.kind], rank[b.kind]) <= 1 and max(rank[a.kind], rank[b.kind]) >= 2:
        return a if rank[a.kind] > rank[b.kind] else b
    # torch treats the unsigned 16/32/64-bit types as int64 here.
    a, b = (np.dtype(np.int64) if d.kind == "u" and d.itemsize > 1 else d for d in (a, b))
    return np.promote_types(a, b)


class _TensorLikePair(_Pair):
    def __init__(
        self,
        actual: Any,
        expected: Any,
        id: tuple[Any, ...],
        *,
        allow_subclasses: bool,
        rtol: float | None,
        atol: float | None,
        equal_nan: bool,
        check_device: bool,
        check_dtype: bool,
        check_layout: bool,
        check_stride: bool,
        **options: Any,
    ) -> None:
        directly_related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not directly_related:
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        a, e = _TensorLike(actual), _TensorLike(expected)
        super().__init__(a, e, id)
        self.rtol, self.atol = _tolerances(a.precision, e.precision, rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype
        self.check_stride = check_stride
        # npgrad tensors all live on the CPU with the strided layout, so the device
        # and layout checks can never fail.

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._attribute_mismatch("shape", Size(a.shape), Size(e.shape))
        if self.check_stride and a.strides != e.strides:
            self._attribute_mismatch("stride()", a.strides, e.strides)
        if self.check_dtype and a.dtype != e.dtype:
            self._attribute_mismatch("dtype", a.dtype, e.dtype)
        actual, expected = a.values, e.values
        if actual.dtype != expected.dtype:
            dtype = _promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.astype(dtype), expected.astype(dtype)
        self._compare_values(actual, expected)

    def _attribute_mismatch(self, name: str, actual: Any, expected: Any) -> NoReturn:
        self.fail(
            AssertionError,
            f"The values for attribute '{name}' do not match: {actual} != {expected}.",
        )

    def _compare_values(self, actual: np.ndarray, expected: np.ndarray) -> None:
        matches = _isclose(actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan)
        if bool(np.all(matches)):
            return
        if actual.shape == ():
            msg = _scalar_mismatch_msg(actual.item(), expected.item(), rtol=self.rtol, atol=self.atol)
        else:
            msg = _tensor_mismatch_msg(actual, expected, matches, rtol=self.rtol, atol=self.atol)
        self.fail(AssertionError, msg)


def _isclose(
    actual: np.ndarray,
    expected: np.ndarray,
    *,
    rtol: float,
    atol: float,
    equal_nan: bool,
) -> np.ndarray:
    """torch.isclose: equal, or both NaN with ``equal_nan``, or a finite error within
    ``atol + |rtol * expected|`` (so infinities are only close to themselves)."""
    close = np.asarray(actual == expected)
    if actual.dtype.kind in "fc" and equal_nan:
        close = close | (np.isnan(actual) & np.isnan(expected))
    if rtol == 0 and atol == 0:
        return close
    if actual.dtype.kind not in "fc":
        # Integer errors are measured in float64, where every int64 difference we
        # can report fits.
        actual, expected = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        allowed = atol + np.abs(rtol * expected)
        error = np.abs(actual - expected)
        result: np.ndarray = close | (np.isfinite(error) & (error <= allowed))
        return result


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate_pairs(actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **options: Any) -> list[_Pair]:
    """Walks matching sequences and mappings down to the leaf pairs; raises
    ``_ErrorMeta`` on a structural mismatch or a leaf no pair type supports."""
    sequence = collections.abc.Sequence
    if (
        isinstance(actual, sequence)
        and not isinstance(actual, str)
        and isinstance(expected, sequence)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _ErrorMeta(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                id=id,
            )
        pairs = []
        for idx in range(len(actual)):
            pairs.extend(_originate_pairs(actual[idx], expected[idx], id=(*id, idx), **options))
        return pairs
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _ErrorMeta(
                AssertionError,
                f"The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id=id,
            )
        keys: Any = actual_keys
        # A deterministic order when the keys sort, so the first failure is stable.
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(_originate_pairs(actual[key], expected[key], id=(*id, key), **options))
        return pairs
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id, **options)]
        except _Unsupported:
            continue
        except _ErrorMeta:
            raise
        except Exception as error:
            # e.g. a bool meeting an int reaches the number pair, which has no
            # dtype for bool: torch reports this the same way.
            raise RuntimeError(
                f"Originating a {pair_type.__name__.lstrip('_')}() at item {''.join(str([item]) for item in id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\n"
                f"and\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above."
            ) from error
    raise _ErrorMeta(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
        id=id,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Asserts that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``.

    Tensors (and NumPy arrays, compared with each other) must have the same shape and,
    with ``check_dtype``, dtype; values are close when
    ``|actual - expected| <= atol + rtol * |expected|``, with defaults per dtype
    (float32: ``rtol=1.3e-6, atol=1e-5``; float64: ``1e-7, 1e-7``; integers and
    booleans: exact). Python numbers, ``None`` and booleans compare among themselves;
    sequences and mappings compare item by item. A tensor and an ndarray are never
    compared (``TypeError``), as in torch. ``msg`` replaces the message, or is called
    with it.

    >>> import npgrad as torch
    >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.000001]))
    """
    __tracebackhide__ = True
    try:
        pairs = _originate_pairs(
            actual,
            expected,
            allow_subclasses=allow_subclasses,
            rtol=rtol,
            atol=atol,
            equal_nan=equal_nan,
            check_device=check_device,
            check_dtype=check_dtype,
            check_layout=check_layout,
            check_stride=check_stride,
        )
    except _ErrorMeta as error_meta:
        # Structural errors ignore ``msg``, as in torch.
        raise error_meta.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _ErrorMeta as error_meta:
            raise error_meta.to_error(msg) from None
