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

import copy
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _C, _creation, _sampling
from ._C import Tensor
from ._creation import _as_int
from ._device import _cpu
from ._size import Size
from ._tensor_str import PLAIN_REPR_TYPES, tensor_repr
from .autograd import backward
from .autograd._backward import _implicit_grad
from .autograd.graph import _engine_run_backward
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
    if gradient is None and inputs is None and create_graph is False and type(self) is Tensor:
        # loss.backward(), the common call, straight to the engine: backward()'s
        # argument handling is a tenth of a tiny op's forward + backward. The
        # same implicit gradient (and errors) and the same engine call.
        keep_graph = False if retain_graph is None else retain_graph
        _engine_run_backward((self,), (_implicit_grad(self),), keep_graph, False, (), True, True)
        return
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


def _array_wrap(self: Tensor, array: np.ndarray, context: Any = None, return_scalar: bool = False) -> Tensor:
    """A NumPy ufunc's result on tensors as a tensor, as in torch:
    ``np.sin(t)`` and ``t + ndarray`` are tensors; a bool result becomes
    uint8, as torch's ``__array_wrap__`` converts it. NumPy 2's ``context``
    and ``return_scalar`` are accepted, so NumPy does not warn.

    >>> import numpy as np, npgrad as torch
    >>> np.sin(torch.zeros(2))
    tensor([0., 0.])
    >>> np.greater(torch.tensor([1.0, 3.0]), 2)
    tensor([0, 1], dtype=torch.uint8)
    """
    array = np.asarray(array)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return Tensor._from_numpy(array)


# Note [Copying and pickling tensors]
# As torch: copy.copy makes a new leaf over the same memory; copy.deepcopy takes graph leaves only and keeps requires_grad, the
# .grad and the __dict__; tensors sharing memory in one deepcopy call still
# share it (the memo maps the owning array to its copy, and each tensor is
# rebuilt over that copy at its own offset and strides). Pickling takes any
# tensor, writes its owning array, offset, sizes and strides, and rebuilds a
# leaf with the same requires_grad and __dict__ but no .grad; unlike
# deepcopy, two tensors pickled together do not share memory once loaded
# (torch writes each storage separately too).
_DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  "
    "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
    "see https://github.com/pytorch/pytorch/pull/103001"
)


