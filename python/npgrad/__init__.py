"""npgrad: torch.autograd reimplemented natively in C++, with NumPy storage.

Code written for ``torch.autograd`` runs after ``import npgrad as torch``, as
long as it stays inside the API surface listed in the README.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import builtins as _builtins
import numbers as _numbers
import operator as _operator
from typing import Any, Sequence

import numpy as _np

from . import _C
from . import _gc  # noqa: F401  (full gc collections also free autograd cycles)
from ._C import (  # noqa: F401
    Tensor,
    add,
    bool,
    cat,
    clamp,
    clone,
    div,
    float16,
    float32,
    float64,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    log_softmax,
    matmul,
    max,
    mean,
    min,
    mm,
    mul,
    permute,
    pow,
    reshape,
    set_anomaly_enabled,
    softmax,
    squeeze,
    stack,
    sub,
    sum,
    t,
    transpose,
    unsqueeze,
    where,
)
from ._C import dtype  # noqa: F401
from ._C import *  # noqa: F403  (with the op tables' functions, npgrad.<name>)
from ._size import Size
from ._tensor_str import tensor_repr as _tensor_repr

# The version, in one place: the wheel's metadata is read from this line
# (pyproject.toml: scikit-build-core's regex version provider).
__version__ = "0.1.0"

float = float32  # noqa: A001
double = float64
half = float16
long = int64

# ---------------------------------------------------------------- devices


# torch's device types, in the order of its "Expected one of ..." message.
_DEVICE_TYPES = (
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
    "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
)


def _parse_device_type(spec: Any) -> str:
    """The device type of a device string (torch's parsing and its errors)."""
    if isinstance(spec, device):
        return spec.type
    text = str(spec)
    if not text:
        raise RuntimeError("Device string must not be empty")
    name, sep, index = text.partition(":")
    if name not in _DEVICE_TYPES:
        if name.strip() != name or not name:
            raise RuntimeError(f"Invalid device string: '{text}'")
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: {name}")
    if sep and not index.isdigit():
        raise RuntimeError(f"Invalid device string: '{text}'")
    return name


def _check_to_device(spec: Any) -> None:
    """``Tensor.to(device)``: only the CPU; torch's errors for the others."""
    if isinstance(spec, Tensor):  # to(other): other is on the CPU too
        return
    if isinstance(spec, _builtins.int) and not isinstance(spec, _builtins.bool):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    kind = _parse_device_type(spec if isinstance(spec, (str, device)) else getattr(spec, "type", spec))
    if kind == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if kind != "cpu":
        raise RuntimeError(f"npgrad tensors live on the CPU; got device '{spec}'")


class device:
    """The only device npgrad has: ``device(type='cpu')``."""

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if _parse_device_type(type) != "cpu":
            raise RuntimeError(f"npgrad tensors live on the CPU; got device '{type}'")
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> _builtins.bool:
        return isinstance(other, (device, str)) and str(other).split(":")[0] == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")


_cpu = device("cpu")

# ------------------------------------------------------------- grad mode

from .autograd.grad_mode import enable_grad, no_grad, set_grad_enabled  # noqa: E402
from . import autograd  # noqa: E402
from . import utils  # noqa: E402,F401
from .utils import hooks as _hooks  # noqa: E402,F401
from . import return_types  # noqa: E402,F401
from . import testing  # noqa: E402,F401

# -------------------------------------------------------------- factories

_generator = _np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seeds npgrad's random number generator (``rand``, ``randn``)."""
    global _generator
    _generator = _np.random.default_rng(int(seed))


# The dtype of each NumPy dtype a tensor can hold (read from _C's dtype table).
_NP_TO_DTYPE = {_np.dtype(d._numpy_name): d for d in _C._dtypes}


def _np_dtype(d: dtype) -> _np.dtype:
    return _np.dtype(d._numpy_name)


def _check_dtype(fname: str, d: Any) -> None:
    if d is not None and not isinstance(d, dtype):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")


def _check_tensor_input(fname: str, t: Any) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")


def _check_random_dtype(fname: str, dt: _np.dtype) -> None:
    if dt.kind != "f":
        kernel = "check_uniform_bounds" if fname.startswith("rand") and not fname.startswith("randn") \
            else "normal_kernel_cpu"
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


def _finish(arr: _np.ndarray, requires_grad: _builtins.bool) -> Tensor:
    t = Tensor._from_numpy(arr)
    if requires_grad:
        if arr.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _infer_array(data: Any, dtype: dtype | None) -> _np.ndarray:
    if isinstance(data, Tensor):
        data = data._array
    if isinstance(data, (list, tuple)):
        data = [d._array if isinstance(d, Tensor) else d for d in data]
    if isinstance(data, str):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        arr = _np.array(data)
    except ValueError:
        if isinstance(data, (list, tuple)):
            _check_sequence(data)
        raise
    if dtype is not None:
        with _np.errstate(over="ignore"):  # as torch: too large for float16 is inf
            return arr.astype(_np_dtype(dtype))
    kind = arr.dtype.kind
    if kind == "b":
        return arr.astype(_np.bool_)
    if kind in "iu":
        return arr.astype(_np.int64)
    if kind == "f":
        # Python floats become the default dtype; NumPy arrays keep theirs.
        stored = _NP_TO_DTYPE.get(arr.dtype)
        keep = isinstance(data, _np.ndarray) and stored is not None and stored.is_floating_point
        return arr if keep else arr.astype(_np.float32)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays)."""
    _check_dtype("tensor", dtype)
    return _finish(_np.array(_infer_array(data, dtype), copy=True), requires_grad)


def from_numpy(ndarray: _np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (float16/32/64, int64, bool)."""
    return Tensor._from_numpy(ndarray)


