"""``npgrad.utils.checkpoint``: activation checkpointing, as ``torch.utils.checkpoint``.

``checkpoint(function, *args, use_reentrant=...)`` runs ``function`` without
keeping the tensors its backward needs; backward recomputes them by running
``function`` again on the saved inputs (with the RNG state of the forward,
so dropout draws the same mask). Gradients are those of the plain run.

Two implementations, as in torch:

- ``use_reentrant=False`` (recommended): the forward runs under
  ``saved_tensors_hooks`` that save a small holder instead of each tensor;
  the first unpack in backward recomputes the function under hooks that fill
  the holders. Nests, works with ``autograd.grad`` and
  ``backward(inputs=...)``, stops the recomputation as soon as every needed
  tensor is back (``set_checkpoint_early_stop``), and checks that the
  recomputation saved the same tensors (``determinism_check``).
- ``use_reentrant=True``: a custom ``autograd.Function``
  (``CheckpointFunction``) whose backward recomputes the function and runs a
  nested backward through it; refused inside ``autograd.grad`` and
  ``backward(inputs=...)``.

``debug=True`` (or ``set_checkpoint_debug_enabled(True)``): when the
recomputation does not match the forward, the ``CheckpointError`` is torch's
debug message, with the runs' logs in its layout (1. stack traces of the
original forward, 2. of the recomputation, 3. the two logs, 4. the error).
npgrad has no dispatcher, so where torch logs each ATen operator
(``$1: f32[2] = torch._ops.aten.sin.default($0)``) with its Python and C++
stack, npgrad logs each backward node the run created (``SinBackward0``), in
creation order, with the Python stack where it was created (anomaly mode's
``metadata["traceback_"]``, innermost frame first, as torch prints them). The
nodes are those reachable from the tensors the run saved and from its outputs:
an op that records no node (a ``detach``, a no-grad op) or whose node nothing
saved or returned does not appear.

Not available: the device, autocast and selective-checkpointing helpers
(npgrad has only the CPU and no dispatcher).

>>> import npgrad as torch
>>> from npgrad.utils.checkpoint import checkpoint
>>> x = torch.tensor([0.0, 1.0], requires_grad=True)
>>> y = checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
>>> y.sum().backward()
>>> x.grad
tensor([1.0000, 1.2534])
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, NoReturn

from .. import _C
from .._creation import empty
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..random import fork_rng, get_rng_state, set_rng_state

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "set_checkpoint_debug_enabled",
    "GraphExecGroup",
]

_DEFAULT_DETERMINISM_MODE = "default"

_checkpoint_debug_enabled: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Overrides the ``debug`` argument of every ``checkpoint`` call in its
    scope (``None``: each call's own value).

    With ``True``, a non-reentrant checkpoint whose recomputation does not match
    its forward raises the ``CheckpointError`` with both runs' logs (see the
    module docstring).

    >>> import npgrad as torch
    >>> from npgrad.utils import checkpoint as cp
    >>> x = torch.ones(2, requires_grad=True)
    >>> with cp.set_checkpoint_debug_enabled(False):
    ...     y = cp.checkpoint(torch.sin, x, use_reentrant=False, debug=True)
    >>> y.grad_fn.name()
    'SinBackward0'
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """A copy of the tuple ``inputs`` with each tensor detached, keeping its
    ``requires_grad``; other values are kept as they are.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import detach_variable
    >>> a = torch.ones(1, requires_grad=True) * 2
    >>> d, n = detach_variable((a, 3))
    >>> d.grad_fn is None, d.requires_grad, n
    (True, True, 3)
    """
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, _C.Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warns when no tensor of ``inputs`` requires grad (a reentrant
    checkpoint of them would have no gradient to compute).

    >>> import npgrad as torch
    >>> import warnings
    >>> from npgrad.utils.checkpoint import check_backward_validity
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     check_backward_validity([torch.ones(1), 2])
    >>> str(w[0].message)
    'None of the inputs have requires_grad=True. Gradients will be None'
    """
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _C.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def noop_context_fn() -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """The default ``context_fn`` of ``checkpoint``: two null contexts.

    >>> from npgrad.utils.checkpoint import noop_context_fn
    >>> forward_ctx, recompute_ctx = noop_context_fn()
    >>> with forward_ctx:
    ...     pass
    """
    return contextlib.nullcontext(), contextlib.nullcontext()


