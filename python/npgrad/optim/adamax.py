"""``Adamax``: Adam with the infinity norm (torch's ``torch/optim/adamax.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.Adamax([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor, maximum
from .adam import _validate_betas
from .optimizer import _ForLoopOptimizer, _scalar

__all__ = ["Adamax"]


class Adamax(_ForLoopOptimizer):
    """``Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    foreach=None, *, maximize=False, differentiable=False, capturable=False)``:
    ``exp_avg`` as in Adam, ``exp_inf = max(beta2 * exp_inf, |g| + eps)``,
    ``p -= lr / (1 - beta1^step) * exp_avg / exp_inf``. ``foreach=True`` runs
    the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.Adamax([torch.nn.Parameter(torch.ones(1))], eps=-1.0)
    Traceback (most recent call last):
        ...
    ValueError: Invalid epsilon value: -1.0
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _validate_betas(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        self._zeros(p, state, "exp_avg", "exp_inf")

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"])))
        clr = _scalar(group["lr"]) / (1 - beta1 ** state["step"].item())
        p.addcdiv_(exp_avg, exp_inf, value=-clr)
