"""``Adadelta`` (torch's ``torch/optim/adadelta.py``).

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.tensor([1.0]))
>>> opt = torch.optim.Adadelta([w])
>>> (w * w).sum().backward()
>>> opt.step()
>>> sorted(opt.state[w])
['acc_delta', 'square_avg', 'step']
"""

from __future__ import annotations

from typing import Any

from .._C import Tensor
from .optimizer import _ForLoopOptimizer, _scalar, _validate

__all__ = ["Adadelta"]


class Adadelta(_ForLoopOptimizer):
    """``Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0,
    foreach=None, *, capturable=False, maximize=False, differentiable=False)``:
    ``square_avg = rho * square_avg + (1 - rho) * g²``, ``delta =
    sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g``, ``acc_delta = rho *
    acc_delta + (1 - rho) * delta²``, ``p -= lr * delta``. ``foreach=True``
    runs the same single-tensor algorithm.

    >>> import npgrad as torch
    >>> torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))], rho=1.5)
    Traceback (most recent call last):
        ...
    ValueError: Invalid rho value: 1.5
    """

    _capturable_devices = "['cuda', 'xpu', 'hpu', 'privateuseone']"

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _validate(
            lr,
            [
                (0.0 <= rho <= 1.0, f"Invalid rho value: {rho}"),
                (0.0 <= eps, f"Invalid epsilon value: {eps}"),
                (0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}"),
            ],
        )
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        self._zeros(p, state, "square_avg", "acc_delta")

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-_scalar(group["lr"]))
