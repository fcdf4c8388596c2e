"""Tensor hook registration, as torch's ``Tensor.register_hook`` and
``Tensor.register_post_accumulate_grad_hook`` do it: hooks go into one
OrderedDict per tensor, which the native side runs (see
csrc/bindings/python_hooks.h)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

from .utils.hooks import RemovableHandle


def register_hook(self: Any, hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(grad) -> Tensor | None`` to run when the gradient
    w.r.t. this tensor is computed; a returned tensor replaces the gradient.

    >>> import npgrad as torch
    >>> v = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> h = v.register_hook(lambda grad: grad * 2)
    >>> v.backward(torch.tensor([1.0, 2.0, 3.0]))
    >>> v.grad
    tensor([2., 4., 6.])
    >>> h.remove()
    """
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    # Read grad_fn first: for a view whose base was modified in place since,
    # this regenerates its history, which drops the hooks dict bound to the
    # old grad_fn (torch reads it only after creating the dict, and then
    # registers a None dict: a crash in torch 2.13).
    grad_fn = self.grad_fn
    if self._backward_hooks is None:
        self._backward_hooks = OrderedDict()
        if grad_fn is not None:
            grad_fn._register_hook_dict(self)
    handle = RemovableHandle(self._backward_hooks)
    self._backward_hooks[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(self: Any, hook: Callable[[Any], None]) -> RemovableHandle:
    """Registers ``hook(param) -> None`` to run after ``param.grad`` has been
    accumulated (leaf tensors only)."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if self._post_accumulate_grad_hooks is None:
        self._post_accumulate_grad_hooks = OrderedDict()
    handle = RemovableHandle(self._post_accumulate_grad_hooks)
    self._post_accumulate_grad_hooks[handle.id] = hook
    return handle
