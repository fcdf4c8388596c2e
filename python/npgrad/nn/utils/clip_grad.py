"""Gradient clipping (torch's ``torch/nn/utils/clip_grad.py``); npgrad has no
foreach kernels, so each gradient is scaled or clamped on its own (``foreach``
is accepted and ignored).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.zeros(2))
>>> w.grad = torch.tensor([3.0, 4.0])
>>> torch.nn.utils.clip_grad_norm_([w], 1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

from ... import _creation
from ..._C import Tensor, stack
from ...autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _as_list(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _get_total_norm(grads: list[Tensor], norm_type: float, error_if_nonfinite: bool) -> Tensor:

    if not grads:
        return _creation.tensor(0.0)
    norms = [g.norm(norm_type) for g in grads]  # type: ignore[attr-defined]
    total_norm = stack(norms).norm(norm_type)
    if error_if_nonfinite and bool(total_norm.isnan().logical_or(total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
            "anyway, set `error_if_nonfinite=False`"
        )
    return total_norm  # type: ignore[no-any-return]


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scales the gradients of ``parameters`` in place so that their total
    ``norm_type``-norm (the norm of their norms; ``inf``: the largest
    magnitude) is at most ``max_norm``; returns the total norm before
    clipping. ``error_if_nonfinite``: a NaN or infinite total norm raises.

    >>> import npgrad as torch
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> w.grad = torch.tensor([-3.0, 1.0])
    >>> torch.nn.utils.clip_grad_norm_(w, 1.5, norm_type=float("inf"))
    tensor(3.)
    >>> w.grad
    tensor([-1.5000,  0.5000])
    """
    with no_grad():
        is_generator = isinstance(parameters, types.GeneratorType)
        params = _as_list(parameters)
        if is_generator and not params:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
        grads = [p.grad for p in params if p.grad is not None]
        norm_type = float(norm_type)
        total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite)
        max_norm = float(max_norm)
        if grads:
            clip_coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)  # type: ignore[attr-defined]
            for g in grads:
                g.mul_(clip_coef)
        return total_norm


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamps the gradients of ``parameters`` in place to ``[-clip_value,
    clip_value]``.

    >>> import npgrad as torch
    >>> w = torch.nn.Parameter(torch.zeros(2))
    >>> w.grad = torch.tensor([-3.0, 0.5])
    >>> torch.nn.utils.clip_grad_value_(w, 1.0)
    >>> w.grad
    tensor([-1.0000,  0.5000])
    """
    with no_grad():
        clip_value = float(clip_value)
        grads: list[Any] = [p.grad for p in _as_list(parameters) if p.grad is not None]
        for grad in grads:
            grad.clamp_(min=-clip_value, max=clip_value)
