"""``make_tensor``: random test tensors, as ``torch.testing.make_tensor``.

Mirrors ``torch/testing/_creation.py`` (torch 2.13) for npgrad's dtypes (float32,
float64, int64, bool). Values come from npgrad's generator, so
``npgrad.manual_seed`` makes them reproducible.
"""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

import numpy as np

from .. import _C, _creation, _generator
from .._device import device as _device


def _numpy_generator() -> np.random.Generator:
    # Read on every call: manual_seed and set_rng_state replace it.
    return _generator.default_generator._np


def make_tensor(
    *shape: Any,
    dtype: Any,
    device: Any,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Any:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)``.

    Defaults: ``[-9, 9)`` for floating dtypes, ``[-9, 10)`` for int64, ``[0, 2)`` for
    bool. ``noncontiguous=True`` returns a strided view (when there are two or more
    elements); ``exclude_zero=True`` replaces zeros by 1 (integers, booleans) or the
    dtype's smallest normal number.

    >>> import npgrad as torch
    >>> t = torch.testing.make_tensor(2, 3, dtype=torch.float64, device="cpu", low=-1, high=1)
    >>> t.shape
    torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)

    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if memory_format is not None:
        raise NotImplementedError("npgrad tensors have no memory formats; pass memory_format=None")
    _device(device)  # rejects anything but the CPU, as npgrad does everywhere

    supported = isinstance(dtype, _C.dtype)
    floating = supported and dtype.is_floating_point
    integral = supported and not dtype.is_floating_point
    if not (floating or integral):
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if requires_grad and integral:
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    np_dtype = np.dtype(dtype._numpy_name)

    lowest: float
    highest: float
    if dtype == _C.bool:
        lowest, highest, default_low, default_high = 0, 2, 0, 2
    elif dtype == _C.int64:
        info = np.iinfo(np.int64)
        lowest, highest, default_low, default_high = info.min, info.max, -9, 10
    else:
        finfo = np.finfo(np_dtype)
        lowest, highest, default_low, default_high = (
            float(finfo.min),
            float(finfo.max),
            -9,
            9,
        )
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and floating:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. "
            "Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)

    noncontiguous = noncontiguous and math.prod(shape) > 1
    draw_shape = (*shape[:-1], 2 * shape[-1]) if noncontiguous else shape
    gen = _numpy_generator()
    if integral:
        values = gen.integers(math.ceil(low), math.ceil(high), draw_shape, dtype=np.int64, endpoint=False)
        values = values.astype(np_dtype)
    else:
        # Drawn in the dtype itself; halve the interval first if its width overflows.
        wide = high - low >= float(np.finfo(np_dtype).max)
        lo, hi = (low / 2, high / 2) if wide else (low, high)
        values = (gen.random(draw_shape) * (hi - lo) + lo).astype(np_dtype)
        if wide:
            values *= 2
    values = np.asarray(values)  # a 0-dim draw comes back as a NumPy scalar
    if noncontiguous:
        values = values[..., 1::2]
    if exclude_zero:
        values[values == 0] = 1 if integral else np.finfo(np_dtype).tiny
    result = _creation.from_numpy(values)
    if floating:
        result.requires_grad_(requires_grad)
    return result
