"""Docstrings of the native module-level functions and classes, applied at import.

The functions of ``npgrad`` that are bound in C++ (``npgrad.add``,
``npgrad.sum``, ...), the private ``npgrad._C`` entry points that torch's
own Python code calls, and the native graph classes (backward nodes,
``SavedTensor``). As torch does in ``torch/_torch_docs.py``, the texts live
here and ``_C._add_docstr`` attaches them below each pybind11 signature line.
``__test__`` holds every text, so ``doctest`` runs their examples.
"""

from __future__ import annotations

from typing import Any

from . import _C
from ._C import _add_docstr
from ._tensor_docs import _table_op_argument, _view_nodes_doc

__test__: dict[str, str] = {}


def add_docstr(obj: Any, docstr: str, name: str | None = None) -> None:
    """Attaches ``docstr`` to the native object ``obj`` (an error if it is
    documented twice) and registers the text for doctest."""
    _add_docstr(obj, docstr)
    key: str = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    __test__[key] = docstr


def add_internal_docstr(owner: Any, attr: str, docstr: str) -> None:
    """``add_docstr`` for internals outside the public API (the README's API surface): skipped
    when ``owner.attr`` is gone or was documented in C++, so reworking an
    internal entry point never breaks ``import npgrad``."""
    obj = getattr(owner, attr, None)
    if obj is None:
        return
    try:
        add_docstr(obj, docstr, name=f"{getattr(owner, '__name__', '')}.{attr}")
    except RuntimeError:  # already has a docstring
        pass


# ---------------------------------------------------------------- arithmetic

add_docstr(
    _C.sgn,
    """The sign of each element (as ``sign`` for real tensors; NaN gives 0). Its backward
node is ``SgnBackward0`` (a zero gradient), saving ``self`` and ``result``.

>>> import npgrad as torch
>>> torch.sgn(torch.tensor([-2.0, 0.0, 3.0]))
tensor([-1.,  0.,  1.])
""",
)

add_docstr(
    _C.square,
    """``input ** 2``, recorded as torch records it: ``pow(input, 2)`` with an integer
exponent (``PowBackward0``; integer and bool tensors give int64).

>>> import npgrad as torch
>>> torch.square(torch.tensor([1.5, -2.0]))
tensor([2.2500, 4.0000])
>>> torch.square(torch.tensor([True, False]))
tensor([1, 0])
""",
)

add_docstr(
    _C.pow,
    """``input ** exponent``; either may be a number (not both).

>>> import npgrad as torch
>>> torch.pow(torch.tensor([2.0, 3.0]), 2)
tensor([4., 9.])
>>> torch.pow(2, torch.tensor([1.0, 3.0]))
tensor([2., 8.])
""",
)

add_docstr(
    _C.matmul,
    """Matrix product: ``dot`` for two 1-d operands, ``mv`` for 2-d by 1-d, ``mm`` for
2-d operands, a fold of the batch dims into ``mm``/``mv`` when one operand is 1-d
or 2-d, else ``bmm`` over the broadcast batch dims; the graph is the one torch
records (``MmBackward0`` under an ``UnsafeViewBackward0`` for 3-d by 2-d).

>>> import npgrad as torch
>>> torch.matmul(torch.ones(2, 3), torch.ones(3)).shape
torch.Size([2])
""",
)

add_docstr(
    _C.outer,
    """The outer product of two 1-d tensors, recorded as torch does:
``input.reshape(-1, 1) * vec2`` (``MulBackward0`` over a ``ViewBackward0``).

>>> import npgrad as torch
>>> torch.outer(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 10.0]))
tensor([[ 1., 10.],
        [ 2., 20.]])
""",
)

add_docstr(
    _C.ger,
    """Alias of ``outer``.

>>> import npgrad as torch
>>> torch.ger(torch.tensor([1.0, 2.0]), torch.tensor([3.0]))
tensor([[3.],
        [6.]])
""",
)

add_docstr(
    _C.tensordot,
    """Contraction of ``a``'s dims with ``b``'s: ``dims=n`` contracts the last ``n`` dims
of ``a`` with the first ``n`` of ``b``; ``dims=([1, 0], [0, 1])`` names them.

>>> import npgrad as torch
>>> torch.tensordot(torch.ones(2, 3, 4), torch.ones(3, 4, 5)).shape
torch.Size([2, 5])
>>> torch.tensordot(torch.ones(2, 3), torch.ones(3, 2), dims=([1], [0]))
tensor([[3., 3.],
        [3., 3.]])
""",
)

add_docstr(
    _C.kron,
    """The Kronecker product; the operand with fewer dims is padded with leading 1s.

>>> import npgrad as torch
>>> torch.kron(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 10.0]))
tensor([ 1., 10.,  2., 20.])
""",
)

# The op tables' functions: summary and example from each op's entry.


def _reduction_parameters(op: dict) -> str:
    """A reduction's parameters after ``input``, as torch documents them."""
    if op["scalar"] == "correction":
        return "dim=None, *, correction=1, keepdim=False"
    if op["scalar"] == "p":
        return "p='fro', dim=None, keepdim=False, dtype=None"
    dtype = ", *, dtype=None" if op["dtype"] else ""
    return f"dim, keepdim=False{dtype}"


def _table_op_doc(op: dict) -> str:
    """The docstring of ``npgrad.<name>`` for an op of the op tables."""
    if op["family"] == "unary":
        call = f"torch.{op['name']}(torch.tensor({op['example_input']}))"
        head = f"{op['summary']}, elementwise; same as ``input.{op['name']}()``."
    elif op["family"] == "reduction":
        call = f"torch.{op['name']}(torch.tensor({op['example_input']}), {_table_op_argument(op)})"
        head = f"{op['summary']}; same as ``input.{op['name']}({_reduction_parameters(op)})``."
    elif op["family"] == "linalg":
        call = f"torch.{op['name']}(torch.tensor({op['example_input']}), {_table_op_argument(op)})"
        scaling = ", *, beta=1, alpha=1" if op["adds_input"] else ""
        head = f"{op['summary']}; same as ``input.{op['name']}({', '.join(op['operands'])}{scaling})``."
    else:
        call = f"torch.{op['name']}(torch.tensor({op['example_input']}), {_table_op_argument(op)})"
        head = f"{op['summary']}, elementwise and broadcasting; same as ``input.{op['name']}(other)``."
        if op["numbers"]:
            head += " ``other`` may be a Python number."
        if op["alpha"]:
            head += " ``alpha`` scales ``other``."
    node = (
        f"Its backward node is ``{op['node']}``." if op["node"] else "Not differentiable: the result is a bool tensor."
    )
    if op.get("full_node"):
        node = f"Its backward node is ``{op['node']}`` (``{op['full_node']}`` without ``dim``)."
    return f"""{head} {node}

>>> import npgrad as torch
>>> {call}
{op["example_output"]}
"""


