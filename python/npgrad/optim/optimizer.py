"""``Optimizer``: the base class of every optimizer (torch's ``torch/optim/optimizer.py``).

An optimizer holds ``param_groups`` (dicts with ``"params"`` and the
hyperparameters, the constructor's ``defaults`` filling what a group leaves
out) and ``state`` (a ``defaultdict(dict)`` keyed by the parameter tensors).
``state_dict()`` packs both with the parameters replaced by int indices, as
torch's layout does; ``load_state_dict`` reverses it.

>>> import npgrad as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SGD([w], lr=0.5)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
Parameter containing:
tensor([0., 0.], requires_grad=True)
>>> opt.state_dict()["param_groups"][0]["params"]
[0]
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any, TypeVar, cast

from .._C import Tensor, float32
from .._creation import tensor, zeros_like
from ..autograd.grad_mode import no_grad, set_grad_enabled
from ..nn.modules.module import _typename, _zero_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _RequiredParameter:
    """The singleton ``required``: a ``defaults`` value meaning "every param
    group must give this key".

    >>> import npgrad as torch
    >>> from npgrad.optim.optimizer import required
    >>> required
    <required parameter>
    >>> torch.optim.Optimizer([torch.ones(1)], {"lr": required})
    Traceback (most recent call last):
        ...
    ValueError: parameter group didn't specify a value of required optimization parameter lr
    """

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


_global_optimizer_pre_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable[..., Any]] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``,
    called before the step of every optimizer (before its own pre hooks).

    >>> import npgrad as torch
    >>> from npgrad.optim.optimizer import register_optimizer_step_pre_hook
    >>> handle = register_optimizer_step_pre_hook(lambda o, a, k: print(type(o).__name__))
    >>> torch.optim.Adam([torch.nn.Parameter(torch.ones(1))]).step()
    Adam
    >>> handle.remove()
    """
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(optimizer, args, kwargs) -> None``, called after the
    step of every optimizer (after its own post hooks).

    >>> import npgrad as torch
    >>> from npgrad.optim.optimizer import register_optimizer_step_post_hook
    >>> handle = register_optimizer_step_post_hook(lambda o, a, k: print("stepped"))
    >>> torch.optim.SGD([torch.nn.Parameter(torch.ones(1))]).step()
    stepped
    >>> handle.remove()
    """
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _step_with_hooks(step: _F) -> _F:
    # The step pre hooks (global ones first; they may replace args and
    # kwargs), then step, then the post hooks (global ones last): what torch's
    # profile_hook_step wraps around every subclass's step.
    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self: Optimizer = args[0]
        for pre_hook in [*_global_optimizer_pre_hooks.values(), *self._optimizer_step_pre_hooks.values()]:
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
        out = step(*args, **kwargs)
        for post_hook in [*self._optimizer_step_post_hooks.values(), *_global_optimizer_post_hooks.values()]:
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _scalar(value: Any) -> Any:
    # A hyperparameter given as a one-element tensor, as the plain number the
    # single-tensor update uses it as.
    return value.item() if isinstance(value, Tensor) else value


class Optimizer:
    """Base class of the optimizers: ``Optimizer(params, defaults)``.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of
    dicts (param groups); ``defaults`` holds the hyperparameters a group does
    not set. Subclasses implement ``step(closure=None)``.

    >>> import npgrad as torch
    >>> w = torch.nn.Parameter(torch.zeros(1))
    >>> opt = torch.optim.Optimizer([w], {"lr": 0.1})
    >>> opt
    Optimizer (
    Parameter Group 0
        lr: 0.1
    )
    >>> opt.param_groups[0]["params"][0] is w
    True
    """

    # The devices torch's capturable=True path accepts; npgrad is CPU-only,
    # so capturable=True raises torch's AssertionError at the first step.
    _capturable_devices = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"
    _capturable_what = "params and state_steps"

    _optimizer_step_pre_hooks: OrderedDict[int, Callable[..., Any]]
    _optimizer_step_post_hooks: OrderedDict[int, Callable[..., Any]]
    _optimizer_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]]
    _optimizer_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]]
    _optimizer_load_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]]
    _optimizer_load_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _step_with_hooks(step)  # type: ignore[method-assign]

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._init_hook_dicts()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + _typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _init_hook_dicts(self) -> None:
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())

    def __getstate__(self) -> dict[str, Any]:
        """What pickling and ``deepcopy`` keep: ``defaults``, ``state`` and
        ``param_groups`` (the hooks are dropped, as torch does).

        >>> import copy, npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> sorted(opt.__getstate__())
        ['defaults', 'param_groups', 'state']
        >>> copy.deepcopy(opt).param_groups[0]["lr"]
        0.1
        """
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restores what ``__getstate__`` kept, with empty hook dicts.

        >>> import pickle, npgrad as torch
        >>> opt = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))])
        >>> pickle.loads(pickle.dumps(opt)).defaults["betas"]
        (0.9, 0.999)
        """
        self.__dict__.update(state)
        self._init_hook_dicts()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self.defaults.items():
                if value is not required:
                    group.setdefault(key, value)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs) -> None or (args, kwargs)``,
        called before each ``step``; returns a handle that removes it.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: print("before"))
        >>> opt.step()
        before
        >>> handle.remove()
        >>> opt.step()
        """
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(optimizer, args, kwargs) -> None``, called after
        each ``step``; returns a handle that removes it.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
        >>> _ = opt.register_step_post_hook(lambda o, args, kwargs: print("after"))
        >>> opt.step()
        after
        """
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(optimizer) -> None``, called before ``state_dict``
        builds its result (first of all hooks if ``prepend``).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
        >>> _ = opt.register_state_dict_pre_hook(lambda o: print("packing"))
        >>> _ = opt.state_dict()
        packing
        """
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict) -> state_dict or None``,
        called on ``state_dict``'s result (a returned dict replaces it).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
        >>> _ = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        >>> opt.state_dict()["extra"]
        1
        """
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(optimizer, state_dict) -> state_dict or None``,
        called on a shallow copy of what ``load_state_dict`` is given.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> def halve(o, sd):
        ...     sd["param_groups"][0]["lr"] /= 2
        >>> _ = opt.register_load_state_dict_pre_hook(halve)
        >>> opt.load_state_dict(opt.state_dict())
        >>> opt.param_groups[0]["lr"]
        0.05
        """
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(optimizer) -> None``, called after ``load_state_dict``.

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))])
        >>> _ = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: per-parameter state}, "param_groups": [...]}``,
        the parameters numbered in the order the groups list them. The state
        tensors are the optimizer's own (not copies), as in torch.

        >>> import npgrad as torch
        >>> w = torch.nn.Parameter(torch.ones(2))
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = torch.ones(2)
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([1., 1.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["momentum"]
        ([0], 0.9)
        """
        for pre_hook in list(self._optimizer_state_dict_pre_hooks.values()):
            pre_hook(self)
        index_of: dict[int, int] = {}
        start = 0

        def pack(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index_of.setdefault(id(p), i)
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack(g) for g in self.param_groups]
        packed_state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict: dict[str, Any] = {"state": packed_state, "param_groups": param_groups}
        for post_hook in list(self._optimizer_state_dict_post_hooks.values()):
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(
        param: Tensor, value: Tensor, param_id: Any, param_groups: list[dict[str, Any]], key: Any = None
    ) -> Tensor:
        # "step" keeps its dtype (float32 only for fused/capturable groups);
        # every other state tensor takes a floating parameter's dtype.
        fused = capturable = False
        for group in param_groups:
            if param_id in group["params"]:
                fused = group.get("fused", False)
                capturable = group.get("capturable", False)
                break
        if key == "step":
            return value.to(dtype=float32) if (capturable or fused) else value
        if param.is_floating_point():
            return value.to(dtype=param.dtype)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Loads what ``state_dict`` returned (of an optimizer with groups of
        the same sizes): the groups' hyperparameters and the per-parameter
        state, state tensors cast to their parameter's dtype (except ``step``).

        >>> import npgrad as torch
        >>> w = torch.nn.Parameter(torch.ones(1, dtype=torch.float64))
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> saved = {"state": {0: {"momentum_buffer": torch.ones(1)}},
        ...          "param_groups": [{**opt.state_dict()["param_groups"][0], "lr": 0.5}]}
        >>> opt.load_state_dict(saved)
        >>> opt.param_groups[0]["lr"], opt.state[w]["momentum_buffer"].dtype
        (0.5, torch.float64)
        """
        state_dict = state_dict.copy()
        for pre_hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param: Tensor, value: Any, param_id: Any, key: Any = None) -> Any:
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key
                )
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, s) for g, s in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            post_hook(self)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the parameters' gradients: to ``None`` (the default), or
        detached and filled with zeros.

        >>> import npgrad as torch
        >>> w = torch.nn.Parameter(torch.ones(2))
        >>> w.grad = torch.ones(2)
        >>> opt = torch.optim.SGD([w])
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> print(w.grad)
        None
        """
        _zero_grad(chain.from_iterable(g["params"] for g in self.param_groups), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of the parameters; ``closure`` (re-evaluating and
        returning the loss) is called first when given. Subclasses implement it.

        >>> import npgrad as torch
        >>> torch.optim.Optimizer([torch.ones(1)], {}).step()
        Traceback (most recent call last):
            ...
        NotImplementedError
        """
        raise NotImplementedError

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a param group (a dict with ``"params"`` and optional
        hyperparameters, the others taken from ``defaults``).

        >>> import npgrad as torch
        >>> opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
        >>> opt.add_param_group({"params": torch.nn.Parameter(torch.ones(1)), "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors: list[Any] = []
        names: list[Any] = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        param_set: set[Tensor] = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------- shared by the subclasses

    def _check_capturable(self, group: dict[str, Any]) -> None:
        # torch's capturable path needs an accelerator's tensors; on CPU its
        # first step with a gradient fails with this AssertionError.
        if group.get("capturable", False):
            raise AssertionError(
                f"If capturable=True, {self._capturable_what} must be on supported devices: {self._capturable_devices}."
            )

    def _params_with_grad(self, group: dict[str, Any]) -> list[Tensor]:
        """The group's parameters whose ``grad`` is set (the others are skipped)."""
        params = [p for p in group["params"] if p.grad is not None]
        if params:
            self._check_capturable(group)
        return params


def _check_flags(optimizer_name: str, fused: Any, foreach: Any, differentiable: bool) -> None:
    """torch's constructor checks of ``fused``, then npgrad's refusals: the
    fused kernels round differently from the single-tensor algorithm, and the
    differentiable update (step() recorded by autograd) is not implemented."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        raise RuntimeError(
            f"npgrad: {optimizer_name}(fused=True) is not supported (torch's fused kernels are not "
            "reimplemented); leave fused=None for the single-tensor algorithm"
        )
    if differentiable:
        raise RuntimeError(
            f"npgrad: {optimizer_name}(differentiable=True) is not supported (the update is not "
            "recorded by autograd); leave differentiable=False"
        )


class _ForLoopOptimizer(Optimizer):
    """An optimizer whose step is torch's single-tensor ("for loop")
    algorithm: for each parameter with a gradient, under no_grad, the gradient
    negated if ``maximize``, ``state["step"]`` counted, the weight decay
    applied, then the subclass's ``_update``."""

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        super().__init__(params, defaults)
        _check_flags(type(self).__name__, defaults.get("fused"), defaults.get("foreach"), defaults["differentiable"])

    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _zeros(self, p: Tensor, state: dict[str, Any], *keys: str) -> None:
        # The usual fresh state: the step count (torch's float32 CPU scalar
        # tensor), then zero tensors like p.
        state.setdefault("step", tensor(0.0, dtype=float32))
        for key in keys:
            state[key] = zeros_like(p)

    def _state(self, p: Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """``self.state[p]``, initialised (``_init_state``) on first use."""
        state: dict[str, Any] = self.state[p]
        if len(state) == 0:
            self._init_state(p, group, state)
        return state

    def _update(self, p: Tensor, grad: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; ``closure``
        (re-evaluating and returning the loss, called with grad mode on) first
        when given. Returns the closure's loss, or None.

        >>> import npgrad as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
        >>> opt = torch.optim.SGD([w], lr=0.25)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure)
        tensor(2., grad_fn=<SumBackward0>)
        >>> w
        Parameter containing:
        tensor([ 0.5000, -0.5000], requires_grad=True)
        """
        loss = _closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                for p in self._params_with_grad(group):
                    grad = cast(Tensor, p.grad)
                    if group["maximize"]:
                        grad = -grad
                    state = self._state(p, group)
                    if "step" in state:
                        state["step"] += 1
                    self._update(p, _weight_decay(p, grad, group), group, state)
        return loss


def _weight_decay(p: Tensor, grad: Tensor, group: dict[str, Any]) -> Tensor:
    """``grad + weight_decay * p``; or, with ``decoupled_weight_decay``,
    ``p *= 1 - lr * weight_decay`` and ``grad`` unchanged."""
    weight_decay = group["weight_decay"]
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        p.mul_(1 - _scalar(group["lr"]) * weight_decay)
        return grad
    return grad.add(p, alpha=weight_decay)


def _closure_loss(closure: Callable[[], Any] | None) -> Any:
    """Calls ``closure`` with grad mode on, as every torch optimizer's step does."""
    if closure is None:
        return None
    with set_grad_enabled(True):
        return closure()


def _validate(lr: Any, checks: Iterable[tuple[bool, str]], nan_lr_ok: bool = False) -> None:
    """The constructors' ValueErrors: a tensor ``lr`` must have one element,
    ``lr`` must not be negative (SGD lets NaN through), then ``checks``."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    lr_ok = not lr < 0.0 if nan_lr_ok else 0.0 <= lr
    for ok, message in [(lr_ok, f"Invalid learning rate: {lr}"), *checks]:
        if not ok:
            raise ValueError(message)
