"""``SGD``: stochastic gradient descent, with momentum (torch's ``torch/optim/sgd.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
>>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> w
Parameter containing:
tensor([0.4600, 0.9200], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor
from .optimizer import _ForLoopOptimizer, _scalar, _validate

__all__ = ["SGD"]


class SGD(_ForLoopOptimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
    nesterov=False, *, maximize=False, foreach=None, differentiable=False,
    fused=None)``: ``p -= lr * g`` with ``g`` the gradient (negated if
    ``maximize``, plus ``weight_decay * p``), through the momentum buffer
    ``b = momentum * b + (1 - dampening) * g`` when ``momentum`` is set
    (Nesterov: ``g + momentum * b``). State: ``momentum_buffer`` (only with
    momentum). ``foreach=True`` runs the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, nesterov=True)
    Traceback (most recent call last):
        ...
    ValueError: Nesterov momentum requires a momentum and zero dampening
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _validate(
            lr,
            [
                (not momentum < 0.0, f"Invalid momentum value: {momentum}"),
                (not weight_decay < 0.0, f"Invalid weight_decay value: {weight_decay}"),
            ],
            nan_lr_ok=True,
        )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        # torch keeps no state at all for a parameter without momentum, and
        # makes the momentum buffer from the first gradient.
        return self.state[p] if group["momentum"] != 0 else {}

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = grad.detach().clone()
                state["momentum_buffer"] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        p.add_(grad, alpha=-_scalar(group["lr"]))