for _op in _C._op_table:
    if _op["public"]:
        add_docstr(getattr(_C, _op["name"]), _table_op_doc(_op), name=_op["name"])


def _view_op_doc(op: dict) -> str:
    """The docstring of ``npgrad.<name>`` for an op of the view table."""
    other = f", {op['example_other']}" if op["example_other"] else ""
    params = ", ".join(p["name"] for p in op["params"])
    return f"""{op["summary"]}; same as ``input.{op["name"]}({params})``. {_view_nodes_doc(op)}

>>> import npgrad as torch
>>> torch.{op["name"]}(torch.tensor({op["example_input"]}){other})
{op["example_output"]}
"""


for _op in _C._op_table:
    if _op["family"] == "view" and _op["function"]:
        add_docstr(getattr(_C, _op["name"]), _view_op_doc(_op), name=_op["name"])

# The activation table's functions at torch's top level (the others are
# npgrad.nn.functional's): summary and example from each entry.


def _activation_doc(op: dict, inplace: bool) -> str:
    params = ", ".join(p["name"] for p in op["params"])
    node = op["inplace_node"] if inplace else op["node"]
    call = f"torch.{op['inplace'] if inplace else op['name']}(torch.tensor({op['example_input']}))"
    if any(p["required"] for p in op["params"]):
        call = call[:-1] + ", 0.0, 0.0)"
        output = "tensor([0., 2.])"
    else:
        output = op["example_output"]
    head = f"In place, returning ``input``: {op['summary']}" if inplace else op["summary"]
    return f"""{head}, elementwise (parameters: {params}). Its backward node is ``{node}``.

>>> import npgrad as torch
>>> {call}
{output}
"""


for _op in _C._activation_table:
    if _op["binding"] != "nn":
        add_docstr(getattr(_C, _op["name"]), _activation_doc(_op, False), name=_op["name"])
        if _op["inplace"]:
            add_docstr(getattr(_C, _op["inplace"]), _activation_doc(_op, True), name=_op["inplace"])

add_docstr(
    _C.selu,
    """``scale * elu(x, alpha)`` with SELU's constants (``alpha = 1.6733``, ``scale =
1.0507``), recorded as torch does: ``EluBackward0`` with those parameters saved.

>>> import npgrad as torch
>>> torch.selu(torch.tensor([-1.0, 2.0]))
tensor([-1.1113,  2.1014])
""",
)

add_docstr(
    _C.selu_,
    """In-place ``selu``, returning ``input`` (``EluBackward1``, which saves the result).

>>> import npgrad as torch
>>> torch.selu_(torch.tensor([-1.0, 2.0]))
tensor([-1.1113,  2.1014])
""",
)

add_docstr(
    _C.clamp,
    """Limits every element to ``[min, max]``; either bound may be ``None``. The
bounds are numbers (``ClampBackward1``) or tensors that broadcast with ``input``
and get gradients too (``ClampBackward0``); where ``min > max`` the result is
``max``. The result's dtype promotes ``input`` with the bounds.

>>> import npgrad as torch
>>> torch.clamp(torch.tensor([-1.0, 0.5, 2.0]), min=0.0)
tensor([0.0000, 0.5000, 2.0000])
>>> torch.clamp(torch.tensor([1, 5]), torch.tensor([2.5, 0.0]), torch.tensor(3))
tensor([2.5000, 3.0000])
""",
)

add_docstr(
    _C.where,
    """Elementwise ``input if condition else other``, broadcasting; ``input`` and
``other`` may be numbers. Gradients flow to the branch that was chosen.

>>> import npgrad as torch
>>> x = torch.tensor([-1.0, 2.0])
>>> torch.where(x > 0, x, 0.0)
tensor([0., 2.])
""",
)

add_docstr(
    _C.clip,
    """Alias for :func:`clamp` (the same nodes).

>>> import npgrad as torch
>>> torch.clip(torch.tensor([-1.0, 0.5, 2.0]), -0.5, 1.0)
tensor([-0.5000,  0.5000,  1.0000])
""",
)

add_docstr(
    _C.masked_fill,
    """``input`` with ``value`` where the bool ``mask`` is true (the mask and
``input`` broadcast together). ``value`` is a number or a 0-dim tensor, which then
gets the gradient summed over the filled places (``MaskedFillBackward1``; with a
number, ``MaskedFillBackward0``).

>>> import npgrad as torch
>>> torch.masked_fill(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([True, False, True]), 0.0)
tensor([0., 2., 0.])
""",
)

add_docstr(
    _C.gather,
    """The elements of ``input`` at the positions ``index`` gives along ``dim``:
``out[i][j] = input[i][index[i][j]]`` for ``dim=1``. ``index`` is an int64 tensor of
``input``'s rank, no larger than ``input`` outside ``dim``; the result has its shape.
The gradient is scattered (added) back into zeros (``GatherBackward0``);
``sparse_grad`` is accepted and saved, the gradient is always dense.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> torch.gather(t, 1, torch.tensor([[1], [0]]))
tensor([[2.],
        [3.]])
""",
)

add_docstr(
    _C.scatter,
    """A copy of ``input`` with the elements of ``src`` (or the number ``value``)
written at the positions ``index`` gives along ``dim``: ``out[i][index[i][j]] =
src[i][j]`` for ``dim=1``. ``src`` contributes its leading block of ``index``'s
shape. ``ScatterBackward0`` with a tensor (``src`` gets the gradient gathered back),
``ScatterBackward1`` with a number.

>>> import npgrad as torch
>>> src = torch.tensor([[5.0], [6.0]])
>>> torch.scatter(torch.zeros(2, 2), 1, torch.tensor([[1], [0]]), src)
tensor([[0., 5.],
        [6., 0.]])
""",
)

add_docstr(
    _C.scatter_add,
    """As :func:`torch.scatter`, but the elements of ``src`` are added, so that
repeated positions accumulate (``ScatterAddBackward0``).

>>> import npgrad as torch
>>> torch.scatter_add(torch.zeros(3), 0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0]))
tensor([4., 0., 2.])
""",
)

add_docstr(
    _C.index_select,
    """The slices of ``input`` along ``dim`` at the positions of the int64 vector
``index``, in its order (``IndexSelectBackward0``: the gradient is added back).

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> torch.index_select(t, 0, torch.tensor([1, 1]))
tensor([[3., 4.],
        [3., 4.]])
""",
)

