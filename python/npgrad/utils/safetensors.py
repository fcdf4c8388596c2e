"""safetensors files of npgrad tensors (the ``safetensors`` package's
``safetensors.torch`` API, built on its ``safetensors.numpy`` one).

A safetensors file is a JSON header (names, dtypes, shapes, optional string
metadata) followed by raw little-endian data: nothing in it runs on load, and
the files are the same whether written by npgrad or by torch, so a
``state_dict`` passes between the two. The ``safetensors`` package is optional:
``import npgrad`` never imports it, and these functions raise ``ImportError``
naming it when it is not installed (``pip install safetensors``, or npgrad's
``safetensors`` extra).

>>> import os, tempfile
>>> import npgrad as torch
>>> from npgrad.utils.safetensors import load_file, save_file
>>> path = os.path.join(tempfile.mkdtemp(), "weights.safetensors")
>>> save_file({"w": torch.tensor([[1.0, 2.0]])}, path)
>>> load_file(path)
{'w': tensor([[1., 2.]])}
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import numpy as np

from .._C import Tensor
from .._device import device as _device_type
from ..serialization import _memory

__all__ = ["load", "load_file", "load_model", "save", "save_file", "save_model"]


def _numpy_api() -> Any:
    try:
        import safetensors.numpy
    except ImportError as e:
        raise ImportError(
            "npgrad.utils.safetensors needs the safetensors package, which is not installed (pip install safetensors)"
        ) from e
    return safetensors.numpy


def _check_device(device: Any) -> None:
    kind = device.type if isinstance(device, _device_type) else str(device).split(":", 1)[0]
    if kind != "cpu":
        raise RuntimeError(f"npgrad.utils.safetensors: device={device!r}: npgrad's only device is the CPU")


def _shared_groups(tensors: dict[str, Any]) -> list[list[str]]:
    """The names of tensors that share memory, grouped (groups of two or more),
    as safetensors.torch finds them (empty tensors share nothing)."""
    by_storage: dict[int, list[str]] = defaultdict(list)
    roots = []
    for name, t in tensors.items():
        if t.numel() == 0:
            continue
        _, root = _memory(t)
        roots.append(root)  # keeps the root alive, so its id stays unique
        by_storage[id(root)].append(name)
    return [sorted(names) for names in by_storage.values() if len(names) > 1]


def _arrays(tensors: Any) -> dict[str, np.ndarray]:
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you "
                "are trying to save tensors which are reference of each other in which case it's recommended to save "
                "only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to "
                "pack it before saving."
            )
    failing = _shared_groups(tensors)
    if failing:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {failing}. A potential way to correctly save your model is to use "
            "`save_model`."
        )
    return {k: v.detach().numpy() for k, v in tensors.items()}


def _tensors(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    return {k: Tensor._from_numpy(np.array(v, copy=True)) for k, v in arrays.items()}  # type: ignore[attr-defined]


# The NumPy dtype of each safetensors dtype code npgrad has a dtype for.
# safetensors.numpy reads no BF16, so files are read here from safetensors'
# own deserialize (writing goes through safetensors.numpy, which names
# ml_dtypes' bfloat16 as safetensors expects).
_NUMPY_DTYPES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "int16",
    "I32": "int32",
    "I64": "int64",
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
}


def _load_arrays(data: bytes) -> dict[str, np.ndarray]:
    _numpy_api()  # the ImportError naming the missing package
    from safetensors import deserialize

    arrays = {}
    for name, info in deserialize(data):
        code = info["dtype"]
        if code not in _NUMPY_DTYPES:
            raise TypeError(f"npgrad.utils.safetensors: tensor {name!r} has dtype {code}, which npgrad does not have")
        arrays[name] = np.frombuffer(info["data"], np.dtype(_NUMPY_DTYPES[code])).reshape(info["shape"])
    return arrays


def save(tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors file of ``tensors`` (names to tensors) as bytes, with
    optional string ``metadata``. As in ``safetensors.torch``, tensors that
    share memory raise ``RuntimeError`` (use ``save_model`` for a module with
    tied weights) and a non-contiguous tensor ``ValueError``.

    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load, save
    >>> load(save({"a": torch.zeros(2, dtype=torch.int64)}))
    {'a': tensor([0, 0])}
    """
    return _numpy_api().save(_arrays(tensors), metadata=metadata)  # type: ignore[no-any-return]


