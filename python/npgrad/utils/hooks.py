"""``RemovableHandle``: what every ``register_*hook`` returns.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> with x.register_hook(lambda g: g * 2):
...     (x * 3).sum().backward()
>>> x.grad
tensor([6., 6.])
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Any

from .._C import Tensor, is_grad_enabled

__all__ = ["BackwardHook", "RemovableHandle"]


class RemovableHandle:
    """Removes the hook stored under ``id`` in the dict(s) it was made for.

    The dicts are held weakly; ``remove()`` is idempotent and fine after the
    dict is gone. Usable as a context manager, and picklable.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple[Any, ...] = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        """Unregisters the hook; a no-op the second time, or once the
        dict it was stored in is gone.

        >>> import npgrad as torch
        >>> x = torch.ones(1, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 0)
        >>> h.remove()
        >>> (x * 2).sum().backward()
        >>> x.grad
        tensor([2.])
        """
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self) -> tuple[Any, ...]:
        if not self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        if state[0] is None:
            self.hooks_dict_ref = weakref.ref(OrderedDict())  # dead: its dict is gone
        else:
            self.hooks_dict_ref = weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class BackwardHook:
    """The full backward hooks of one call of a module (torch's
    ``torch.utils.hooks.BackwardHook``): the tensors among the call's inputs,
    and those among its outputs, each go through one
    ``BackwardHookFunction``; a hook on the outputs' node records the
    gradients w.r.t. the outputs (after the backward pre-hooks, which may
    replace them), and a hook on the inputs' node calls the backward hooks with
    the gradients w.r.t. the inputs and those outputs' ones.

    >>> import npgrad as torch
    >>> lin = torch.nn.Identity()
    >>> h = lin.register_full_backward_hook(lambda m, gi, go: print(gi, go))
    >>> lin(torch.ones(2, requires_grad=True)).sum().backward()
    (tensor([1., 1.]),) (tensor([1., 1.]),)
    """

    def __init__(self, module: Any, user_hooks: list[Any], user_pre_hooks: list[Any]) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_outputs = -1
        self.output_tensors_index: list[int] | None = None
        self.n_inputs = -1
        self.input_tensors_index: list[int] | None = None

    def _pack_with_none(self, indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
        res: list[Any] = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _unpack_none(self, indices: list[int], values: Any) -> tuple[Any, ...]:
        return tuple(values[idx] for idx in indices)

    def _set_user_hook(self, grad_fn: Any) -> None:
        def hook(grad_input: Any, _: Any) -> Any:
            if self.grad_outputs is None:
                # The gradient reached the inputs without passing through the
                # outputs (double backward): nothing to report.
                return None
            assert self.input_tensors_index is not None
            res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return self._unpack_none(self.input_tensors_index, res)

        grad_fn.register_hook(hook)

    def _apply_on_tensors(self, fn: Any, args: Any) -> tuple[Any, list[int] | None]:
        # Imported here: nn.modules._functions builds on autograd.function, which
        # imports this module.
        from ..nn.modules._functions import BackwardHookFunction

        tensors_idx: list[int] = []
        tensors: list[Any] = []
        requires_grad = False
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors_idx.append(i)
                tensors.append(arg)
                requires_grad |= arg.requires_grad
        if not (requires_grad and is_grad_enabled()):
            return args, None
        new_tensors = BackwardHookFunction.apply(*tensors)
        if len(new_tensors) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        grad_fns = [
            t.grad_fn
            for t in new_tensors
            if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"
        ]
        if len(grad_fns) == 0:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample to reproduce this."
            )
        fn(grad_fns[0])
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, tensors_idx

    def setup_input_hook(self, args: Any) -> Any:
        res, input_idx = self._apply_on_tensors(self._set_user_hook, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, args: Any) -> Any:
        def fn(grad_fn: Any) -> None:
            def hook(_: Any, grad_output: Any) -> Any:
                assert self.output_tensors_index is not None
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected_len = len(self.grad_outputs)
                    for user_pre_hook in self.user_pre_hooks:
                        hook_grad_outputs = user_pre_hook(self.module, self.grad_outputs)
                        if hook_grad_outputs is None:
                            continue
                        actual_len = len(hook_grad_outputs)
                        if actual_len != expected_len:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, "
                                f"got {actual_len}, but expected {expected_len}"
                            )
                        self.grad_outputs = hook_grad_outputs
                local_grad_outputs = self.grad_outputs
                if self.input_tensors_index is None:
                    # No input requires grad: the hooks fire here, with None
                    # for every gradient w.r.t. the inputs.
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed "
                        "with respect to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5,
                    )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(el is None for el in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires "
                                "gradient should always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                if local_grad_outputs is not None:
                    return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
                return None

            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, output_idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
