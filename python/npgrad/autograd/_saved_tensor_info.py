"""What a pack hook is packing, and the saved tensors a graph holds: npgrad's own
additions to ``npgrad.autograd.graph`` (torch has neither). Nothing here changes
what torch's API does when these functions are not called.

The native side (Note [Pack-hook context] in
``csrc/npgrad/autograd/saved_tensor_context.h``) finds the node and the name of
each saved tensor from the node's one declaration of its saved state, so every
op, present and future, reports them without code of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _C

if TYPE_CHECKING:
    from .._C import dtype
    from .._size import Size

__all__ = ["SavedTensorInfo", "current_saved_tensor", "saved_tensors", "saved_tensors_summary"]


class SavedTensorInfo(NamedTuple):
    """One tensor a backward node saved.

    - ``node``: the node that saves it (a custom Function's ctx for its
      node), or ``None`` once that node is freed: the info refers to it
      weakly, through the field ``node_ref`` (call it for the node), so that
      an info kept anywhere, even in the value a pack hook returns, keeps no
      graph alive;
    - ``name``: the name it is saved under, as in ``node._saved_<name>``
      (``"self"``, ``"other"``, ``"result"``...); an element of a saved list is
      ``"indices[0]"``, a tensor of a custom Function's ``save_for_backward``
      is ``"saved_tensors[i]"``;
    - ``is_output``: it is an output of ``node``'s forward op (a saved
      result), not one of its inputs;
    - ``is_leaf``, ``requires_grad``: the tensor's, when it was saved;
    - ``storage``: a hashable id shared by every alias of the same data (a
      tensor, its views, its ``detach()``); ``t.data`` starts a new one, as it
      starts a new version counter;
    - ``nbytes``: ``numel * element_size`` of the saved tensor itself (a view
      counts its own elements, not its base's);
    - ``shape``, ``dtype``: the saved tensor's;
    - ``packed``: the saved value went through a pack hook
      (``saved_tensors_hooks``, ``save_on_cpu``, ``register_hooks`` on
      ``_raw_saved_<name>``): the node keeps what the hook returned, not the
      tensor, and ``nbytes`` is still the tensor's size. Always ``True`` in
      :func:`current_saved_tensor`.

    The info holds no tensor and no strong reference to the node.

    >>> import npgrad as torch
    >>> from npgrad.autograd.graph import saved_tensors
    >>> a = torch.ones(2, 3, requires_grad=True)
    >>> b = a.exp()
    >>> info = saved_tensors(b)[0]
    >>> info.node.name(), info.name, info.is_output, info.nbytes, info.shape
    ('ExpBackward0', 'result', True, 24, torch.Size([2, 3]))
    >>> info.node is b.grad_fn
    True
    >>> del b
    >>> print(info.node)
    None
    """

    node_ref: Callable[[], Any]
    name: str
    is_output: bool
    is_leaf: bool
    requires_grad: bool
    storage: int
    nbytes: int
    shape: Size
    dtype: dtype
    packed: bool

    @property
    def node(self) -> Any:
        """The node that saves the tensor, or ``None`` once it is freed."""
        return self.node_ref()


def current_saved_tensor() -> SavedTensorInfo | None:
    """Inside a pack hook: the :class:`SavedTensorInfo` of the tensor being
    packed (which node saves it, under which name, whether it is that node's
    output or a leaf); ``None`` anywhere else, an unpack hook included.

    torch's ``pack_hook(tensor)`` sees only the tensor, so a policy cannot
    tell a parameter from an activation, or a node's output from its input
    (pytorch#64729). The context is per thread: each thread sees its own pack.

    A policy that would offload activations and keep parameters:

    >>> import npgrad as torch
    >>> from npgrad.autograd.graph import current_saved_tensor, saved_tensors_hooks
    >>> def pack(t):
    ...     info = current_saved_tensor()
    ...     kind = "parameter" if info.is_leaf else "activation"
    ...     print(info.node.name(), info.name, kind)
    ...     return t
    >>> w = torch.ones(3, requires_grad=True)
    >>> with saved_tensors_hooks(pack, lambda t: t):
    ...     y = (w.exp() * w).sum()
    ExpBackward0 result activation
    MulBackward0 other parameter
    MulBackward0 self activation
    >>> current_saved_tensor() is None
    True
    """
    fields = _C._current_saved_tensor()
    return None if fields is None else SavedTensorInfo(*fields)


def _root_nodes(fn_name: str, roots: tuple[Any, ...]) -> list[Any]:
    from .._tensor import Tensor
    from .graph import GradientEdge, Node

    if not roots:
        raise TypeError(f"{fn_name}() takes at least one root (a Tensor, a Node or a GradientEdge)")
    nodes = []
    for root in roots:
        node: Node | None
        if isinstance(root, GradientEdge):
            node = root.node
        elif isinstance(root, Tensor):
            node = root.grad_fn
        elif isinstance(root, Node):
            node = root
        else:
            hint = "; pass several roots as separate arguments" if isinstance(root, (list, tuple)) else ""
            raise TypeError(
                f"{fn_name}(): each root must be a Tensor, a Node or a GradientEdge, not {type(root).__name__}{hint}"
            )
        if node is not None:
            nodes.append(node)
    return nodes


def saved_tensors(*roots: Any) -> list[SavedTensorInfo]:
    """A :class:`SavedTensorInfo` for every tensor saved by the nodes reachable
    from ``roots`` (tensors, through their ``grad_fn``; Nodes; GradientEdges),
    in the order the ops ran. Tensors freed by a backward without
    ``retain_graph`` are no longer saved and are not listed; nor are Python
    numbers a node keeps (``x * 2``'s ``2``). Nothing is unpacked (no unpack
    hook runs).

    >>> import npgrad as torch
    >>> from npgrad.autograd.graph import saved_tensors
    >>> a = torch.ones(4, requires_grad=True)
    >>> y = (a.exp() * a[1:].sum()).sum()
    >>> [(i.node.name(), i.name, i.is_output) for i in saved_tensors(y)]
    [('ExpBackward0', 'result', True), ('MulBackward0', 'other', False), ('MulBackward0', 'self', False)]
    >>> y.backward()
    >>> saved_tensors(y)
    []
    """
    return _saved_tensors("saved_tensors", roots)


def _saved_tensors(fn_name: str, roots: tuple[Any, ...]) -> list[SavedTensorInfo]:
    return [SavedTensorInfo(*fields) for fields in _C._saved_tensors(_root_nodes(fn_name, roots))]


def _dtype_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def saved_tensors_summary(*roots: Any) -> str:
    """A printable table of :func:`saved_tensors`: one block per node (in the
    order the ops ran), one row per saved tensor, then the totals: the bytes
    of all saved tensors, and the unique bytes, where tensors sharing a
    buffer (``storage``) count once, with the largest of them. Rows name the
    buffers ``#1``, ``#2``... in order of appearance, so sharing shows.

    >>> import npgrad as torch
    >>> from npgrad.autograd.graph import saved_tensors_summary
    >>> a = torch.ones(2, 3, requires_grad=True)
    >>> b = a.exp()
    >>> y = (b * b[0]).sum()
    >>> print(saved_tensors_summary(y))
    node          saved   shape   dtype    bytes  buffer  output  leaf  packed
    ExpBackward0  result  [2, 3]  float32     24  #1      yes     no    no
    MulBackward0  other   [3]     float32     12  #1      no      no    no
                  self    [2, 3]  float32     24  #1      no      no    no
    3 saved tensors in 2 nodes: 60 bytes; 24 unique bytes in 1 buffer
    """
    infos = _saved_tensors("saved_tensors_summary", roots)
    buffers: dict[int, str] = {}
    largest: dict[int, int] = {}
    rows = [["node", "saved", "shape", "dtype", "bytes", "buffer", "output", "leaf", "packed"]]
    previous = None
    nodes = 0
    for info in infos:
        buffer = buffers.setdefault(info.storage, f"#{len(buffers) + 1}")
        largest[info.storage] = max(largest.get(info.storage, 0), info.nbytes)
        first_of_node = info.node_ref != previous
        nodes += first_of_node
        previous = info.node_ref
        rows.append(
            [
                info.node.name() if first_of_node else "",
                info.name,
                str(list(info.shape)),
                _dtype_name(info.dtype),
                str(info.nbytes),
                buffer,
                *("yes" if flag else "no" for flag in (info.is_output, info.is_leaf, info.packed)),
            ]
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if c == 4 else cell.ljust(w) for c, (cell, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    total = sum(info.nbytes for info in infos)
    unique = sum(largest.values())
    lines.append(
        f"{len(infos)} saved tensor{'s' * (len(infos) != 1)} in {nodes} node{'s' * (nodes != 1)}: "
        f"{total} bytes; {unique} unique bytes in {len(buffers)} buffer{'s' * (len(buffers) != 1)}"
    )
    return "\n".join(lines)
