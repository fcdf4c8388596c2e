"""DLPack exchange, as ``torch.utils.dlpack``: share tensors without copying.

``npgrad.from_dlpack(x)`` wraps memory owned by another library (torch, NumPy,
JAX, CuPy on the CPU, ...) as an npgrad tensor, and ``torch.from_dlpack(t)`` or
``np.from_dlpack(t)`` wraps an npgrad tensor, through ``Tensor.__dlpack__`` and
``Tensor.__dlpack_device__``. npgrad delegates the capsule work to NumPy's own
DLPack support (NumPy >= 2), applied to the tensor's NumPy view.

Memory is shared, autograd state is not: the tensor made by ``from_dlpack`` is a
leaf that does not require grad, and tensors that require grad cannot be
exported (``BufferError``, as in torch; export ``t.detach()``). Version counters
are not shared either: a write made through the other library does not bump
npgrad's ``_version`` (the same holds between two torch tensors joined by
DLPack), so autograd cannot detect it if the memory was saved for backward.

>>> import numpy as np, npgrad
>>> a = np.arange(3.0)
>>> t = npgrad.from_dlpack(a)
>>> a[0] = 7.0
>>> t
tensor([7., 1., 2.], dtype=torch.float64)
"""

from __future__ import annotations

import ctypes
import enum
from typing import Any

import numpy as np

from .._C import Tensor, _dtypes, bfloat16
from .._creation import _np_dtype
from .._device import device as _device

__all__ = ["DLDeviceType", "from_dlpack"]


class DLDeviceType(enum.IntEnum):
    """Device codes of the DLPack specification (torch's enum, same values)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def _dlpack_device(self: Tensor) -> tuple[DLDeviceType, int]:
    """``Tensor.__dlpack_device__``: always ``(DLDeviceType.kDLCPU, 0)``.

    >>> import npgrad
    >>> npgrad.ones(2).__dlpack_device__()
    (<DLDeviceType.kDLCPU: 1>, 0)
    """
    return (DLDeviceType.kDLCPU, 0)


def _dlpack(
    self: Tensor,
    *,
    stream: Any | None = -1,
    max_version: tuple[int, int] | None = None,
    dl_device: tuple[Any, int] | None = None,
    copy: bool | None = None,
) -> Any:
    """``Tensor.__dlpack__``: a DLPack capsule sharing this tensor's memory.

    Same signature, checks and messages as torch's ``Tensor.__dlpack__`` for a
    CPU tensor: ``BufferError`` for a tensor that requires grad, ``TypeError``
    for a non-integer ``stream`` and ``AssertionError`` for a stream other than
    ``None``/``-1``. ``max_version`` of ``None`` or below ``(1, 0)`` gives the
    legacy ``"dltensor"`` capsule, otherwise ``"dltensor_versioned"``;
    ``copy=True`` exports a copy. A ``dl_device`` other than the CPU raises
    NumPy's ``BufferError`` (torch raises its own error there).

    >>> import numpy as np, npgrad
    >>> t = npgrad.arange(3.0)
    >>> np.from_dlpack(t)[0] = 5.0
    >>> t
    tensor([5., 1., 2.])
    """
    # DLPack cannot carry requires_grad, so exporting would silently drop it.
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    # NumPy builds the capsule; it only knows stream=None (the CPU meaning).
    arr = self.numpy()
    if self.dtype == bfloat16:
        capsule = arr.view(np.uint16).__dlpack__(stream=None, max_version=max_version, dl_device=dl_device, copy=copy)
        _retag(capsule, _kDLUInt, _kDLBfloat)
        return capsule
    return arr.__dlpack__(stream=None, max_version=max_version, dl_device=dl_device, copy=copy)


def to_dlpack(tensor: Tensor) -> Any:
    """A legacy ``"dltensor"`` capsule sharing ``tensor``'s memory.

    As torch's ``to_dlpack``, this does not check ``requires_grad``; consume the
    capsule once, with ``from_dlpack``.

    >>> import npgrad
    >>> from npgrad.utils.dlpack import from_dlpack, to_dlpack
    >>> from_dlpack(to_dlpack(npgrad.arange(3)))
    tensor([0, 1, 2])
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack expects a Tensor, got {type(tensor).__name__}")
    return _dlpack(tensor.detach(), max_version=None)


