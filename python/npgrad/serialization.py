"""``save`` and ``load``: objects of tensors to a file and back, never executing
code on load.

torch's ``torch.save`` pickles; loading a pickle can run any code the file
asks for, which torch's ``weights_only=True`` guards against with a restricted
unpickler. npgrad's files hold no pickle at all, so there is nothing to
restrict: ``load`` reads data and builds only the types listed below.

The format (``npgrad.save`` version 1) is a ZIP archive (stored, not
compressed) with three kinds of member:

- ``npgrad_format``: the text ``npgrad.save 1``, which marks the file;
- ``tree.json``: the saved object as JSON. ``null``, ``true``/``false``,
  integers and strings stand for themselves; every other value is an object
  with one key naming its type: ``{"float": "1.5"}`` (the ``repr``, so ``nan``
  and ``inf`` survive), ``{"complex": ["1.0", "2.0"]}``, ``{"bytes": "<base64>"}``,
  ``{"list": [...]}``, ``{"tuple": [...]}``, ``{"set": [...]}``,
  ``{"dict": [[key, value], ...]}`` and ``{"ordered_dict": ...}`` (any stored
  value as key, order kept), ``{"dtype": "float32"}``, ``{"size": [2, 3]}``,
  ``{"device": "cpu"}`` and ``{"tensor": {...}}``;
- ``storages/<n>.npy``: the bytes of storage ``n`` as a one-dimensional
  ``uint8`` NumPy array (read with ``allow_pickle=False``).

A tensor is ``{"storage": n, "dtype": "float32", "shape": [...], "strides":
[...], "offset": k, "requires_grad": bool, "parameter": bool}``: its
elements at byte ``offset`` of storage ``n``, with byte ``strides``
(in the machine's byte order: little-endian on every platform npgrad builds
for). Tensors saved together that share memory (views of one
tensor) are written as one storage, and load sharing memory: a write through
one shows in the others, as with torch's loaded tensors; like torch's, they
load as separate tensors (not as autograd views, ``_base`` is None).
``requires_grad`` is kept as torch keeps it (a non-leaf loads as a leaf that
requires grad); a ``Parameter`` loads as a ``Parameter``; gradients are not
saved (nor by torch).

What the format cannot hold (any other type: a NumPy array, a module, a
function, an instance of a user class, a container that contains itself)
raises at ``save`` an error naming the type, which is both a ``TypeError`` and
a ``pickle.UnpicklingError`` (the error torch's ``load`` raises for such
objects with ``weights_only=True``). A file that is not one of npgrad's
(including a ``torch.save`` pickle) raises ``pickle.UnpicklingError``; a
damaged archive raises ``RuntimeError``; an empty file ``EOFError``.
"""

from __future__ import annotations

import base64
import collections
import io
import json
import os
import pickle
import zipfile
from typing import IO, Any

import numpy as np

from . import _C
from ._C import Tensor, _dtypes
from ._device import device
from ._size import Size

__all__ = ["load", "save"]

_MAGIC_NAME = "npgrad_format"
_MAGIC = b"npgrad.save 1"
_TREE = "tree.json"
# The dtypes a file may name, as torch names them ("float32"), read from the
# dtype table; each is also its NumPy dtype's name.
_DTYPES = tuple(str(d).rsplit(".", 1)[-1] for d in _dtypes)


class _UnstorableError(TypeError, pickle.UnpicklingError):
    """An object ``npgrad.save`` cannot store (a ``TypeError``, and a
    ``pickle.UnpicklingError`` as torch's ``weights_only`` load raises)."""


def _memory(t: Any) -> tuple[np.ndarray, np.ndarray]:
    """A tensor's elements as a NumPy view, and the array that owns their
    memory (the tensor's storage: views of one tensor share it)."""
    arr = t.detach().numpy()
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    return arr, root


def _dtype_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _npgrad_dtype(name: str) -> Any:
    return getattr(_C, name)