# ------------------------------------------------------------------ reentrant


class CheckpointFunction(Function):
    """The reentrant checkpoint (``use_reentrant=True``): ``forward`` runs
    ``run_function`` under ``no_grad`` and saves only the inputs; ``backward``
    reruns it with grad enabled (and the forward's RNG state) on detached
    copies of the inputs, then backpropagates through that graph with a
    nested ``autograd.backward``. Its node is ``CheckpointFunctionBackward``.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import CheckpointFunction
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = CheckpointFunction.apply(lambda t: t**2, True, x)
    >>> y.grad_fn.name()
    'CheckpointFunctionBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        # Non-tensor inputs are kept on ctx; tensors are saved for backward
        # and put back at their positions there.
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, _C.Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        if not _C._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible"
                " with .grad() or passing an `inputs` parameter to .backward()."
                " To resolve this error, you can either set use_reentrant=False,"
                " or call .backward() without passing the `inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, _C.Tensor):
            outputs = (outputs,)
        # Backward through the outputs that require grad only.
        outputs_with_grad = []
        args_with_grad = []
        for out, grad in zip(outputs, args):
            if isinstance(out, _C.Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..autograd import backward

        backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, _C.Tensor) else None for inp in detached_inputs)
        return (None, None, *grads)


# -------------------------------------------------------------- non-reentrant
#
# Note [Non-reentrant checkpoint] (torch's Note [Nestable Checkpoint]):
#
# - The forward runs under _checkpoint_hook: each tensor an op saves is
#   replaced by a _Holder, and the frame keeps a weak reference to it (and
#   the tensor's metadata for the determinism check).
# - The function's inputs are saved by a no-op Function (_NoopSaveInputs),
#   so that an enclosing checkpoint's hooks see them as tensors it must
#   recompute (nesting: recomputing an inner checkpoint recomputes the
#   outer ones first).
# - The first unpack of a backward pass (one graph task) reruns the function
#   under _recomputation_hook, which maps the i-th tensor saved in the rerun
#   to the i-th holder, under a fresh _Handle per pass. Each unpack returns
#   the recomputed tensor and drops the handle, so recomputed tensors live
#   only until used, even with retain_graph=True; a later pass recomputes.
# - Early stop: the rerun is abandoned (_StopRecomputationError) once it has
#   saved as many tensors as the forward did.
# - Holders of a freed graph are gone (weak references), so are their
#   entries in `recomputed` (a WeakKeyDictionary keyed by handle).

_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints created in its scope stop their
    recomputation as soon as every needed tensor is back (default: they
    do). Only the forward needs to run in the scope.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    >>> def f(t):
    ...     y = t.sin()
    ...     print("recomputed to the end")
    ...     return y
    >>> x = torch.ones(2, requires_grad=True)
    >>> with set_checkpoint_early_stop(False):
    ...     y = checkpoint(f, x, use_reentrant=False)
    recomputed to the end
    >>> y.sum().backward()
    recomputed to the end
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


class CheckpointError(RuntimeError):
    """Raised when the recomputation of a non-reentrant checkpoint does not
    match its forward (other tensors saved, or a tensor unpacked twice).

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import CheckpointError
    >>> issubclass(CheckpointError, RuntimeError)
    True
    """


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def _internal_error() -> NoReturn:
    raise AssertionError(
        "Something went unexpectedly wrong in activation checkpoint. "
        "Please report this bug by filing an issue to PyTorch."
    )


def _internal_assert(cond: bool) -> None:
    if not cond:
        _internal_error()


def _default_meta_extractor(x: Any) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict[str, Callable[[Any], Any]] = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _Handle:
    pass


class _Holder:
    def __init__(self) -> None:
        self.handles: dict[Hashable, _Handle | None] = {}


class _NoopSaveInputs(Function):
    """Saves the checkpoint's inputs as saved tensors of a node that never
    runs, so that an enclosing checkpoint manages them (nesting)."""

    @staticmethod
    def forward(*args: Any) -> Any:
        return empty((0,))

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        # inputs[0] is a dummy tensor that requires grad, so that a node
        # exists; it is not saved.
        args = inputs[1:]
        ctx.tensor_indices = [i for i, x in enumerate(args) if isinstance(x, _C.Tensor)]
        ctx.inputs = [None if isinstance(x, _C.Tensor) else x for x in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise AssertionError("Did not expect to backward on this graph")


def _saved_inputs(input_saver: Any) -> list[Any]:
    ctx = input_saver.grad_fn
    args = list(ctx.inputs)
    for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
        args[i] = tensor
    return args


class _CheckpointFrame:
    def __init__(self, recompute_fn: Callable[..., None], early_stop: bool, metadata_fn: Callable[[Any], Any]) -> None:
        self.recompute_fn = recompute_fn
        self.input_saver: Any = None
        self.weak_holders: list[weakref.ref[_Holder]] = []
        # Per graph task: handle -> recomputed tensor. Weak keys: the entry
        # goes with the holder's handle (see the Note).
        self.recomputed: defaultdict[Hashable, weakref.WeakKeyDictionary[_Handle, Any]] = defaultdict(
            weakref.WeakKeyDictionary
        )
        self.recomp_counter: defaultdict[Hashable, int] = defaultdict(int)
        self.is_recomputed: defaultdict[Hashable, bool] = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas: list[Any] = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.debug_logs: _DebugLogs | None = None

    def check_recomputed_tensors_match(self, gid: Hashable) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}"
            )
        mismatched = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            handle = holder.handles.get(gid)
            if handle is None or handle not in self.recomputed[gid]:
                _internal_error()
            x_meta = self.x_metadatas[idx]
            recomputed_meta = self.metadata_fn(self.recomputed[gid][handle])
            if x_meta != recomputed_meta:
                mismatched.append((idx, x_meta, recomputed_meta))
        if mismatched:
            mismatched_tensors = "".join(
                f"tensor at position {idx}:\nsaved metadata: {x_meta}\nrecomputed metadata: {recomputed_meta}\n"
                for idx, x_meta, recomputed_meta in mismatched
            )
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{mismatched_tensors}.\n"
                f"{_debug_tip_msg}"
            )


class _StopRecomputationError(Exception):
    pass


_checkpoint_error_template = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""

_STACK_ENTRY = re.compile(r'File "(?P<file>.*)", line (?P<line>\d+), in (?P<name>.*)')


class _RunLog:
    """The backward nodes one run (the forward or a recomputation) created, for
    ``debug=True``: those reachable from the tensors it saved and from its
    outputs whose sequence number is not below the run's first, in creation
    order, each with the stack anomaly mode stored when it was created."""

    def __init__(self) -> None:
        self.first_sequence_nr = 0
        self.roots: list[Any] = []
        self._prev_anomaly = (False, True)

    # Reusable (a recomputation per graph task), unlike a generator's context.
    def __enter__(self) -> None:
        with enable_grad():
            # A throwaway node: its number is the last one before the run's.
            self.first_sequence_nr = (empty((0,), requires_grad=True) * 1).grad_fn._sequence_nr() + 1
        self.roots = []
        self._prev_anomaly = (_C.is_anomaly_enabled(), _C.is_anomaly_check_nan_enabled())
        _C.set_anomaly_enabled(True, False)

    def __exit__(self, *args: object) -> None:
        _C.set_anomaly_enabled(*self._prev_anomaly)

    def add(self, value: Any) -> None:
        """Records the node of a tensor (or of each tensor of a tuple, list or dict)."""
        if isinstance(value, (tuple, list)):
            for v in value:
                self.add(v)
        elif isinstance(value, dict):
            self.add(list(value.values()))
        elif isinstance(value, _C.Tensor) and value.grad_fn is not None:
            self.roots.append(value.grad_fn)

    def nodes(self) -> list[Any]:
        found: dict[int, Any] = {}
        stack = list(self.roots)
        while stack:
            node = stack.pop()
            # A leaf's AccumulateGrad is not the run's (torch numbers it last).
            if node is None or hasattr(node, "variable") or node._sequence_nr() < self.first_sequence_nr:
                continue
            if node._sequence_nr() in found:
                continue
            found[node._sequence_nr()] = node
            stack.extend(child for child, _ in node.next_functions)
        return [found[nr] for nr in sorted(found)]

    def traces(self, label: str) -> str:
        nodes = self.nodes()
        out = ""
        for i, node in enumerate(nodes):
            out += f"{node.name()}   ({i + 1} of {len(nodes)} in {label})\n\n"
            for entry in reversed(node.metadata.get("traceback_", [])):
                m = _STACK_ENTRY.search(entry)
                if m is not None:
                    out += f"{m['file']}:{m['line']}:{m['name']}\n"
            out += "\n\n"
        return out

    def ops(self) -> str:
        return "\n".join(node.name() for node in self.nodes())


class _DebugLogs:
    """The logs of the forward and of the latest recomputation, and the error
    that reports them (torch's _get_debug_context_and_cb)."""

    def __init__(self) -> None:
        self.forward = _RunLog()
        self.recompute = _RunLog()

    def unpack_error_cb(self, e: CheckpointError) -> NoReturn:
        raise CheckpointError(
            _checkpoint_error_template.format(
                forward_traces=self.forward.traces("original"),
                recompute_traces=self.recompute.traces("recompute"),
                forward_ops=self.forward.ops(),
                recompute_ops=self.recompute.ops(),
            )
        ) from e


class _recomputation_hook(saved_tensors_hooks):
    def __init__(self, target_frame_ref: weakref.ref[_CheckpointFrame], gid: Hashable) -> None:
        def pack_hook(x: Any) -> Any:
            frame = target_frame_ref()
            if frame is None:
                _internal_error()
            if frame.debug_logs is not None:
                frame.debug_logs.recompute.add(x)
            x = x.detach() if x.requires_grad else x
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # A backward inside the checkpointed function, without
                    # early stop: the rerun goes on past the forward's end.
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n"
                    f"{_debug_tip_msg}"
                )
            holder = frame.weak_holders[recomp_idx]()
            # Gone if a backward inside the function already freed it.
            if holder is not None:
                _internal_assert(holder.handles.get(gid) is None)
                handle = _Handle()
                holder.handles[gid] = handle
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        def unpack_hook(x: Any) -> Any:
            return x

        super().__init__(pack_hook, unpack_hook)