class _CapsuleProducer:
    """Hands one capsule to ``np.from_dlpack``, which wants an object with
    ``__dlpack__`` (a bare capsule, or one npgrad already asked for)."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **_kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


class _WritableAlias:
    """An ``__array_interface__`` over ``arr``'s memory without its read-only flag.

    NumPy marks arrays made from legacy (unversioned) capsules read-only, because
    DLPack before 1.0 cannot say whether the memory may be written. torch treats
    such memory as writable, and so does npgrad; a versioned capsule's explicit
    read-only flag is kept. The alias holds ``arr``, hence the producer's memory.
    """

    def __init__(self, arr: np.ndarray) -> None:
        self._owner = arr
        interface = dict(arr.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid.restype = ctypes.c_int
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_get_pointer.restype = ctypes.c_void_p

# NumPy exchanges no bfloat16 (DLPack's kDLBfloat), so npgrad's bfloat16
# passes through NumPy as its bits, kDLUInt of 16 bits, and the capsule's dtype
# code is rewritten on the way in and out. The structs are DLPack's (dlpack.h).
_kDLUInt = 1
_kDLBfloat = 4


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


def _retag(capsule: Any, code: int, new_code: int) -> bool:
    """Rewrites the dtype code of an unconsumed capsule's 16-bit tensor from
    ``code`` to ``new_code``; whether it did."""
    for name, struct in ((b"dltensor", _DLManagedTensor), (b"dltensor_versioned", _DLManagedTensorVersioned)):
        if _capsule_is_valid(capsule, name):
            dtype = struct.from_address(_capsule_get_pointer(capsule, name)).dl_tensor.dtype
            if dtype.code == code and dtype.bits == 16 and dtype.lanes == 1:
                dtype.code = new_code
                return True
    return False


def _request_capsule(ext_tensor: Any, dl_device: Any, copy: bool | None) -> tuple[Any, bool]:
    """``ext_tensor.__dlpack__(...)``, dropping keywords an older producer does not
    take, in torch's order; also says whether the producer honoured ``copy``."""
    kwargs: dict[str, Any] = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    for drop in (None, "max_version", "copy"):
        if drop is not None:
            kwargs.pop(drop, None)
        try:
            return ext_tensor.__dlpack__(**kwargs), "copy" in kwargs
        except TypeError:
            continue
    kwargs.pop("dl_device", None)
    return ext_tensor.__dlpack__(**kwargs), False


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tensor sharing memory with ``ext_tensor`` (an object with
    ``__dlpack__``, or a DLPack capsule), as ``torch.from_dlpack``.

    The result is a leaf that does not require grad. ``copy=True`` copies,
    ``copy=False`` never copies, ``None`` copies only if needed; ``device`` may
    only name the CPU. Passing ``device`` or ``copy`` with a bare capsule is an
    ``AssertionError``, as in torch. Deviation from torch: a dtype npgrad does
    not have (uint16, complex64, ...) raises ``TypeError``.

    >>> import numpy as np, npgrad
    >>> src = np.arange(4.0).reshape(2, 2).T   # strided views work too
    >>> t = npgrad.from_dlpack(src)
    >>> src[0, 0] = -1.0
    >>> t
    tensor([[-1.,  2.],
            [ 1.,  3.]], dtype=torch.float64)
    """
    if hasattr(ext_tensor, "__dlpack__"):
        dl_device = None
        if device is not None:
            _device(str(device))  # validates: npgrad only has the CPU
            dl_device = (DLDeviceType.kDLCPU, 0)
        capsule, producer_copied = _request_capsule(ext_tensor, dl_device, copy)
    else:
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
        capsule, producer_copied = ext_tensor, False
    legacy = bool(_capsule_is_valid(capsule, b"dltensor"))
    is_bfloat16 = _retag(capsule, _kDLBfloat, _kDLUInt)
    arr = np.from_dlpack(_CapsuleProducer(capsule))
    if legacy and not arr.flags.writeable:
        arr = np.asarray(_WritableAlias(arr))
    if is_bfloat16:
        arr = arr.view(_np_dtype(bfloat16))
    if copy and not producer_copied:  # an old producer ignored copy=True
        arr = arr.copy()
    supported = [d._numpy_name for d in _dtypes]
    if arr.dtype not in [np.dtype(name) for name in supported]:
        raise TypeError(f"npgrad.from_dlpack: npgrad tensors are {', '.join(supported)}; got {arr.dtype}")
    return Tensor._from_numpy(arr)
