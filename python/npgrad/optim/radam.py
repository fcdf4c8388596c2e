"""``RAdam``: rectified Adam (torch's ``torch/optim/radam.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.RAdam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()  # the first steps are SGD with momentum (rho_t <= 5)
>>> w
Parameter containing:
tensor([0.8000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor
from .adam import _validate_betas
from .optimizer import _ForLoopOptimizer, _scalar

__all__ = ["RAdam"]


class RAdam(_ForLoopOptimizer):
    """``RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False,
    capturable=False, differentiable=False)``: Adam whose adaptive term is
    used only once the variance estimate is tractable (``rho_t > 5``), scaled
    by the rectification term; before that, the bias-corrected first moment
    alone. ``foreach=True`` runs the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.RAdam([torch.nn.Parameter(torch.ones(1))], lr=-1.0)
    Traceback (most recent call last):
        ...
    ValueError: Invalid learning rate: -1.0
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate_betas(lr, eps, betas, weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        self._zeros(p, state, "exp_avg", "exp_avg_sq")

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr = _scalar(group["lr"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        step = state["step"].item()
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
