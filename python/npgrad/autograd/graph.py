"""``npgrad.autograd.graph``: the backward graph, its hooks and saved tensors.

Everything in ``torch.autograd.graph.__all__``, with torch's semantics. The
per-node and per-tensor work (running hooks, packing and unpacking saved
tensors, intercepting in-place writes) is native; this module holds the
context managers and the small amount of bookkeeping torch also keeps in
Python.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import weakref
from collections import defaultdict, deque
from typing import Any, Callable, Iterator, NamedTuple, Sequence

from .. import _C
from ..utils.hooks import RemovableHandle

__all__ = [
    "saved_tensors_hooks",
    "save_on_cpu",
    "disable_saved_tensors_hooks",
    "register_multi_grad_hook",
    "allow_mutation_on_saved_tensors",
    "Node",
    "GradientEdge",
    "get_gradient_edge",
    "increment_version",
]

log = logging.getLogger(__name__)


class Node(abc.ABC):
    """Abstract base of backward nodes; every native node type is a subclass.

    >>> import npgrad as torch
    >>> a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    >>> b = a.clone()
    >>> assert isinstance(b.grad_fn, torch.autograd.graph.Node)
    >>> print(b.grad_fn.name())
    CloneBackward0
    """

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``MulBackward0``."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One ``(node, input_nr)`` per forward input, in input order."""

    @abc.abstractmethod
    def metadata(self) -> dict[Any, Any]:
        """A dict stored on the node (the same dict on every access)."""

    @abc.abstractmethod
    def _register_hook_dict(self, tensor: Any) -> None: ...

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` after the node runs."""

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs) -> tuple | None`` before the node runs."""

    @classmethod
    def __subclasshook__(cls, C: type) -> bool:
        if cls is Node:
            if issubclass(C, _C._functions._NodeBase):
                return True
            try:
                from .function import BackwardCFunction  # custom Function nodes
            except ImportError:
                return NotImplemented  # type: ignore[return-value]
            if issubclass(C, BackwardCFunction):
                return True
        return NotImplemented  # type: ignore[return-value]


def _get_grad_fn_or_grad_acc(t: Any) -> Node:
    if isinstance(t, GradientEdge):
        return t.node
    if t.requires_grad and t.grad_fn is None:
        import npgrad

        with npgrad.enable_grad():
            node = t.view_as(t).grad_fn.next_functions[0][0]
    else:
        node = t.grad_fn
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class GradientEdge(NamedTuple):
    """An input slot of a node: ``(node, output_nr)``. ``ownership_token``
    may hold a node that keeps the graph alive."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The edge through which the gradient of ``tensor`` flows.

    ``grad(loss, get_gradient_edge(x))`` equals ``grad(loss, x)``.
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor "
            "that does not require gradients")
    return GradientEdge(_get_grad_fn_or_grad_acc(tensor), tensor.output_nr)


def increment_version(tensor: Any) -> None:
    """Bumps the version counter of ``tensor`` (or of each tensor in an
    iterable), as an in-place op would."""
    if isinstance(tensor, _C.Tensor):
        tensor = (tensor,)
    _C._increment_version(tensor)


class saved_tensors_hooks:
    """Pack/unpack hooks for every tensor saved for backward in its scope.

    ``pack_hook(tensor) -> Any`` runs when the tensor is saved;
    ``unpack_hook(packed) -> Tensor`` runs each time it is needed. Nestable:
    the innermost pair wins.

    >>> import npgrad as torch
    >>> def pack_hook(x):
    ...     print("Packing", x)
    ...     return x.detach()
    >>> def unpack_hook(x):
    ...     print("Unpacking", x)
    ...     return x
    >>> a = torch.ones(5, requires_grad=True)
    >>> b = torch.ones(5, requires_grad=True) * 2
    >>> with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    ...     y = a * b
    Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)
    Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)
    >>> y.sum().backward()
    Unpacking tensor([1., 1., 1., 1., 1.])
    Unpacking tensor([2., 2., 2., 2., 2.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _C._autograd._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _C._autograd._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saves tensors on the CPU and moves them back to their device for
    backward. npgrad tensors always live on the CPU, so this keeps them as
    they are (``pin_memory`` has nothing to pin)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Any) -> tuple[Any, Any]:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple[Any, Any]) -> Any:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Disables saved-tensor hooks in its scope: using them raises
    ``RuntimeError(error_message)``. Restores an outer message on exit."""
    maybe_prev_message = None
    try:
        maybe_prev_message = _C._autograd._saved_tensors_hooks_get_disabled_error_message()
        _C._autograd._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        if maybe_prev_message is None:
            _C._autograd._saved_tensors_hooks_enable()
        else:
            _C._autograd._saved_tensors_hooks_disable(maybe_prev_message)


class _MultiHandle(RemovableHandle):
    handles: tuple[RemovableHandle, ...]

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[RemovableHandle, ...]:  # type: ignore[override]
        return self.handles

    def __setstate__(self, state: tuple[RemovableHandle, ...]) -> None:  # type: ignore[override]
        self.handles = state


def register_multi_grad_hook(
    tensors: Sequence[Any],
    fn: Callable[..., None],
    *,
    mode: str = "all",
) -> RemovableHandle:
    """Calls ``fn`` once per backward pass with the gradients of ``tensors``.

    ``mode="all"``: after the gradient of every tensor this pass will reach
    has been computed, ``fn(grads)`` with ``None`` for the others.
    ``mode="any"``: ``fn(grad)`` with the first gradient computed.

    Deviation from torch (its issue #131753): ``"all"`` also works under
    ``autograd.grad`` when some tensors are leaves given as ``inputs``.
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "all":
        # The counting per graph task is native (npgrad._C._multi_grad_hooks).
        grad_fns = list(map(_get_grad_fn_or_grad_acc, tensors))
        hooks = _C._multi_grad_hooks(grad_fns, fn, "all", len(tensors))
        handles = tuple(t.register_hook(h) for t, h in zip(tensors, hooks))
    else:
        chosen = [t for t in tensors if t.requires_grad]
        hooks = _C._multi_grad_hooks([], fn, "any", len(chosen))
        handles = tuple(t.register_hook(h) for t, h in zip(chosen, hooks))
    return _MultiHandle(handles)


# ---------------------------------------------- allow_mutation_on_saved_tensors
#
# Saved tensors are packed as a handle and recorded under (storage, version),
# where "storage" is the version counter every alias of the data shares.
# Right before any in-place op writes (the native mutation path calls the
# observer), each saved original with that (storage, version) is cloned, and
# unpacking returns the clone: backward sees the values from save time.

_allow_mutation_enabled = False


class _Handle:
    pass


class _AllowMutationOnSavedContext:
    """The object ``allow_mutation_on_saved_tensors`` yields."""

    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary[_Handle, Any] = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary[_Handle, Any] = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary[Any, _Handle] = weakref.WeakValueDictionary()
        self.sid_to_tid: dict[Any, set[Any]] = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _sid(t: Any) -> tuple[int, int]:
    return (t._storage_id, t._version)


def _tid(t: Any) -> tuple[int, int, int]:
    return (id(t), t._storage_id, t._version)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Lets tensors saved for backward be modified in place in its scope:
    the saved value is cloned before the write, so backward still sees it.

    >>> import npgrad as torch
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = torch.rand(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b**2).sum()
    ...     b.sin_()
    ...     out.sum().backward()
    """
    global _allow_mutation_enabled
    if _allow_mutation_enabled:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack_hook(t: Any) -> _Handle:
        tid = _tid(t)
        ctx.sid_to_tid[_sid(t)].add(tid)
        handle = ctx.tid_to_weakhandle.get(tid)
        if handle is None:
            handle = _Handle()
            ctx.tid_to_weakhandle[tid] = handle
            ctx.original[handle] = t
        return handle

    def unpack_hook(handle: _Handle) -> Any:
        error_msg = (
            "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
            "in which the graph was originally recorded.")
        assert _allow_mutation_enabled, error_msg
        if handle in ctx.cloned:
            return ctx.cloned[handle]
        assert handle in ctx.original, error_msg
        return ctx.original[handle]

    def before_write(t: Any) -> None:
        for tid in ctx.sid_to_tid.get(_sid(t), ()):
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:
                continue  # freed, or already cloned
            import npgrad

            with npgrad.no_grad():
                ctx.cloned[handle] = ctx.original[handle].clone()
            del ctx.original[handle]

    _allow_mutation_enabled = True
    _C._set_inplace_observer(before_write)
    try:
        with saved_tensors_hooks(pack_hook, unpack_hook):
            yield ctx
    finally:
        _C._set_inplace_observer(None)
        ctx.clear()
        _allow_mutation_enabled = False


# ------------------------------------------------------------- debug logging

_DTYPE_ABBRS = {"torch.float32": "f32", "torch.float64": "f64", "torch.int64": "i64", "torch.bool": "b8"}


def _register_logging_hooks_on_whole_graph(t_outputs: Sequence[Any]) -> Callable[[], None]:
    grad_fns = list(map(_get_grad_fn_or_grad_acc, t_outputs))

    def iter_graph(roots: list[Node]) -> Iterator[Node]:
        seen: set[Node] = set()
        q: deque[Node] = deque()
        for node in roots:
            if node is not None and node not in seen:
                seen.add(node)
                q.append(node)
        while q:
            node = q.popleft()
            for fn, _ in node.next_functions:
                if fn is None or fn in seen:
                    continue
                seen.add(fn)
                q.append(fn)
            yield node

    def fmt(t: Any) -> str:
        if t is None:
            return "None"
        return f"{_DTYPE_ABBRS[repr(t.dtype)]}[{', '.join(map(str, t.shape))}]"

    def prehook(grad_outputs: Sequence[Any]) -> None:
        node = _C._current_autograd_node()
        log.debug(f"Executing: {node} with grad_outputs: [{','.join(fmt(t) for t in grad_outputs)}]")

    handles = [node.register_prehook(prehook) for node in iter_graph(grad_fns)]

    def unregister_hooks() -> None:
        for handle in handles:
            handle.remove()

    return unregister_hooks


def _engine_run_backward(t_outputs: Sequence[Any], *args: Any) -> Any:
    attach_logging_hooks = log.getEffectiveLevel() <= logging.DEBUG
    if attach_logging_hooks:
        unregister_hooks = _register_logging_hooks_on_whole_graph(t_outputs)
    try:
        return _C._run_backward(t_outputs, *args, GradientEdge)
    finally:
        if attach_logging_hooks:
            unregister_hooks()

