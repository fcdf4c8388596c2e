"""The tensor factories: ``tensor``, ``from_numpy``, ``as_tensor``,
``asarray``, ``zeros``, ``ones``, ``empty``, ``full``, ``arange``,
``linspace``, ``logspace``, ``eye``, the ``*_like`` variants, the
``Tensor.new_*`` methods and ``type_as``; and ``is_tensor``. (The random
factories are in ``_sampling``.)

Each builds a NumPy array and wraps it (``Tensor._from_numpy``), with torch's
dtype rules (Python floats become ``float32``, ints ``int64``) and torch's
argument errors.
"""

from __future__ import annotations

import numbers
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _C
from ._C import Tensor, dtype, float32, int64

# The dtype of each NumPy dtype a tensor can hold (read from _C's dtype table).
_NP_TO_DTYPE = {np.dtype(d._numpy_name): d for d in _C._dtypes}


def _np_dtype(d: dtype) -> np.dtype:
    return np.dtype(d._numpy_name)


def _is_reduced_float(d: dtype) -> bool:
    """float16 and bfloat16: the floats torch's CPU kernels compute in float32
    (as the C++ side's is_reduced_float)."""
    return d.is_floating_point and d.itemsize < 4


def _is_floating(dt: np.dtype) -> bool:
    """Whether NumPy dtype ``dt`` is one of npgrad's floating dtypes (bfloat16,
    registered by ml_dtypes, is not of NumPy's kind ``"f"``)."""
    d = _NP_TO_DTYPE.get(dt)
    return d is not None and d.is_floating_point


