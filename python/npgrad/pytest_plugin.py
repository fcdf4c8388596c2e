"""pytest fixtures for autograd graph experiments with npgrad.

Installed with npgrad as the ``pytest11`` entry point ``npgrad``, so the fixtures are
available in every test run once npgrad is installed; from a source tree, load it
with ``pytest -p npgrad.pytest_plugin``. The plugin defines fixtures only (no hooks),
so runs that do not use them are unaffected. (PYTEST_DONT_REWRITE: it has no asserts
to rewrite, and this keeps pytest quiet when it was imported before pytest loads it.)

``executed_nodes``
    The names of the nodes the engine executes, in execution order, for every
    backward pass (``backward``, ``autograd.grad``, reentrant passes, other
    threads) run while the test uses the fixture::

        def test_order(executed_nodes):
            x = npgrad.tensor([1.0, 2.0], requires_grad=True)
            (x * 2).sin().sum().backward()
            assert executed_nodes == [
                "SumBackward0", "SinBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"
            ]

    Names are ``node.name()``, torch's (hence ``torch::autograd::AccumulateGrad``).
    ``executed_nodes.passes`` splits the same names by graph task (one list per
    backward pass, nested passes separately). It works through the engine's debug
    logging (the ``npgrad.autograd.graph`` logger at DEBUG puts a pre-hook on every
    node of each graph being run), so it needs no setup per graph; while the fixture
    is active that logger's records are consumed by the fixture and not propagated.

``saved_tensor_bytes``
    A recorder of what autograd saves for backward; a context manager that installs
    ``saved_tensors_hooks`` for the forward code inside it::

        def test_memory(saved_tensor_bytes):
            x = npgrad.randn(100, requires_grad=True)
            with saved_tensor_bytes:
                y = (x.exp() * x).sum()
            assert saved_tensor_bytes.total == 3 * 400
            saved_tensor_bytes.attribute(y)          # or: after y.backward()
            assert saved_tensor_bytes.by_node == {"MulBackward0": 800, "ExpBackward0": 400}

    A saved tensor is known to belong to a node once that node unpacks it: in
    backward (``npgrad._C._current_autograd_node()`` names it) or when
    ``attribute(*outputs)`` reads the ``_saved_*`` attributes of the graph before
    backward. (A pack hook cannot tell which node is saving: the node being built is
    not visible from Python.)

``gradcheck``
    ``gradcheck(func, inputs, *, gradgrad=False, **kwargs)`` runs
    ``npgrad.autograd.gradcheck`` (and ``gradgradcheck`` with ``gradgrad=True``) and
    turns a :class:`GradcheckError` into a test failure showing just the Jacobian
    report.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from . import _C, autograd
from .autograd.gradcheck import GradcheckError
from .autograd.graph import saved_tensors_hooks

_GRAPH_LOGGER = "npgrad.autograd.graph"


# ------------------------------------------------------------------ executed_nodes


class ExecutedNodes(list[str]):
    """The names of executed nodes, in order (a ``list`` of ``str``); ``passes`` holds
    the same names grouped by backward pass (graph task), in order of first node."""

    def __init__(self) -> None:
        super().__init__()
        self._passes: dict[int, list[str]] = {}

    @property
    def passes(self) -> list[list[str]]:
        """One list of node names per backward pass, in the order the passes began."""
        return [list(names) for names in self._passes.values()]

    def clear(self) -> None:
        """Forgets everything recorded so far."""
        super().clear()
        self._passes.clear()

    def _record(self, name: str, task_id: int) -> None:
        self.append(name)
        self._passes.setdefault(task_id, []).append(name)


class _ExecutedNodesHandler(logging.Handler):
    """Receives the engine's "Executing: ..." debug records. It is called from the node
    pre-hook on the thread running the node, so the engine's thread-local current node
    and graph task are the ones being executed."""

    def __init__(self, sink: ExecutedNodes) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        if not str(record.msg).startswith("Executing: "):
            return
        node = _C._current_autograd_node()
        if node is not None:
            self.sink._record(node.name(), _C._current_graph_task_id())


@pytest.fixture
def executed_nodes() -> Iterator[ExecutedNodes]:
    """Names of the nodes executed by every backward pass of the test, in order."""
    sink = ExecutedNodes()
    logger = logging.getLogger(_GRAPH_LOGGER)
    handler = _ExecutedNodesHandler(sink)
    saved_level, saved_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    # One debug line per node would otherwise flood pytest's captured-log reports.
    logger.propagate = False
    try:
        yield sink
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved_level)
        logger.propagate = saved_propagate


# -------------------------------------------------------------- saved_tensor_bytes


@dataclass
class SavedTensorRecord:
    """One tensor saved for backward: its size and, once known, its node's name."""

    nbytes: int
    shape: tuple[int, ...]
    dtype: Any
    node: str | None = None