add_docstr(
    _C.index_add,
    """A copy of ``input`` with ``alpha * source`` added at the slices ``index``
gives along ``dim`` (repeated positions accumulate). ``source`` has ``input``'s
shape except along ``dim``, where it has one slice per index (``IndexAddBackward0``).

>>> import npgrad as torch
>>> torch.index_add(torch.zeros(3), 0, torch.tensor([0, 2]), torch.tensor([1.0, 2.0]), alpha=2)
tensor([2., 0., 4.])
""",
)

add_docstr(
    _C.index_copy,
    """A copy of ``input`` with the slices of ``source`` written at the slices
``index`` gives along ``dim`` (``IndexCopyBackward0``: ``input`` gets no gradient where
it was overwritten).

>>> import npgrad as torch
>>> torch.index_copy(torch.zeros(3), 0, torch.tensor([2, 0]), torch.tensor([1.0, 2.0]))
tensor([2., 0., 1.])
""",
)

add_docstr(
    _C.masked_select,
    """A 1-D tensor of the elements of ``input`` where the bool ``mask`` is true (the
two broadcast together), in row-major order (``MaskedSelectBackward0``).

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> torch.masked_select(t, t > 2)
tensor([3., 4.])
""",
)

add_docstr(
    _C.masked_scatter,
    """A copy of ``input`` (broadcast with ``mask``) with the first elements of
``source``, in order, written where the bool ``mask`` is true
(``MaskedScatterBackward0``).

>>> import npgrad as torch
>>> torch.masked_scatter(torch.zeros(3), torch.tensor([True, False, True]), torch.tensor([1.0, 2.0]))
tensor([1., 0., 2.])
""",
)

add_docstr(
    _C.take_along_dim,
    """:func:`torch.gather` of ``input`` and ``indices`` broadcast to each other
outside ``dim`` (torch's composite: ``ExpandBackward0`` below ``GatherBackward0``); with
``dim=None``, of both flattened.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> torch.take_along_dim(t, torch.tensor([[1], [0]]), dim=1)
tensor([[2.],
        [3.]])
""",
)

add_docstr(
    _C.nonzero,
    """The positions of the nonzero elements of ``input``: an int64 tensor with a
row per element and a column per dim; with ``as_tuple=True`` a tuple of one int64
tensor per dim (as ``torch.where(condition)``). Not differentiable.

>>> import npgrad as torch
>>> torch.nonzero(torch.tensor([0.0, 1.0, 2.0]))
tensor([[1],
        [2]])
>>> torch.nonzero(torch.tensor([[0, 1], [1, 0]]), as_tuple=True)
(tensor([0, 1]), tensor([1, 0]))
""",
)

add_docstr(
    _C.index_put,
    """A copy of ``input`` with ``values`` (of ``input``'s dtype, broadcast to the
indexed shape) written at ``input[indices]``, ``indices`` a tuple of int64 or bool
tensors; with ``accumulate=True`` added, repeated positions accumulating
(``IndexPutBackward0``).

>>> import npgrad as torch
>>> torch.index_put(torch.zeros(3), (torch.tensor([0, 0]),), torch.tensor(1.0), accumulate=True)
tensor([2., 0., 0.])
""",
)

add_docstr(
    _C.index_put_,
    """``input[indices] = values`` (added with ``accumulate=True``), and returns
``input``; see :func:`torch.index_put`.

>>> import npgrad as torch
>>> x = torch.zeros(3)
>>> torch.index_put_(x, (torch.tensor([1]),), torch.tensor(5.0))
tensor([0., 5., 0.])
""",
)

add_docstr(
    _C.nan_to_num,
    """Replaces NaN with ``nan`` (default 0), positive infinity with ``posinf`` and
negative infinity with ``neginf`` (default the dtype's largest and lowest finite
values). Integer and bool tensors are returned as a copy. The gradient passes where
the input is finite (``NanToNumBackward0``).

>>> import npgrad as torch
>>> torch.nan_to_num(torch.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
tensor([0., 9., 1.])
""",
)

add_docstr(
    _C.isclose,
    """Whether each element of ``input`` is close to ``other``:
``|input - other| <= atol + rtol * |other|``, or equal (infinities of the same
sign), or both NaN with ``equal_nan``. Both tensors have one dtype; the result is a
bool tensor.

>>> import npgrad as torch
>>> torch.isclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0 + 1e-7, 2.1]))
tensor([ True, False])
""",
)

add_docstr(
    _C.allclose,
    """Whether every element of ``input`` is close to ``other``, as :func:`isclose`
tests it: a Python bool.

>>> import npgrad as torch
>>> torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
True
""",
)

add_docstr(
    _C.equal,
    """Whether ``input`` and ``other`` have the same sizes and equal elements (NaN
is not equal to itself): a Python bool.

>>> import npgrad as torch
>>> torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
True
""",
)

# ---------------------------------------------------------------- reductions

add_docstr(
    _C.max,
    """The largest element; with ``dim``, a named tuple ``(values, indices)``.

>>> import npgrad as torch
>>> torch.max(torch.tensor([[1.0, 5.0], [3.0, 4.0]]), dim=0).values
tensor([3., 5.])
""",
)

add_docstr(
    _C.min,
    """The smallest element; with ``dim``, a named tuple ``(values, indices)``.

>>> import npgrad as torch
>>> torch.min(torch.tensor([3.0, 1.0, 2.0]))
tensor(1.)
""",
)

add_docstr(
    _C.argmax,
    """The index (int64) of the largest element along ``dim``, or into the flattened input
when ``dim`` is ``None``. Not differentiable.

>>> import npgrad as torch
>>> torch.argmax(torch.tensor([[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]))
tensor(1)
""",
)

add_docstr(
    _C.argmin,
    """The index (int64) of the smallest element along ``dim``, or into the flattened input
when ``dim`` is ``None``. Not differentiable.

>>> import npgrad as torch
>>> torch.argmin(torch.tensor([[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]), dim=0, keepdim=True)
tensor([[0, 1, 1]])
""",
)

add_docstr(
    _C.any,
    """Whether any element is non-zero, over all elements or over ``dim``: a bool tensor.

>>> import npgrad as torch
>>> torch.any(torch.tensor([[0.0, 1.0], [0.0, 0.0]]), dim=1)
tensor([ True, False])
""",
)

add_docstr(
    _C.all,
    """Whether every element is non-zero, over all elements or over ``dim``: a bool tensor.

>>> import npgrad as torch
>>> torch.all(torch.tensor([1, 2, 0]))
tensor(False)
""",
)

add_docstr(
    _C.var_mean,
    """The tuple ``(var, mean)`` over ``dim``, with ``var``'s arguments.

>>> import npgrad as torch
>>> torch.var_mean(torch.tensor([1.0, 2.0, 3.0, 4.0]))
(tensor(1.6667), tensor(2.5000))
""",
)