def _check_dtype(fname: str, d: Any) -> None:
    if d is not None and not isinstance(d, dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")


def _check_tensor_input(fname: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def _check_sequence(data: Any) -> None:
    """torch's shape inference of nested sequences (compute_sizes and
    recursive_store), run when NumPy refuses a ragged list: torch's error."""
    sizes = []
    seq = data
    while isinstance(seq, (list, tuple)):
        sizes.append(len(seq))
        if not seq:
            break
        seq = seq[0]

    def walk(obj: Any, dim: int) -> None:
        if dim == len(sizes):
            if isinstance(obj, (list, tuple)):
                raise TypeError(f"must be real number, not {type(obj).__name__}")
            return
        if not isinstance(obj, (list, tuple)):
            raise TypeError("not a sequence")
        if len(obj) != sizes[dim]:
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
        for item in obj:
            walk(item, dim + 1)

    walk(data, 0)


def _finish(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._from_numpy(arr)
    if requires_grad:
        if not t.is_floating_point():
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _infer_array(data: Any, dtype: dtype | None) -> np.ndarray:
    if isinstance(data, Tensor):
        data = data._array
    if isinstance(data, (list, tuple)):
        data = [d._array if isinstance(d, Tensor) else d for d in data]
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        arr = np.array(data)
    except ValueError:
        if isinstance(data, (list, tuple)):
            _check_sequence(data)
        raise
    if dtype is not None:
        if not isinstance(data, np.ndarray) and arr.dtype.kind in "iuf":
            _check_integer_range(arr, dtype)
        with np.errstate(over="ignore"):  # as torch: too large for a 16-bit float is inf
            return arr.astype(_np_dtype(dtype))
    kind = arr.dtype.kind
    # Python ints and floats become int64 and the default dtype; NumPy arrays
    # and scalars keep a dtype npgrad has.
    if isinstance(data, (np.ndarray, np.generic)) and arr.dtype in _NP_TO_DTYPE:
        return arr
    if kind == "b":
        return arr.astype(np.bool_)
    if kind in "iu":
        return arr.astype(np.int64)
    if kind == "f":
        return arr.astype(np.float32)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _check_integer_range(arr: np.ndarray, dtype: dtype) -> None:
    """torch's overflow check of Python numbers stored in an integer dtype
    (c10::overflows): floats must lie in the type's range; ints may also be
    negative down to -max for an unsigned type, whose conversion wraps."""
    target = _np_dtype(dtype)
    if target.kind not in "iu" or arr.size == 0:
        return
    info = np.iinfo(target)
    if arr.dtype.kind == "f":
        ok = bool(np.isfinite(arr).all()) and arr.min() >= info.min and arr.max() <= info.max
    else:
        lowest = -int(info.max) if target.kind == "u" else int(info.min)
        ok = int(arr.min()) >= lowest and int(arr.max()) <= int(info.max)
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


def tensor(data: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays)."""
    _check_dtype("tensor", dtype)
    return _finish(np.array(_infer_array(data, dtype), copy=True), requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (of a dtype npgrad has; bfloat16
    is ml_dtypes')."""
    return Tensor._from_numpy(ndarray)


def _as_int(v: Any) -> int | None:
    """v as a size element (ints and objects with ``__index__``, not bools)."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, Tensor):
        return v.item() if v.dim() == 0 and v.dtype == int64 else None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _size_sequence(fname: str, seq: Any, arg: str = "size") -> tuple[int, ...]:
    out = []
    for i, v in enumerate(seq):
        n = _as_int(v)
        if n is None:
            raise TypeError(
                f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, but found element of type "
                f"{type(v).__name__} at pos {i}"
            )
        out.append(n)
    return tuple(out)


def _check_sizes(fname: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    for n in shape:
        if n < 0:
            if fname == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    return shape


def _size_args(size: Sequence[Any], fname: str = "tensor") -> tuple[int, ...]:
    """torch's ``*size`` argument: ints, or one sequence of ints."""
    if not size:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
    if len(size) == 1:
        only = size[0]
        if isinstance(only, (tuple, list)):
            return _check_sizes(fname, _size_sequence(fname, only))
        n = _as_int(only)
        if n is None:
            raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not {type(only).__name__}")
        return _check_sizes(fname, (n,))
    out = []
    for i, v in enumerate(size):
        n = _as_int(v)
        if n is None:
            raise TypeError(
                f"{fname}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {type(v).__name__}"'
            )
        out.append(n)
    return _check_sizes(fname, tuple(out))


def _default(dtype: dtype | None, fname: str = "tensor") -> np.dtype:
    _check_dtype(fname, dtype)
    return np.dtype(np.float32) if dtype is None else _np_dtype(dtype)


def zeros(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape filled with 0 (``float32`` unless ``dtype``).

    >>> import npgrad as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    >>> torch.zeros((2,), dtype=torch.int64)
    tensor([0, 0])
    """
    return _finish(np.zeros(_size_args(size, "zeros"), _default(dtype, "zeros")), requires_grad)


def ones(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape filled with 1.

    >>> import npgrad as torch
    >>> torch.ones(2, requires_grad=True)
    tensor([1., 1.], requires_grad=True)
    """
    return _finish(np.ones(_size_args(size, "ones"), _default(dtype, "ones")), requires_grad)


def empty(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given shape with uninitialized values.

    >>> import npgrad as torch
    >>> torch.empty(2, 3).shape
    torch.Size([2, 3])
    """
    return _finish(np.empty(_size_args(size, "empty"), _default(dtype, "empty")), requires_grad)


def full(
    size: Sequence[int], fill_value: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows
    the value (``float32`` for a float, ``int64`` for an int) unless given.

    >>> import npgrad as torch
    >>> torch.full((2,), 7)
    tensor([7, 7])
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    _check_dtype("full", dtype)
    return _full("full", _size_sequence("full", size), fill_value, dtype, requires_grad)


def _full(fname: str, size: tuple[int, ...], fill_value: Any, dtype: dtype | None, requires_grad: bool) -> Tensor:
    shape = _check_sizes(fname, size)
    if not isinstance(fill_value, (numbers.Number, np.bool_, Tensor)):
        raise TypeError(
            f"{fname}(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}"
        )
    if dtype is None:
        with np.errstate(over="ignore"):  # an overflowing float is torch's error below
            dtype = _NP_TO_DTYPE[_infer_array(fill_value, None).dtype]
    # (Every Python int in int64's range fits; as a double, 2**63 - 1 would not.)
    exact_int64 = dtype == int64 and isinstance(fill_value, int) and -(2**63) <= fill_value < 2**63
    if (
        isinstance(fill_value, (int, float))
        and not isinstance(fill_value, bool)
        and dtype != _C.bool
        and not exact_int64
    ):
        _C._check_fill_value(float(fill_value), dtype, int(np.prod(shape)))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    with np.errstate(over="ignore", invalid="ignore"):  # the check above allows what torch rounds to inf
        # Cast first: an int the check allows may wrap (-1 as uint8 is 255).
        value = np.asarray(fill_value).astype(_np_dtype(dtype))
        return _finish(np.full(shape, value, _np_dtype(dtype)), requires_grad)


def arange(
    start: Any,
    end: Any = None,
    step: Any = 1,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The values ``start, start + step, ...`` below ``end`` (``arange(n)``
    counts from 0); ``int64`` when all arguments are ints, else ``float32``.

    >>> import npgrad as torch
    >>> torch.arange(4)
    tensor([0, 1, 2, 3])
    >>> torch.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if end is None:
        start, end = 0, start
    for name, v in (("start", start), ("end", end), ("step", step)):
        if not isinstance(v, (numbers.Number, np.bool_, Tensor)):
            raise TypeError(f"arange(): argument '{name}' must be Number, not {type(v).__name__}")
    _check_dtype("arange", dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else float32
    return _finish(np.arange(start, end, step).astype(_np_dtype(dtype)), requires_grad)


def _int_argument(fname: str, arg: str, position: int, value: Any) -> int:
    n = _as_int(value)
    if n is None:
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be int, not {type(value).__name__}")
    return n


def _like(t: Tensor, dtype: dtype | None, fname: str = "zeros_like") -> tuple[tuple[int, ...], np.dtype]:
    _check_tensor_input(fname, t)
    _check_dtype(fname, dtype)
    return tuple(t._shape), _np_dtype(dtype if dtype is not None else t.dtype)


def zeros_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``zeros`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.zeros_like(torch.ones(2, dtype=torch.float64))
    tensor([0., 0.], dtype=torch.float64)
    """
    shape, dt = _like(input, dtype, "zeros_like")
    return _finish(np.zeros(shape, dt), requires_grad)


def ones_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``ones`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.ones_like(torch.zeros(2, 2)).sum()
    tensor(4.)
    """
    shape, dt = _like(input, dtype, "ones_like")
    return _finish(np.ones(shape, dt), requires_grad)


def empty_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``empty`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.empty_like(torch.zeros(3)).shape
    torch.Size([3])
    """
    shape, dt = _like(input, dtype, "empty_like")
    return _finish(np.empty(shape, dt), requires_grad)


def _linspace_bound(v: Any, which: str) -> float:
    if isinstance(v, Tensor):
        if v.dim() != 0:
            raise RuntimeError(
                f"linspace only supports 0-dimensional start and end tensors, but got {which} with "
                f"{v.dim()} dimension(s)."
            )
        return v.item()
    return v


def _spaced(fname: str, start: Any, end: Any, steps: Any, dtype: dtype | None) -> tuple[np.ndarray, np.dtype]:
    """``steps`` values evenly spaced from start to end (float64), with the
    argument checks of linspace and logspace."""
    for v in (start, end):
        if not isinstance(v, (numbers.Number, np.bool_, Tensor)):
            raise TypeError(
                f"{fname}() received an invalid combination of arguments - got "
                f"({type(start).__name__}, {type(end).__name__}, {type(steps).__name__})"
            )
    n = _int_argument(fname, "steps", 3, steps)
    _check_dtype(fname, dtype)
    if n < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _default(dtype, fname)
    if dt.kind == "b":
        raise NotImplementedError(f"\"{fname}_cpu\" not implemented for 'Bool'")
    a, b = _linspace_bound(start, "start"), _linspace_bound(end, "end")
    if n == 1:
        return np.array([a], dtype=np.float64), dt
    # As torch: the first half counts up from start, the second down from end.
    step = (b - a) / max(n - 1, 1)
    i = np.arange(n, dtype=np.float64)
    values = np.where(i < n // 2, a + step * i, b - step * (n - 1 - i))
    return values, dt


def linspace(
    start: Any,
    end: Any,
    steps: int,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` (both
    included); ``float32`` unless ``dtype`` (an integer dtype truncates).

    >>> import npgrad as torch
    >>> torch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    >>> torch.linspace(0, 10, 4, dtype=torch.int64)
    tensor([ 0,  3,  6, 10])
    """
    values, dt = _spaced("linspace", start, end, steps, dtype)
    return _finish(values.astype(dt), requires_grad)


def logspace(
    start: Any,
    end: Any,
    steps: int,
    base: float = 10.0,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``base ** linspace(start, end, steps)``.

    >>> import npgrad as torch
    >>> torch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    >>> torch.logspace(0, 3, 4, base=2, dtype=torch.int64)
    tensor([1, 2, 4, 8])
    """
    values, dt = _spaced("logspace", start, end, steps, dtype)
    with np.errstate(over="ignore"):
        return _finish(np.power(float(base), values).astype(dt), requires_grad)


def eye(
    n: int,
    m: int | None = None,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """The ``n`` x ``m`` (default ``n`` x ``n``) identity matrix.

    >>> import npgrad as torch
    >>> torch.eye(2, 3, dtype=torch.int64)
    tensor([[1, 0, 0],
            [0, 1, 0]])
    """
    rows = _int_argument("eye", "n", 1, n)
    cols = rows if m is None else _int_argument("eye", "m", 2, m)
    if rows < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {rows}")
    if cols < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {cols}")
    return _finish(np.eye(rows, cols, dtype=_default(dtype, "eye")), requires_grad)


def full_like(
    input: Tensor,
    fill_value: Any,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``full`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.full_like(torch.zeros(2, dtype=torch.int64), 2.7)
    tensor([2, 2])
    """
    _check_tensor_input("full_like", input)
    _check_dtype("full_like", dtype)
    return _full("full_like", tuple(input._shape), fill_value, input.dtype if dtype is None else dtype, requires_grad)


def as_tensor(data: Any, dtype: dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, without a copy when it can: a tensor of the same
    dtype is returned itself, a NumPy array of a dtype npgrad has is shared
    (as ``from_numpy``); anything else is copied (as ``tensor``).

    >>> import numpy as np, npgrad as torch
    >>> a = np.array([1.0, 2.0])
    >>> t = torch.as_tensor(a)
    >>> t[0] = 5.0
    >>> a
    array([5., 2.])
    """
    _check_dtype("as_tensor", dtype)
    if isinstance(data, np.generic):  # a NumPy scalar keeps its dtype
        data = np.asarray(data)
    if isinstance(data, Tensor):
        return data if dtype is None or dtype == data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype in _NP_TO_DTYPE:
        if dtype is None or _np_dtype(dtype) == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype)


def asarray(
    obj: Any,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    copy: bool | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """``obj`` as a tensor: shares memory with a tensor or NumPy array unless
    ``copy=True`` or a cast is needed (``copy=False`` then raises).

    >>> import numpy as np, npgrad as torch
    >>> a = np.arange(3.0)
    >>> np.shares_memory(torch.asarray(a).numpy(), a)
    True
    >>> torch.asarray([1, 2], dtype=torch.float64)
    tensor([1., 2.], dtype=torch.float64)
    """
    _check_dtype("asarray", dtype)
    if isinstance(obj, np.generic):  # a NumPy scalar keeps its dtype
        obj = np.asarray(obj)
    if isinstance(obj, (Tensor, np.ndarray)):
        src = obj.dtype if isinstance(obj, Tensor) else _NP_TO_DTYPE.get(obj.dtype)
        if copy is False and dtype is not None and dtype != src:
            name = src._scalar_type_name if src is not None else str(obj.dtype)
            raise ValueError(f"can't alias tensor with dtype '{name}' into dtype '{dtype._scalar_type_name}'.")
    if isinstance(obj, Tensor):
        result = obj if dtype is None or dtype == obj.dtype else obj.to(dtype)
        result = result.clone() if copy and result is obj else result
    elif isinstance(obj, np.ndarray) and not copy:
        result = as_tensor(obj, dtype)
    else:
        result = tensor(obj, dtype=dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


# ---- Tensor.new_* and type_as (Tensor methods, installed by _tensor.py) ----


def _new_filled(
    self: Tensor, fname: str, make: Any, size: Sequence[Any], dtype: dtype | None, requires_grad: bool
) -> Tensor:
    """``make(shape, dtype)`` (np.zeros, ...) as a tensor of self's dtype unless ``dtype``."""
    _check_dtype(fname, dtype)
    return _finish(make(_size_args(size, fname), _np_dtype(dtype or self.dtype)), requires_grad)


def new_zeros(
    self: Tensor, *size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``zeros`` of the given shape, of self's dtype unless ``dtype``.

    >>> import npgrad as torch
    >>> torch.ones(1, dtype=torch.float64).new_zeros(2, 2).dtype
    torch.float64
    """
    return _new_filled(self, "new_zeros", np.zeros, size, dtype, requires_grad)


def new_ones(
    self: Tensor, *size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``ones`` of the given shape, of self's dtype unless ``dtype``.

    >>> import npgrad as torch
    >>> torch.zeros(1, dtype=torch.int64).new_ones(3)
    tensor([1, 1, 1])
    """
    return _new_filled(self, "new_ones", np.ones, size, dtype, requires_grad)


def new_empty(
    self: Tensor, *size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """``empty`` of the given shape, of self's dtype unless ``dtype``.

    >>> import npgrad as torch
    >>> torch.zeros(1).new_empty(2, 3).shape
    torch.Size([2, 3])
    """
    return _new_filled(self, "new_empty", np.empty, size, dtype, requires_grad)


def new_full(
    self: Tensor,
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``full`` of shape ``size``, of self's dtype unless ``dtype``.

    >>> import npgrad as torch
    >>> torch.zeros(1, dtype=torch.int64).new_full((2,), 3.5)
    tensor([3, 3])
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    _check_dtype("new_full", dtype)
    return _full("new_full", _size_sequence("new_full", size), fill_value, dtype or self.dtype, requires_grad)


def new_tensor(
    self: Tensor, data: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """A copy of ``data`` as a new tensor (``tensor(data)``) of self's dtype
    unless ``dtype``.

    >>> import npgrad as torch
    >>> torch.zeros(1, dtype=torch.float64).new_tensor([1, 2])
    tensor([1., 2.], dtype=torch.float64)
    """
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    _check_dtype("new_tensor", dtype)
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """self cast to ``other``'s dtype (self itself when they match).

    >>> import npgrad as torch
    >>> torch.ones(2).type_as(torch.zeros(1, dtype=torch.int64))
    tensor([1, 1])
    """
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    return self.to(other.dtype)


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is an npgrad tensor.

    >>> import npgrad as torch
    >>> torch.is_tensor(torch.zeros(1)), torch.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)