class _Packed:
    """What autograd stores instead of the tensor: the tensor itself (nothing is
    moved) plus the record it is counted in."""

    __slots__ = ("record", "tensor")

    def __init__(self, tensor: Any, record: SavedTensorRecord) -> None:
        self.tensor = tensor
        self.record = record


class SavedTensorBytes:
    """Counts the bytes autograd saves for backward while used as a context manager
    (``with saved_tensor_bytes: ...``); blocks add up until :meth:`clear`.

    ``total`` and ``count`` cover everything saved; ``by_node`` maps node names to
    bytes for the saved tensors whose node is known (see the module docstring).
    Records do not keep tensors alive: only the graph does.
    """

    def __init__(self) -> None:
        self.records: list[SavedTensorRecord] = []
        self._contexts: list[Any] = []
        self._attributing: str | None = None

    # -- recording
    def __enter__(self) -> SavedTensorBytes:  # noqa: PYI034  (Self needs Python 3.11)
        ctx = saved_tensors_hooks(self._pack, self._unpack)
        ctx.__enter__()
        self._contexts.append(ctx)
        return self

    def __exit__(self, *exc: object) -> None:
        self._contexts.pop().__exit__(*exc)

    def _pack(self, tensor: Any) -> _Packed:
        record = SavedTensorRecord(
            nbytes=tensor.numel() * tensor.element_size(),
            shape=tuple(tensor.shape),
            dtype=tensor.dtype,
        )
        self.records.append(record)
        return _Packed(tensor, record)

    def _unpack(self, packed: _Packed) -> Any:
        if packed.record.node is None:
            if self._attributing is not None:
                packed.record.node = self._attributing
            else:
                node = _C._current_autograd_node()
                if node is not None:
                    packed.record.node = node.name()
        return packed.tensor

    # -- results
    @property
    def total(self) -> int:
        """Bytes of every tensor saved while recording."""
        return sum(r.nbytes for r in self.records)

    @property
    def count(self) -> int:
        """Number of tensors saved while recording."""
        return len(self.records)

    @property
    def by_node(self) -> dict[str, int]:
        """Node name -> bytes saved by nodes of that name (attributed tensors only)."""
        result: dict[str, int] = {}
        for r in self.records:
            if r.node is not None:
                result[r.node] = result.get(r.node, 0) + r.nbytes
        return result

    def attribute(self, *outputs: Any) -> dict[str, int]:
        """Attributes saved tensors to their nodes before backward, by reading the
        saved attributes of every node reachable from ``outputs``; returns ``by_node``.
        Saved tensors already freed (after a backward pass) are skipped."""
        seen: list[Any] = []  # nodes, not ids: a wrapper's id may be reused
        stack = [t.grad_fn for t in outputs if getattr(t, "grad_fn", None) is not None]
        while stack:
            node = stack.pop()
            if any(node is s for s in seen):
                continue
            seen.append(node)
            self._read_saved(node)
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
        return self.by_node

    def _read_saved(self, node: Any) -> None:
        names = [n for n in dir(node) if n.startswith("_saved_")]
        if hasattr(node, "saved_tensors"):  # a custom Function's ctx
            names.append("saved_tensors")
        self._attributing = node.name()
        try:
            for name in names:
                try:
                    getattr(node, name)  # unpacking tells _unpack which record it is
                except RuntimeError:
                    pass  # freed by an earlier backward, or modified in place
        finally:
            self._attributing = None

    def clear(self) -> None:
        """Forgets the records (the hooks stay installed inside a ``with`` block)."""
        self.records.clear()


@pytest.fixture
def saved_tensor_bytes() -> Iterator[SavedTensorBytes]:
    """A :class:`SavedTensorBytes` recorder; use it as ``with saved_tensor_bytes:``."""
    recorder = SavedTensorBytes()
    try:
        yield recorder
    finally:
        # A test that failed inside its ``with`` block has already left it; this only
        # matters for a recorder entered by hand and never exited.
        while recorder._contexts:
            recorder._contexts.pop().__exit__(None, None, None)


# -------------------------------------------------------------------- gradcheck


@pytest.fixture
def gradcheck() -> Callable[..., bool]:
    """``gradcheck(func, inputs, *, gradgrad=False, **kwargs)``: npgrad's gradcheck
    (and gradgradcheck), failing the test with the Jacobian report on a mismatch."""

    def check(func: Callable[..., Any], inputs: Any, *, gradgrad: bool = False, **kwargs: Any) -> bool:
        __tracebackhide__ = True
        checks = [autograd.gradcheck] + ([autograd.gradgradcheck] if gradgrad else [])
        for run in checks:
            try:
                run(func, inputs, **kwargs)
            except GradcheckError as e:
                pytest.fail(f"{run.__name__} failed:\n{e}", pytrace=False)
        return True

    return check
