"""Normalization layers over the trailing dims or over channel groups (torch's
``torch/nn/modules/normalization.py``): ``LayerNorm``, ``GroupNorm`` and
``RMSNorm``, each holding its affine parameters (ones and zeros at
construction) and calling its function from ``nn.functional``.

>>> import npgrad as torch
>>> torch.nn.LayerNorm(4)
LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
"""

from __future__ import annotations

import numbers
from typing import Any

from ... import _creation
from ..._C import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["GroupNorm", "LayerNorm", "RMSNorm"]


def _affine_parameters(module: Module, shape: Any, affine: bool, bias: bool, device: Any, dtype: Any) -> None:
    # weight (and bias) of the given shape when affine, else both registered as None;
    # the values are set by reset_parameters.
    if affine:
        module.weight = Parameter(_creation.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(_creation.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


def _shape_tuple(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims (``F.layer_norm``), then
    scales by ``weight`` (ones) and shifts by ``bias`` (zeros) when
    ``elementwise_affine``; ``bias=False`` keeps the weight only.

    >>> import npgrad as torch
    >>> ln = torch.nn.LayerNorm(2, bias=False)
    >>> ln
    LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=False)
    >>> ln(torch.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: tuple[int, ...]
    eps: float
    elementwise_affine: bool

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets the weight to ones and the bias to zeros.

        >>> import npgrad as torch
        >>> ln = torch.nn.LayerNorm(2)
        >>> _ = torch.nn.init.zeros_(ln.weight)
        >>> ln.reset_parameters()
        >>> ln.weight
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        """
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:
        """``F.layer_norm`` with the module's shape, parameters and ``eps``.

        >>> import npgrad as torch
        >>> torch.nn.LayerNorm(2, elementwise_affine=False)(torch.tensor([0.0, 2.0]))
        tensor([-1.0000,  1.0000])
        """
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The shape, ``eps``, ``elementwise_affine`` and whether there is a bias.

        >>> import npgrad as torch
        >>> torch.nn.LayerNorm((2, 3), eps=1e-6).extra_repr()
        '(2, 3), eps=1e-06, elementwise_affine=True, bias=True'
        """
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """Normalizes ``(N, C, *)`` inputs over groups of ``num_groups`` channels
    (``F.group_norm``), then applies a per-channel ``weight`` and ``bias`` when
    ``affine``.

    >>> import npgrad as torch
    >>> gn = torch.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> gn(torch.arange(8.0).reshape(1, 4, 2)).shape
    torch.Size([1, 4, 2])
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    num_groups: int
    num_channels: int
    eps: float
    affine: bool

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets the weight to ones and the bias to zeros.

        >>> import npgrad as torch
        >>> gn = torch.nn.GroupNorm(1, 2)
        >>> gn.reset_parameters()
        >>> gn.bias
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
        """
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:
        """``F.group_norm`` with the module's groups, parameters and ``eps``.

        >>> import npgrad as torch
        >>> torch.nn.GroupNorm(1, 2, affine=False)(torch.tensor([[0.0, 2.0]]))
        tensor([[-1.0000,  1.0000]])
        """
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The groups, channels, ``eps``, ``affine`` and whether there is a bias.

        >>> import npgrad as torch
        >>> torch.nn.GroupNorm(1, 2, bias=False).extra_repr()
        '1, 2, eps=1e-05, affine=True, bias=False'
        """
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Divides by the root mean square over the trailing ``normalized_shape`` dims
    (``F.rms_norm``; ``eps=None``: the dtype's machine epsilon), then scales by
    ``weight`` (ones) when ``elementwise_affine``.

    >>> import npgrad as torch
    >>> rms = torch.nn.RMSNorm(2)
    >>> rms
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> rms(torch.tensor([[3.0, 4.0]]))
    tensor([[0.8485, 1.1314]], grad_fn=<MulBackward0>)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: tuple[int, ...]
    eps: float | None
    elementwise_affine: bool

    def __init__(
        self,
        normalized_shape: Any,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets the weight to ones.

        >>> import npgrad as torch
        >>> rms = torch.nn.RMSNorm(2)
        >>> rms.reset_parameters()
        >>> rms.weight
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        """
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """``F.rms_norm`` with the module's shape, weight and ``eps``.

        >>> import npgrad as torch
        >>> torch.nn.RMSNorm(2, elementwise_affine=False)(torch.tensor([3.0, 4.0]))
        tensor([0.8485, 1.1314])
        """
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The shape, ``eps`` and ``elementwise_affine``.

        >>> import npgrad as torch
        >>> torch.nn.RMSNorm([2, 3], eps=1e-6).extra_repr()
        '(2, 3), eps=1e-06, elementwise_affine=True'
        """
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
