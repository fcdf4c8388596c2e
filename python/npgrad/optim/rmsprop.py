"""``RMSprop`` (torch's ``torch/optim/rmsprop.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.RMSprop([w], lr=0.01)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor
from .optimizer import _ForLoopOptimizer, _scalar, _validate

__all__ = ["RMSprop"]


class RMSprop(_ForLoopOptimizer):
    """``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
    momentum=0, centered=False, capturable=False, foreach=None,
    maximize=False, differentiable=False)``: ``square_avg = alpha * square_avg
    + (1 - alpha) * g²``, ``p -= lr * g / (sqrt(square_avg) + eps)`` (centered:
    minus the squared running mean ``grad_avg``; with ``momentum``, through
    ``momentum_buffer``). ``foreach=True`` runs the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.RMSprop([torch.nn.Parameter(torch.ones(1))], alpha=-0.5)
    Traceback (most recent call last):
        ...
    ValueError: Invalid alpha value: -0.5
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate(
            lr,
            [
                (0.0 <= eps, f"Invalid epsilon value: {eps}"),
                (0.0 <= momentum, f"Invalid momentum value: {momentum}"),
                (0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}"),
                (0.0 <= alpha, f"Invalid alpha value: {alpha}"),
            ],
        )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        momentum = ["momentum_buffer"] if group["momentum"] > 0 else []
        self._zeros(p, state, "square_avg", *momentum, *(["grad_avg"] if group["centered"] else []))

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        alpha, lr = group["alpha"], _scalar(group["lr"])
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)