add_docstr(
    _C.std_mean,
    """The tuple ``(std, mean)`` over ``dim``, with ``std``'s arguments.

>>> import npgrad as torch
>>> torch.std_mean(torch.tensor([1.0, 2.0, 3.0, 4.0]), correction=0)
(tensor(1.1180), tensor(2.5000))
""",
)

add_docstr(
    _C.cumsum,
    """The cumulative sum along ``dim``; integer and bool tensors give int64 unless
``dtype`` is given.

>>> import npgrad as torch
>>> torch.cumsum(torch.tensor([1.0, 2.0, 3.0]), 0)
tensor([1., 3., 6.])
""",
)

add_docstr(
    _C.cumprod,
    """The cumulative product along ``dim``; zeros in the input get their exact
gradient.

>>> import npgrad as torch
>>> torch.cumprod(torch.tensor([1.0, 2.0, 3.0]), 0)
tensor([1., 2., 6.])
""",
)

add_docstr(
    _C.sort,
    """``(values, indices)`` of a stable sort along ``dim``; NaN sorts as the largest
value.

>>> import npgrad as torch
>>> torch.sort(torch.tensor([3.0, 1.0, 2.0]), descending=True).indices
tensor([0, 2, 1])
""",
)

add_docstr(
    _C.argsort,
    """The indices that sort ``input`` along ``dim`` (int64, no gradient).

>>> import npgrad as torch
>>> torch.argsort(torch.tensor([3.0, 1.0, 2.0]))
tensor([1, 2, 0])
""",
)

add_docstr(
    _C.msort,
    """``input`` sorted along dim 0.

>>> import npgrad as torch
>>> torch.msort(torch.tensor([[3.0, 1.0], [2.0, 4.0]]))
tensor([[2., 1.],
        [3., 4.]])
""",
)

add_docstr(
    _C.topk,
    """``(values, indices)`` of the ``k`` largest (smallest when ``largest=False``)
elements along ``dim``, in sorted order.

>>> import npgrad as torch
>>> torch.topk(torch.tensor([3.0, 1.0, 2.0]), 2).values
tensor([3., 2.])
""",
)

add_docstr(
    _C.median,
    """The lower median of all elements (NaN if there is one), or ``(values, indices)``
along ``dim``.

>>> import npgrad as torch
>>> torch.median(torch.tensor([3.0, 1.0, 2.0, 4.0]))
tensor(2.)
""",
)

add_docstr(
    _C.kthvalue,
    """``(values, indices)`` of the ``k``-th smallest element along ``dim``.

>>> import npgrad as torch
>>> torch.kthvalue(torch.tensor([3.0, 1.0, 2.0]), 2).values
tensor(2.)
""",
)

add_docstr(
    _C.softmax,
    """``exp(input) / exp(input).sum(dim)``, computed stably.

>>> import npgrad as torch
>>> torch.softmax(torch.tensor([1.0, 1.0]), dim=0)
tensor([0.5000, 0.5000])
""",
)

add_docstr(
    _C.log_softmax,
    """``log(softmax(input, dim))``, computed stably.

>>> import npgrad as torch
>>> torch.log_softmax(torch.tensor([1.0, 1.0]), dim=0)
tensor([-0.6931, -0.6931])
""",
)

# ------------------------------------------------------------ views, copies

add_docstr(
    _C.reshape,
    """``input.reshape(shape)``: a view when the layout allows, else a copy.

>>> import npgrad as torch
>>> torch.reshape(torch.arange(6), (2, 3)).shape
torch.Size([2, 3])
""",
)

add_docstr(
    _C.split,
    """Views of consecutive pieces of ``tensor`` along ``dim``: each
``split_size_or_sections`` long (the last may be shorter), or of the lengths in
a list.

>>> import npgrad as torch
>>> [p.shape for p in torch.split(torch.zeros(5), 2)]
[torch.Size([2]), torch.Size([2]), torch.Size([1])]
""",
)

add_docstr(
    _C.split_with_sizes,
    """Views of consecutive pieces along ``dim`` with the lengths in
``split_sizes``.

>>> import npgrad as torch
>>> [p.shape for p in torch.split_with_sizes(torch.zeros(5), [1, 4])]
[torch.Size([1]), torch.Size([4])]
""",
)

add_docstr(
    _C.chunk,
    """At most ``chunks`` views along ``dim``, each of ``ceil(size / chunks)``
elements (the last may be shorter).

>>> import npgrad as torch
>>> [p.shape for p in torch.chunk(torch.zeros(5), 3)]
[torch.Size([2]), torch.Size([2]), torch.Size([1])]
""",
)

add_docstr(
    _C.unbind,
    """The slices of ``input`` along ``dim``, as a tuple of views.

>>> import npgrad as torch
>>> torch.unbind(torch.tensor([[1, 2], [3, 4]]))
(tensor([1, 2]), tensor([3, 4]))
""",
)

add_docstr(
    _C.clone,
    """A differentiable copy with its own memory.

>>> import npgrad as torch
>>> x = torch.zeros(2)
>>> torch.clone(x).data_ptr() != x.data_ptr()
True
""",
)

add_docstr(
    _C.cat,
    """Concatenates a sequence of tensors along an existing dimension.

>>> import npgrad as torch
>>> torch.cat([torch.zeros(2), torch.ones(1)])
tensor([0., 0., 1.])
""",
)

add_docstr(
    _C.stack,
    """Joins same-shaped tensors along a new dimension ``dim``.

>>> import npgrad as torch
>>> torch.stack([torch.zeros(2), torch.ones(2)]).shape
torch.Size([2, 2])
""",
)

# ---------------------------------------------------------------- warnings

add_docstr(
    _C.set_warn_always,
    """When ``b`` is True, warnings that npgrad (like torch) gives once per process
warn every time; False restores once per process.

>>> import npgrad as torch
>>> torch.set_warn_always(True)
>>> torch.is_warn_always_enabled()
True
>>> torch.set_warn_always(False)
""",
)

add_docstr(
    _C.is_warn_always_enabled,
    """Whether warnings given once per process warn every time (see
``set_warn_always``).

>>> import npgrad as torch
>>> torch.is_warn_always_enabled()
False
""",
)

# ------------------------------------------------------------------- modes

add_docstr(
    _C.is_grad_enabled,
    """Whether ops record a graph on this thread (see ``no_grad``, ``enable_grad``,
``set_grad_enabled``).

>>> import npgrad as torch
>>> torch.is_grad_enabled()
True
>>> with torch.no_grad():
...     torch.is_grad_enabled()
False
""",
)

