"""Batch normalization layers (torch's ``torch/nn/modules/batchnorm.py``):
``BatchNorm1d`` and ``BatchNorm2d`` over ``F.batch_norm``, with torch's
parameters (``weight`` ones, ``bias`` zeros) and buffers (``running_mean``,
``running_var``, ``num_batches_tracked``).

In training they normalize with the batch's statistics and update the running
ones (``momentum=None``: their cumulative average over the batches seen); in
evaluation they normalize with the running statistics.

>>> import npgrad as torch
>>> bn = torch.nn.BatchNorm1d(2)
>>> bn
BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> list(bn.state_dict())
['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
"""

from __future__ import annotations

from typing import Any

from ... import _creation
from ..._C import Tensor, int64
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d"]


class _NormBase(Module):
    """The parameters, buffers and ``extra_repr`` shared by the batch and instance
    norms."""

    # Version 2 added num_batches_tracked: older state dicts load without it.
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_creation.empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(_creation.empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Zero running mean, unit running variance, no batches tracked.

        >>> import npgrad as torch
        >>> bn = torch.nn.BatchNorm1d(1)
        >>> _ = bn(torch.tensor([[1.0], [3.0]]))
        >>> bn.reset_running_stats()
        >>> bn.running_mean, bn.num_batches_tracked
        (tensor([0.]), tensor(0))
        """
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Resets the running statistics, the weight to ones and the bias to zeros.

        >>> import npgrad as torch
        >>> bn = torch.nn.BatchNorm1d(2)
        >>> bn.reset_parameters()
        >>> bn.weight
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
        """
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        """The feature count and settings.

        >>> import npgrad as torch
        >>> torch.nn.BatchNorm2d(3, momentum=None, affine=False).extra_repr()
        '3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True'
        """
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # A state dict of version 1 (or without versions) has no
        # num_batches_tracked: keep the module's own.
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                tracked = self.num_batches_tracked
                state_dict[key] = tracked if tracked is not None else _creation.tensor(0, dtype=int64)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # the cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        # The batch's statistics normalize in training, and in evaluation when
        # there are no running ones; the running buffers are passed when they are
        # updated (training, tracked) or used (evaluation).
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        pass_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if pass_buffers else None,
            self.running_var if pass_buffers else None,
            self.weight,
            self.bias,
            use_batch_stats,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of ``(N, C)`` or ``(N, C, L)`` inputs over all dims but
    the channel dim 1.

    >>> import npgrad as torch
    >>> bn = torch.nn.BatchNorm1d(1, momentum=None)
    >>> bn(torch.tensor([[1.0], [3.0]])).detach()
    tensor([[-1.0000],
            [ 1.0000]])
    >>> bn.running_mean, bn.running_var, bn.num_batches_tracked
    (tensor([2.]), tensor([2.]), tensor(1))
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of ``(N, C, H, W)`` inputs over all dims but the
    channel dim 1.

    >>> import npgrad as torch
    >>> bn = torch.nn.BatchNorm2d(2).eval()
    >>> bn(torch.ones(1, 2, 1, 1)).squeeze().detach()
    tensor([1.0000, 1.0000])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
