"""Upsampling layers (torch's ``torch/nn/modules/upsampling.py``): ``Upsample`` over
``F.interpolate``, and its fixed-mode forms ``UpsamplingNearest2d`` and
``UpsamplingBilinear2d`` (``align_corners=True``).

>>> import npgrad as torch
>>> torch.nn.Upsample(scale_factor=2, mode="bilinear")
Upsample(scale_factor=2.0, mode='bilinear')
"""

from __future__ import annotations

from typing import Any

from ..._C import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resamples the spatial dims of its input to ``size`` or by ``scale_factor``
    with ``F.interpolate`` (``mode``, ``align_corners``, ``recompute_scale_factor``).

    >>> import npgrad as torch
    >>> torch.nn.Upsample(size=4)(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]
    name: str
    size: Any
    scale_factor: Any
    mode: str
    align_corners: bool | None
    recompute_scale_factor: bool | None

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Modules pickled before recompute_scale_factor existed recompute, as torch's.
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self) -> str:
        """The scale factor (or else the size), then the mode.

        >>> import npgrad as torch
        >>> torch.nn.Upsample(size=(3, 4)).extra_repr()
        "size=(3, 4), mode='nearest'"
        """
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        info += ", mode=" + repr(self.mode)
        return info


class UpsamplingNearest2d(Upsample):
    """``Upsample`` with ``mode="nearest"`` for ``(N, C, H, W)`` inputs.

    >>> import npgrad as torch
    >>> torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample`` with ``mode="bilinear"`` and ``align_corners=True`` for
    ``(N, C, H, W)`` inputs.

    >>> import npgrad as torch
    >>> torch.nn.UpsamplingBilinear2d(size=(1, 3))(torch.tensor([[[[0.0, 2.0]]]]))
    tensor([[[[0., 1., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