def _as_int(v: Any) -> int | None:
    """v as a size element (ints and objects with ``__index__``, not bools)."""
    if isinstance(v, (_builtins.bool, _np.bool_)):
        return None
    if isinstance(v, _builtins.int):
        return v
    if isinstance(v, Tensor):
        return v.item() if v.dim() == 0 and v.dtype == int64 else None
    try:
        return _operator.index(v)
    except TypeError:
        return None


def _size_sequence(fname: str, seq: Any, arg: str = "size") -> tuple[int, ...]:
    out = []
    for i, v in enumerate(seq):
        n = _as_int(v)
        if n is None:
            raise TypeError(
                f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, but found element of type "
                f"{type(v).__name__} at pos {i}")
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
            raise TypeError(
                f"{fname}(): argument 'size' (position 1) must be tuple of ints, not {type(only).__name__}")
        return _check_sizes(fname, (n,))
    out = []
    for i, v in enumerate(size):
        n = _as_int(v)
        if n is None:
            raise TypeError(
                f"{fname}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                f"\"type must be tuple of ints,but got {type(v).__name__}\"")
        out.append(n)
    return _check_sizes(fname, tuple(out))


def _default(dtype: dtype | None, fname: str = "tensor") -> _np.dtype:
    _check_dtype(fname, dtype)
    return _np.dtype(_np.float32) if dtype is None else _np_dtype(dtype)


