"""``Adagrad`` (torch's ``torch/optim/adagrad.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.Adagrad([w], lr=0.1)
>>> sorted(opt.state[w])  # made by the constructor
['step', 'sum']
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor
from .._creation import full_like
from .optimizer import _ForLoopOptimizer, _scalar, _validate

__all__ = ["Adagrad"]


class Adagrad(_ForLoopOptimizer):
    """``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0,
    initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
    differentiable=False, fused=None)``: ``sum += g²``, ``p -= clr * g /
    (sqrt(sum) + eps)`` with ``clr = lr / (1 + (step - 1) * lr_decay)``. The
    state (``step``, ``sum`` filled with ``initial_accumulator_value``) is made
    by the constructor. ``foreach=True`` runs the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.Adagrad([torch.nn.Parameter(torch.ones(1))], lr_decay=-1)
    Traceback (most recent call last):
        ...
    ValueError: Invalid lr_decay value: -1
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _validate(
            lr,
            [
                (0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}"),
                (0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}"),
                (
                    0.0 <= initial_accumulator_value,
                    f"Invalid initial_accumulator_value value: {initial_accumulator_value}",
                ),
                (0.0 <= eps, f"Invalid epsilon value: {eps}"),
            ],
        )
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group, self.state[p])

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        # torch reads the constructor's value here, not the group's.
        self._zeros(p, state)
        state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        step = state["step"].item()
        clr = _scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)