def _owner(array: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The contiguous array whose memory ``array`` views and the view's byte
    offset in it; None when ``array`` is its own owner (or its owner is not
    a contiguous ndarray), so that it is copied by itself."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    if root is array or not root.flags.c_contiguous:
        return None
    return root, array.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def _view(owner: np.ndarray, offset: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    return np.ndarray(shape, owner.dtype, buffer=owner, offset=offset, strides=strides)


def _rebuild_tensor(array: np.ndarray, view: tuple[Any, ...] | None, requires_grad: bool, state: dict) -> Tensor:
    """The tensor a pickle holds (Note [Copying and pickling tensors]):
    ``array`` itself, or the view ``(offset, shape, strides)`` of it."""
    t = Tensor._from_numpy(array if view is None else _view(array, *view))
    t.requires_grad_(requires_grad)
    t.__dict__.update(state)
    return t


def _deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``copy.deepcopy(t)`` (Note [Copying and pickling tensors]).

    >>> import copy, npgrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> copy.deepcopy(w)
    tensor([1., 1.], requires_grad=True)
    """
    if not self.is_leaf:
        raise RuntimeError(_DEEPCOPY_NON_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    array = self._array
    found = _owner(array)
    if found is None:
        data = np.array(array, copy=True)
    else:
        data = _view(copy.deepcopy(found[0], memo), found[1], array.shape, array.strides)
    copied = Tensor._from_numpy(data)
    copied.requires_grad_(self.requires_grad)
    if self.grad is not None:
        copied.grad = copy.deepcopy(self.grad, memo)
    copied.__dict__.update(copy.deepcopy(self.__dict__, memo))
    memo[id(self)] = copied
    return copied


def _copy(self: Tensor) -> Tensor:
    """``copy.copy(t)``: as torch's, a new leaf over the same memory, with the
    same requires_grad and attributes, no ``.grad``.

    >>> import copy, npgrad as torch
    >>> t = torch.zeros(2)
    >>> c = copy.copy(t)
    >>> c[0] = 1.0
    >>> t
    tensor([1., 0.])
    """
    copied = Tensor._from_numpy(self.detach()._array)
    copied.requires_grad_(self.requires_grad)
    copied.__dict__.update(self.__dict__)
    return copied


def _reduce_ex(self: Tensor, protocol: int) -> tuple[Any, ...]:
    """Pickling (Note [Copying and pickling tensors]).

    >>> import pickle, npgrad as torch
    >>> pickle.loads(pickle.dumps(torch.tensor([1, 2], dtype=torch.int8)))
    tensor([1, 2], dtype=torch.int8)
    """
    array = self.detach()._array
    found = _owner(array)
    state = dict(self.__dict__)
    if found is None:
        return (_rebuild_tensor, (np.array(array, copy=True), None, self.requires_grad, state))
    # A copy of the owner: a new object for each tensor, so that the pickle
    # memo does not make two loaded tensors share memory (as torch).
    owner, offset = found
    return (_rebuild_tensor, (owner.copy(), (offset, array.shape, array.strides), self.requires_grad, state))


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


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """The legacy type name (``'torch.FloatTensor'``), or, given a dtype or
    such a name, the tensor converted to it (itself when it already is).

    >>> import npgrad as torch
    >>> t = torch.tensor([1, 2])
    >>> t.type()
    'torch.LongTensor'
    >>> t.type(torch.float32)
    tensor([1., 2.])
    >>> t.type("torch.DoubleTensor").dtype
    torch.float64
    """
    if dtype is None:
        return self.dtype._legacy_type_name
    if isinstance(dtype, str):
        by_name = {d._legacy_type_name: d for d in _C._dtypes}
        if dtype not in by_name:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = by_name[dtype]
    elif not isinstance(dtype, _C.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return self if dtype == self.dtype else self.to(dtype)


def _format(self: Tensor, format_spec: str) -> str:
    # As torch: a 0-dim tensor formats as its Python number (f"{loss:.3f}").
    if self.dim() == 0 and type(self) is Tensor:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


Tensor.register_hook = register_hook  # type: ignore[method-assign]
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook  # type: ignore[method-assign]
PLAIN_REPR_TYPES.add(Tensor)
Tensor.__repr__ = tensor_repr  # type: ignore[method-assign]
# str() is repr() as for any Python object, so a subclass's own __repr__
# (Parameter's "Parameter containing:") also serves print().
Tensor.__str__ = lambda self: type(self).__repr__(self)  # type: ignore[method-assign]
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
Tensor.__array_wrap__ = _array_wrap  # type: ignore[attr-defined]
Tensor.__deepcopy__ = _deepcopy  # type: ignore[attr-defined]
Tensor.__copy__ = _copy  # type: ignore[attr-defined]
Tensor.__reduce_ex__ = _reduce_ex  # type: ignore[method-assign,assignment]
Tensor.T = property(_T)  # type: ignore[method-assign,assignment]
Tensor.mT = property(_mT)  # type: ignore[method-assign,assignment]
Tensor.H = property(_H)  # type: ignore[method-assign,assignment]
Tensor.mH = property(lambda self: _mT(self, "mH"))  # type: ignore[method-assign,assignment]
Tensor.__array_priority__ = 1000
Tensor.__module__ = "npgrad"
Tensor.__format__ = _format  # type: ignore[method-assign]
Tensor.type = _type  # type: ignore[attr-defined]

# The factories and random fills that are Tensor methods.
for _module, _names in (
    (_creation, ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "type_as")),
    (_sampling, ("normal_", "uniform_", "bernoulli_", "exponential_", "random_")),
):
    for _name in _names:
        setattr(Tensor, _name, getattr(_module, _name))
