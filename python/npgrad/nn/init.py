"""``npgrad.nn.init``: in-place initialisations of parameters, as torch's
``torch/nn/init.py``. Each runs under ``no_grad`` and returns the tensor; the
random ones draw from npgrad's generator (``manual_seed``, or ``generator=``),
so a seed reproduces them (npgrad's stream is not torch's).

>>> import npgrad as torch
>>> w = torch.empty(2, 3)
>>> torch.nn.init.constant_(w, 0.5)
tensor([[0.5000, 0.5000, 0.5000],
        [0.5000, 0.5000, 0.5000]])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _creation
from .._C import Tensor, where
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: 1 for ``linear``, the
    ``conv*`` and ``sigmoid``, 5/3 for ``tanh``, sqrt(2) for ``relu``,
    ``sqrt(2 / (1 + slope**2))`` for ``leaky_relu`` (slope ``param``, default
    0.01) and 3/4 for ``selu``.

    >>> import npgrad as torch
    >>> torch.nn.init.calculate_gain("leaky_relu", 0.2)
    1.3867504905630728
    """
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fills ``tensor`` with values drawn uniformly from ``[a, b)``.

    >>> import npgrad as torch
    >>> w = torch.nn.init.uniform_(torch.empty(100), -0.1, 0.1)
    >>> bool(w.abs().max() <= 0.1)
    True
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)  # type: ignore[no-any-return,attr-defined]


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fills ``tensor`` with values drawn from ``N(mean, std**2)``.

    >>> import npgrad as torch
    >>> torch.nn.init.normal_(torch.empty(2, 2), std=0.0)
    tensor([[0., 0.],
            [0., 0.]])
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)  # type: ignore[no-any-return,attr-defined]


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator: Any = None
) -> Tensor:
    """Fills ``tensor`` with values from ``N(mean, std**2)`` truncated to
    ``[a, b]`` (rejection sampling: normal proposals when the interval holds
    enough of the mass, uniform ones on ``[a, b]`` otherwise).

    >>> import npgrad as torch
    >>> w = torch.nn.init.trunc_normal_(torch.empty(1000), a=-0.5, b=0.5)
    >>> bool(w.abs().max() <= 0.5)
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            result = tensor.normal_(mean, std, generator=generator)  # type: ignore[attr-defined]
            while True:
                pending = (result < a).logical_or(result > b)
                if not pending.any():
                    break
                fresh = _creation.empty_like(result).normal_(mean, std, generator=generator)  # type: ignore[attr-defined]
                result = _where(pending, fresh, result)
        else:
            # Uniform proposals on [a, b], accepted with probability
            # density(x) / density(mode).
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            result = _creation.empty_like(tensor).uniform_(a, b, generator=generator)  # type: ignore[attr-defined]
            pending = None
            while True:
                log_density = ((result - mean) / std) ** 2 * -0.5 - log_peak
                draw = _creation.empty_like(tensor).uniform_(generator=generator)  # type: ignore[attr-defined]
                rejected = draw.log() > log_density
                pending = rejected if pending is None else pending.logical_and(rejected)
                if not pending.any():
                    break
                fresh = _creation.empty_like(tensor).uniform_(a, b, generator=generator)  # type: ignore[attr-defined]
                result = _where(pending, fresh, result)
        if result is not tensor:
            tensor.copy_(result)  # type: ignore[attr-defined]
        return tensor


def _where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:

    return where(condition, x, y)  # type: ignore[no-any-return]


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` with ``val``.

    >>> import npgrad as torch
    >>> torch.nn.init.constant_(torch.empty(2), 3)
    tensor([3., 3.])
    """
    with no_grad():
        return tensor.fill_(val)  # type: ignore[no-any-return,attr-defined]


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with ones.

    >>> import npgrad as torch
    >>> torch.nn.init.ones_(torch.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with zeros.

    >>> import npgrad as torch
    >>> torch.nn.init.zeros_(torch.empty(2))
    tensor([0., 0.])
    """
    with no_grad():
        return tensor.zero_()  # type: ignore[no-any-return,attr-defined]


def _fill_from(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        tensor.copy_(Tensor._from_numpy(values))  # type: ignore[attr-defined]
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fills a 2-D ``tensor`` with the identity matrix (ones on the
    diagonal).

    >>> import npgrad as torch
    >>> torch.nn.init.eye_(torch.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill_from(tensor, np.eye(*tensor.shape))  # type: ignore[attr-defined]


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3-, 4- or 5-D (convolution weight) ``tensor`` so that the
    convolution is the identity on as many channels as possible, per group.

    >>> import npgrad as torch
    >>> torch.nn.init.dirac_(torch.empty(2, 2, 3))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]])
    """
    dimensions = tensor.dim()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)  # type: ignore[attr-defined]
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(size // 2 for size in sizes[2:])
    for g in range(groups):
        for d in range(min(out_chans_per_grp, sizes[1])):
            values[(g * out_chans_per_grp + d, d, *centre)] = 1
    return _fill_from(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    shape = tuple(tensor.shape)  # type: ignore[attr-defined]
    receptive_field_size = math.prod(shape[2:])
    return shape[1] * receptive_field_size, shape[0] * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in +
    fan_out))``.

    >>> import npgrad as torch
    >>> w = torch.nn.init.xavier_uniform_(torch.empty(3, 5))
    >>> bool(w.abs().max() <= (6 / 8) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in +
    fan_out))``.

    >>> import npgrad as torch
    >>> torch.nn.init.xavier_normal_(torch.empty(3, 5)).shape
    torch.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    # None: a tensor without elements, left as it is (with torch's warning).
    if 0 in tuple(tensor.shape):  # type: ignore[attr-defined]
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator: Any = None
) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``
    (``fan``: ``fan_in`` or ``fan_out``; ``gain``: ``calculate_gain
    (nonlinearity, a)``).

    >>> import npgrad as torch
    >>> w = torch.nn.init.kaiming_uniform_(torch.empty(4, 6), nonlinearity="relu")
    >>> bool(w.abs().max() <= 1.0)
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator: Any = None
) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``.

    >>> import npgrad as torch
    >>> torch.nn.init.kaiming_normal_(torch.empty(4, 6), mode="fan_out").shape
    torch.Size([4, 6])
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fills ``tensor`` (2-D or more, trailing dims flattened) with a
    (semi-)orthogonal matrix times ``gain``: the Q of the QR decomposition of
    a normal random matrix, its signs fixed by R's diagonal.

    >>> import npgrad as torch
    >>> w = torch.nn.init.orthogonal_(torch.empty(3, 3))
    >>> bool(((w @ w.T) - torch.eye(3)).abs().max() < 1e-5)
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]  # type: ignore[attr-defined]
    cols = tensor.numel() // rows
    flattened = _creation.empty((rows, cols), dtype=tensor.dtype).normal_(0, 1, generator=generator)  # type: ignore[attr-defined]
    matrix = flattened._array.astype(np.float64)
    if rows < cols:
        matrix = matrix.T
    q, r = np.linalg.qr(matrix)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill_from(tensor, (q * gain).reshape(tuple(tensor.shape)))  # type: ignore[attr-defined]
