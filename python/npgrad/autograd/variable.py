"""``Variable``: an alias of ``Tensor`` (as in torch), and the engine handle
``Variable._execution_engine`` whose ``queue_callback`` tools call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _C

__all__ = ["Variable"]


class _ImperativeEngine:
    def queue_callback(self, callback: Callable[[], None]) -> None:
        """Runs ``callback`` when the current backward pass finishes."""
        _C._queue_callback(callback)

    def run_backward(self, *args: Any, **kwargs: Any) -> Any:
        return _C._run_backward(*args, **kwargs)

    def is_checkpoint_valid(self) -> bool:
        """``npgrad.autograd._is_checkpoint_valid()``."""
        return _C._is_checkpoint_valid()


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """``isinstance(t, Variable)`` holds for every tensor."""

    _execution_engine = _ImperativeEngine()