# Ids for unpacks outside any backward pass (a `_saved_*` attribute read):
# each gets a recomputation of its own, as torch's uuid4 ids do.
_outside_backward_ids = itertools.count(-2, -1)


class _checkpoint_hook(saved_tensors_hooks):
    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x: Any) -> _Holder:
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.debug_logs is not None:
                frame.debug_logs.forward.add(x)
            with no_grad():
                frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder: _Holder) -> Any:
            gid: Hashable = GraphExecGroup._get_current_group()
            if gid is None:
                gid = _C._current_graph_task_id()
                if gid == -1:
                    gid = next(_outside_backward_ids)
            if not frame.is_recomputed[gid]:
                args = _saved_inputs(frame.input_saver)
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            handle = holder.handles[gid]
            if handle is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = (
                        "Performing two backward calls that overlap (i.e. require the same "
                        "saved activation in order to compute gradients) is not allowed while "
                        "under the torch.utils.checkpoint.GraphExecGroup context. "
                    )
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                    f"unpacked once. {extra}If you are calling ctx.saved_tensors in backward, make sure "
                    "to do so only once. Otherwise please open an issue with details on your use case."
                )
            _internal_assert(handle in frame.recomputed[gid])
            ret = frame.recomputed[gid][handle]
            holder.handles[gid] = None
            return ret

        debug_logs = frame.debug_logs
        if debug_logs is not None:

            def unpack_hook_with_error_cb(holder: _Holder) -> Any:
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    debug_logs.unpack_error_cb(e)

            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


