"""Padding layers (torch's ``torch/nn/modules/padding.py``) over ``F.pad``:
constant (``ConstantPad*``, ``ZeroPad*``), reflection, replication and circular
padding of the last one or two dims. ``padding`` is an int (every side) or a
tuple ``(left, right)`` / ``(left, right, top, bottom)``.

>>> import npgrad as torch
>>> torch.nn.ReflectionPad1d((2, 1))(torch.tensor([[0.0, 1.0, 2.0]]))
tensor([[2., 1., 0., 1., 2., 1.]])
"""

from __future__ import annotations

from typing import Any

from ..._C import Tensor
from .. import functional as F
from .module import Module
from .utils import _pair, _quadruple

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ZeroPad1d",
    "ZeroPad2d",
]


class _CircularPadNd(Module):
    __constants__ = ["padding"]
    padding: tuple[int, ...]

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self) -> str:
        """The padding tuple.

        >>> import npgrad as torch
        >>> torch.nn.CircularPad1d(1).extra_repr()
        '(1, 1)'
        """
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim of ``(N, C, W)`` or ``(C, W)`` inputs by wrapping around.

    >>> import npgrad as torch
    >>> torch.nn.CircularPad1d((1, 2))(torch.tensor([[0.0, 1.0, 2.0]]))
    tensor([[2., 0., 1., 2., 0., 1.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims of ``(N, C, H, W)`` or ``(C, H, W)`` inputs by
    wrapping around.

    >>> import npgrad as torch
    >>> torch.nn.CircularPad2d((0, 0, 1, 0))(torch.tensor([[[1.0], [2.0]]]))
    tensor([[[2.],
             [1.],
             [2.]]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 3 and input.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    value: float
    padding: tuple[int, ...]

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        """The padding tuple and the fill value.

        >>> import npgrad as torch
        >>> torch.nn.ConstantPad1d(1, 0.5).extra_repr()
        'padding=(1, 1), value=0.5'
        """
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``.

    >>> import npgrad as torch
    >>> torch.nn.ConstantPad1d((1, 0), 9.0)(torch.tensor([[1.0, 2.0]]))
    tensor([[9., 1., 2.]])
    """

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``.

    >>> import npgrad as torch
    >>> torch.nn.ConstantPad2d((0, 1, 0, 0), -1.0)(torch.ones(1, 1, 1))
    tensor([[[ 1., -1.]]])
    """

    __constants__ = ["padding", "value"]

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(value)
        self.padding = _quadruple(padding)


class _ReflectionPadNd(Module):
    __constants__ = ["padding"]
    padding: tuple[int, ...]

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self) -> str:
        """The padding tuple.

        >>> import npgrad as torch
        >>> torch.nn.ReflectionPad2d(1).extra_repr()
        '(1, 1, 1, 1)'
        """
        return f"{self.padding}"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection at the edges (the edge itself not
    repeated).

    >>> import npgrad as torch
    >>> torch.nn.ReflectionPad1d(1)(torch.tensor([[1.0, 2.0]]))
    tensor([[2., 1., 2., 1.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dims with their reflection at the edges.

    >>> import npgrad as torch
    >>> torch.nn.ReflectionPad2d((1, 0, 0, 0))(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[2., 1., 2.]]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class _ReplicationPadNd(Module):
    __constants__ = ["padding"]
    padding: tuple[int, ...]

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self) -> str:
        """The padding tuple.

        >>> import npgrad as torch
        >>> torch.nn.ReplicationPad1d((0, 2)).extra_repr()
        '(0, 2)'
        """
        return f"{self.padding}"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values.

    >>> import npgrad as torch
    >>> torch.nn.ReplicationPad1d((0, 2))(torch.tensor([[1.0, 2.0]]))
    tensor([[1., 2., 2., 2.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _pair(padding)


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dims by repeating their edge values.

    >>> import npgrad as torch
    >>> torch.nn.ReplicationPad2d((0, 0, 0, 1))(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 2.],
             [1., 2.]]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _quadruple(padding)


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros.

    >>> import npgrad as torch
    >>> torch.nn.ZeroPad1d((1, 0))(torch.tensor([[1.0]]))
    tensor([[0., 1.]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding tuple.

        >>> import npgrad as torch
        >>> torch.nn.ZeroPad1d(2).extra_repr()
        '(2, 2)'
        """
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros.

    >>> import npgrad as torch
    >>> torch.nn.ZeroPad2d((0, 1, 1, 0))(torch.ones(1, 1, 1))
    tensor([[[0., 0.],
             [1., 0.]]])
    """

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding tuple.

        >>> import npgrad as torch
        >>> torch.nn.ZeroPad2d(1).extra_repr()
        '(1, 1, 1, 1)'
        """
        return f"{self.padding}"
