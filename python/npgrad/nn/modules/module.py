"""``npgrad.nn.Module``, as torch's ``torch/nn/modules/module.py``: the base
class of layers, with their parameters, buffers and submodules, ``state_dict``
and its loading, and the forward and full backward hooks (per module and
global).

>>> import npgrad as torch
>>> class Scale(torch.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = torch.nn.Parameter(torch.tensor([2.0]))
...     def forward(self, x):
...         return x * self.w
>>> m = Scale()
>>> m(torch.tensor([1.0, 3.0]))
tensor([2., 6.], grad_fn=<MulBackward0>)
>>> list(m.state_dict())
['w']
"""

from __future__ import annotations

import functools
import inspect
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from ... import _C
from ..._C import Tensor
from ...autograd.grad_mode import no_grad
from ...utils.hooks import BackwardHook, RemovableHandle
from ..parameter import Buffer, Parameter

__all__ = [
    "Module",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

T = TypeVar("T", bound="Module")

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj: Any) -> str:
    # torch.typename: a tensor's legacy type name, else module.qualname.
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[no-any-return,attr-defined]
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _zero_grad(params: Iterable[Tensor], set_to_none: bool) -> None:
    # Module.zero_grad and Optimizer.zero_grad: each grad set to None, or
    # detached and zeroed in place.
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((num_spaces * " " + line) if line.strip() else "" for line in lines)


