"""``npgrad.autograd.graph``: the backward graph, its hooks and saved tensors.

Everything in ``torch.autograd.graph.__all__``, with torch's semantics, and
npgrad's own additions (torch has none): ``current_saved_tensor`` (what a pack
hook is packing), ``saved_tensors`` and ``saved_tensors_summary`` (what a
graph's nodes have saved), with ``SavedTensorInfo``, and
``lock_saved_tensors`` (saved buffers read-only while saved). The
per-node and per-tensor work (running hooks, packing and unpacking saved
tensors, intercepting in-place writes) is native; this module holds the
context managers and the small amount of bookkeeping torch also keeps in
Python.

PYTEST_DONT_REWRITE: npgrad registers a pytest plugin, so pytest would rewrite
the asserts of every module of the package; the ``AssertionError`` messages of
``allow_mutation_on_saved_tensors`` must stay torch's.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import weakref
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from .. import _C
from ..utils.hooks import RemovableHandle
from ._saved_tensor_info import SavedTensorInfo, current_saved_tensor, saved_tensors, saved_tensors_summary
from .function import BackwardCFunction
from .grad_mode import enable_grad, no_grad

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
    # npgrad's own (torch has none)
    "SavedTensorInfo",
    "current_saved_tensor",
    "saved_tensors",
    "saved_tensors_summary",
    "lock_saved_tensors",
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
        """The node's name, e.g. ``MulBackward0``.

        >>> import npgrad as torch
        >>> a = torch.tensor([1.0], requires_grad=True)
        >>> (a * 2).grad_fn.name()
        'MulBackward0'
        """

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """One ``(node, input_nr)`` per forward input, in input order:
        the node that receives the gradient of that input, and which of its
        inputs it arrives at; ``(None, 0)`` for an input that needs none.

        >>> import npgrad as torch
        >>> a = torch.tensor([1.0], requires_grad=True)
        >>> b = (a.exp() * 2).grad_fn
        >>> b.next_functions
        ((<ExpBackward0 object at 0x...>, 0), (None, 0))
        >>> b.next_functions[0][0].next_functions
        ((<AccumulateGrad object at 0x...>, 0),)
        """

    # Deviation from torch: torch declares metadata as an abstract method,
    # but every node serves it as a property (a dict), so type checkers
    # rejected `node.metadata[key]`; here it is an abstract property.
    @property
    @abc.abstractmethod
    def metadata(self) -> dict[Any, Any]:
        """A dict stored on the node: the same dict on every access, free
        for annotations (anomaly mode keeps the forward stack there).

        >>> import npgrad as torch
        >>> b = torch.tensor([1.0], requires_grad=True).exp()
        >>> b.grad_fn.metadata["note"] = "from the tour"
        >>> b.grad_fn.metadata
        {'note': 'from the tour'}
        """

    # Declared for type checkers only (torch has an abstract property): one
    # entry per gradient the node receives, checked against what arrives.
    _input_metadata: tuple[Any, ...]

    @abc.abstractmethod
    def _register_hook_dict(self, tensor: Any) -> None:
        """Installs ``tensor._backward_hooks`` (the dict of its
        ``register_hook`` hooks) as a tensor pre-hook of this node, for the
        output ``tensor.output_nr``. ``Tensor.register_hook`` calls it when a
        non-leaf gets its first hook.

        >>> import npgrad as torch
        >>> from collections import OrderedDict
        >>> a = torch.tensor([1.0], requires_grad=True)
        >>> b = a * 2
        >>> b._backward_hooks = OrderedDict({0: lambda g: g * 10})
        >>> b.grad_fn._register_hook_dict(b)
        >>> b.sum().backward()
        >>> a.grad
        tensor([20.])
        """

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Registers ``fn(grad_inputs, grad_outputs) -> tuple | None``, run
        after the node has computed the gradients of its inputs
        (``grad_inputs``) from those of its outputs (``grad_outputs``). A
        returned tuple replaces ``grad_inputs``.

        >>> import npgrad as torch
        >>> a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
        >>> b = a.clone()
        >>> handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
        >>> b.sum().backward(retain_graph=True)
        >>> a.grad
        tensor([2., 2., 2.])
        >>> handle.remove()  # removes the hook
        >>> a.grad = None
        >>> b.sum().backward(retain_graph=True)
        >>> a.grad
        tensor([1., 1., 1.])
        """

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Registers ``fn(grad_outputs) -> tuple | None``, run before the
        node; a returned tuple replaces ``grad_outputs``.

        >>> import npgrad as torch
        >>> a = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
        >>> b = a.clone()
        >>> handle = b.grad_fn.register_prehook(lambda gO: (gO[0] * 2,))
        >>> b.sum().backward(retain_graph=True)
        >>> a.grad
        tensor([2., 2., 2.])
        >>> handle.remove()
        >>> a.grad = None
        >>> b.sum().backward(retain_graph=True)
        >>> a.grad
        tensor([1., 1., 1.])
        """

    @classmethod
    def __subclasshook__(cls, C: type) -> bool:
        if cls is Node:
            if issubclass(C, _C._functions._NodeBase):
                return True
            if issubclass(C, BackwardCFunction):  # custom Function nodes
                return True
        return NotImplemented  # type: ignore[no-any-return]


def _get_grad_fn_or_grad_acc(t: Any) -> Node:
    if isinstance(t, GradientEdge):
        return t.node
    node: Node | None
    if t.requires_grad and t.grad_fn is None:
        with enable_grad():
            node = t.view_as(t).grad_fn.next_functions[0][0]
    else:
        node = t.grad_fn
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class GradientEdge(NamedTuple):
    """An input slot of a node: ``(node, output_nr)``. ``ownership_token``
    may hold a node that keeps the graph alive.

    ``autograd.grad`` and ``backward`` accept gradient edges among their
    ``inputs`` and ``outputs``, so a gradient can be asked for at a point of
    the graph without holding the tensor that flows there.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 3
    >>> edge = torch.autograd.graph.GradientEdge(y.grad_fn, 0)
    >>> edge.node.name(), edge.output_nr
    ('MulBackward0', 0)
    >>> torch.autograd.grad(y.sum(), edge)
    (tensor([1., 1.]),)
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor: Any) -> GradientEdge:
    """The edge through which the gradient of ``tensor`` flows: its
    ``grad_fn`` (or, for a leaf, its ``AccumulateGrad`` node) and its
    ``output_nr``. ``grad(loss, get_gradient_edge(x))`` equals
    ``grad(loss, x)``, and the edge stays valid if ``x`` is later modified
    in place.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.exp()
    >>> edge = torch.autograd.graph.get_gradient_edge(y)
    >>> edge.node is y.grad_fn
    True
    >>> loss = (y * 2).sum()
    >>> torch.autograd.grad(loss, edge)
    (tensor([2., 2.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node = _get_grad_fn_or_grad_acc(tensor)
    # A custom Function's node object (its ctx) holds the native node only
    # weakly: the tensor's grad_fn owns it. As in torch, the edge keeps the
    # graph alive after the tensor is gone through a view node whose next
    # edge is that node (the ownership token).
    token = None
    if isinstance(node, _C._FunctionBase):
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor.output_nr, ownership_token=token)


def increment_version(tensor: Any) -> None:
    """Bumps the version counter of ``tensor`` (or of each tensor in an
    iterable), as an in-place op would: for code that modifies a tensor's
    memory behind autograd's back (through ``.numpy()``, say), so that a
    saved copy is detected as stale.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 1
    >>> z = y * y
    >>> y._version
    0
    >>> torch.autograd.graph.increment_version(y)
    >>> y._version
    1
    >>> z.sum().backward()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: ...
    """
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
    Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)
    Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)
    >>> y.sum().backward()
    Unpacking tensor([2., 2., 2., 2., 2.])
    Unpacking tensor([1., 1., 1., 1., 1.])

    Three keyword arguments are npgrad's own (torch has none of them); without
    them the hooks behave exactly as torch's.

    ``compose=True``: the pair composes with the pairs it is nested in instead
    of replacing them. Its ``pack_hook`` must return a tensor, which is passed
    on to the enclosing pair's ``pack_hook`` (and so on, out to the first pair
    entered without ``compose``); at unpack the enclosing ``unpack_hook`` runs
    first and this pair's ``unpack_hook`` gets its result. For instance,
    quantize inside, offload outside:

    >>> import npgrad as torch
    >>> log = []
    >>> def to_half(t):
    ...     log.append("quantize")
    ...     return t.to(torch.float16)
    >>> def to_float(t):
    ...     log.append("dequantize")
    ...     return t.to(torch.float32)
    >>> def offload(t):
    ...     log.append("offload")
    ...     return t.numpy().copy()
    >>> def load(array):
    ...     log.append("load")
    ...     return torch.from_numpy(array)
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(offload, load):
    ...     with torch.autograd.graph.saved_tensors_hooks(to_half, to_float, compose=True):
    ...         y = x.exp()
    >>> y.sum().backward()
    >>> log
    ['quantize', 'offload', 'load', 'dequantize']
    >>> x.grad
    tensor([2.7188, 7.3906])

    ``prefetch=fn``: during backward the engine calls ``fn(packed)`` for each
    object ``pack_hook`` returned, before ``unpack_hook`` gets it: once per
    saved tensor and backward pass, at least one node ahead of the node that
    unpacks it (the first node of a pass: just before it runs; nodes that
    queue nothing, such as ``AccumulateGrad``, are looked past), in the order
    the nodes run. An offloading hook can start loading there, on another
    thread. Only the payloads of the pass's own nodes are prefetched: one that
    a hook unpacks for a node outside the pass (the inputs non-reentrant
    checkpoint saves for its recomputation) is not. ``fn`` runs on the thread of the backward pass and never while
    the engine holds a lock; an exception it raises ends the pass and reaches
    the caller. With ``compose=True`` inside another pair, the enclosing pair
    keeps the payload: give ``prefetch`` to the outermost pair.

    >>> import npgrad as torch
    >>> log = []
    >>> def pack(t):
    ...     return t.detach()
    >>> def unpack(t):
    ...     log.append(("unpack", round(t.item(), 3)))
    ...     return t
    >>> def prefetch(t):
    ...     log.append(("prefetch", round(t.item(), 3)))
    >>> x = torch.tensor([0.0], requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
    ...     y = x.exp().exp()  # each exp saves its result: 1.0, then e
    >>> y.backward()
    >>> log
    [('prefetch', 2.718), ('prefetch', 1.0), ('unpack', 2.718), ('unpack', 1.0)]

    ``dedup=True``: tensors saved in the scope that share one buffer (views of
    one tensor, a tensor saved by several nodes) are packed once per buffer.
    ``pack_hook`` then receives a tensor over the whole buffer (in the shape
    and strides of the array that holds the memory, without history), and
    ``unpack_hook`` must return a tensor of that shape and dtype; each saved
    tensor is rebuilt as its view of it. ``unpack_hook`` runs once per payload
    per backward pass (each read outside a pass unpacks), ``prefetch`` at most
    once. A buffer written in place between two saves is packed again, and,
    unlike plain hooks (which, as torch's, check no versions), unpack raises
    torch's "modified by an inplace operation" error for a saved tensor
    written in place since it was saved. Inside ``pack_hook``,
    :func:`current_saved_tensor` describes the saved tensor whose save packs
    the buffer. Pairs nested inside with ``compose=True`` run per saved tensor
    before it; pairs it composes with run once per buffer. A small view of a
    large buffer costs the whole buffer.

    >>> import npgrad as torch
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(tuple(t.shape))
    ...     return t.numpy().copy()
    >>> x = torch.ones(2, 6, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(pack, torch.from_numpy, dedup=True):
    ...     qkv = x * 2
    ...     q, k, v = qkv.chunk(3, dim=1)  # three views of one buffer
    ...     y = (q * k * v).sum()  # saves q, k, v, and q * k
    >>> packed  # q, k, v share one pack; q * k is a buffer of its own
    [(2, 6), (2, 2)]
    >>> y.backward()
    >>> x.grad
    tensor([[8., 8., 8., 8., 8., 8.],
            [8., 8., 8., 8., 8., 8.]])
    """

    def __init__(
        self,
        pack_hook: Callable[[Any], Any],
        unpack_hook: Callable[[Any], Any],
        *,
        compose: bool = False,
        prefetch: Callable[[Any], object] | None = None,
        dedup: bool = False,
    ) -> None:
        if prefetch is not None and not callable(prefetch):
            raise TypeError(f"saved_tensors_hooks: prefetch must be callable or None, not {type(prefetch).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self.compose = bool(compose)
        self.prefetch = prefetch
        self.dedup = bool(dedup)

    def __enter__(self) -> None:
        if self.compose or self.prefetch is not None or self.dedup:
            _C._autograd._push_saved_tensors_hooks_with_options(
                self.pack_hook, self.unpack_hook, compose=self.compose, prefetch=self.prefetch, dedup=self.dedup
            )
        else:
            _C._autograd._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _C._autograd._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saves tensors on the CPU and moves them back to their device for
    backward. npgrad tensors always live on the CPU, so this keeps them as
    they are (``pin_memory`` has nothing to pin); it exists so that code
    written for torch runs unchanged.

    >>> import npgrad as torch
    >>> a = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.save_on_cpu(pin_memory=True):
    ...     y = (a * a).sum()
    >>> y.backward()
    >>> a.grad
    tensor([2., 4.])
    """

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
    ``RuntimeError(error_message)``. Restores an outer message on exit.

    >>> import npgrad as torch
    >>> message = "saved tensors default hooks are disabled"
    >>> with torch.autograd.graph.disable_saved_tensors_hooks(message):
    ...     with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
    ...         pass
    Traceback (most recent call last):
    RuntimeError: saved tensors default hooks are disabled
    """
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


class lock_saved_tensors:
    """Locks the memory of every tensor saved for backward in its scope
    (npgrad's own; torch has none, and cannot lock its storage).

    While a tensor saved under it is still saved, nothing may write its
    memory: an npgrad in-place op on it, or on any view or ``detach()`` of it,
    raises a ``RuntimeError`` at the write, naming the node that saved it, and
    leaves the tensor and its version unchanged; its NumPy array is read-only,
    so a NumPy write through ``t.numpy()`` raises NumPy's "assignment
    destination is read-only". Without the lock such a write goes unnoticed
    until backward fails (or, for a write through NumPy, which does not bump
    the version, computes a wrong gradient).

    The lock ends when the graph lets the tensor go: after backward (unless
    ``retain_graph=True``) or when the graph is freed. The array is then
    writeable again, unless it was read-only before. Locks are counted per
    buffer, so a buffer saved by several nodes is released by the last one.
    Nestable; the mode is thread-local, like :class:`saved_tensors_hooks`.
    A tensor packed by a default pack hook is not locked (the hook decides
    what is kept). NumPy arrays obtained from another view of the buffer
    before the lock stay writeable: NumPy cannot revoke that.

    >>> import npgrad as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> x = torch.ones(3)
    >>> with torch.autograd.graph.lock_saved_tensors():
    ...     y = (w * x).sum()
    >>> x.add_(1)
    Traceback (most recent call last):
    RuntimeError: This tensor, or a view of its memory, is saved by MulBackward0 under lock_saved_tensors() and cannot be modified in place until the graph releases it (after backward, or when the graph is freed)
    >>> x.numpy()[0] = 5.0
    Traceback (most recent call last):
    ValueError: assignment destination is read-only
    >>> y.backward()
    >>> x.add_(1)
    tensor([2., 2., 2.])
    """

    def __enter__(self) -> None:
        self._previous = _C._set_lock_saved_tensors(True)

    def __exit__(self, *args: object) -> None:
        _C._set_lock_saved_tensors(self._previous)


def _multi_grad_inner_hook(state: Any, idx: int) -> Callable[[Any], None]:
    def inner_hook(grad: Any) -> None:
        state._on_grad(idx, grad)

    return inner_hook


class _MultiHandle(RemovableHandle):
    handles: tuple[RemovableHandle, ...]

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[RemovableHandle, ...]:
        return self.handles

    def __setstate__(self, state: tuple[RemovableHandle, ...]) -> None:
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

    Returns a handle whose ``remove()`` unregisters every per-tensor hook.

    Deviation from torch (its issue #131753): ``"all"`` also works under
    ``autograd.grad`` when some tensors are leaves given as ``inputs``.

    >>> import npgrad as torch
    >>> a = torch.tensor([1.0], requires_grad=True)
    >>> b = torch.tensor([2.0], requires_grad=True)
    >>> c = a * b
    >>> def fn(grads):
    ...     print([g is not None for g in grads])
    >>> handle = torch.autograd.graph.register_multi_grad_hook((a, b, c), fn)
    >>> c.sum().backward(retain_graph=True, inputs=(a,))
    [True, False, True]
    >>> c.sum().backward(retain_graph=True)
    [True, True, True]
    >>> handle.remove()
    """
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    # The counting per graph task is native (npgrad._C._MultiGradState); each
    # tensor's hook is a small closure over the state, so Python's GC sees fn.
    if mode == "all":
        chosen = list(tensors)
        for t in chosen:  # torch's error for a non-tensor (from _get_grad_fn_or_grad_acc)
            t.requires_grad  # noqa: B018
    else:
        chosen = [t for t in tensors if t.requires_grad]
    state = _C._MultiGradState(chosen, fn, mode)
    handles = tuple(t.register_hook(_multi_grad_inner_hook(state, i)) for i, t in enumerate(chosen))
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
    ...     a = torch.ones(2, 3, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b**2).sum()
    ...     b.sin_()
    ...     out.sum().backward()
    tensor([[0.8415, 0.8415, 0.8415],
            [0.8415, 0.8415, 0.8415]], grad_fn=<SinBackward0>)
    >>> a.grad  # d(b**2)/da with b's value before sin_: 2 * 1
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
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
            "in which the graph was originally recorded."
        )
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
            with no_grad():
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
        return f"{t.dtype._log_abbrev}[{', '.join(map(str, t.shape))}]"

    def prehook(grad_outputs: Sequence[Any]) -> None:
        node = _C._current_autograd_node()
        log.debug(f"Executing: {node} with grad_outputs: [{','.join(fmt(t) for t in grad_outputs)}]")

    handles = [node.register_prehook(prehook) for node in iter_graph(grad_fns)]

    def unregister_hooks() -> None:
        for handle in handles:
            handle.remove()

    return unregister_hooks


def _engine_run_backward(t_outputs: Sequence[Any], *args: Any) -> Any:
    attach_logging_hooks = log.isEnabledFor(logging.DEBUG)  # cached by logging
    if attach_logging_hooks:
        unregister_hooks = _register_logging_hooks_on_whole_graph(t_outputs)
    try:
        return _C._run_backward(t_outputs, *args, GradientEdge)  # type: ignore[call-arg]
    finally:
        if attach_logging_hooks:
            unregister_hooks()
