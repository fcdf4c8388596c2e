"""``Identity``, ``Linear`` and ``Bilinear`` (torch's ``torch/nn/modules/linear.py``).

>>> import npgrad as torch
>>> torch.nn.Linear(3, 2, bias=False)
Linear(in_features=3, out_features=2, bias=False)
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

__all__ = ["Bilinear", "Identity", "Linear"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments.

    >>> import npgrad as torch
    >>> x = torch.ones(2)
    >>> torch.nn.Identity(54, unused="x")(x) is x
    True
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` (``F.linear``), with ``weight`` of shape
    ``(out_features, in_features)``; both initialised as torch's (Kaiming
    uniform weight, uniform bias in ``±1/sqrt(in_features)``).

    >>> import npgrad as torch
    >>> _ = torch.manual_seed(0)
    >>> fc = torch.nn.Linear(4, 2)
    >>> fc(torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int
    weight: Tensor

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draws the weight and bias again, as at construction.

        >>> import npgrad as torch
        >>> fc = torch.nn.Linear(2, 2)
        >>> fc.reset_parameters()
        >>> bool(fc.weight.abs().max() <= 1 / 2**0.5)
        True
        """
        # Kaiming uniform with a = sqrt(5): bound 1 / sqrt(fan_in).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """``F.linear(input, self.weight, self.bias)``.

        >>> import npgrad as torch
        >>> fc = torch.nn.Linear(2, 1)
        >>> _ = torch.nn.init.ones_(fc.weight), torch.nn.init.zeros_(fc.bias)
        >>> fc(torch.tensor([1.0, 2.0]))
        tensor([3.], grad_fn=<ViewBackward0>)
        """
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The sizes and whether there is a bias.

        >>> import npgrad as torch
        >>> torch.nn.Linear(2, 1, bias=False).extra_repr()
        'in_features=2, out_features=1, bias=False'
        """
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` under another name: torch's ``MultiheadAttention.out_proj``, whose
    class keeps torch's quantization tools from swapping it (npgrad has none).

    >>> import npgrad as torch
    >>> torch.nn.modules.linear.NonDynamicallyQuantizableLinear(2, 2)
    NonDynamicallyQuantizableLinear(in_features=2, out_features=2, bias=True)
    """


class Bilinear(Module):
    """``y = x1 @ weight[k] @ x2 + bias[k]`` for each output feature ``k``
    (``F.bilinear``), with ``weight`` of shape ``(out_features, in1_features,
    in2_features)``; weight and bias uniform in ``±1/sqrt(in1_features)``, as torch's.

    >>> import npgrad as torch
    >>> _ = torch.manual_seed(0)
    >>> m = torch.nn.Bilinear(3, 2, 4)
    >>> m
    Bilinear(in1_features=3, in2_features=2, out_features=4, bias=True)
    >>> m(torch.ones(5, 3), torch.ones(5, 2)).shape
    torch.Size([5, 4])
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]
    in1_features: int
    in2_features: int
    out_features: int
    weight: Tensor

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draws the weight and bias again, uniform in ``±1/sqrt(in1_features)``.

        >>> import npgrad as torch
        >>> m = torch.nn.Bilinear(4, 2, 3)
        >>> m.reset_parameters()
        >>> bool(m.weight.abs().max() <= 0.5)
        True
        """
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """``F.bilinear(input1, input2, self.weight, self.bias)``."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The sizes and whether there is a bias.

        >>> import npgrad as torch
        >>> torch.nn.Bilinear(2, 3, 1, bias=False).extra_repr()
        'in1_features=2, in2_features=3, out_features=1, bias=False'
        """
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
