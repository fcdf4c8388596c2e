"""``npgrad.autograd.Function``: custom differentiable operations.

Subclass ``Function`` with static ``forward`` and ``backward`` (or
``forward`` + ``setup_context``), then call ``MyFn.apply(...)``. The backward
node is a native node named ``<Name>Backward``; from Python it is the ``ctx``
object itself, an instance of ``BackwardCFunction`` and of
``npgrad.autograd.graph.Node``.

>>> import npgrad as torch
>>> class Exp(torch.autograd.Function):
...     @staticmethod
...     def forward(ctx, i):
...         result = i.exp()
...         ctx.save_for_backward(result)
...         return result
...     @staticmethod
...     def backward(ctx, grad_output):
...         (result,) = ctx.saved_tensors
...         return grad_output * result
>>> x = torch.tensor([0.0, 1.0], requires_grad=True)
>>> y = Exp.apply(x)
>>> y.grad_fn.name()
'ExpBackward'
>>> y.sum().backward()
>>> x.grad
tensor([1.0000, 2.7183])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .. import _C
from ..utils.hooks import RemovableHandle
from .grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward``/``setup_context`` record on ``ctx`` for backward."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward, with version checks and
        saved-tensor hooks applied; read them back with ``ctx.saved_tensors``."""
        self.to_save = tensors

    def mark_dirty(self, *args: Any) -> None:
        """Marks inputs that ``forward`` modified in place."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Any) -> None:
        """Marks outputs that are not differentiable."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach backward as zeros (default
        True) or as None."""
        self.materialize_grads = value


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    """The ctx of one call of a ``Function``, which is also its backward node."""

    _forward_cls: Any

    def apply(self, *args: Any) -> Any:
        return self._forward_cls.backward(self, *args)

    # ---- the Node API, served by the native node ----
    def _node(self) -> _C._functions._NodeBase:
        node = self._cdata_node
        if node is None:
            raise RuntimeError("this Function call recorded no backward node (no input requires grad)")
        return node

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return self._node().next_functions

    @property
    def metadata(self) -> dict[Any, Any]:
        return self._node().metadata

    @property
    def _input_metadata(self) -> tuple[Any, ...]:
        return self._node()._input_metadata

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        return self._node().register_hook(fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        return self._node().register_prehook(fn)

    def _register_hook_dict(self, tensor: Any) -> None:
        self._node()._register_hook_dict(tensor)

    def _sequence_nr(self) -> int:
        return self._node()._sequence_nr()

    def __repr__(self) -> str:
        return f"<npgrad.autograd.function.{type(self).__name__} object at {hex(id(self))}>"


class FunctionMeta(type):
    """Creates ``<Name>Backward`` for every ``Function`` subclass."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom differentiable operations (see module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Computes the outputs. Either ``forward(ctx, *inputs)``, which
        saves what backward needs on ``ctx``, or ``forward(*inputs)`` together
        with ``setup_context``. Runs without recording a graph."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Fills ``ctx`` from the ``inputs`` tuple and the ``output`` of a
        ``forward`` that takes no ctx (``ctx.save_for_backward``, ...).

        >>> import npgrad as torch
        >>> class Cube(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x ** 3
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         (x,) = inputs
        ...         ctx.save_for_backward(x)
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 3 * x ** 2 * g
        >>> x = torch.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).backward()
        >>> x.grad
        tensor([12.])
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Given the gradient of each output, returns the gradient of each
        input of ``forward`` (``None`` for inputs that need none), as a tuple
        or, for one input, a tensor. ``vjp`` is the same method."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Runs the function: ``forward`` on the inputs, then, if any input
        requires grad, records a ``<Name>Backward`` node for the outputs.
        Keyword arguments bind to ``forward``'s parameters."""
        setup_context_style = cls.setup_context is not Function.setup_context
        if kwargs or setup_context_style:
            # Keyword arguments bind to forward's positions (after ctx in the
            # forward(ctx, ...) style); the setup_context style also gets
            # forward's defaults, so setup_context sees every input. As torch.
            sig = inspect.signature(cls.forward)
            bound = sig.bind(*args, **kwargs) if setup_context_style else sig.bind(None, *args, **kwargs)
            bound.apply_defaults()
            args = bound.args if setup_context_style else bound.args[1:]
        return _C._functions._function_apply(cls, tuple(args), setup_context_style)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a backward as not differentiable: it runs under no_grad, and
    differentiating its results raises an error."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled():
            return outputs
        requires_grad = any(isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        if not requires_grad:
            return outputs
        if not isinstance(outputs, tuple):
            outputs = (outputs,)

        def fake_requires_grad(var: Any) -> Any:
            if var is not None:
                var = var.detach()
                var.requires_grad = True
            return var

        return _C._functions._delayed_error(
            "trying to differentiate twice a function that was marked with @once_differentiable",
            tuple(fake_requires_grad(v) for v in outputs),
        )

    return wrapper
