"""``npgrad.autograd``: ``backward`` and ``grad``, with torch's signatures.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> torch.autograd.grad((x ** 3).sum(), x)
(tensor([ 3., 12.]),)
"""

from __future__ import annotations

# `X as X`: re-exported, though not in __all__.
from . import function as function
from . import graph
from ._backward import backward, grad
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import GradcheckError as GradcheckError
from .gradcheck import gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function",
    "Variable",
    "detect_anomaly",
    "gradcheck",
    "gradgradcheck",
    "set_detect_anomaly",
    "backward",
    "grad",
    "graph",
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
]


def _is_checkpoint_valid() -> bool:
    """False while a node of a backward pass given ``inputs``
    (``autograd.grad``, ``backward(inputs=...)``) runs on this thread, or
    anything nested in such a node: the reentrant ``utils.checkpoint``
    refuses to run there.

    >>> import npgrad as torch
    >>> torch.autograd._is_checkpoint_valid()
    True
    """
    return Variable._execution_engine.is_checkpoint_valid()
