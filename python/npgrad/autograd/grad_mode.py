"""Grad-mode context managers: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each works as a context manager and as a decorator; the mode is thread-local.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])


class _DecoratorContextManager:
    def __call__(self, func: F) -> F:
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def generator(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    with self.clone():
                        try:
                            response = gen.send(request)
                        except StopIteration as e:
                            return e.value

            return generator  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: Any) -> None:
        raise NotImplementedError


class _BareDecoratorMixin(_DecoratorContextManager):
    """Allows ``@no_grad`` without parentheses, as torch does."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_BareDecoratorMixin):
    """Disables graph recording in its scope.

    >>> import npgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, orig_func: Any = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self.prev)


class enable_grad(_BareDecoratorMixin):
    """Enables graph recording in its scope (inside ``no_grad``, say)."""

    def __init__(self, orig_func: Any = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to ``mode`` now; as a context manager, restores on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, func: F) -> F:
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc: Any) -> None:
        _C._set_grad_enabled(self.prev)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode (``mode=True``): grad mode is off, and the tensors made
    are inference tensors, which outside inference mode cannot be written in
    place, saved for backward or made to require grad (torch's errors).
    ``inference_mode(False)`` turns both off again (grad mode on). A context
    manager and a decorator (also bare: ``@inference_mode``); thread-local.

    >>> import npgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad, y.is_inference(), torch.is_inference_mode_enabled()
    (False, True, False)
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self.prev: tuple[bool, bool] = (False, True)

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self) -> None:
        self.prev = (_C.is_inference_mode_enabled(), _C.is_grad_enabled())
        _C._set_inference_mode(bool(self.mode))
        _C._set_grad_enabled(not self.mode)

    def __exit__(self, *exc: Any) -> None:
        _C._set_inference_mode(self.prev[0])
        _C._set_grad_enabled(self.prev[1])

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