class _WrappedHook:
    # A hook called with its module first, held weakly (load_state_dict pre-hooks).
    def __init__(self, hook: Callable[..., Any], module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# Hooks of every module: registration (before a buffer, module or parameter
# is stored) and forward/backward (debugging, profiling).
_global_buffer_registration_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_module_registration_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_parameter_registration_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_backward_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_backward_hooks: dict[int, Callable[..., Any]] = OrderedDict()
# Whether the global backward hooks are full ones (True), the deprecated
# non-full ones (False), or none were registered yet (None): never both.
_global_is_full_backward_hook: bool | None = None
_global_forward_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_forward_hooks: dict[int, Callable[..., Any]] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()


def _run_registration_hooks(hooks: dict[int, Callable[..., Any]], module: Any, name: str, value: Any) -> Any:
    # Each hook may replace the value about to be registered.
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _register_in(hooks: dict[int, Callable[..., Any]], hook: Callable[..., Any], **kw: Any) -> RemovableHandle:
    handle = RemovableHandle(hooks, **kw)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, buffer) -> Tensor | None``, called by
    every module before it registers a buffer; a returned tensor is
    registered instead.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_buffer_registration_hook
    >>> h = register_module_buffer_registration_hook(lambda m, name, b: b * 2)
    >>> m = torch.nn.Module()
    >>> m.register_buffer("b", torch.ones(1))
    >>> h.remove()
    >>> m.b
    tensor([2.])
    """
    return _register_in(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, submodule) -> Module | None``, called by
    every module before it registers a submodule.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_module_registration_hook
    >>> h = register_module_module_registration_hook(lambda m, name, sub: print("adding", name))
    >>> m = torch.nn.Module()
    >>> m.child = torch.nn.Identity()
    adding child
    >>> h.remove()
    """
    return _register_in(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, name, param) -> Parameter | None``, called by
    every module before it registers a parameter.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_parameter_registration_hook
    >>> h = register_module_parameter_registration_hook(lambda m, name, p: print("adding", name))
    >>> m = torch.nn.Module()
    >>> m.w = torch.nn.Parameter(torch.ones(1))
    adding w
    >>> h.remove()
    """
    return _register_in(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, args) -> args | None`` to run before the
    forward of every module (before the module's own pre-hooks).

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_forward_pre_hook
    >>> h = register_module_forward_pre_hook(lambda m, args: print(type(m).__name__))
    >>> _ = torch.nn.ReLU()(torch.ones(1))
    ReLU
    >>> h.remove()
    """
    return _register_in(_global_forward_pre_hooks, hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """Registers ``hook(module, args, output) -> output | None`` (with
    ``with_kwargs``: ``hook(module, args, kwargs, output)``) to run after the
    forward of every module; ``always_call`` runs it even when the forward
    raises.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_forward_hook
    >>> h = register_module_forward_hook(lambda m, args, out: out + 1)
    >>> torch.nn.Identity()(torch.zeros(1))
    tensor([1.])
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_hooks, extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, grad_output) -> grad_output | None`` for every
    module, called when the gradients w.r.t. a module's outputs are computed.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_full_backward_pre_hook
    >>> h = register_module_full_backward_pre_hook(lambda m, go: print(go))
    >>> torch.nn.Identity()(torch.ones(1, requires_grad=True)).sum().backward()
    (tensor([1.]),)
    >>> h.remove()
    """
    return _register_in(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers ``hook(module, grad_input, grad_output) -> grad_input | None``
    for every module, called when the gradients w.r.t. a module's inputs are
    computed.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_full_backward_hook
    >>> h = register_module_full_backward_hook(lambda m, gi, go: print(gi))
    >>> torch.nn.Identity()(torch.ones(1, requires_grad=True)).sum().backward()
    (tensor([1.]),)
    >>> h.remove()
    """
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a "
            "global Module hook. Please use only one of them."
        )
    _global_is_full_backward_hook = True
    return _register_in(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Registers a deprecated non-full backward hook for every module (see
    ``Module.register_backward_hook``); prefer
    ``register_module_full_backward_hook``.

    >>> import npgrad as torch
    >>> from npgrad.nn.modules.module import register_module_backward_hook
    >>> h = register_module_backward_hook(lambda m, gi, go: print(type(m).__name__, gi))
    >>> m = torch.nn.Tanh()  # (the hook holds its module weakly: keep it alive)
    >>> x = torch.zeros(1, requires_grad=True) * 1  # (a leaf input warns: see above)
    >>> m(x).sum().backward()
    Tanh (tensor([1.]),)
    >>> h.remove()
    >>> # As in torch, the first global registration fixes the kind for good
    >>> # (full hooks now raise); reset here for the examples that follow.
    >>> torch.nn.modules.module._global_is_full_backward_hook = None
    """
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError(
            "Cannot use both regular backward hooks and full backward hooks as a "
            "global Module hook. Please use only one of them."
        )
    _global_is_full_backward_hook = False
    return _register_in(_global_backward_hooks, hook)


def _forward_unimplemented(self: Module, *input: Any) -> None:
    """The forward a subclass must define (torch's ``_forward_unimplemented``)."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class of all neural network modules: subclasses set their
    parameters, buffers and submodules as attributes in ``__init__`` and
    compute in ``forward``; calling the module runs ``forward`` with its
    hooks.

    >>> import npgrad as torch
    >>> class Net(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = torch.nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> Net()
    Net(
      (fc): Linear(in_features=2, out_features=1, bias=True)
    )
    """

    dump_patches: bool = False
    _version: int = 1
    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _backward_pre_hooks: dict[int, Callable[..., Any]]
    _backward_hooks: dict[int, Callable[..., Any]]
    _is_full_backward_hook: bool | None
    _forward_hooks: dict[int, Callable[..., Any]]
    _forward_hooks_with_kwargs: dict[int, bool]
    _forward_hooks_always_called: dict[int, bool]
    _forward_pre_hooks: dict[int, Callable[..., Any]]
    _forward_pre_hooks_with_kwargs: dict[int, bool]
    _state_dict_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _state_dict_pre_hooks: dict[int, Callable[..., Any]]
    _load_state_dict_post_hooks: dict[int, Callable[..., Any]]
    _modules: dict[str, Module | None]
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        # object.__setattr__: Module.__setattr__ needs these to exist.
        init = super().__setattr__
        init("training", True)
        init("_parameters", {})
        init("_buffers", {})
        init("_non_persistent_buffers_set", set())
        init("_backward_pre_hooks", OrderedDict())
        init("_backward_hooks", OrderedDict())
        init("_is_full_backward_hook", None)
        init("_forward_hooks", OrderedDict())
        init("_forward_hooks_with_kwargs", OrderedDict())
        init("_forward_hooks_always_called", OrderedDict())
        init("_forward_pre_hooks", OrderedDict())
        init("_forward_pre_hooks_with_kwargs", OrderedDict())
        init("_state_dict_hooks", OrderedDict())
        init("_state_dict_pre_hooks", OrderedDict())
        init("_load_state_dict_pre_hooks", OrderedDict())
        init("_load_state_dict_post_hooks", OrderedDict())
        init("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # ------------------------------------------------------------ registration

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Adds a buffer: module state that is not a parameter (in the
        ``state_dict`` unless ``persistent=False``).

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.register_buffer("running", torch.zeros(2), persistent=False)
        >>> m.running, list(m.state_dict())
        (tensor([0., 0.]), [])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Adds a parameter (or None, which ``state_dict`` and the parameter
        iterators skip).

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.register_parameter("w", torch.nn.Parameter(torch.ones(1)))
        >>> [name for name, _ in m.named_parameters()]
        ['w']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' (torch.nn.Parameter or None required)"
            )
        if param.grad_fn:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Adds a child module, reachable as the attribute ``name``.

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.add_module("act", torch.nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        module = _run_registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of ``add_module``.

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.register_module("id", torch.nn.Identity())
        >>> list(dict(m.named_children()))
        ['id']
        """
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``""`` is the module
        itself); AttributeError when the path does not lead to a module.

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.Sequential(torch.nn.ReLU()))
        >>> net.get_submodule("0.0")
        ReLU()
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Sets the submodule at the dotted path ``target`` (its parent must
        exist; with ``strict``, the submodule too).

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.Sequential(torch.nn.ReLU()))
        >>> net.set_submodule("0.0", torch.nn.Tanh())
        >>> net[0][0]
        Tanh()
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``.

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(1, 1, bias=False))
        >>> net.get_parameter("0.weight").shape
        torch.Size([1, 1])
        """
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``.

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.register_buffer("b", torch.ones(1))
        >>> m.get_buffer("b")
        tensor([1.])
        """
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer: Tensor = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    def get_extra_state(self) -> Any:
        """What a subclass stores in its ``state_dict`` besides parameters and
        buffers (under ``"_extra_state"``); defined together with
        ``set_extra_state``.

        >>> import npgrad as torch
        >>> class Counter(torch.nn.Module):
        ...     def get_extra_state(self):
        ...         return {"calls": 3}
        ...     def set_extra_state(self, state):
        ...         self.calls = state["calls"]
        >>> Counter().state_dict()["_extra_state"]
        {'calls': 3}
        """
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restores what ``get_extra_state`` returned, from ``load_state_dict``.

        >>> import npgrad as torch
        >>> class Counter(torch.nn.Module):
        ...     def get_extra_state(self):
        ...         return 0
        ...     def set_extra_state(self, state):
        ...         self.calls = state
        >>> c = Counter()
        >>> c.load_state_dict({"_extra_state": 7})
        <All keys matched successfully>
        >>> c.calls
        7
        """
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    # ---------------------------------------------------------- conversions

    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param_applied = fn(param)
            param_grad = param.grad
            # torch's default: the same Parameter object takes the new data.
            param.data = param_applied
            if param_grad is not None:
                with no_grad():
                    grad_applied = fn(param_grad)
                param.grad.data = grad_applied  # type: ignore[union-attr]
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Calls ``fn`` on every submodule (children first), then on this
        module; returns the module.

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh())
        >>> _ = net.apply(lambda m: print(type(m).__name__))
        ReLU
        Tanh
        Sequential
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def cpu(self: T) -> T:
        """The module itself (npgrad is CPU only).

        >>> import npgrad as torch
        >>> torch.nn.Identity().cpu()
        Identity()
        """
        return self._apply(lambda t: t.cpu())

    def type(self: T, dst_type: Any) -> T:
        """Casts the parameters and buffers to ``dst_type`` (a dtype or a
        legacy type name).

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).type(torch.float64).weight.dtype
        torch.float64
        """
        return self._apply(lambda t: t.type(dst_type))  # type: ignore[attr-defined]

    def float(self: T) -> T:
        """Casts the floating point parameters and buffers to float32.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).double().float().weight.dtype
        torch.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self: T) -> T:
        """Casts the floating point parameters and buffers to float64.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).double().bias.dtype
        torch.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self: T) -> T:
        """Casts the floating point parameters and buffers to float16.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).half().weight.dtype
        torch.float16
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self: T) -> T:
        """Casts the floating point parameters and buffers to bfloat16.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).bfloat16().weight.dtype
        torch.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Casts the floating point parameters and buffers: ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)`` (its dtype). Only floating point
        dtypes, as torch's.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).to(torch.float64).weight.dtype
        torch.float64
        """
        dtype = _parse_to_dtype(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )
        return self._apply(lambda t: t.to(dtype) if dtype is not None and t.is_floating_point() else t)

    # ------------------------------------------------------------- hooks

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(module, grad_output) -> tuple | None``, called
        when the gradients w.r.t. the module's outputs are computed; a
        returned tuple replaces ``grad_output``.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        >>> x = torch.ones(2, requires_grad=True)
        >>> m(x).sum().backward()
        >>> x.grad
        tensor([10., 10.])
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Registers ``hook(module, grad_input, grad_output) -> tuple | None``,
        called when the gradients w.r.t. the module's inputs are computed
        (through ``BackwardHookFunctionBackward`` nodes on the inputs and
        outputs); a returned tuple replaces ``grad_input``. The outputs are
        views that must not be modified in place.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
        >>> x = torch.ones(2, requires_grad=True)
        >>> m(x).sum().backward()
        >>> x.grad
        tensor([3., 3.])
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers a deprecated non-full backward hook: ``hook(module,
        grad_input, grad_output)`` becomes a hook of the node that made the
        module's (first) output, so ``grad_input`` are that node's gradients,
        which are the module's input gradients only for a one-node forward on
        a non-leaf input (torch's FutureWarning otherwise; the hook holds the
        module weakly). Prefer ``register_full_backward_hook``.

        >>> import npgrad as torch
        >>> m = torch.nn.Tanh()
        >>> h = m.register_backward_hook(lambda mod, gi, go: print(gi, go))
        >>> x = torch.zeros(2, requires_grad=True) * 1
        >>> m(x).sum().backward()
        (tensor([1., 1.]),) (tensor([1., 1.]),)
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _get_backward_hooks(self) -> tuple[list[Callable[..., Any]], list[Callable[..., Any]]]:
        """(full backward hooks, non-full ones), the global ones first."""
        full: list[Callable[..., Any]] = []
        non_full: list[Callable[..., Any]] = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _maybe_warn_non_full_backward_hook(self, inputs: Any, result: Any, grad_fn: Any) -> None:
        # torch's FutureWarnings for the cases where a non-full hook misses
        # gradients: outputs or inputs that are not tensors, outputs from
        # several nodes, or a forward of more than one node.
        def warn(message: str) -> None:
            warnings.warn(message, FutureWarning, stacklevel=3)

        if isinstance(result, Tensor):
            result = (result,)
        elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warn(
                "Using non-full backward hooks on a Module that does not return a "
                "single Tensor or a tuple of Tensors is deprecated and will be removed "
                "in future versions. This hook will be missing some of the grad_output. "
                "Please use register_full_backward_hook to get the documented behavior."
            )
            return
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warn(
                "Using non-full backward hooks on a Module that does not take as input a "
                "single Tensor or a tuple of Tensors is deprecated and will be removed "
                "in future versions. This hook will be missing some of the grad_input. "
                "Please use register_full_backward_hook to get the documented behavior."
            )
            return
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_grad_fn or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warn(
                "Using a non-full backward hook when outputs are nested in python data structure "
                "is deprecated and will be removed in future versions. This hook will be missing "
                "some grad_output."
            )
        elif len(out_grad_fn) > 1:
            warn(
                "Using a non-full backward hook when outputs are generated by different autograd Nodes "
                "is deprecated and will be removed in future versions. This hook will be missing "
                "some grad_output. Please use register_full_backward_hook to get the documented behavior."
            )
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warn(
                    "Using a non-full backward hook when the forward contains multiple autograd Nodes "
                    "is deprecated and will be removed in future versions. This hook will be missing "
                    "some grad_input. Please use register_full_backward_hook to get the documented "
                    "behavior."
                )

    def _get_backward_pre_hooks(self) -> list[Callable[..., Any]]:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Registers ``hook(module, args) -> args | None`` (with
        ``with_kwargs``: ``hook(module, args, kwargs) -> (args, kwargs) |
        None``) to run before ``forward``; ``prepend`` runs it first.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        >>> m(torch.ones(1))
        tensor([2.])
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Registers ``hook(module, args, output) -> output | None`` (with
        ``with_kwargs``: ``hook(module, args, kwargs, output)``) to run after
        ``forward``; ``always_call`` runs it even when ``forward`` raises.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_forward_hook(lambda mod, args, out: out + 1)
        >>> m(torch.zeros(1))
        tensor([1.])
        """
        handle = RemovableHandle(
            self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called]
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)  # type: ignore[attr-defined]
        return handle

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        forward_call = self.forward
        if not (
            self._backward_hooks
            or self._backward_pre_hooks
            or self._forward_hooks
            or self._forward_pre_hooks
            or _global_backward_pre_hooks
            or _global_backward_hooks
            or _global_forward_hooks
            or _global_forward_pre_hooks
        ):
            return forward_call(*args, **kwargs)
        result = None
        called_always_called_hooks: set[int] = set()

        def inner() -> Any:
            nonlocal result, args, kwargs
            backward_pre_hooks: list[Callable[..., Any]] = []
            full_backward_hooks: list[Callable[..., Any]] = []
            non_full_backward_hooks: list[Callable[..., Any]] = []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                backward_pre_hooks = self._get_backward_pre_hooks()
            if self._backward_hooks or _global_backward_hooks:
                full_backward_hooks, non_full_backward_hooks = self._get_backward_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    args_kwargs_result = hook(self, args, kwargs)
                    if args_kwargs_result is not None:
                        if isinstance(args_kwargs_result, tuple) and len(args_kwargs_result) == 2:
                            args, kwargs = args_kwargs_result
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {args_kwargs_result}."
                            )
                else:
                    args_result = hook(self, args)
                    if args_result is not None:
                        args = args_result if isinstance(args_result, tuple) else (args_result,)
            bw_hook = None
            if full_backward_hooks or backward_pre_hooks:
                bw_hook = BackwardHook(self, full_backward_hooks, backward_pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = forward_call(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                    called_always_called_hooks.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    hook_result = hook(self, args, kwargs, result)
                else:
                    hook_result = hook(self, args, result)
                if hook_result is not None:
                    result = hook_result
            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a tuple of Tensors "
                        f"but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)
            if non_full_backward_hooks:
                # A hook of the node that made the first tensor of the output.
                var = result
                while not isinstance(var, Tensor):
                    if isinstance(var, dict):
                        var = next(v for v in var.values() if isinstance(v, Tensor))
                    else:
                        var = var[0]
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in non_full_backward_hooks:
                        grad_fn.register_hook(_WrappedHook(hook, self))
                    self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
            return result

        try:
            return inner()
        except Exception:
            # The always_call forward hooks that did not run yet run now;
            # their own errors are only warned about.
            for hook_id, hook in _global_forward_hooks.items():
                if hook_id in _global_forward_hooks_always_called and hook_id not in called_always_called_hooks:
                    try:
                        hook_result = hook(self, args, result)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:
                        warnings.warn(
                            "global module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {str(e)}",
                            stacklevel=2,
                        )
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called_always_called_hooks:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook_result = hook(self, args, kwargs, result)
                        else:
                            hook_result = hook(self, args, result)
                        if hook_result is not None:
                            result = hook_result
                    except Exception as e:
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception "
                            f"that was silenced as another error was raised in forward: {str(e)}",
                            stacklevel=2,
                        )
            raise

    __call__: Callable[..., Any] = _call_impl

    # ------------------------------------------------------ attributes

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        if "_parameters" in self.__dict__:
            _parameters = self.__dict__["_parameters"]
            if name in _parameters:
                return _parameters[name]
        if "_buffers" in self.__dict__:
            _buffers = self.__dict__["_buffers"]
            if name in _buffers:
                return _buffers[name]
        if "_modules" in self.__dict__:
            modules = self.__dict__["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            value = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or None expected)"
                )
            value = _run_registration_hooks(_global_module_registration_hooks, self, name, value)
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            persistent = value.persistent if isinstance(value, Buffer) else name not in self._non_persistent_buffers_set
            if getattr(self.register_buffer, "__func__", None) is Module.register_buffer:
                self.register_buffer(name, value, persistent)
            elif "persistent" in inspect.signature(self.register_buffer).parameters:
                self.register_buffer(name, value, persistent)
            else:
                if not persistent:
                    raise RuntimeError(
                        "Registering a non-persistent buffer on a Module subclass that implements "
                        "register_buffer() without the persistent argument is not allowed."
                    )
                self.register_buffer(name, value)  # type: ignore[call-arg]
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    # ------------------------------------------------------------ state_dict

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, prefix, keep_vars)``, called before
        ``state_dict`` collects this module's entries.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: print("saving"))
        >>> _ = m.state_dict()
        saving
        """
        return _register_in(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, state_dict, prefix, local_metadata)``,
        called after ``state_dict`` collected this module's entries; it may
        change the dict in place and must return None.

        >>> import npgrad as torch
        >>> m = torch.nn.Linear(1, 1)
        >>> h = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
        >>> _ = m.state_dict()
        Traceback (most recent call last):
        RuntimeError: state_dict post-hook must return None
        """
        hook._from_public_api = True  # type: ignore[attr-defined]
        return _register_in(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return _register_in(self._state_dict_hooks, hook)

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """This module's own entries of its ``state_dict`` (not its
        submodules'); subclasses override it to save differently.

        >>> import npgrad as torch
        >>> d = {}
        >>> torch.nn.Linear(1, 1)._save_to_state_dict(d, "fc.", False)
        >>> list(d)
        ['fc.weight', 'fc.bias']
        """
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        """The parameters and persistent buffers of the module and its
        submodules by dotted name, detached unless ``keep_vars``; an
        ``OrderedDict`` with a ``_metadata`` attribute (module versions).

        >>> import npgrad as torch
        >>> net = torch.nn.Sequential(torch.nn.Linear(2, 1))
        >>> list(net.state_dict())
        ['0.weight', '0.bias']
        >>> net.state_dict(prefix="net.")["net.0.bias"].requires_grad
        False
        """
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        return _register_in(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, state_dict, prefix, local_metadata,
        strict, missing_keys, unexpected_keys, error_msgs)``, called before
        this module loads its entries.

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *rest: print("loading"))
        >>> m.load_state_dict({})
        loading
        <All keys matched successfully>
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Registers ``hook(module, incompatible_keys)``, called after the
        module and its submodules loaded; it may clear the key lists in place
        (and must return None).

        >>> import npgrad as torch
        >>> m = torch.nn.Identity()
        >>> h = m.register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.clear())
        >>> m.load_state_dict({"extra": torch.ones(1)})
        <All keys matched successfully>
        """
        return _register_in(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Loads this module's own entries (not its submodules'), recording
        missing and unexpected keys and size mismatches; subclasses override
        it to load differently.

        >>> import npgrad as torch
        >>> m, missing, unexpected, errors = torch.nn.Linear(1, 1), [], [], []
        >>> m._load_from_state_dict({"weight": torch.ones(1, 1)}, "", {}, True, missing, unexpected, errors)
        >>> missing, m.weight.item()
        (['bias'], 1.0)
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in (*self._parameters.items(), *persistent_buffers.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                    f"from checkpoint but received {type(input_param)}"
                )
                continue
            if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                    f"an exception occurred : {ex.args}."
                )
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix) :].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """Copies the entries of ``state_dict`` into the parameters and
        buffers (``assign=True``: the tensors become them). ``strict``:
        missing and unexpected keys are errors. Raises RuntimeError listing
        every problem; returns ``(missing_keys, unexpected_keys)``.

        >>> import npgrad as torch
        >>> a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.load_state_dict({"weight": a.weight}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local_state_dict: dict[str, Any], prefix: str = "") -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                        "expected to return new values, if incompatible_keys need to be modified,"
                        "it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected_keys))
                )
            if missing_keys:
                error_msgs.insert(
                    0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing_keys))
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(self.__class__.__name__, "\n\t".join(error_msgs))
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------ iteration

    def _named_members(
        self,
        get_members_fn: Callable[[Module], Any],
        prefix: str = "",
        recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:
        memo: set[Any] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of the module (and of its submodules when
        ``recurse``), each once.

        >>> import npgrad as torch
        >>> [p.shape for p in torch.nn.Linear(2, 3).parameters()]
        [torch.Size([3, 2]), torch.Size([3])]
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs; a parameter shared by several
        modules comes once unless ``remove_duplicate=False``.

        >>> import npgrad as torch
        >>> [n for n, _ in torch.nn.Sequential(torch.nn.Linear(1, 1)).named_parameters(prefix="net")]
        ['net.0.weight', 'net.0.bias']
        """
        yield from self._named_members(
            lambda module: module._parameters.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of the module (and of its submodules when
        ``recurse``).

        >>> import npgrad as torch
        >>> m = torch.nn.Module()
        >>> m.register_buffer("b", torch.zeros(1))
        >>> list(m.buffers())
        [tensor([0.])]
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs.

        >>> import npgrad as torch
        >>> m = torch.nn.Sequential(torch.nn.Module())
        >>> m[0].register_buffer("b", torch.zeros(1))
        >>> [n for n, _ in m.named_buffers()]
        ['0.b']
        """
        yield from self._named_members(
            lambda module: module._buffers.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        """The direct submodules, each once.

        >>> import npgrad as torch
        >>> list(torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh()).children())
        [ReLU(), Tanh()]
        """
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` of the direct submodules, each once.

        >>> import npgrad as torch
        >>> [n for n, _ in torch.nn.Sequential(torch.nn.ReLU()).named_children()]
        ['0']
        """
        memo: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """The module and all its submodules, depth first.

        >>> import npgrad as torch
        >>> [type(m).__name__ for m in torch.nn.Sequential(torch.nn.ReLU()).modules()]
        ['Sequential', 'ReLU']
        """
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for the module (named ``prefix``) and all
        its submodules.

        >>> import npgrad as torch
        >>> [n for n, _ in torch.nn.Sequential(torch.nn.Sequential(torch.nn.ReLU())).named_modules()]
        ['', '0', '0.0']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # --------------------------------------------------------- training state

    def train(self: T, mode: bool = True) -> T:
        """Sets training mode (``self.training``) on the module and its
        submodules; returns the module.

        >>> import npgrad as torch
        >>> torch.nn.Sequential(torch.nn.Dropout()).train(False)[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """``train(False)``.

        >>> import npgrad as torch
        >>> torch.nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Sets ``requires_grad`` of every parameter; returns the module.

        >>> import npgrad as torch
        >>> torch.nn.Linear(1, 1).requires_grad_(False).weight.requires_grad
        False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the ``.grad`` of every parameter: to None, or (with
        ``set_to_none=False``) to zeros, detached.

        >>> import npgrad as torch
        >>> m = torch.nn.Linear(1, 1)
        >>> m(torch.ones(1)).sum().backward()
        >>> m.zero_grad()
        >>> m.weight.grad is None
        True
        """
        _zero_grad(self.parameters(), set_to_none)

    # ---------------------------------------------------------------- repr

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The module's own part of its ``repr`` (its settings); empty here.

        >>> import npgrad as torch
        >>> torch.nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        extra_lines: list[str] = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def __dir__(self) -> list[str]:
        keys = [
            *dir(self.__class__),
            *self.__dict__.keys(),
            *self._parameters.keys(),
            *self._modules.keys(),
            *self._buffers.keys(),
        ]
        return sorted(key for key in keys if not key[0].isdigit())


def _parse_to_dtype(*args: Any, **kwargs: Any) -> Any:
    # The dtype of Module.to's forms (device, dtype, non_blocking) /
    # (dtype, non_blocking) / (tensor, non_blocking); devices are CPU only.
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(
            f"to() received an invalid combination of arguments - got unexpected keyword {next(iter(kwargs))!r}"
        )
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, _C.dtype):
            dtype = arg
    return dtype
