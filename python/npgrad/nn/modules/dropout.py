"""Dropout modules (torch's ``torch/nn/modules/dropout.py``): they drop only
in training mode (``Module.train``).

>>> import npgrad as torch
>>> torch.nn.Dropout(0.2).eval()(torch.ones(2))
tensor([1., 1.])
"""

from __future__ import annotations

from ..._C import Tensor
from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]
    p: float
    inplace: bool

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` and scales the rest by
    ``1 / (1 - p)`` in training mode (``F.dropout``).

    >>> import npgrad as torch
    >>> torch.nn.Dropout(p=1.0)(torch.ones(2))
    tensor([0., 0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, L)`` or ``(C, L)`` inputs
    (``F.dropout1d``).

    >>> import npgrad as torch
    >>> torch.nn.Dropout1d(0.1)
    Dropout1d(p=0.1, inplace=False)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, H, W)`` inputs (``F.dropout2d``).

    >>> import npgrad as torch
    >>> torch.nn.Dropout2d(1.0)(torch.ones(1, 1, 1, 2))
    tensor([[[[0., 0.]]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's mean and variance (``F.alpha_dropout``).

    >>> import npgrad as torch
    >>> torch.nn.AlphaDropout(0.2).eval()(torch.ones(2))
    tensor([1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)