add_docstr(
    _C.is_inference_mode_enabled,
    """Whether inference mode is on for this thread (see ``inference_mode``).

>>> import npgrad as torch
>>> torch.is_inference_mode_enabled()
False
>>> with torch.inference_mode():
...     torch.is_inference_mode_enabled()
True
""",
)

add_internal_docstr(
    _C,
    "_set_inference_mode",
    """Sets this thread's inference mode; ``npgrad.inference_mode`` calls it
(and sets grad mode to the opposite).

>>> import npgrad as torch
>>> torch._C._set_inference_mode(True)
>>> torch.is_inference_mode_enabled()
True
>>> torch._C._set_inference_mode(False)
""",
)

add_internal_docstr(
    _C,
    "_set_grad_enabled",
    """Sets this thread's grad mode; the managers in ``npgrad.autograd.grad_mode``
call it.

>>> import npgrad as torch
>>> torch._C._set_grad_enabled(False)
>>> torch.is_grad_enabled()
False
>>> torch._C._set_grad_enabled(True)
""",
)

add_docstr(
    _C.is_anomaly_enabled,
    """Whether anomaly detection is on (process-wide, as in torch).

>>> import npgrad as torch
>>> torch.is_anomaly_enabled()
False
""",
)

add_docstr(
    _C.is_anomaly_check_nan_enabled,
    """Whether anomaly mode also raises when a backward node returns NaN.

>>> import npgrad as torch
>>> with torch.autograd.set_detect_anomaly(True, check_nan=False):
...     torch.is_anomaly_check_nan_enabled()
False
""",
)

add_docstr(
    _C.set_anomaly_enabled,
    """Turns anomaly detection on or off; prefer ``npgrad.autograd.detect_anomaly``
and ``set_detect_anomaly``, which restore the previous state.

>>> import npgrad as torch
>>> torch.set_anomaly_enabled(True)
>>> torch.is_anomaly_enabled()
True
>>> torch.set_anomaly_enabled(False)
""",
)

add_docstr(
    _C.dtype,
    """The type of the elements of a tensor: ``npgrad.float32``, ``float64``,
``float16`` (also ``npgrad.half``), ``bfloat16``, an integer type or ``bool``. Prints as torch's
(``torch.float32``).

>>> import npgrad as torch
>>> torch.float64, torch.float64.is_floating_point, torch.float64.itemsize
(torch.float64, True, 8)
""",
    name="dtype",
)
add_docstr(
    _C.dtype.is_floating_point,
    """Whether tensors of this dtype are floating point.

>>> import npgrad as torch
>>> torch.int64.is_floating_point
False
""",
    name="dtype.is_floating_point",
)
add_docstr(
    _C.dtype.itemsize,
    """The size of one element in bytes.

>>> import npgrad as torch
>>> torch.float32.itemsize
4
""",
    name="dtype.itemsize",
)

# ------------------------------------- private entry points torch's code calls

add_docstr(
    _C._current_graph_task_id,
    """The id of the backward pass running on this thread, or -1 outside backward.

>>> import npgrad as torch
>>> torch._C._current_graph_task_id()
-1
>>> x = torch.ones(1, requires_grad=True)
>>> _ = x.register_hook(lambda g: print(torch._C._current_graph_task_id() >= 0))
>>> (x * 2).sum().backward()
True
""",
)

add_docstr(
    _C._current_autograd_node,
    """The node being executed by the backward pass on this thread, or ``None``.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> y = x.exp()
>>> _ = y.grad_fn.register_prehook(lambda g: print(torch._C._current_autograd_node().name()))
>>> y.sum().backward()
ExpBackward0
""",
)

add_docstr(
    _C._is_checkpoint_valid,
    """False while a node of a backward pass given ``inputs``
(``autograd.grad``, ``backward(inputs=...)``) runs on this thread, or
anything nested in such a node (its hooks, a reentrant backward); True
otherwise. The reentrant checkpoint refuses to run there.

>>> import npgrad as torch
>>> torch._C._is_checkpoint_valid()
True
>>> x = torch.ones(1, requires_grad=True)
>>> _ = x.register_hook(lambda g: print(torch._C._is_checkpoint_valid()))
>>> (x * 2).sum().backward()
True
>>> (x * 2).sum().backward(inputs=[x])
False
""",
)

add_docstr(
    _C._will_engine_execute_node,
    """Inside a backward pass: whether ``node`` (a ``grad_fn`` or a
``GradientEdge``'s node) will still run in it. RuntimeError for an object
that is not a node.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> a, b = x * 2, x * 3
>>> def check(grad):
...     print(torch._C._will_engine_execute_node(a.grad_fn),
...           torch._C._will_engine_execute_node(b.grad_fn))
>>> _ = a.register_hook(check)
>>> a.sum().backward()
True False
""",
)

add_internal_docstr(
    _C,
    "_will_engine_reach_node",
    """Inside a backward pass: whether ``node`` is part of the graph being run
(also when it already ran). Only valid inside backward.
""",
)

add_docstr(
    _C._increment_version,
    """Bumps the version counter of each tensor in ``tensors``; see
``npgrad.autograd.graph.increment_version``.

>>> import npgrad as torch
>>> x = torch.zeros(1)
>>> torch._C._increment_version([x])
>>> x._version
1
""",
)

add_internal_docstr(
    _C,
    "_run_backward",
    """The engine entry point behind ``npgrad.autograd.backward`` and ``grad``
(torch's ``Variable._execution_engine.run_backward``): runs the graph from
``tensors`` seeded with ``grad_tensors``. With ``accumulate_grad`` the
gradients go into ``.grad`` (pruned to ``inputs`` if given); otherwise the
gradients of ``inputs`` are returned. ``edge_type`` is the ``GradientEdge``
class, so inputs and outputs may be gradient edges.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> torch._C._run_backward((y,), (torch.tensor(1.0),), False, False, (x,), False, False)
(tensor([2., 4.]),)
""",
)

add_internal_docstr(
    _C,
    "_queue_callback",
    """Runs ``callback()`` when the current backward pass finishes (call it from
inside backward: a hook or a custom ``Function``'s backward). Reached as
``Variable._execution_engine.queue_callback``.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> _ = x.register_hook(lambda g: torch._C._queue_callback(lambda: print("done")))
>>> (x * 2).sum().backward()
done
""",
)

add_internal_docstr(
    _C,
    "_MultiGradState",
    """The native per-graph-task counting behind ``register_multi_grad_hook``: each
tensor's hook reports its gradient with ``_on_grad(index, grad)``, and the
state calls ``fn`` as ``mode`` (``"all"`` or ``"any"``) prescribes. Use
``register_multi_grad_hook``.""",
)

