"""``Adam`` and ``AdamW`` (torch's ``torch/optim/adam.py`` and ``adamw.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
>>> opt = torch.optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([ 0.9000, -1.9000], requires_grad=True)
>>> sorted(opt.state[w])
['exp_avg', 'exp_avg_sq', 'step']
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor, maximum
from .optimizer import _ForLoopOptimizer, _scalar, _validate

__all__ = ["Adam", "AdamW"]


def _validate_betas(lr: Any, eps: float, betas: tuple[Any, Any], weight_decay: float, *more: tuple[bool, str]) -> None:
    """The learning rate, eps, betas and weight decay checks of the Adam family (then ``more``)."""
    _validate(
        lr,
        [
            (0.0 <= eps, f"Invalid epsilon value: {eps}"),
            (0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}"),
            (0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}"),
            (0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}"),
            *more,
        ],
    )


class Adam(_ForLoopOptimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    amsgrad=False, *, foreach=None, maximize=False, capturable=False,
    differentiable=False, fused=None, decoupled_weight_decay=False)``: the
    bias-corrected moving averages ``exp_avg`` and ``exp_avg_sq`` of the
    gradient and its square, ``p -= lr / bc1 * exp_avg / (sqrt(v) / sqrt(bc2) + eps)``
    with ``v`` the running maximum ``max_exp_avg_sq`` if ``amsgrad``.
    ``decoupled_weight_decay`` makes it AdamW. ``foreach=True`` runs the
    same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], betas=(0.9, 1.0))
    Traceback (most recent call last):
        ...
    ValueError: Invalid beta parameter at index 1: 1.0
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _validate_betas(lr, eps, betas, weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        self._zeros(p, state, "exp_avg", "exp_avg_sq", *(["max_exp_avg_sq"] if group["amsgrad"] else []))

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        beta1, beta2 = (_scalar(b) for b in group["betas"])
        lr = _scalar(group["lr"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step = state["step"].item()
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            max_exp_avg_sq = state["max_exp_avg_sq"]
            max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))
            denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(group["eps"])
        p.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    """``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
    weight_decay=1e-2, amsgrad=False, *, maximize=False, foreach=None,
    capturable=False, differentiable=False, fused=None)``: ``Adam`` with
    decoupled weight decay (``p *= 1 - lr * weight_decay`` before the update).

    >>> import npgrad as torch
    >>> w = torch.nn.Parameter(torch.ones(1))
    >>> opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> opt.param_groups[0]["decoupled_weight_decay"]
    True
    >>> w.grad = torch.zeros(1)
    >>> opt.step()
    >>> w
    Parameter containing:
    tensor([0.9500], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
