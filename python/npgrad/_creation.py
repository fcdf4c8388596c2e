"""The tensor factories: ``tensor``, ``from_numpy``, ``zeros``, ``ones``,
``empty``, ``full``, ``arange``, ``rand``, ``randn`` and the ``*_like``
variants; ``manual_seed`` (of ``rand``/``randn``) and ``is_tensor``.

Each builds a NumPy array and wraps it (``Tensor._from_numpy``), with torch's
dtype rules (Python floats become ``float32``, ints ``int64``) and torch's
argument errors.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _C
from ._C import Tensor, dtype, float32, int64

# The dtype of each NumPy dtype a tensor can hold (read from _C's dtype table).
_NP_TO_DTYPE = {np.dtype(d._numpy_name): d for d in _C._dtypes}

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seeds npgrad's random number generator (``rand``, ``randn``)."""
    global _generator
    _generator = np.random.default_rng(int(seed))


def _np_dtype(d: dtype) -> np.dtype:
    return np.dtype(d._numpy_name)


def _check_dtype(fname: str, d: Any) -> None:
    if d is not None and not isinstance(d, dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")


def _check_tensor_input(fname: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def _check_random_dtype(fname: str, dt: np.dtype) -> None:
    if dt.kind != "f":
        kernel = (
            "check_uniform_bounds"
            if fname.startswith("rand") and not fname.startswith("randn")
            else "normal_kernel_cpu"
        )
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_NP_TO_DTYPE[dt]._scalar_type_name}'")


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
        if arr.dtype.kind != "f":
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
        with np.errstate(over="ignore"):  # as torch: too large for float16 is inf
            return arr.astype(_np_dtype(dtype))
    kind = arr.dtype.kind
    if kind == "b":
        return arr.astype(np.bool_)
    if kind in "iu":
        return arr.astype(np.int64)
    if kind == "f":
        # Python floats become the default dtype; NumPy arrays keep theirs.
        stored = _NP_TO_DTYPE.get(arr.dtype)
        keep = isinstance(data, np.ndarray) and stored is not None and stored.is_floating_point
        return arr if keep else arr.astype(np.float32)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays)."""
    _check_dtype("tensor", dtype)
    return _finish(np.array(_infer_array(data, dtype), copy=True), requires_grad)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (float16/32/64, int64, bool)."""
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
    shape = _check_sizes("full", _size_sequence("full", size))
    if not isinstance(fill_value, (numbers.Number, np.bool_, Tensor)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}")
    _check_dtype("full", dtype)
    if dtype is None:
        with np.errstate(over="ignore"):  # an overflowing float is torch's error below
            dtype = _NP_TO_DTYPE[_infer_array(fill_value, None).dtype]
    if isinstance(fill_value, (int, float)) and dtype.is_floating_point:
        _C._check_fill_value(float(fill_value), dtype, int(np.prod(shape)))
    with np.errstate(over="ignore"):  # the check above allows what torch rounds to inf
        return _finish(np.full(shape, fill_value, _np_dtype(dtype)), requires_grad)


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


def rand(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform random values in ``[0, 1)`` (seeded by ``manual_seed``).

    >>> import npgrad as torch
    >>> x = torch.rand(2, 3)
    >>> x.shape, 0 <= x.min().item() and x.max().item() < 1
    (torch.Size([2, 3]), True)
    """
    shape, dt = _size_args(size, "rand"), _default(dtype, "rand")
    _check_random_dtype("rand", dt)
    return _finish(_uniform(shape, dt), requires_grad)


def randn(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal random values (seeded by ``manual_seed``).

    >>> import npgrad as torch
    >>> torch.manual_seed(0)
    >>> torch.randn(3).shape
    torch.Size([3])
    """
    shape, dt = _size_args(size, "randn"), _default(dtype, "randn")
    _check_random_dtype("randn", dt)
    return _finish(_generator.standard_normal(shape).astype(dt), requires_grad)


def _uniform(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Uniform values in ``[0, 1)`` of dtype ``dt``. float16 draws multiples of
    2**-11 (half's mantissa), as torch does, so that none rounds up to 1."""
    if dt == np.float16:
        return (_generator.integers(0, 2**11, shape) * 2.0**-11).astype(dt)
    return _generator.random(shape).astype(dt)


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


def rand_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``rand`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    torch.float64
    """
    shape, dt = _like(input, dtype, "rand_like")
    _check_random_dtype("rand_like", dt)
    return _finish(_uniform(shape, dt), requires_grad)


def randn_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``randn`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.randn_like(torch.zeros(4)).shape
    torch.Size([4])
    """
    shape, dt = _like(input, dtype, "randn_like")
    _check_random_dtype("randn_like", dt)
    return _finish(_generator.standard_normal(shape).astype(dt), requires_grad)


def is_tensor(obj: object) -> bool:
    """Whether ``obj`` is an npgrad tensor.

    >>> import npgrad as torch
    >>> torch.is_tensor(torch.zeros(1)), torch.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)