add_internal_docstr(
    _C,
    "_set_inplace_observer",
    """Installs ``fn(tensor)``, called right before any in-place op writes to a
tensor (``None`` removes it). ``allow_mutation_on_saved_tensors`` uses it to
clone saved tensors before they change.

>>> import npgrad as torch
>>> torch._C._set_inplace_observer(lambda t: print("writing", t))
>>> _ = torch.zeros(1).add_(1)
writing tensor([0.])
>>> torch._C._set_inplace_observer(None)
""",
)

add_internal_docstr(
    _C,
    "_live_node_count",
    """How many backward nodes exist now; tests use it to check that graphs are
freed.

>>> import npgrad as torch
>>> before = torch._C._live_node_count()
>>> y = torch.ones(1, requires_grad=True) * 2
>>> torch._C._live_node_count() > before
True
""",
)

# --------------------------------------------- _C._autograd: saved tensors

_A = _C._autograd

add_docstr(
    _A._push_saved_tensors_default_hooks,
    """Pushes a pair of default saved-tensor hooks for this thread; the innermost
pair wins. ``npgrad.autograd.graph.saved_tensors_hooks`` pushes and pops.

>>> import npgrad as torch
>>> torch._C._autograd._push_saved_tensors_default_hooks(lambda t: print("pack") or t, lambda t: t)
>>> y = torch.ones(1, requires_grad=True).exp()
pack
>>> torch._C._autograd._pop_saved_tensors_default_hooks()
""",
)

add_docstr(
    _A._push_saved_tensors_hooks_with_options,
    """npgrad's own: ``_push_saved_tensors_default_hooks`` with the options of
``npgrad.autograd.graph.saved_tensors_hooks``: ``compose`` (the pair's pack
result, a tensor, goes on to the enclosing pair) and ``prefetch`` (called with
each payload ahead of its unpack during backward). Popped by
``_pop_saved_tensors_default_hooks``.

>>> import npgrad as torch
>>> torch._C._autograd._push_saved_tensors_hooks_with_options(lambda t: t.detach(), lambda t: t, compose=True)
>>> torch.ones(1, requires_grad=True).exp().sum().backward()
>>> torch._C._autograd._pop_saved_tensors_default_hooks()
""",
)

add_docstr(
    _A._pop_saved_tensors_default_hooks,
    """Pops the innermost pair pushed by ``_push_saved_tensors_default_hooks``.
""",
)

add_docstr(
    _A._saved_tensors_hooks_disable,
    """Disables saved-tensor hooks on this thread: registering them raises
``RuntimeError(error_message)``. Used by ``disable_saved_tensors_hooks``.
""",
)

add_docstr(
    _A._saved_tensors_hooks_enable,
    """Enables saved-tensor hooks again (clears the disabled error message).
""",
)

add_docstr(
    _A._saved_tensors_hooks_get_disabled_error_message,
    """The message saved-tensor hooks are disabled with, or ``None`` when enabled.

>>> import npgrad as torch
>>> with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
...     torch._C._autograd._saved_tensors_hooks_get_disabled_error_message()
'no hooks here'
""",
)

add_docstr(
    _A._saved_tensors_hooks_is_enabled,
    """Whether saved-tensor hooks may be used on this thread.

>>> import npgrad as torch
>>> torch._C._autograd._saved_tensors_hooks_is_enabled()
True
""",
)

add_docstr(
    _A.SavedTensor,
    """A tensor saved by a backward node, as ``node._raw_saved_<name>``: lets a
hook pair be registered for this one saved tensor. Not constructible from
Python.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.exp()
>>> type(y.grad_fn._raw_saved_result).__name__
'SavedTensor'
""",
    name="SavedTensor",
)

add_docstr(
    _A.SavedTensor.register_hooks,
    """Packs the saved tensor now with ``pack_hook(tensor)`` and unpacks it with
``unpack_hook(packed)`` whenever it is needed. Once per saved tensor.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.pow(2)
>>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t.numpy(force=True).copy(),
...                                          lambda a: torch.from_numpy(a))
>>> y.sum().backward()
>>> x.grad
tensor([2., 2.])
""",
    name="SavedTensor.register_hooks",
)

add_docstr(
    _A._InputMetadata,
    """Shape, dtype and device of one gradient a node expects
(``node._input_metadata[i]``); incoming gradients are checked against it.

>>> import npgrad as torch
>>> y = torch.ones(2, 3, requires_grad=True).exp()
>>> y.grad_fn._input_metadata[0].shape
torch.Size([2, 3])
""",
    name="_InputMetadata",
)


