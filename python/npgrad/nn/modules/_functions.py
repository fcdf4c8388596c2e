"""The custom Function behind the full backward hooks of modules (torch's
``torch/nn/modules/_functions.py``)."""

from __future__ import annotations

from typing import Any

from ...autograd.function import Function

__all__ = ["BackwardHookFunction"]


class BackwardHookFunction(Function):
    """Returns its tensor arguments as they are, so that the outputs share one
    ``BackwardHookFunctionBackward`` node whose hooks see (and may replace)
    the gradients of all of them at once; the identity in backward.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules._functions import BackwardHookFunction
    >>> x = torch.ones(2, requires_grad=True)
    >>> (y,) = BackwardHookFunction.apply(x)
    >>> y.grad_fn.name()
    'BackwardHookFunctionBackward'
    """

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        return args
