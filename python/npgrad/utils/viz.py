"""Pictures of the backward graph, in Graphviz's DOT language.

``to_dot`` walks the autograd graph reachable from some tensors (the same walk
the engine does, along ``next_functions``) and returns a DOT string; ``render``
turns it into an SVG or PNG file with Graphviz. The picture is in the spirit of
torchviz's ``make_dot``: one box per autograd ``Node`` labelled with its
``name()``, leaves named after the ``params`` dict, output tensors as their own
boxes, and optionally the tensors each node saved for backward.

Conventions of the drawing (stable, so tests and diffs can rely on them):

- ids are numbered in breadth-first traversal order: ``t0, t1, ...`` for the
  output tensors (in the order given), ``n0, n1, ...`` for autograd nodes and
  ``s0, s1, ...`` for saved tensors; the same graph always gives the same text;
- every autograd node's label starts with its ``name()``; an ``AccumulateGrad``
  label continues with the leaf's name (from ``params``) and shape;
- edges point the way gradients flow: ``t0 -> n0`` (output to its ``grad_fn``)
  and ``n_i -> n_j`` for each entry of ``n_i.next_functions``, in order (an
  input used twice gives two parallel edges);
- saved tensors hang off their node by a dashed edge ``n_i -> s_k``, labelled
  with the attribute name, shape and dtype; non-tensor saved values (dims,
  sizes, scalars) are extra ``attr: value`` lines of the node's label;
- a node or tensor with hooks gets ``color=red penwidth=2`` and a label line
  ``hooks: ...``. Tensor hooks are seen on the output tensors and on leaves
  (``register_hook``, ``register_post_accumulate_grad_hook``). Hooks registered
  on a node itself (``Node.register_hook`` / ``register_prehook``) are not
  shown: neither torch nor npgrad exposes them for reading.

>>> import npgrad as torch
>>> from npgrad.utils.viz import to_dot
>>> w = torch.ones(3, requires_grad=True)
>>> print(to_dot((w * 2).sum(), params={"w": w}))  # doctest: +ELLIPSIS
digraph {
...
"""

from __future__ import annotations

import os
import pathlib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._C import Tensor

__all__ = ["render", "to_dot"]

# Box style shared by every node; colours below follow torchviz's palette so
# pictures look familiar to torch users.
_GRAPH_HEADER = (
    "digraph {",
    "\tgraph [rankdir=TB]",
    "\tnode [align=left fontname=monospace fontsize=10 height=0.2 shape=box style=filled]",
)
_OUTPUT_COLOR = "darkolivegreen1"
_LEAF_COLOR = "lightblue"
_SAVED_COLOR = "orange"
_HOOK_STYLE = "color=red penwidth=2"
_SAVED_PREFIX = "_saved_"
# Long saved values (e.g. a 1000-entry size list) would make unreadable boxes.
_MAX_VALUE_CHARS = 60