def zeros(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """A tensor of the given shape filled with 0 (``float32`` unless ``dtype``).

    >>> import npgrad as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    >>> torch.zeros((2,), dtype=torch.int64)
    tensor([0, 0])
    """
    return _finish(_np.zeros(_size_args(size, "zeros"), _default(dtype, "zeros")), requires_grad)


def ones(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """A tensor of the given shape filled with 1.

    >>> import npgrad as torch
    >>> torch.ones(2, requires_grad=True)
    tensor([1., 1.], requires_grad=True)
    """
    return _finish(_np.ones(_size_args(size, "ones"), _default(dtype, "ones")), requires_grad)


def empty(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """A tensor of the given shape with uninitialized values.

    >>> import npgrad as torch
    >>> torch.empty(2, 3).shape
    torch.Size([2, 3])
    """
    return _finish(_np.empty(_size_args(size, "empty"), _default(dtype, "empty")), requires_grad)


def full(size: Sequence[int], fill_value: Any, dtype: dtype | None = None, device: Any = None,
         requires_grad: _builtins.bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows
    the value (``float32`` for a float, ``int64`` for an int) unless given.

    >>> import npgrad as torch
    >>> torch.full((2,), 7)
    tensor([7, 7])
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    shape = _check_sizes("full", _size_sequence("full", size))
    if not isinstance(fill_value, (_numbers.Number, _np.bool_, Tensor)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not {type(fill_value).__name__}")
    _check_dtype("full", dtype)
    if dtype is None:
        with _np.errstate(over="ignore"):  # an overflowing float is torch's error below
            dtype = _NP_TO_DTYPE[_infer_array(fill_value, None).dtype]
    if isinstance(fill_value, (_builtins.int, _builtins.float)) and dtype.is_floating_point:
        _C._check_fill_value(_builtins.float(fill_value), dtype, _builtins.int(_np.prod(shape)))
    with _np.errstate(over="ignore"):  # the check above allows what torch rounds to inf
        return _finish(_np.full(shape, fill_value, _np_dtype(dtype)), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: dtype | None = None, device: Any = None,
           requires_grad: _builtins.bool = False) -> Tensor:
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
        if not isinstance(v, (_numbers.Number, _np.bool_, Tensor)):
            raise TypeError(f"arange(): argument '{name}' must be Number, not {type(v).__name__}")
    _check_dtype("arange", dtype)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = _builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else float32
    return _finish(_np.arange(start, end, step).astype(_np_dtype(dtype)), requires_grad)


def rand(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """Uniform random values in ``[0, 1)`` (seeded by ``manual_seed``).

    >>> import npgrad as torch
    >>> x = torch.rand(2, 3)
    >>> x.shape, 0 <= x.min().item() and x.max().item() < 1
    (torch.Size([2, 3]), True)
    """
    shape, dt = _size_args(size, "rand"), _default(dtype, "rand")
    _check_random_dtype("rand", dt)
    return _finish(_uniform(shape, dt), requires_grad)


def randn(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """Standard normal random values (seeded by ``manual_seed``).

    >>> import npgrad as torch
    >>> torch.manual_seed(0)
    >>> torch.randn(3).shape
    torch.Size([3])
    """
    shape, dt = _size_args(size, "randn"), _default(dtype, "randn")
    _check_random_dtype("randn", dt)
    return _finish(_generator.standard_normal(shape).astype(dt), requires_grad)


def _uniform(shape: tuple[int, ...], dt: _np.dtype) -> _np.ndarray:
    """Uniform values in ``[0, 1)`` of dtype ``dt``. float16 draws multiples of
    2**-11 (half's mantissa), as torch does, so that none rounds up to 1."""
    if dt == _np.float16:
        return (_generator.integers(0, 2**11, shape) * 2.0**-11).astype(dt)
    return _generator.random(shape).astype(dt)


def _like(t: Tensor, dtype: dtype | None, fname: str = "zeros_like") -> tuple[tuple[int, ...], _np.dtype]:
    _check_tensor_input(fname, t)
    _check_dtype(fname, dtype)
    return tuple(t._shape), _np_dtype(dtype if dtype is not None else t.dtype)


def zeros_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """``zeros`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.zeros_like(torch.ones(2, dtype=torch.float64))
    tensor([0., 0.], dtype=torch.float64)
    """
    shape, dt = _like(input, dtype, "zeros_like")
    return _finish(_np.zeros(shape, dt), requires_grad)


def ones_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """``ones`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.ones_like(torch.zeros(2, 2)).sum()
    tensor(4.)
    """
    shape, dt = _like(input, dtype, "ones_like")
    return _finish(_np.ones(shape, dt), requires_grad)


def empty_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """``empty`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.empty_like(torch.zeros(3)).shape
    torch.Size([3])
    """
    shape, dt = _like(input, dtype, "empty_like")
    return _finish(_np.empty(shape, dt), requires_grad)


def rand_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """``rand`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    torch.float64
    """
    shape, dt = _like(input, dtype, "rand_like")
    _check_random_dtype("rand_like", dt)
    return _finish(_uniform(shape, dt), requires_grad)


def randn_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """``randn`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.randn_like(torch.zeros(4)).shape
    torch.Size([4])
    """
    shape, dt = _like(input, dtype, "randn_like")
    _check_random_dtype("randn_like", dt)
    return _finish(_generator.standard_normal(shape).astype(dt), requires_grad)


def is_tensor(obj: object) -> _builtins.bool:
    """Whether ``obj`` is an npgrad tensor.

    >>> import npgrad as torch
    >>> torch.is_tensor(torch.zeros(1)), torch.is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


# ------------------------------------------------ Tensor, Python-side parts


def _backward(self: Tensor, gradient: Tensor | None = None, retain_graph: _builtins.bool | None = None,
              create_graph: _builtins.bool = False, inputs: Any = None) -> None:
    """Computes the gradient of this tensor w.r.t. graph leaves."""
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _size(self: Tensor, dim: int | None = None) -> Any:
    if dim is None:
        return Size(self._shape)
    if not isinstance(dim, _builtins.int) or isinstance(dim, _builtins.bool):
        index = _as_int(dim)
        if index is None:
            raise TypeError(f"size(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
        dim = index
    shape = self._shape
    n = len(shape)
    if not -_builtins.max(n, 1) <= dim < _builtins.max(n, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-_builtins.max(n, 1)}, "
            f"{_builtins.max(n, 1) - 1}], but got {dim})")
    return shape[dim]


def _array_protocol(self: Tensor, dtype: Any = None, copy: _builtins.bool | None = None) -> _np.ndarray:
    """``np.asarray(t)``: the tensor's memory as an ndarray, without a copy.

    As torch's ``__array__``: ``self.numpy()`` (so a tensor that requires grad
    raises torch's ``RuntimeError``), cast when ``dtype`` differs. Deviation
    from torch (its issue #136264): npgrad also takes NumPy 2's ``copy``
    keyword, so NumPy does not warn: ``copy=True`` always copies and
    ``copy=False`` returns a view or raises ``ValueError`` when a cast is needed,
    where torch's ``np.asarray(t, copy=False)`` always raises.

    >>> import numpy as np, npgrad
    >>> t = npgrad.arange(3.0)
    >>> np.shares_memory(np.asarray(t), t.numpy())
    True
    """
    arr = self.numpy()
    if dtype is not None and _np.dtype(dtype) != arr.dtype:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return arr.astype(dtype)
    return arr.copy() if copy else arr


def _iter(self: Tensor) -> Any:
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


from .utils import dlpack as _dlpack  # noqa: E402
from .utils.dlpack import from_dlpack  # noqa: E402
from ._tensor_hooks import register_hook as _register_hook  # noqa: E402
from ._tensor_hooks import register_post_accumulate_grad_hook as _register_pagh  # noqa: E402

Tensor.register_hook = _register_hook  # type: ignore[method-assign]
Tensor.register_post_accumulate_grad_hook = _register_pagh  # type: ignore[method-assign]
Tensor.__repr__ = _tensor_repr  # type: ignore[method-assign]
Tensor.__str__ = _tensor_repr  # type: ignore[method-assign]
Tensor.backward = _backward  # type: ignore[method-assign]
Tensor.size = _size  # type: ignore[method-assign]
Tensor.shape = property(lambda self: Size(self._shape))  # type: ignore[method-assign,assignment]
Tensor.device = property(lambda self: _cpu)  # type: ignore[method-assign,assignment]
Tensor.is_cuda = property(lambda self: False)  # type: ignore[method-assign,assignment]
Tensor.cpu = lambda self: self  # type: ignore[method-assign]
Tensor.tolist = lambda self: self._array.tolist()  # type: ignore[method-assign]
Tensor.__array__ = _array_protocol  # type: ignore[method-assign]
Tensor.__dlpack__ = _dlpack._dlpack  # type: ignore[method-assign]
Tensor.__dlpack_device__ = _dlpack._dlpack_device  # type: ignore[method-assign]
Tensor.__iter__ = _iter  # type: ignore[method-assign]
Tensor.__array_priority__ = 1000
Tensor.__module__ = "npgrad"

# Docstrings of the names bound in C++ (torch's _tensor_docs/_torch_docs).
from . import _tensor_docs, _torch_docs  # noqa: E402,F401

__all__ = [
    "Size", "Tensor", "add", "arange", "bool", "cat", "clamp", "clone", "device",
    "div", "double", "dtype", "empty", "empty_like", "enable_grad", "float", "float16", "float32",
    "float64", "from_dlpack", "from_numpy", "full", "half", "int64", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled", "is_tensor",
    "log_softmax", "long", "manual_seed", "matmul", "max", "mean", "min", "mm", "mul",
    "no_grad", "ones", "ones_like", "permute", "pow", "rand", "rand_like", "randn",
    "randn_like", "reshape", "set_anomaly_enabled", "set_grad_enabled",
    "softmax", "squeeze", "stack", "sub", "sum", "t", "tensor", "transpose",
    "unsqueeze", "where", "zeros", "zeros_like",
]
__all__ += [_op["name"] for _op in _C._op_table]


def _format(self: Tensor, format_spec: str) -> str:
    # As torch: a 0-dim tensor formats as its Python number (f"{loss:.3f}").
    if self.dim() == 0 and type(self) is Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


Tensor.__format__ = _format  # type: ignore[method-assign]
