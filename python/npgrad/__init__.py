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
from typing import Any, Sequence

import numpy as _np

from . import _C
from ._C import (  # noqa: F401
    Tensor,
    abs,
    add,
    bool,
    cat,
    clamp,
    clone,
    cos,
    div,
    exp,
    float32,
    float64,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    log,
    log_softmax,
    matmul,
    max,
    mean,
    min,
    mm,
    mul,
    neg,
    permute,
    pow,
    reciprocal,
    relu,
    reshape,
    set_anomaly_enabled,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    t,
    tanh,
    transpose,
    unsqueeze,
    where,
)
from ._C import dtype  # noqa: F401
from ._size import Size
from ._tensor_str import tensor_repr as _tensor_repr

try:
    from importlib.metadata import version as _version

    __version__ = _version("npgrad")
except Exception:  # running from a source tree without installing
    __version__ = "0.1.0"

float = float32  # noqa: A001
double = float64
long = int64

# ---------------------------------------------------------------- devices


class device:
    """The only device npgrad has: ``device(type='cpu')``."""

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if str(type).split(":")[0] != "cpu":
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

# -------------------------------------------------------------- factories

_generator = _np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seeds npgrad's random number generator (``rand``, ``randn``)."""
    global _generator
    _generator = _np.random.default_rng(int(seed))


_NP_TO_DTYPE = {
    _np.dtype("float32"): float32,
    _np.dtype("float64"): float64,
    _np.dtype("int64"): int64,
    _np.dtype("bool"): bool,
}


def _np_dtype(d: dtype) -> _np.dtype:
    return _np.dtype(d._numpy_name)


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
    arr = _np.array(data)
    if dtype is not None:
        return arr.astype(_np_dtype(dtype))
    kind = arr.dtype.kind
    if kind == "b":
        return arr.astype(_np.bool_)
    if kind in "iu":
        return arr.astype(_np.int64)
    if kind == "f":
        # Python floats become the default dtype; NumPy arrays keep theirs.
        keep = isinstance(data, _np.ndarray) and arr.dtype in (_np.float32, _np.float64)
        return arr if keep else arr.astype(_np.float32)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, arrays)."""
    return _finish(_np.array(_infer_array(data, dtype), copy=True), requires_grad)


def from_numpy(ndarray: _np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (float32/64, int64, bool)."""
    return Tensor._from_numpy(ndarray)