# ---------------------------------------------------------------- shape ops
# The shape ops: (name, summary, example, printed result).
_SHAPE_DOCS = [
    (
        "flip",
        "A copy with the order of the elements reversed along each dim in ``dims``.",
        "torch.flip(torch.tensor([[1, 2], [3, 4]]), (1,))",
        "tensor([[2, 1],\n        [4, 3]])",
    ),
    (
        "fliplr",
        "A copy with the columns (dim 1) in reverse order.",
        "torch.fliplr(torch.tensor([[1, 2], [3, 4]]))",
        "tensor([[2, 1],\n        [4, 3]])",
    ),
    (
        "flipud",
        "A copy with the rows (dim 0) in reverse order.",
        "torch.flipud(torch.tensor([[1, 2], [3, 4]]))",
        "tensor([[3, 4],\n        [1, 2]])",
    ),
    (
        "roll",
        "A copy with the elements shifted by ``shifts`` along ``dims``, wrapping around\n(of the flattened tensor, in its shape, when ``dims`` is not given).",
        "torch.roll(torch.tensor([1, 2, 3, 4]), 1)",
        "tensor([4, 1, 2, 3])",
    ),
    (
        "tile",
        "The tensor repeated ``dims[i]`` times along dim ``i`` (``dims`` padded with\nleading ones to the tensor's dims): ``repeat``.",
        "torch.tile(torch.tensor([1, 2]), (2,))",
        "tensor([1, 2, 1, 2])",
    ),
    (
        "repeat_interleave",
        "Each element repeated ``repeats`` times (an int, or a tensor of one count per\nelement) along ``dim``, of the flattened tensor when ``dim`` is None. With only a\ntensor of counts: each index ``i`` repeated ``repeats[i]`` times.",
        "torch.repeat_interleave(torch.tensor([1, 2]), 2)",
        "tensor([1, 1, 2, 2])",
    ),
    (
        "narrow",
        "A view of ``length`` elements along ``dim`` from ``start`` (a slice).",
        "torch.narrow(torch.tensor([1, 2, 3, 4]), 0, 1, 2)",
        "tensor([2, 3])",
    ),
    (
        "flatten",
        "The dims ``start_dim`` to ``end_dim`` merged into one: a view when the layout\nallows it, else a copy (as ``reshape``).",
        "torch.flatten(torch.zeros(2, 3, 4), 1).shape",
        "torch.Size([2, 12])",
    ),
    (
        "unflatten",
        "A view with dim ``dim`` split into ``sizes`` (one of them may be -1).",
        "torch.unflatten(torch.zeros(2, 6), 1, (2, 3)).shape",
        "torch.Size([2, 2, 3])",
    ),
    (
        "movedim",
        "A view with the dims ``source`` moved to the positions ``destination``, the\nothers in their order (a permute).",
        "torch.movedim(torch.zeros(2, 3, 4), 0, -1).shape",
        "torch.Size([3, 4, 2])",
    ),
    (
        "moveaxis",
        "An alias of ``movedim``.",
        "torch.moveaxis(torch.zeros(2, 3, 4), 0, -1).shape",
        "torch.Size([3, 4, 2])",
    ),
    (
        "swapaxes",
        "An alias of ``transpose``: a view with two dims swapped.",
        "torch.swapaxes(torch.zeros(2, 3), 0, 1).shape",
        "torch.Size([3, 2])",
    ),
    (
        "swapdims",
        "An alias of ``transpose``: a view with two dims swapped.",
        "torch.swapdims(torch.zeros(2, 3), 0, 1).shape",
        "torch.Size([3, 2])",
    ),
    (
        "triu",
        "A copy with the elements below diagonal ``diagonal`` of the last two dims zeroed\n(positive: above the main diagonal).",
        "torch.triu(torch.ones(3, 3))",
        "tensor([[1., 1., 1.],\n        [0., 1., 1.],\n        [0., 0., 1.]])",
    ),
    (
        "tril",
        "A copy with the elements above diagonal ``diagonal`` of the last two dims zeroed\n(positive: above the main diagonal).",
        "torch.tril(torch.ones(3, 3), -1)",
        "tensor([[0., 0., 0.],\n        [1., 0., 0.],\n        [1., 1., 0.]])",
    ),
    (
        "diag",
        "A 1-D tensor on diagonal ``diagonal`` of a square matrix of zeros, or the\ndiagonal of a 2-D tensor (a copy).",
        "torch.diag(torch.tensor([1, 2]))",
        "tensor([[1, 0],\n        [0, 2]])",
    ),
    (
        "diag_embed",
        "Zeros with the last dim of ``input`` written on the diagonal ``offset`` of the\nresult's dims ``dim1`` and ``dim2``.",
        "torch.diag_embed(torch.tensor([1, 2]))",
        "tensor([[1, 0],\n        [0, 2]])",
    ),
]

for _name, _summary, _example, _result in _SHAPE_DOCS:
    add_docstr(getattr(_C, _name), f"{_summary}\n\n>>> import npgrad as torch\n>>> {_example}\n{_result}\n", name=_name)

# ------------------------------------------------- lerp, addcmul, addcdiv

add_docstr(
    _C.lerp,
    """``input + weight * (end - input)``; ``weight`` a number (``LerpBackward0``) or
a tensor (``LerpBackward1``), all broadcast together.

>>> import npgrad as torch
>>> torch.lerp(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 5.0]), 0.75)
tensor([2.5000, 4.2500])
""",
)

add_docstr(
    _C.addcmul,
    """``input + value * tensor1 * tensor2``, broadcast together (``AddcmulBackward0``).

>>> import npgrad as torch
>>> torch.addcmul(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), value=0.5)
tensor([2.5000, 5.0000])
""",
)

add_docstr(
    _C.addcdiv,
    """``input + value * tensor1 / tensor2``, broadcast together (``AddcdivBackward0``);
integer ``tensor1`` and ``tensor2`` are refused, as torch refuses them.

>>> import npgrad as torch
>>> torch.addcdiv(torch.ones(2), torch.tensor([1.0, 2.0]), torch.tensor([4.0, 4.0]))
tensor([1.2500, 1.5000])
""",
)

add_docstr(
    _C.binary_cross_entropy_with_logits,
    """torch's native form of ``nn.functional.binary_cross_entropy_with_logits``:
``reduction`` is its enum (0 none, 1 mean, 2 sum).

>>> import npgrad as torch
>>> torch.binary_cross_entropy_with_logits(torch.tensor([0.0]), torch.tensor([1.0]))
tensor(0.6931)
""",
)

# ------------------------------------------------------- _C._functions: nodes

_F = _C._functions
_Node = _F._NodeBase

add_docstr(
    _Node,
    """The native base of every backward node class (``MulBackward0``,
``AccumulateGrad``, ...). Each is a subclass of
``npgrad.autograd.graph.Node``; see there for the API.

>>> import npgrad as torch
>>> y = torch.ones(1, requires_grad=True) * 2
>>> isinstance(y.grad_fn, torch._C._functions._NodeBase)
True
""",
    name="_NodeBase",
)

add_docstr(
    _Node.name,
    """The node's name, torch's (``MulBackward0``).

>>> import npgrad as torch
>>> (torch.ones(1, requires_grad=True) * 2).grad_fn.name()
'MulBackward0'
""",
    name="_NodeBase.name",
)

add_docstr(
    _Node.next_functions,
    """One ``(node, input_nr)`` pair per input of the forward op, in order;
``(None, 0)`` for an input that needs no gradient.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> (x * 2).grad_fn.next_functions
((<AccumulateGrad object at 0x...>, 0), (None, 0))
""",
    name="_NodeBase.next_functions",
)

add_docstr(
    _Node.metadata,
    """A dict kept on the native node: the same dict on every access, alive as
long as the node.

>>> import npgrad as torch
>>> y = torch.ones(1, requires_grad=True) * 2
>>> y.grad_fn.metadata["tag"] = 1
>>> y.grad_fn.metadata
{'tag': 1}
""",
    name="_NodeBase.metadata",
)

add_internal_docstr(
    _Node,
    "_input_metadata",
    """One ``_InputMetadata`` (shape, dtype, device) per gradient the node
receives.
""",
)

add_internal_docstr(
    _Node,
    "_sequence_nr",
    """The creation order of the node on its thread; among ready nodes the engine
runs the highest first.
""",
)

add_internal_docstr(
    _Node,
    "_set_sequence_nr",
    """Overrides the sequence number (torch exposes the same setter for tests).
""",
)

add_internal_docstr(
    _Node,
    "_topological_nr",
    """The length of the longest path from this node to a leaf (0 for
``AccumulateGrad``); the engine uses it to prune.
""",
)