class _Writer:
    def __init__(self) -> None:
        self.storages: list[np.ndarray] = []
        self._storage_of: dict[int, int] = {}  # id(root array) -> storage number
        self._roots: list[np.ndarray] = []  # keeps the roots alive while saving
        self._open: set[int] = set()  # containers being encoded (cycle check)

    def _storage(self, root: np.ndarray) -> int:
        key = id(root)
        if key not in self._storage_of:
            self._roots.append(root)
            self._storage_of[key] = len(self.storages)
            self.storages.append(root.reshape(-1).view(np.uint8))
        return self._storage_of[key]

    def tensor(self, t: Any) -> dict[str, Any]:
        from .nn.parameter import Parameter

        arr, root = _memory(t)
        start = arr.ctypes.data - root.ctypes.data
        extent = [(n - 1) * s for n, s in zip(arr.shape, arr.strides)]
        lo = start + sum(e for e in extent if e < 0)
        hi = start + sum(e for e in extent if e > 0) + arr.itemsize
        if arr.size == 0 or not root.flags.c_contiguous or lo < 0 or hi > root.nbytes:
            # Memory the format cannot describe as one storage: a copy of its own.
            root = np.ascontiguousarray(arr).reshape(-1)
            arr, start = root.reshape(arr.shape), 0
        return {
            "storage": self._storage(root),
            "dtype": _dtype_name(t.dtype),
            "shape": list(arr.shape),
            "strides": list(arr.strides),
            "offset": start,
            "requires_grad": bool(t.requires_grad),
            "parameter": isinstance(t, Parameter),
        }

    def encode(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if type(obj) is int:
            return obj
        if type(obj) is float:
            return {"float": repr(obj)}
        if type(obj) is complex:
            return {"complex": [repr(obj.real), repr(obj.imag)]}
        if type(obj) is bytes:
            return {"bytes": base64.b64encode(obj).decode("ascii")}
        if isinstance(obj, Tensor):
            return {"tensor": self.tensor(obj)}
        if type(obj) is Size:
            return {"size": [int(n) for n in obj]}
        if type(obj) is device:
            return {"device": str(obj)}
        if type(obj).__name__ == "dtype" and type(obj).__module__ == "npgrad._C":
            return {"dtype": _dtype_name(obj)}
        kind = {list: "list", tuple: "tuple", set: "set", dict: "dict", collections.OrderedDict: "ordered_dict"}.get(
            type(obj)
        )
        if kind is None:
            raise _UnstorableError(
                f"npgrad.save cannot store an object of type {type(obj).__module__}.{type(obj).__qualname__}: "
                "it stores tensors, numbers, strings, bytes, None, dtypes, devices, Size, and lists, tuples, "
                "sets and dicts of these (its format never runs code on load, so it holds no other objects)"
            )
        if id(obj) in self._open:
            raise _UnstorableError(f"npgrad.save cannot store a {kind} that contains itself")
        self._open.add(id(obj))
        try:
            if kind in ("dict", "ordered_dict"):
                return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
            return {kind: [self.encode(v) for v in obj]}
        finally:
            self._open.discard(id(obj))


def save(
    obj: Any, f: str | os.PathLike[str] | IO[bytes], pickle_module: Any = pickle, pickle_protocol: int = 2
) -> None:
    """Saves ``obj`` (tensors, numbers, strings, bytes, None, dtypes, devices,
    ``Size``, nested in lists, tuples, sets and dicts: a ``state_dict``, an
    optimizer's state) to ``f``, a path or a binary file object, in npgrad's
    format (a ZIP archive of a JSON tree and raw arrays, never a pickle: see
    the module's docstring). ``pickle_module`` and ``pickle_protocol`` are
    accepted for torch's signature and unused. Other objects raise an error
    naming their type (a ``TypeError`` and ``pickle.UnpicklingError``).

    >>> import io
    >>> import npgrad as torch
    >>> buffer = io.BytesIO()
    >>> torch.save({"w": torch.tensor([1.0, 2.0]), "step": 3}, buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer)
    {'w': tensor([1., 2.]), 'step': 3}
    """
    writer = _Writer()
    tree = json.dumps(writer.encode(obj), allow_nan=False).encode("utf-8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_MAGIC_NAME, _MAGIC)
        archive.writestr(_TREE, tree)
        for n, storage in enumerate(writer.storages):
            member = io.BytesIO()
            np.save(member, storage, allow_pickle=False)
            archive.writestr(f"storages/{n}.npy", member.getvalue())
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            file.write(out.getvalue())
    elif hasattr(f, "write"):
        f.write(out.getvalue())
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'write'")


class _Reader:
    def __init__(self, archive: zipfile.ZipFile, map_location: Any) -> None:
        self.archive = archive
        self.map_location = map_location
        self.storages: dict[int, np.ndarray] = {}

    def storage(self, n: Any) -> np.ndarray:
        if type(n) is not int:
            raise pickle.UnpicklingError(f"npgrad.load: bad storage number {n!r}")
        if n not in self.storages:
            try:
                raw = self.archive.read(f"storages/{n}.npy")
            except KeyError:
                raise pickle.UnpicklingError(f"npgrad.load: the file has no storage {n}") from None
            try:
                data = np.load(io.BytesIO(raw), allow_pickle=False)
            except ValueError as e:
                raise pickle.UnpicklingError(f"npgrad.load: storage {n} is not a raw array ({e})") from None
            if data.dtype != np.uint8 or data.ndim != 1:
                raise pickle.UnpicklingError(f"npgrad.load: storage {n} is not a one-dimensional uint8 array")
            buffer = np.empty(data.shape, np.uint8)  # freshly allocated, so aligned for every dtype
            buffer[...] = data
            self.storages[n] = buffer
        return self.storages[n]

    def tensor(self, spec: Any) -> Any:
        from .nn.parameter import Parameter

        if not isinstance(spec, dict):
            raise pickle.UnpicklingError("npgrad.load: a tensor entry is not an object")
        try:
            name, shape, strides, offset = spec["dtype"], spec["shape"], spec["strides"], spec["offset"]
            requires_grad, parameter = spec["requires_grad"], spec["parameter"]
            storage = self.storage(spec["storage"])
        except KeyError as e:
            raise pickle.UnpicklingError(f"npgrad.load: a tensor entry lacks {e}") from None
        if name not in _DTYPES:
            raise pickle.UnpicklingError(f"npgrad.load: unknown dtype {name!r}")
        numbers = [*shape, *strides, offset] if isinstance(shape, list) and isinstance(strides, list) else None
        if numbers is None or len(shape) != len(strides) or any(type(v) is not int for v in numbers):
            raise pickle.UnpicklingError("npgrad.load: a tensor entry has a bad shape, strides or offset")
        if not isinstance(requires_grad, bool) or not isinstance(parameter, bool):
            raise pickle.UnpicklingError("npgrad.load: a tensor entry has a bad requires_grad or parameter flag")
        if any(n < 0 for n in shape) or offset < 0:
            raise pickle.UnpicklingError("npgrad.load: a tensor entry has a negative size or offset")
        try:
            arr = np.ndarray(tuple(shape), np.dtype(name), storage, offset, tuple(strides))
        except (ValueError, TypeError, OverflowError) as e:
            raise pickle.UnpicklingError(f"npgrad.load: a tensor lies outside its storage ({e})") from None
        t = Tensor._from_numpy(arr)  # type: ignore[attr-defined]
        t = self._relocate(t)
        if parameter:
            return Parameter(t, requires_grad=requires_grad)
        return t.requires_grad_(requires_grad) if requires_grad else t

    def _relocate(self, t: Any) -> Any:
        if callable(self.map_location) and not isinstance(self.map_location, device):
            moved = self.map_location(t, "cpu")
            return t if moved is None else moved
        return t

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if not isinstance(node, dict) or len(node) != 1:
            raise pickle.UnpicklingError(f"npgrad.load: unexpected entry {str(node)[:80]}")
        ((kind, value),) = node.items()
        try:
            if kind == "float":
                return float(value)
            if kind == "complex":
                return complex(float(value[0]), float(value[1]))
            if kind == "bytes":
                return base64.b64decode(value, validate=True)
            if kind == "tensor":
                return self.tensor(value)
            if kind == "list":
                return [self.decode(v) for v in value]
            if kind == "tuple":
                return tuple(self.decode(v) for v in value)
            if kind == "set":
                return {self.decode(v) for v in value}
            if kind in ("dict", "ordered_dict"):
                pairs = [(self.decode(k), self.decode(v)) for k, v in value]
                return dict(pairs) if kind == "dict" else collections.OrderedDict(pairs)
            if kind == "size":
                return Size([int(n) for n in value])
            if kind == "device":
                return device(value)
            if kind == "dtype" and value in _DTYPES:
                return _npgrad_dtype(value)
        except pickle.UnpicklingError:
            raise
        except (TypeError, ValueError, IndexError, KeyError) as e:
            raise pickle.UnpicklingError(f"npgrad.load: bad {kind} entry ({type(e).__name__}: {e})") from None
        raise pickle.UnpicklingError(f"npgrad.load: unknown entry type {kind!r}")


def _check_location(where: Any) -> None:
    """map_location, unless a callable: the CPU, or torch's errors."""
    if callable(where) and not isinstance(where, device):
        return
    if isinstance(where, dict):
        where = where.get("cpu", "cpu")
    if where is None:
        return
    kind = str(where).split(":", 1)[0]
    if kind == "cuda":
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU."
        )
    if kind != "cpu":
        raise RuntimeError(f"npgrad.load: map_location={where!r}: npgrad's only device is the CPU")


def load(
    f: str | os.PathLike[str] | IO[bytes],
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Loads an object saved by ``save`` from ``f`` (a path or a binary file
    object). Nothing in the file is executed: npgrad's format holds data only,
    so ``weights_only`` (True, False or None) makes no difference, and a
    ``torch.save`` pickle is refused with ``pickle.UnpicklingError``.
    ``map_location`` may be None, ``"cpu"``, a CPU ``device``, a dict
    ``{"cpu": location}`` or a callable called as ``fn(tensor, "cpu")`` for
    each tensor (its result replaces the tensor unless it is None); other
    devices raise ``RuntimeError`` as in torch on a CPU-only machine.
    ``mmap`` and ``pickle_load_args`` are accepted and unused; as in torch,
    ``pickle_module`` with ``weights_only=True`` raises ``RuntimeError``.

    >>> import io
    >>> import npgrad as torch
    >>> buffer = io.BytesIO()
    >>> torch.save([torch.ones(2, requires_grad=True), ("a", None)], buffer)
    >>> _ = buffer.seek(0)
    >>> torch.load(buffer, weights_only=True)
    [tensor([1., 1.], requires_grad=True), ('a', None)]
    """
    if weights_only is True and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    _check_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            data = file.read()
    elif hasattr(f, "read"):
        data = f.read()
    else:
        raise AttributeError(f"'{type(f).__name__}' object has no attribute 'read'")
    if not isinstance(data, bytes):
        raise TypeError(f"npgrad.load: expected a binary file, but reading it gave {type(data).__name__}")
    if not data:
        raise EOFError("npgrad.load: the file is empty")
    if not data.startswith(b"PK"):
        raise pickle.UnpicklingError(
            "npgrad.load: not a file written by npgrad.save (not a zip archive; npgrad never loads pickles)"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        magic = archive.read(_MAGIC_NAME) if _MAGIC_NAME in names else None
        tree_text = archive.read(_TREE) if _TREE in names else None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as e:
        raise RuntimeError(f"npgrad.load: the archive is damaged ({type(e).__name__}: {e})") from None
    if magic is None:
        what = (
            "a torch.save file (a pickle, which npgrad never loads: save the state with npgrad.save, or as safetensors)"
            if any(n.endswith("data.pkl") for n in names)
            else "a zip archive that npgrad.save did not write"
        )
        raise pickle.UnpicklingError(f"npgrad.load: the file is {what}")
    if magic != _MAGIC:
        raise pickle.UnpicklingError(f"npgrad.load: unknown format {magic[:40]!r} (this npgrad reads {_MAGIC!r})")
    if tree_text is None:
        raise pickle.UnpicklingError(f"npgrad.load: the file has no {_TREE}")
    try:
        tree = json.loads(tree_text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise pickle.UnpicklingError(f"npgrad.load: {_TREE} is not valid JSON ({e})") from None
    try:
        return _Reader(archive, map_location).decode(tree)
    except RecursionError:
        raise pickle.UnpicklingError("npgrad.load: the object is nested too deeply") from None
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise RuntimeError(f"npgrad.load: the archive is damaged ({type(e).__name__}: {e})") from None