def _size_args(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(int(s) for s in size[0])
    return tuple(int(s) for s in size)


def _default(dtype: dtype | None) -> _np.dtype:
    return _np.dtype(_np.float32) if dtype is None else _np_dtype(dtype)


def zeros(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    return _finish(_np.zeros(_size_args(size), _default(dtype)), requires_grad)


def ones(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    return _finish(_np.ones(_size_args(size), _default(dtype)), requires_grad)


def empty(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    return _finish(_np.empty(_size_args(size), _default(dtype)), requires_grad)


def full(size: Sequence[int], fill_value: Any, dtype: dtype | None = None, device: Any = None,
         requires_grad: _builtins.bool = False) -> Tensor:
    if dtype is None:
        dtype = _NP_TO_DTYPE[_infer_array(fill_value, None).dtype]
    return _finish(_np.full(tuple(size), fill_value, _np_dtype(dtype)), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: dtype | None = None, device: Any = None,
           requires_grad: _builtins.bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = _builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else float32
    return _finish(_np.arange(start, end, step).astype(_np_dtype(dtype)), requires_grad)


def rand(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    arr = _generator.random(_size_args(size)).astype(_default(dtype))
    return _finish(arr, requires_grad)


def randn(*size: Any, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    arr = _generator.standard_normal(_size_args(size)).astype(_default(dtype))
    return _finish(arr, requires_grad)


def _like(t: Tensor, dtype: dtype | None) -> tuple[tuple[int, ...], _np.dtype]:
    return tuple(t._shape), _np_dtype(dtype if dtype is not None else t.dtype)


def zeros_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    shape, dt = _like(input, dtype)
    return _finish(_np.zeros(shape, dt), requires_grad)


def ones_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    shape, dt = _like(input, dtype)
    return _finish(_np.ones(shape, dt), requires_grad)


def empty_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    shape, dt = _like(input, dtype)
    return _finish(_np.empty(shape, dt), requires_grad)


def rand_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    shape, dt = _like(input, dtype)
    return _finish(_generator.random(shape).astype(dt), requires_grad)


def randn_like(input: Tensor, dtype: dtype | None = None, device: Any = None, requires_grad: _builtins.bool = False) -> Tensor:
    shape, dt = _like(input, dtype)
    return _finish(_generator.standard_normal(shape).astype(dt), requires_grad)


def is_tensor(obj: object) -> _builtins.bool:
    return isinstance(obj, Tensor)


# ------------------------------------------------ Tensor, Python-side parts


def _backward(self: Tensor, gradient: Tensor | None = None, retain_graph: _builtins.bool | None = None,
              create_graph: _builtins.bool = False, inputs: Any = None) -> None:
    """Computes the gradient of this tensor w.r.t. graph leaves."""
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _size(self: Tensor, dim: int | None = None) -> Any:
    if dim is None:
        return Size(self._shape)
    shape = self._shape
    n = len(shape)
    if not -_builtins.max(n, 1) <= dim < _builtins.max(n, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-_builtins.max(n, 1)}, "
            f"{_builtins.max(n, 1) - 1}], but got {dim})")
    return shape[dim]


def _array_protocol(self: Tensor, dtype: Any = None, copy: Any = None) -> _np.ndarray:
    arr = self.numpy()
    return arr if dtype is None else arr.astype(dtype)


def _iter(self: Tensor) -> Any:
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


from ._tensor_hooks import register_hook as _register_hook  # noqa: E402
from ._tensor_hooks import register_post_accumulate_grad_hook as _register_pagh  # noqa: E402

Tensor.register_hook = _register_hook  # type: ignore[attr-defined]
Tensor.register_post_accumulate_grad_hook = _register_pagh  # type: ignore[attr-defined]
Tensor.__repr__ = _tensor_repr  # type: ignore[method-assign,assignment]
Tensor.__str__ = _tensor_repr  # type: ignore[method-assign,assignment]
Tensor.backward = _backward  # type: ignore[attr-defined]
Tensor.size = _size  # type: ignore[attr-defined]
Tensor.shape = property(lambda self: Size(self._shape))  # type: ignore[attr-defined]
Tensor.device = property(lambda self: _cpu)  # type: ignore[attr-defined]
Tensor.is_cuda = property(lambda self: False)  # type: ignore[attr-defined]
Tensor.cpu = lambda self: self  # type: ignore[attr-defined]
Tensor.tolist = lambda self: self._array.tolist()  # type: ignore[attr-defined]
Tensor.__array__ = _array_protocol  # type: ignore[attr-defined]
Tensor.__iter__ = _iter  # type: ignore[attr-defined]
Tensor.__array_priority__ = 1000  # type: ignore[attr-defined]
Tensor.__module__ = "npgrad"

__all__ = [
    "Size", "Tensor", "abs", "add", "arange", "bool", "cat", "clamp", "clone", "cos", "device",
    "div", "double", "dtype", "empty", "empty_like", "enable_grad", "exp", "float", "float32",
    "float64", "from_numpy", "full", "int64", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled", "is_tensor", "log",
    "log_softmax", "long", "manual_seed", "matmul", "max", "mean", "min", "mm", "mul", "neg",
    "no_grad", "ones", "ones_like", "permute", "pow", "rand", "rand_like", "randn",
    "randn_like", "reciprocal", "relu", "reshape", "set_anomaly_enabled", "set_grad_enabled", "sigmoid", "sin",
    "softmax", "sqrt", "squeeze", "stack", "sub", "sum", "t", "tanh", "tensor", "transpose",
    "unsqueeze", "where", "zeros", "zeros_like",
]