def save_file(
    tensors: dict[str, Any], filename: str | os.PathLike[str], metadata: dict[str, str] | None = None
) -> None:
    """Writes ``tensors`` (names to tensors) to the safetensors file
    ``filename``, with optional string ``metadata``; as ``save``.

    >>> import os, tempfile
    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load_file, save_file
    >>> path = os.path.join(tempfile.mkdtemp(), "t.safetensors")
    >>> save_file({"b": torch.ones(2, 2, dtype=torch.float16)}, path, metadata={"step": "3"})
    >>> load_file(path)["b"].dtype
    torch.float16
    """
    _numpy_api().save_file(_arrays(tensors), filename, metadata=metadata)


def load(data: bytes) -> dict[str, Any]:
    """The tensors of a safetensors file given as bytes, by name.

    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load, save
    >>> load(save({"x": torch.tensor([1.5])}))["x"]
    tensor([1.5000])
    """
    return _tensors(_load_arrays(data))


def load_file(filename: str | os.PathLike[str], device: str | int = "cpu") -> dict[str, Any]:
    """The tensors of the safetensors file ``filename``, by name (``device``
    must be the CPU). Files written by torch's ``safetensors.torch`` load too.

    >>> import os, tempfile
    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load_file, save_file
    >>> path = os.path.join(tempfile.mkdtemp(), "t.safetensors")
    >>> save_file({"x": torch.arange(3)}, path)
    >>> load_file(path)
    {'x': tensor([0, 1, 2])}
    """
    _check_device(device)
    _numpy_api()
    with open(filename, "rb") as f:
        return _tensors(_load_arrays(f.read()))


def _duplicates(state_dict: dict[str, Any]) -> dict[str, list[str]]:
    # For each group of tensors sharing memory: the name kept (the first, in
    # sorted order, of those covering their whole storage) and the others.
    out: dict[str, list[str]] = {}
    for names in _shared_groups(state_dict):
        complete = []
        for name in names:
            arr, root = _memory(state_dict[name])
            if arr.nbytes == root.nbytes and arr.ctypes.data == root.ctypes.data:
                complete.append(name)
        if not complete:
            raise RuntimeError(
                f"Error while trying to find names to remove to save state dict, but found no suitable name to keep "
                f"for saving amongst: {set(names)}. None is covering the entire storage. Refusing to save/load the "
                "model since you could be storing much more memory than needed."
            )
        out[complete[0]] = [n for n in names if n != complete[0]]
    return out


def save_model(
    model: Any, filename: str | os.PathLike[str], metadata: dict[str, str] | None = None, force_contiguous: bool = True
) -> None:
    """Writes ``model.state_dict()`` to the safetensors file ``filename``, as
    ``safetensors.torch.save_model``: of tensors that share memory (tied
    weights) one is written, and each dropped name is recorded in the
    metadata with the name kept; ``force_contiguous`` makes the tensors
    contiguous first (else a non-contiguous one raises ``ValueError``).

    >>> import os, tempfile
    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load_model, save_model
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> model = torch.nn.Linear(2, 1)
    >>> save_model(model, path)
    >>> load_model(torch.nn.Linear(2, 1), path)
    (set(), [])
    """
    state_dict = dict(model.state_dict())
    for kept, dropped in _duplicates(state_dict).items():
        for name in dropped:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    save_file(state_dict, filename, metadata=metadata)


def load_model(
    model: Any, filename: str | os.PathLike[str], strict: bool = True, device: str | int = "cpu"
) -> tuple[set[str], list[str]]:
    """Loads the safetensors file ``filename`` into ``model`` (its
    ``load_state_dict``), as ``safetensors.torch.load_model``: names that
    ``save_model`` dropped as shared with another are not counted missing.
    Returns ``(missing, unexpected)``; with ``strict``, any of either raises
    ``RuntimeError`` listing them.

    >>> import os, tempfile
    >>> import npgrad as torch
    >>> from npgrad.utils.safetensors import load_model, save_file
    >>> path = os.path.join(tempfile.mkdtemp(), "part.safetensors")
    >>> save_file({"weight": torch.ones(1, 2)}, path)
    >>> load_model(torch.nn.Linear(2, 1), path, strict=False)
    ({'bias'}, [])
    """
    state_dict = load_file(filename, device=device)
    to_removes = _duplicates(dict(model.state_dict()))
    missing_keys, unexpected = model.load_state_dict(state_dict, strict=False)
    missing, unexpected = set(missing_keys), list(unexpected)
    for dropped in to_removes.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected
