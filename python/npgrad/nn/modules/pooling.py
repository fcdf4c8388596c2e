"""Pooling layers (torch's ``torch/nn/modules/pooling.py``): max, average and
adaptive pools in one and two dims, over the ``F`` pools of the same names.

>>> import npgrad as torch
>>> torch.nn.MaxPool2d(2, ceil_mode=True)
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=True)
"""

from __future__ import annotations

from typing import Any

from ..._C import Tensor
from .. import functional as F
from .module import Module
from .utils import _single

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "MaxPool1d",
    "MaxPool2d",
]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    return_indices: bool
    ceil_mode: bool

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    _pool: Any  # F.max_pool1d or F.max_pool2d

    def forward(self, input: Tensor) -> Any:
        return self._pool(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        """The window settings as given (ints stay ints, tuples tuples).

        >>> import npgrad as torch
        >>> torch.nn.MaxPool1d(3, 2).extra_repr()
        'kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False'
        """
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """The maximum over each window of the last dim of ``(N, C, L)`` or ``(C, L)``
    inputs (``F.max_pool1d``); with ``return_indices`` also their positions.

    >>> import npgrad as torch
    >>> torch.nn.MaxPool1d(2, return_indices=True)(torch.tensor([[1.0, 3.0, 2.0, 0.0]]))
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The maximum over each window of the last two dims of ``(N, C, H, W)`` or
    ``(C, H, W)`` inputs (``F.max_pool2d``).

    >>> import npgrad as torch
    >>> torch.nn.MaxPool2d(2)(torch.arange(16.0).reshape(1, 4, 4))
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """

    _pool = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        """The window settings.

        >>> import npgrad as torch
        >>> torch.nn.AvgPool2d((2, 1)).extra_repr()
        'kernel_size=(2, 1), stride=(2, 1), padding=0'
        """
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean over each window of the last dim (``F.avg_pool1d``); the sizes are
    kept as 1-tuples.

    >>> import npgrad as torch
    >>> pool = torch.nn.AvgPool1d(2)
    >>> pool, pool(torch.tensor([[1.0, 3.0, 2.0, 0.0]]))
    (AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,)), tensor([[2., 1.]]))
    """

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """The mean over each window of the last two dims (``F.avg_pool2d``), with
    ``count_include_pad`` and ``divisor_override``.

    >>> import npgrad as torch
    >>> torch.nn.AvgPool2d(2, divisor_override=1)(torch.ones(1, 2, 2))
    tensor([[[4.]]])
    """

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    return_indices: bool

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        """The output size as given.

        >>> import npgrad as torch
        >>> torch.nn.AdaptiveMaxPool2d((None, 2)).extra_repr()
        'output_size=(None, 2)'
        """
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The maximum over ``output_size`` windows that tile the last dim
    (``F.adaptive_max_pool1d``).

    >>> import npgrad as torch
    >>> torch.nn.AdaptiveMaxPool1d(2)(torch.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[3., 2.]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """The maximum over ``output_size`` windows that tile the last two dims
    (``F.adaptive_max_pool2d``); ``None`` keeps that dim's size.

    >>> import npgrad as torch
    >>> torch.nn.AdaptiveMaxPool2d((1, None))(torch.arange(6.0).reshape(1, 2, 3))
    tensor([[[3., 4., 5.]]])
    """

    def forward(self, input: Tensor) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        """The output size as given.

        >>> import npgrad as torch
        >>> torch.nn.AdaptiveAvgPool1d(3).extra_repr()
        'output_size=3'
        """
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over ``output_size`` windows that tile the last dim
    (``F.adaptive_avg_pool1d``).

    >>> import npgrad as torch
    >>> torch.nn.AdaptiveAvgPool1d(1)(torch.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[1.5000]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over ``output_size`` windows that tile the last two dims
    (``F.adaptive_avg_pool2d``); ``(1, 1)`` is a global average pool.

    >>> import npgrad as torch
    >>> torch.nn.AdaptiveAvgPool2d(1)(torch.arange(4.0).reshape(1, 1, 2, 2))
    tensor([[[[1.5000]]]])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)
