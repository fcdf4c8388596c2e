"""Convolution layers (torch's ``torch/nn/modules/conv.py``): ``Conv1d``,
``Conv2d`` and the transposed ``ConvTranspose1d``, ``ConvTranspose2d``, over
``F.conv1d`` ... ``F.conv_transpose2d``. The weight and bias are initialised as
torch's (Kaiming uniform with ``a = sqrt(5)``, bias uniform in
``±1/sqrt(fan_in)``); ``padding_mode`` other than ``'zeros'`` pads the input with
``F.pad`` first.

>>> import npgrad as torch
>>> torch.nn.Conv2d(3, 8, 3, stride=2, padding=1, padding_mode="reflect")
Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), padding_mode=reflect)
"""

from __future__ import annotations

import math
from typing import Any

from ... import _creation
from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _pair, _reverse_repeat_tuple, _single

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]


def _sizes(
    ntuple: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any, transposed: bool, output_padding: Any
) -> tuple[Any, ...]:
    """The size arguments of ``_ConvNd``, each as an ``n``-tuple (a padding string
    stays a string)."""
    pads = padding if isinstance(padding, str) else ntuple(padding)
    return ntuple(kernel_size), ntuple(stride), pads, ntuple(dilation), transposed, ntuple(output_padding)


class _ConvNd(Module):
    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]
    in_channels: int
    out_channels: int
    kernel_size: tuple[int, ...]
    stride: tuple[int, ...]
    padding: str | tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    padding_mode: str
    _reversed_padding_repeated_twice: list[int] | tuple[int, ...]
    weight: Tensor
    bias: Tensor | None

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: str | tuple[int, ...],
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's form of the padding (last dim first, before and after), for the
        # non-zero padding modes; 'same' puts the odd element after.
        if isinstance(padding, str):
            reversed_pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for i, (d, k) in enumerate(zip(dilation, kernel_size)):
                    total = d * (k - 1)
                    j = len(kernel_size) - 1 - i
                    reversed_pads[2 * j] = total // 2
                    reversed_pads[2 * j + 1] = total - total // 2
            self._reversed_padding_repeated_twice = reversed_pads
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty((*shape, *kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draws the weight (Kaiming uniform, ``a = sqrt(5)``) and the bias
        (uniform in ``±1/sqrt(fan_in)``) again, as at construction.

        >>> import npgrad as torch
        >>> conv = torch.nn.Conv1d(2, 1, 2)
        >>> conv.reset_parameters()
        >>> bool(conv.bias.abs().max() <= 0.5)
        True
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        """The channels, kernel and stride, then the settings that differ from
        their defaults.

        >>> import npgrad as torch
        >>> torch.nn.Conv1d(2, 4, 3, groups=2, bias=False).extra_repr()
        '2, 4, kernel_size=(3,), stride=(1,), groups=2, bias=False'
        """
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = F.conv1d if len(self.kernel_size) == 1 else F.conv2d
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, (0,) * len(self.kernel_size), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """A 1-D convolution over ``(N, C_in, L)`` or ``(C_in, L)`` inputs with a
    weight of shape ``(out_channels, in_channels / groups, kernel_size)``.

    >>> import npgrad as torch
    >>> conv = torch.nn.Conv1d(2, 3, 3, padding="same")
    >>> conv(torch.ones(4, 2, 5)).shape
    torch.Size([4, 3, 5])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        sizes = _sizes(_single, kernel_size, stride, padding, dilation, False, 0)
        super().__init__(in_channels, out_channels, *sizes, groups, bias, padding_mode, device=device, dtype=dtype)


class Conv2d(_ConvNd):
    """A 2-D convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` inputs with a
    weight of shape ``(out_channels, in_channels / groups, kH, kW)``.

    >>> import npgrad as torch
    >>> conv = torch.nn.Conv2d(1, 2, (3, 2), stride=(2, 1))
    >>> conv(torch.ones(1, 1, 5, 4)).shape
    torch.Size([1, 2, 2, 3])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        sizes = _sizes(_pair, kernel_size, stride, padding, dilation, False, 0)
        super().__init__(in_channels, out_channels, *sizes, groups, bias, padding_mode, device=device, dtype=dtype)


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: tuple[int, ...],
        stride: tuple[int, ...],
        padding: tuple[int, ...],
        dilation: tuple[int, ...],
        transposed: bool,
        output_padding: tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _output_padding(
        self,
        input: Tensor,
        output_size: list[int] | None,
        stride: Any,
        padding: Any,
        kernel_size: Any,
        num_spatial_dims: int,
        dilation: Any = None,
    ) -> list[int]:
        """The output padding that makes the output ``output_size`` (its spatial
        dims, or all dims), or ``self.output_padding`` without one."""
        if output_size is None:
            return list(_single(self.output_padding))
        num_non_spatial_dims = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got {len(output_size)})"
            )
        min_sizes = []
        max_sizes = []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            size = (input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d] + dil * (kernel_size[d] - 1)
            min_sizes.append(size + 1)
            max_sizes.append(size + stride[d])
        for size, low, high in zip(output_size, min_sizes, max_sizes):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {min_sizes} to "
                    f"{max_sizes} (for an input of {input.size()[2:]})"
                )
        return [size - low for size, low in zip(output_size, min_sizes)]

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        nd = len(self.kernel_size)
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{nd}d")
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, nd, self.dilation
        )
        conv = F.conv_transpose1d if nd == 1 else F.conv_transpose2d
        return conv(
            input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )


class ConvTranspose1d(_ConvTransposeNd):
    """A transposed 1-D convolution (the gradient of ``Conv1d`` with respect to its
    input) with a weight of shape ``(in_channels, out_channels / groups,
    kernel_size)``; ``forward(input, output_size)`` picks the output padding that
    gives ``output_size``.

    >>> import npgrad as torch
    >>> up = torch.nn.ConvTranspose1d(2, 1, 3, stride=2)
    >>> up(torch.ones(1, 2, 4)).shape, up(torch.ones(1, 2, 4), output_size=[10]).shape
    (torch.Size([1, 1, 9]), torch.Size([1, 1, 10]))
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        sizes = _sizes(_single, kernel_size, stride, padding, dilation, True, output_padding)
        super().__init__(in_channels, out_channels, *sizes, groups, bias, padding_mode, device=device, dtype=dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """A transposed 2-D convolution (the gradient of ``Conv2d`` with respect to its
    input) with a weight of shape ``(in_channels, out_channels / groups, kH, kW)``;
    ``forward(input, output_size)`` picks the output padding that gives
    ``output_size``.

    >>> import npgrad as torch
    >>> up = torch.nn.ConvTranspose2d(2, 3, 2, stride=2)
    >>> up(torch.ones(1, 2, 3, 3)).shape
    torch.Size([1, 3, 6, 6])
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        output_padding: Any = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: Any = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        sizes = _sizes(_pair, kernel_size, stride, padding, dilation, True, output_padding)
        super().__init__(in_channels, out_channels, *sizes, groups, bias, padding_mode, device=device, dtype=dtype)
