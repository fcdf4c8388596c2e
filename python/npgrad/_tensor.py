"""The Python half of ``npgrad.Tensor``.

``Tensor`` is a native class (csrc/bindings/tensor.cpp, ops.cpp). As torch's
``torch/_tensor.py`` does for ``torch._C.TensorBase``, the parts that are
simpler in Python are written here: ``backward``, ``size`` and ``shape``, hook
registration, printing, iteration and the NumPy and DLPack protocols.
Importing this module installs them on the native class itself rather than on
a subclass, since native code (op results, ``.grad``) creates plain
``_C.Tensor`` objects. ``_tensor_docs`` documents them with the native methods.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _creation, _sampling
from ._C import Tensor
from ._creation import _as_int
from ._device import _cpu
from ._size import Size
from ._tensor_str import tensor_repr
from .autograd import backward
from .utils import dlpack
from .utils.hooks import RemovableHandle

__all__ = ["Tensor"]


def register_hook(self: Any, hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(grad) -> Tensor | None`` to run when the gradient
    w.r.t. this tensor is computed; a returned tensor replaces the gradient.

    >>> import npgrad as torch
    >>> v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> h = v.register_hook(lambda grad: grad * 2)
    >>> v.backward(torch.tensor([1.0, 2.0, 3.0]))
    >>> v.grad
    tensor([2., 4., 6.])
    >>> h.remove()
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    # Read grad_fn first: for a view whose base was modified in place since,
    # this regenerates its history, which drops the hooks dict bound to the
    # old grad_fn (torch reads it only after creating the dict, and then
    # registers a None dict: a crash in torch 2.13).
    grad_fn = self.grad_fn
    if self._backward_hooks is None:
        self._backward_hooks = OrderedDict()
        if grad_fn is not None:
            grad_fn._register_hook_dict(self)
    handle = RemovableHandle(self._backward_hooks)
    self._backward_hooks[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(self: Any, hook: Callable[[Any], None]) -> RemovableHandle:
    """Registers ``hook(param) -> None`` to run after ``param.grad`` has been
    accumulated (leaf tensors only)."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_accumulate_grad_hooks is None:
        self._post_accumulate_grad_hooks = OrderedDict()
    handle = RemovableHandle(self._post_accumulate_grad_hooks)
    self._post_accumulate_grad_hooks[handle.id] = hook
    return handle


def _backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """Computes the gradient of this tensor w.r.t. graph leaves."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _size(self: Tensor, dim: int | None = None) -> Any:
    if dim is None:
        return Size(self._shape)
    if not isinstance(dim, int) or isinstance(dim, bool):
        index = _as_int(dim)
        if index is None:
            raise TypeError(f"size(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
        dim = index
    shape = self._shape
    n = len(shape)
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], but got {dim})"
        )
    return shape[dim]


def _array_protocol(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
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
    if dtype is not None and np.dtype(dtype) != arr.dtype:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return arr.astype(dtype)
    return arr.copy() if copy else arr


def _T(self: Tensor) -> Tensor:
    n = self.dim()
    if n == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
    elif n != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
            "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
            "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return self.permute(*range(n - 1, -1, -1))


def _mT(self: Tensor, name: str = "mT") -> Tensor:
    n = self.dim()
    if n == 0:  # torch's identity, with a warning
        hint = "This function is the identity in these cases." if name == "mT" else "Consider using x.conj()."
        warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. {hint}", UserWarning, stacklevel=2)
        return self
    if n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return self.transpose(-2, -1)  # real dtypes only: mH (the adjoint) is the transpose


def _H(self: Tensor) -> Tensor:
    n = self.dim()
    if n == 0:
        return _mT(self, "H")
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return self.transpose(-2, -1)


def _iter(self: Tensor) -> Any:
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._shape[0]))


def _format(self: Tensor, format_spec: str) -> str:
    # As torch: a 0-dim tensor formats as its Python number (f"{loss:.3f}").
    if self.dim() == 0 and type(self) is Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


Tensor.register_hook = register_hook  # type: ignore[method-assign]
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook  # type: ignore[method-assign]
Tensor.__repr__ = tensor_repr  # type: ignore[method-assign]
Tensor.__str__ = tensor_repr  # type: ignore[method-assign]
Tensor.backward = _backward  # type: ignore[method-assign]
Tensor.size = _size  # type: ignore[method-assign]
Tensor.shape = property(lambda self: Size(self._shape))  # type: ignore[method-assign,assignment]
Tensor.device = property(lambda self: _cpu)  # type: ignore[method-assign,assignment]
Tensor.is_cuda = property(lambda self: False)  # type: ignore[method-assign,assignment]
Tensor.cpu = lambda self: self  # type: ignore[method-assign]
Tensor.tolist = lambda self: self._array.tolist()  # type: ignore[method-assign]
Tensor.__array__ = _array_protocol  # type: ignore[method-assign]
Tensor.__dlpack__ = dlpack._dlpack  # type: ignore[method-assign]
Tensor.__dlpack_device__ = dlpack._dlpack_device  # type: ignore[method-assign]
Tensor.__iter__ = _iter  # type: ignore[method-assign]
Tensor.T = property(_T)  # type: ignore[method-assign,assignment]
Tensor.mT = property(_mT)  # type: ignore[method-assign,assignment]
Tensor.H = property(_H)  # type: ignore[method-assign,assignment]
Tensor.mH = property(lambda self: _mT(self, "mH"))  # type: ignore[method-assign,assignment]
Tensor.__array_priority__ = 1000
Tensor.__module__ = "npgrad"
Tensor.__format__ = _format  # type: ignore[method-assign]

# The factories and random fills that are Tensor methods.
for _module, _names in (
    (_creation, ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "type_as")),
    (_sampling, ("normal_", "uniform_", "bernoulli_", "exponential_", "random_")),
):
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