add_docstr(
    _Node.register_hook,
    """Registers ``fn(grad_inputs, grad_outputs) -> tuple | None`` to run after the
node; a returned tuple replaces ``grad_inputs``.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> y = x * 2
>>> h = y.grad_fn.register_hook(lambda gi, go: print(gi, go))
>>> y.sum().backward()
(tensor([2.]), None) (tensor([1.]),)
>>> h.remove()
""",
    name="_NodeBase.register_hook",
)

add_docstr(
    _Node.register_prehook,
    """Registers ``fn(grad_outputs) -> tuple | None`` to run before the node; a
returned tuple replaces ``grad_outputs``.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> y = x * 2
>>> h = y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
>>> y.sum().backward()
>>> x.grad
tensor([20.])
""",
    name="_NodeBase.register_prehook",
)

add_docstr(
    _Node._register_hook_dict,
    """Installs ``tensor._backward_hooks`` (its ``register_hook`` dict) as a tensor
pre-hook of this node, for the output ``tensor.output_nr``.
``Tensor.register_hook`` calls it on the first hook of a non-leaf.
""",
    name="_NodeBase._register_hook_dict",
)

add_docstr(
    _F.AccumulateGrad,
    """The node that writes the gradient of a leaf into ``leaf.grad``.

>>> import npgrad as torch
>>> x = torch.ones(1, requires_grad=True)
>>> acc = (x * 2).grad_fn.next_functions[0][0]
>>> acc.name(), acc.variable is x
('torch::autograd::AccumulateGrad', True)
""",
    name="AccumulateGrad",
)

add_docstr(
    _F.AccumulateGrad.variable,
    """The leaf tensor whose ``.grad`` this node writes.""",
    name="AccumulateGrad.variable",
)

add_docstr(
    _F.Error,
    """A node that raises its message when run: what differentiating the output
of a ``once_differentiable`` backward reaches.""",
    name="Error",
)

for _cls_name in dir(_F):
    _cls = getattr(_F, _cls_name)
    if isinstance(_cls, type) and issubclass(_cls, _Node) and not _cls.__doc__:
        add_docstr(
            _cls,
            f"""The backward node torch calls ``{_cls_name}``; its saved values are
the ``_saved_*`` attributes, and its API is ``npgrad.autograd.graph.Node``'s.""",
            name=_cls_name,
        )

add_internal_docstr(
    _F,
    "_function_apply",
    """Runs a custom ``Function``'s forward and records its backward node; what
``Function.apply`` calls.""",
)

add_internal_docstr(
    _F,
    "_delayed_error",
    """Returns ``outputs`` attached to an ``Error`` node carrying ``message``; used
by ``once_differentiable``.""",
)

add_internal_docstr(
    _C,
    "_FunctionBase",
    """The native part of a custom ``Function``'s ctx (``BackwardCFunction``):
it holds the backward node and the saved tensors.""",
)

add_internal_docstr(
    _C._FunctionBase,
    "name",
    """The backward node's name (``<Function name>Backward``), or ``None`` when the
call recorded no node.""",
)

add_internal_docstr(
    _C._FunctionBase,
    "saved_tensors",
    """The tensors passed to ``ctx.save_for_backward``, unpacked (with
version checks and saved-tensor hooks).

>>> import npgrad as torch
>>> class Square(torch.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * x * g
>>> x = torch.tensor([3.0], requires_grad=True)
>>> Square.apply(x).backward()
>>> x.grad
tensor([6.])
""",
)

# ---- Convolutions (bindings/conv.cpp)

add_docstr(
    _C.convolution,
    """The convolution of an ``(N, C, *spatial)`` input (one or two spatial dims) with an
``(out, C / groups, *kernel)`` weight, or with ``transposed`` its adjoint with a
``(C, out / groups, *kernel)`` weight; every list has one value per spatial dim (or
one for all). ``npgrad.nn.functional.conv2d`` and the others call it. The backward
node is ``ConvolutionBackward0``.

>>> import npgrad as torch
>>> torch.convolution(torch.ones(1, 1, 3), torch.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1)
tensor([[[2., 2.]]])
""",
)
add_internal_docstr(
    _C,
    "_conv_function",
    """``convolution`` as torch's ``conv1d``, ``conv2d`` and the transposed forms call it:
their node saves an absent bias's sizes as ``(0,)``.

>>> import npgrad as torch
>>> x = torch.ones(1, 1, 3, requires_grad=True)
>>> torch._C._conv_function(x, torch.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1).grad_fn._saved_bias_sym_sizes_opt
(0,)
""",
)
add_internal_docstr(
    _C,
    "_im2col",
    """torch's ``im2col`` (``npgrad.nn.functional.unfold``): the sliding blocks as columns.

>>> import npgrad as torch
>>> torch._C._im2col(torch.ones(1, 1, 2, 2), [2, 2], [1, 1], [0, 0], [1, 1]).shape
torch.Size([1, 4, 1])
""",
)
add_internal_docstr(
    _C,
    "_col2im",
    """torch's ``col2im`` (``npgrad.nn.functional.fold``): columns summed into their blocks.

>>> import npgrad as torch
>>> torch._C._col2im(torch.ones(1, 4, 1), [2, 2], [2, 2], [1, 1], [0, 0], [1, 1])
tensor([[[[1., 1.],
          [1., 1.]]]])
""",
)

add_docstr(
    _C.clamp_min,
    """``max(input, min)`` elementwise: ``min`` is a number (``ClampMinBackward0``) or
a tensor that broadcasts and gets a gradient (``ClampMinBackward1``).

>>> import npgrad as torch
>>> torch.clamp_min(torch.tensor([-1.0, 0.5]), 0.0)
tensor([0.0000, 0.5000])
""",
)
add_docstr(
    _C.clamp_max,
    """``min(input, max)`` elementwise: ``max`` is a number (``ClampMaxBackward0``) or
a tensor that broadcasts and gets a gradient (``ClampMaxBackward1``).

>>> import npgrad as torch
>>> torch.clamp_max(torch.tensor([-1.0, 0.5]), torch.tensor([0.0, 1.0]))
tensor([-1.0000,  0.5000])
""",
)

add_internal_docstr(
    _C,
    "_norm",
    """ATen's ``norm(input, p, dim, keepdim)`` (``NormBackward1``), which torch's
composites call (``pairwise_distance``); ``torch.norm`` records
``LinalgVectorNormBackward0``.

>>> import npgrad as torch
>>> torch._C._norm(torch.tensor([[3.0, 4.0]]), 2.0, [1])
tensor([5.])
""",
)

del _op, _cls_name, _cls, _name, _summary, _example, _result
