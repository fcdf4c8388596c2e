"""``NAdam``: Adam with Nesterov momentum (torch's ``torch/optim/nadam.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.NAdam([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> sorted(opt.state[w])
['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor, float32
from .._creation import tensor
from .adam import _validate_betas
from .optimizer import _ForLoopOptimizer, _scalar

__all__ = ["NAdam"]


class NAdam(_ForLoopOptimizer):
    """``NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
    maximize=False, capturable=False, differentiable=False)``: Adam whose
    first moment is applied with Nesterov's look-ahead, the momentum
    ``mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))`` and their running
    product ``mu_product`` in the state. ``foreach=True`` runs the same
    single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.NAdam([torch.nn.Parameter(torch.ones(1))], momentum_decay=-1)
    Traceback (most recent call last):
        ...
    ValueError: Invalid momentum_decay value: -1
    """

    _capturable_what = "params, mu_products and state_steps"

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate_betas(
            lr, eps, betas, weight_decay, (0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        )
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        self._zeros(p, state)
        state["mu_product"] = tensor(1.0, dtype=float32)
        self._zeros(p, state, "exp_avg", "exp_avg_sq")

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr, momentum_decay = _scalar(group["lr"]), group["momentum_decay"]
        exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
        step = state["step"].item()
        bias_correction2 = 1 - beta2**step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_value = mu_product.item()
        mu_product_next = mu_product_value * mu_next
        denom.add_(group["eps"])
        p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
