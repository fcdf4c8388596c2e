"""Collation: how a list of samples becomes a batch (torch's ``_utils/collate.py``).

``collate`` dispatches on the type of the first sample through a map of collate
functions (``default_collate_fn_map``, which callers may copy and extend, as in
torch); ``default_collate`` is ``collate`` with that map, and ``default_convert``
turns NumPy arrays into tensors without batching them.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._C import Tensor, float64, stack
from ...._creation import as_tensor, tensor

# NumPy dtypes of strings, bytes and objects: no tensor holds them.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)

CollateFnMap = dict[type | tuple[type, ...], Callable[..., Any]]


def _is_numpy_value(obj: Any) -> bool:
    kind = type(obj)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_")


def default_convert(data: Any) -> Any:
    """Converts each NumPy array or scalar in ``data`` into a tensor, going into
    mappings, namedtuples and sequences; everything else is left as it is (a
    tuple becomes a list, as in torch). The ``collate_fn`` of a ``DataLoader``
    without automatic batching (``batch_size=None``).

    >>> import numpy as np
    >>> from npgrad.utils.data import default_convert
    >>> default_convert([np.array([0, 1]), 2, "a"])
    [tensor([0, 1]), 2, 'a']
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(elem: Any, values: dict[Any, Any]) -> Any:
    """``values`` in a mapping of ``elem``'s type when that type allows it
    (a copy updated, for a mutable one), else a plain dict."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem: Any, values: list[Any]) -> Any:
    """``values`` in a sequence of ``elem``'s type when that type allows it,
    else a list."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return values


def collate(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Collates ``batch`` (a sequence of samples): the collate function of the
    first sample's type in ``collate_fn_map`` (its exact type, else the first
    entry it is an instance of), else mappings, namedtuples and sequences are
    collated element-wise.

    >>> from npgrad.utils.data._utils.collate import collate, default_collate_fn_map
    >>> fn_map = {**default_collate_fn_map, str: lambda batch, *, collate_fn_map: "".join(batch)}
    >>> collate([("a", 1), ("b", 2)], collate_fn_map=fn_map)
    ['ab', tensor([1, 2])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(
            elem, {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        )
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as torch returns
        return _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Tensors: stacked along a new first dimension.

    >>> import npgrad as torch
    >>> from npgrad.utils.data._utils.collate import collate_tensor_fn
    >>> collate_tensor_fn([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy arrays: converted to tensors, then collated (arrays of strings or
    objects raise ``TypeError``).

    >>> import numpy as np
    >>> from npgrad.utils.data._utils.collate import collate_numpy_array_fn, default_collate_fn_map
    >>> collate_numpy_array_fn([np.zeros(2), np.ones(2)], collate_fn_map=default_collate_fn_map)
    tensor([[0., 0.],
            [1., 1.]], dtype=torch.float64)
    """
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """NumPy scalars: one tensor of their dtype.

    >>> import numpy as np
    >>> from npgrad.utils.data._utils.collate import collate_numpy_scalar_fn
    >>> collate_numpy_scalar_fn([np.float32(1), np.float32(2)])
    tensor([1., 2.])
    """
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python floats: a float64 tensor.

    >>> from npgrad.utils.data._utils.collate import collate_float_fn
    >>> collate_float_fn([0.5, 1.5])
    tensor([0.5000, 1.5000], dtype=torch.float64)
    """
    return tensor(batch, dtype=float64)


def collate_int_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Python ints (and bools): an int64 (bool) tensor.

    >>> from npgrad.utils.data._utils.collate import collate_int_fn
    >>> collate_int_fn([1, 2])
    tensor([1, 2])
    """
    return tensor(batch)


def collate_str_fn(batch: Any, *, collate_fn_map: CollateFnMap | None = None) -> Any:
    """Strings and bytes: the batch itself, unchanged (a list, or the tuple of
    a column of tuples).

    >>> from npgrad.utils.data._utils.collate import collate_str_fn
    >>> collate_str_fn(["a", "b"])
    ['a', 'b']
    """
    return batch


default_collate_fn_map: CollateFnMap = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: Any) -> Any:
    """Puts a list of samples into a batch with a new first dimension, as
    ``torch.utils.data.default_collate``: tensors are stacked, NumPy arrays and
    scalars become tensors, Python floats a float64 tensor and ints an int64
    one, strings and bytes stay a list; mappings, namedtuples and sequences are
    collated field by field (a tuple gives a list). Other types raise
    ``TypeError``; sequences of unequal length ``RuntimeError``.

    >>> from npgrad.utils.data import default_collate
    >>> default_collate([0, 1, 2])
    tensor([0, 1, 2])
    >>> default_collate([{"A": 0, "B": 1.0}, {"A": 100, "B": 2.0}])
    {'A': tensor([  0, 100]), 'B': tensor([1., 2.], dtype=torch.float64)}
    >>> default_collate([(1, "a"), (2, "b")])
    [tensor([1, 2]), ('a', 'b')]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