def _quote(text: str) -> str:
    """A DOT double-quoted string; newlines become DOT's centred line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def _node_line(node_id: str, label: list[str], style: str = "") -> str:
    """One DOT node statement; ``label`` holds the lines of the box."""
    text = _quote("\n".join(label))
    return f"\t{node_id} [label={text} {style}]" if style else f"\t{node_id} [label={text}]"


def _shape(t: Tensor) -> str:
    return str(tuple(t._shape))


def _dtype(t: Any) -> str:
    # str(dtype) is torch-style ("torch.float32"); the bare name reads better.
    return str(t.dtype).rsplit(".", 1)[-1]


def _hook_summary(t: Tensor) -> str | None:
    """``"tensor x1, post-accumulate x2"`` for a tensor with hooks, else None."""
    parts = []
    hooks = t._backward_hooks
    if hooks:
        parts.append(f"tensor x{len(hooks)}")
    post = t._post_accumulate_grad_hooks
    if post:
        parts.append(f"post-accumulate x{len(post)}")
    return ", ".join(parts) if parts else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


def _as_tensor_list(tensor_or_tensors: Any) -> list[Tensor]:
    if isinstance(tensor_or_tensors, Tensor):
        return [tensor_or_tensors]
    if isinstance(tensor_or_tensors, (list, tuple)) and all(isinstance(t, Tensor) for t in tensor_or_tensors):
        return list(tensor_or_tensors)
    raise TypeError(f"to_dot expects a Tensor or a sequence of Tensors, got {type(tensor_or_tensors).__name__}")


def _param_names(params: Mapping[str, Tensor] | None) -> dict[int, str]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a dict of name -> Tensor, got {type(params).__name__}")
    names = {}
    for name, value in params.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"params[{name!r}] must be a Tensor, got {type(value).__name__}")
        names[id(value)] = str(name)
    return names


def _saved_entries(node: Any) -> Iterable[tuple[str, Any]]:
    """(label, value) for each thing ``node`` saved for backward.

    Built-in nodes expose ``_saved_<name>``; custom ``Function`` nodes expose
    ``saved_tensors``. A value that can no longer be read (freed by a backward
    without ``retain_graph``) is reported as the string ``"<freed>"``.
    """
    attrs = [a for a in dir(node) if a.startswith(_SAVED_PREFIX)]
    if not attrs and hasattr(type(node), "saved_tensors"):
        attrs = ["saved_tensors"]
    for attr in attrs:
        label = attr.removeprefix(_SAVED_PREFIX)
        try:
            value = getattr(node, attr)
        except RuntimeError:  # "... saved tensors after they have already been freed"
            value = "<freed>"
        yield label, value


class _DotBuilder:
    """Accumulates DOT lines and hands out stable ids in creation order."""

    def __init__(self, names: dict[int, str], show_saved: bool) -> None:
        self.names = names
        self.show_saved = show_saved
        self.lines: list[str] = list(_GRAPH_HEADER)
        self.node_ids: dict[int, str] = {}
        # Strong references to every visited node, so a node's id() cannot be
        # reused by another object while the walk is in progress.
        self.keep_alive: list[Any] = []
        self.num_saved = 0

    def node_id(self, node: Any, queue: deque[Any]) -> str:
        """The id of ``node``, numbering and queueing it on first sight."""
        key = id(node)
        found = self.node_ids.get(key)
        if found is None:
            found = f"n{len(self.node_ids)}"
            self.node_ids[key] = found
            self.keep_alive.append(node)
            queue.append(node)
        return found

    def add_output(self, index: int, total: int, t: Tensor, queue: deque[Any]) -> None:
        default = "output" if total == 1 else f"output {index}"
        label = [self.names.get(id(t), default), _shape(t)]
        style = f"fillcolor={_OUTPUT_COLOR}"
        hooks = _hook_summary(t)
        if hooks:
            label.append(f"hooks: {hooks}")
            style += " " + _HOOK_STYLE
        tid = f"t{index}"
        self.lines.append(_node_line(tid, label, style))
        if t.grad_fn is not None:
            self.lines.append(f"\t{tid} -> {self.node_id(t.grad_fn, queue)}")

    def add_node(self, node: Any, queue: deque[Any]) -> None:
        nid = self.node_ids[id(node)]
        label = [node.name()]
        style = ""
        leaf = getattr(node, "variable", None) if type(node).__name__ == "AccumulateGrad" else None
        if leaf is not None:
            name = self.names.get(id(leaf))
            if name is not None:
                label.append(name)
            label.append(_shape(leaf))
            style = f"fillcolor={_LEAF_COLOR}"
            hooks = _hook_summary(leaf)
            if hooks:
                label.append(f"hooks: {hooks}")
                style += " " + _HOOK_STYLE
        saved_lines: list[str] = []
        if self.show_saved:
            for attr, value in _saved_entries(node):
                if isinstance(value, Tensor):
                    saved_lines.extend(self._saved_tensor(nid, attr, value))
                elif isinstance(value, (tuple, list)) and value and all(isinstance(v, Tensor) for v in value):
                    for i, v in enumerate(value):
                        saved_lines.extend(self._saved_tensor(nid, f"{attr}[{i}]", v))
                elif isinstance(value, str):
                    label.append(f"{attr}: {value}")
                else:
                    label.append(f"{attr}: {_short(value)}")
        self.lines.append(_node_line(nid, label, style))
        self.lines.extend(saved_lines)
        for next_node, _input_nr in node.next_functions:
            if next_node is not None:
                self.lines.append(f"\t{nid} -> {self.node_id(next_node, queue)}")

    def _saved_tensor(self, nid: str, attr: str, t: Tensor) -> list[str]:
        sid = f"s{self.num_saved}"
        self.num_saved += 1
        label = [attr]
        name = self.names.get(id(t))
        if name is not None:
            label.append(name)
        label += [_shape(t), _dtype(t)]
        return [_node_line(sid, label, f"fillcolor={_SAVED_COLOR}"), f"\t{nid} -> {sid} [style=dashed arrowhead=none]"]


def to_dot(
    tensor_or_tensors: Tensor | Sequence[Tensor], params: Mapping[str, Tensor] | None = None, show_saved: bool = False
) -> str:
    """The backward graph reachable from ``tensor_or_tensors`` as a DOT string.

    Args:
        tensor_or_tensors: a tensor or a list/tuple of tensors (the outputs).
        params: optional ``{name: tensor}`` (e.g. a model's named parameters);
            leaves and outputs found in it are labelled with their name.
        show_saved: also draw each node's saved tensors (shape and dtype) and
            list its non-tensor saved values. Reading a saved tensor runs its
            unpack hook, as reading ``grad_fn._saved_*`` does.

    The walk is iterative, so graphs of any depth work (a chain of 100k nodes
    included). Output ids and layout conventions are in the module docstring.

    >>> import npgrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> dot = to_dot((x * x).sum(), params={"x": x})
    >>> [line.strip() for line in dot.splitlines() if "->" in line]
    ['t0 -> n0', 'n0 -> n1', 'n1 -> n2', 'n1 -> n2']
    """
    outputs = _as_tensor_list(tensor_or_tensors)
    builder = _DotBuilder(_param_names(params), bool(show_saved))
    queue: deque[Any] = deque()
    for index, t in enumerate(outputs):
        builder.add_output(index, len(outputs), t, queue)
    # Breadth-first: every node is labelled once, when it leaves the queue,
    # and numbered when first seen, so numbering follows traversal order.
    while queue:
        builder.add_node(queue.popleft(), queue)
    builder.lines.append("}")
    return "\n".join(builder.lines) + "\n"


_FORMATS = {".svg": "svg", ".png": "png"}


def render(
    tensor_or_tensors: Tensor | Sequence[Tensor],
    path: str | os.PathLike[str],
    params: Mapping[str, Tensor] | None = None,
    show_saved: bool = False,
) -> pathlib.Path:
    """Draws the backward graph to ``path`` (``.svg`` or ``.png``) with Graphviz.

    Needs the ``graphviz`` Python package (``pip install graphviz``) and
    Graphviz's ``dot`` program (e.g. ``apt-get install graphviz``). Raises
    ``ImportError`` when the package is missing, ``RuntimeError`` when ``dot``
    is, and ``ValueError`` for another file suffix. Returns the path written.

    >>> import npgrad as torch
    >>> from npgrad.utils.viz import render
    >>> w = torch.ones(3, requires_grad=True)
    >>> render((w * 2).sum(), "/tmp/graph.svg", params={"w": w})  # doctest: +SKIP
    PosixPath('/tmp/graph.svg')
    """
    out = pathlib.Path(path)
    fmt = _FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"render writes .svg or .png files, got {str(out)!r}")
    # Checked before drawing so a missing dependency fails fast on big graphs.
    try:
        import graphviz  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as e:
        raise ImportError(
            "npgrad.utils.viz.render needs the 'graphviz' Python package and Graphviz's "
            "'dot' program: pip install graphviz, and install Graphviz "
            "(e.g. apt-get install graphviz)"
        ) from e
    source = graphviz.Source(to_dot(tensor_or_tensors, params=params, show_saved=show_saved))
    try:
        data = source.pipe(format=fmt)
    except graphviz.ExecutableNotFound as e:
        raise RuntimeError(
            "npgrad.utils.viz.render could not run Graphviz's 'dot' program; install "
            "Graphviz (e.g. apt-get install graphviz) and make sure 'dot' is on PATH"
        ) from e
    out.write_bytes(data)
    return out