_SUPPRESSED_EXCEPTION_MSG = (
    "torch.utils.checkpoint: the forward context provided by "
    "context_fn suppressed an exception raised during the "
    "checkpointed forward. This is not supported because checkpoint "
    "cannot return a value for a failed forward."
)


@contextlib.contextmanager
def _checkpoint_without_reentrant(
    fn: Callable[..., Any],
    preserve_rng_state: bool,
    context_fn: Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]],
    determinism_check: str,
    debug: bool,
    early_stop: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Iterator[_RunLog | None]:
    """The scope in which the checkpointed forward runs (see the Note); it gives
    the forward's log with ``debug`` (for the outputs), else None."""
    debug_logs = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        debug_logs = _DebugLogs()
        context_fn = lambda: (debug_logs.forward, debug_logs.recompute)  # noqa: E731
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError(
            f"determinism_check should be one of {list(_allowed_determinism_checks_to_fns.keys())}, "
            f"but got {determinism_check}"
        )
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs: Any) -> None:
        with fork_rng(enabled=preserve_rng_state):
            if fwd_cpu_state is not None:
                set_rng_state(fwd_cpu_state)
            with recompute_context:
                outputs = fn(*inputs, **kwargs)
            if debug_logs is not None:
                debug_logs.recompute.add(outputs)

    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        metadata_fn,
    )
    frame.debug_logs = debug_logs
    if not _C.is_grad_enabled():
        yield None
        return
    dummy = empty((0,), requires_grad=True)
    frame.input_saver = _NoopSaveInputs.apply(dummy, *args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield None if debug_logs is None else debug_logs.forward
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError(_SUPPRESSED_EXCEPTION_MSG)
    frame.forward_completed = True


_graph_exec_group = threading.local()


class GraphExecGroup:
    """Backward calls made in its scope (on this thread) share one
    recomputation per non-reentrant checkpoint, instead of one each. They
    must not need the same saved tensor: a second unpack raises
    ``CheckpointError``. Not nestable.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import GraphExecGroup, checkpoint
    >>> def f(t):
    ...     print("run")
    ...     return t.sin(), t.exp()
    >>> x = torch.zeros(2, requires_grad=True)
    >>> a, b = checkpoint(f, x, use_reentrant=False)
    run
    >>> with GraphExecGroup():
    ...     ga = torch.autograd.grad(a.sum(), x)
    ...     gb = torch.autograd.grad(b.sum(), x)
    run
    """

    def __enter__(self) -> GraphExecGroup:
        current = GraphExecGroup._get_current_group()
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {current}")
        _graph_exec_group.value = self
        return self

    def __exit__(self, *args: object) -> None:
        _graph_exec_group.value = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        group: GraphExecGroup | None = getattr(_graph_exec_group, "value", None)
        return group


# ------------------------------------------------------------------ public API


def _use_reentrant_or_warn(use_reentrant: bool | None, message: str) -> bool:
    """``use_reentrant``, or True after torch's warning when it is None."""
    if use_reentrant is not None:
        return use_reentrant
    warnings.warn(
        message + "use_reentrant=False is "
        "recommended, but if you need to preserve the current default "
        "behavior, you can pass use_reentrant=True. Refer to docs for more "
        "details on the differences between the two variants.",
        stacklevel=3,
    )
    return True


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]] = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Runs ``function(*args, **kwargs)`` without keeping the tensors its
    backward needs; backward recomputes them (see the module docstring).

    ``use_reentrant`` should be passed: without it torch's warning is issued
    and the reentrant mode is used. ``preserve_rng_state=True`` (a keyword)
    restores the forward's RNG state for the recomputation. Keyword
    arguments for ``function``, ``context_fn`` (two context managers: around
    the forward and around the recomputation), ``determinism_check``
    (``"default"``: shape, dtype and device of each recomputed tensor;
    ``"none"``), ``early_stop`` and ``debug`` (a mismatch of the recomputation
    reports both runs' logs) need ``use_reentrant=False``.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import checkpoint
    >>> lin = torch.nn.Linear(2, 2)
    >>> x = torch.ones(1, 2, requires_grad=True)
    >>> y = checkpoint(lambda t: lin(t).relu(), x, use_reentrant=False)
    >>> y.sum().backward()
    >>> x.grad.shape
    torch.Size([1, 2])
    """
    use_reentrant = _use_reentrant_or_warn(
        use_reentrant,
        "torch.utils.checkpoint: the use_reentrant parameter should be "
        "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
        "without use_reentrant will raise an exception. ",
    )
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    with _checkpoint_without_reentrant(
        function, preserve, context_fn, determinism_check, debug, early_stop, args, kwargs
    ) as forward_log:
        ret = function(*args, **kwargs)
        if forward_log is not None:
            forward_log.add(ret)
        return ret


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Runs ``functions`` (an ``nn.Sequential`` or a list of modules or
    functions) one after the other on ``input``, in ``segments`` chunks:
    each chunk but the last is checkpointed.

    >>> import npgrad as torch
    >>> from npgrad.utils.checkpoint import checkpoint_sequential
    >>> model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    >>> x = torch.ones(4, 2, requires_grad=True)
    >>> out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    >>> out.shape
    torch.Size([4, 1])
    """
    use_reentrant = _use_reentrant_or_warn(
        use_reentrant,
        "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
        "parameter should be passed explicitly. "
        "In version 2.9 we will raise an exception if use_reentrant "
        "is not passed. ",
    )
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: Any) -> Callable[[Any], Any]:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    from ..nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    # The last chunk runs as usual, so that its output has a graph.
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
