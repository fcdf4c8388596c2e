"""``Flatten`` and ``Unflatten`` (torch's ``torch/nn/modules/flatten.py``).

>>> import npgrad as torch
>>> torch.nn.Flatten()(torch.zeros(2, 3, 4)).shape
torch.Size([2, 12])
"""

from __future__ import annotations

from typing import Any

from ..._C import Tensor
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims ``start_dim`` to ``end_dim`` into one (``Tensor.flatten``).

    >>> import npgrad as torch
    >>> torch.nn.Flatten(0, 1)
    Flatten(start_dim=0, end_dim=1)
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim ``dim`` into ``unflattened_size`` (``Tensor.unflatten``).

    >>> import npgrad as torch
    >>> torch.nn.Unflatten(1, (2, 5))(torch.zeros(3, 10)).shape
    torch.Size([3, 2, 5])
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input: Any) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError(
                        "unflattened_size must be tuple of ints, "
                        f"but found element of type {type(elem).__name__} at pos {idx}"
                    )
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(input).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
