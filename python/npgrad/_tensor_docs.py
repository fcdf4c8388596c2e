"""Docstrings of ``npgrad.Tensor``'s methods and attributes, applied at import.

Most of ``Tensor`` is bound in C++ (csrc/bindings/tensor.cpp, ops.cpp), where
pybind11 gives each method only its signature line. As torch does in
``torch/_tensor_docs.py``, the texts live here and ``_C._add_docstr`` attaches
them; the signature line stays at the top of each docstring. ``__test__``
holds every text, so ``doctest`` runs their examples (tests_py/test_doctests.py).
"""

from __future__ import annotations

import re
import types

# _tensor first installs the methods written in Python, documented here too.
from . import _C, _tensor  # noqa: F401
from ._C import _add_docstr

__test__: dict[str, str] = {}


def add_docstr_all(method: str, docstr: str) -> None:
    """Attaches ``docstr`` to ``Tensor.<method>``.

    Native methods and properties go through ``_C._add_docstr`` (an error if
    one is documented twice). Methods written in Python (installed on
    ``Tensor`` by ``npgrad/_tensor.py``) keep an inline docstring if they have
    one: the text here is for those defined without one (lambdas).
    """
    obj = getattr(_C.Tensor, method)
    __test__[method] = docstr
    if isinstance(obj, types.FunctionType):
        if not obj.__doc__:
            obj.__doc__ = docstr
        return
    if isinstance(obj, property) and obj.fget is not None and isinstance(obj.fget, types.FunctionType):
        if not obj.__doc__:
            obj.__doc__ = docstr
        return
    _add_docstr(obj, docstr)


_add_docstr(
    _C.Tensor,
    """A multi-dimensional array with autograd, stored in a NumPy array.

Create tensors with the factories (``npgrad.tensor``, ``zeros``, ``ones``,
``rand``, ``from_numpy``, ...). A tensor that requires grad records the ops
applied to it in a graph of backward nodes (``grad_fn``), which
``backward()`` and ``npgrad.autograd.grad`` differentiate.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y
tensor(5., grad_fn=<SumBackward0>)
>>> y.backward()
>>> x.grad
tensor([2., 4.])
""",
)
__test__["Tensor"] = _C.Tensor.__doc__ or ""

# ------------------------------------------------------------- storage, shape

add_docstr_all(
    "numpy",
    """The tensor's data as a NumPy array sharing its memory. Raises RuntimeError
for a tensor that requires grad (use ``t.detach().numpy()``) unless
``force=True``.

>>> import npgrad as torch
>>> t = torch.zeros(3)
>>> a = t.numpy()
>>> a[0] = 5.0
>>> t
tensor([5., 0., 0.])
""",
)

add_docstr_all(
    "dtype",
    """The element type: ``npgrad.float32`` (the default), ``float64``,
``float16``, ``bfloat16``, an integer type or ``bool``.

>>> import npgrad as torch
>>> torch.tensor([1.0]).dtype
torch.float32
>>> torch.tensor([1, 2]).dtype
torch.int64
""",
)

add_docstr_all(
    "dim",
    """The number of dimensions.

>>> import npgrad as torch
>>> torch.zeros(2, 3).dim()
2
""",
)

add_docstr_all(
    "ndim",
    """The number of dimensions, as ``dim()``.

>>> import npgrad as torch
>>> torch.zeros(2, 3).ndim
2
""",
)

add_docstr_all(
    "numel",
    """The number of elements.

>>> import npgrad as torch
>>> torch.zeros(2, 3).numel()
6
""",
)

add_docstr_all(
    "nelement",
    """Alias of ``numel()``.

>>> import npgrad as torch
>>> torch.zeros(4).nelement()
4
""",
)

add_docstr_all(
    "element_size",
    """The size of one element in bytes.

>>> import npgrad as torch
>>> torch.zeros(1, dtype=torch.float64).element_size()
8
""",
)

add_docstr_all(
    "is_inference",
    """Whether the tensor was made in inference mode (``inference_mode``).

>>> import npgrad as torch
>>> with torch.inference_mode():
...     t = torch.ones(2)
>>> t.is_inference(), torch.ones(2).is_inference()
(True, False)
""",
)

add_docstr_all(
    "is_floating_point",
    """Whether the dtype is a floating one (only those can require grad).

>>> import npgrad as torch
>>> torch.tensor([1, 2]).is_floating_point()
False
""",
)

add_docstr_all(
    "is_contiguous",
    """Whether the elements are laid out in row-major order without gaps.

>>> import npgrad as torch
>>> x = torch.zeros(2, 3)
>>> x.is_contiguous(), x.t().is_contiguous()
(True, False)
""",
)

add_docstr_all(
    "stride",
    """The step, in elements, between neighbours along each dimension (or along
``dim``).

>>> import npgrad as torch
>>> x = torch.zeros(2, 3)
>>> x.stride()
(3, 1)
>>> x.t().stride(0)
1
""",
)

add_docstr_all(
    "item",
    """The value of a one-element tensor as a Python number.

>>> import npgrad as torch
>>> torch.tensor([2.5]).item()
2.5
""",
)

add_docstr_all(
    "__len__",
    """len(t): the size of the first dimension (TypeError for a 0-d tensor).

>>> import npgrad as torch
>>> len(torch.zeros(4, 2))
4
""",
)

add_docstr_all(
    "data_ptr",
    """The address of the first element. Views share their base's memory, so
aliasing shows in the addresses.

>>> import npgrad as torch
>>> x = torch.zeros(4)
>>> x[1:].data_ptr() - x.data_ptr() == x.element_size()
True
""",
)

add_docstr_all(
    "_version",
    """The version counter: incremented by every in-place write to the tensor's
storage (shared with its views). Saved tensors compare it at backward.

>>> import npgrad as torch
>>> x = torch.zeros(2)
>>> x._version
0
>>> x.add_(1)._version
1
""",
)

add_docstr_all(
    "_base",
    """For a view, the tensor whose memory it shares; ``None`` otherwise.

>>> import npgrad as torch
>>> x = torch.zeros(2, 2)
>>> x[0]._base is x, x._base
(True, None)
""",
)

add_docstr_all(
    "size",
    """The shape as an ``npgrad.Size`` (a tuple), or the size of dimension ``dim``.

>>> import npgrad as torch
>>> x = torch.zeros(2, 3)
>>> x.size()
torch.Size([2, 3])
>>> x.size(-1)
3
""",
)

add_docstr_all(
    "shape",
    """The shape as an ``npgrad.Size``; same as ``size()``.

>>> import npgrad as torch
>>> torch.zeros(2, 3).shape
torch.Size([2, 3])
""",
)

add_docstr_all(
    "device",
    """Always ``device(type='cpu')``: npgrad tensors live in host memory.

>>> import npgrad as torch
>>> torch.zeros(1).device
device(type='cpu')
""",
)

add_docstr_all(
    "is_cuda",
    """Always ``False``.

>>> import npgrad as torch
>>> torch.zeros(1).is_cuda
False
""",
)

add_docstr_all(
    "cpu",
    """The tensor itself (it is already on the CPU).

>>> import npgrad as torch
>>> x = torch.zeros(1)
>>> x.cpu() is x
True
""",
)

add_docstr_all(
    "tolist",
    """The data as (nested) Python lists of numbers.

>>> import npgrad as torch
>>> torch.tensor([[1, 2], [3, 4]]).tolist()
[[1, 2], [3, 4]]
""",
)

# ------------------------------------------------------- autograd attributes

add_docstr_all(
    "requires_grad",
    """Whether gradients are computed for this tensor. Settable on leaves
(only floating-point ones can require grad); non-leaves derive it from
their inputs.

>>> import npgrad as torch
>>> x = torch.ones(2)
>>> x.requires_grad
False
>>> x.requires_grad = True
>>> (x * 2).requires_grad
True
""",
)

add_docstr_all(
    "requires_grad_",
    """Sets ``requires_grad`` in place and returns the tensor.

>>> import npgrad as torch
>>> torch.zeros(2).requires_grad_()
tensor([0., 0.], requires_grad=True)
""",
)

add_docstr_all(
    "grad",
    """The gradient accumulated by ``backward()``: ``None`` until the first
backward reaches this leaf (or a non-leaf that called ``retain_grad()``).
Settable to a tensor of the same shape and dtype, or ``None``. Reading it on
a non-leaf that does not retain grad warns, as torch does.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> x.grad is None
True
>>> (3 * x).sum().backward()
>>> x.grad
tensor([3., 3.])
>>> x.grad = None
""",
)

add_docstr_all(
    "grad_fn",
    """The backward node (an ``npgrad.autograd.graph.Node``) that produced this
tensor, or ``None`` for a leaf. ``t.grad_fn is t.grad_fn`` holds.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = x.exp()
>>> y.grad_fn.name()
'ExpBackward0'
>>> x.grad_fn is None
True
""",
)

add_docstr_all(
    "is_leaf",
    """Whether the tensor is a leaf of the graph: it requires no grad, or it
requires grad and was created by the user (no ``grad_fn``). Only leaves get
``.grad`` filled by default.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> x.is_leaf, (x * 2).is_leaf
(True, False)
""",
)

add_docstr_all(
    "output_nr",
    """Which output of its ``grad_fn`` this tensor is (0 for a leaf).

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> (x * 2).output_nr
0
""",
)

add_docstr_all(
    "retains_grad",
    """Whether this non-leaf will have ``.grad`` filled (``retain_grad()`` was
called); always ``False`` for leaves.

>>> import npgrad as torch
>>> y = torch.ones(2, requires_grad=True) * 2
>>> y.retain_grad()
>>> y.retains_grad
True
""",
)

add_docstr_all(
    "retain_grad",
    """Makes ``backward()`` fill ``.grad`` on this non-leaf tensor too. A no-op on
leaves; an error on tensors that do not require grad.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> y = x * 2
>>> y.retain_grad()
>>> (y * y).sum().backward()
>>> y.grad
tensor([4., 4.])
""",
)

add_docstr_all(
    "detach",
    """A new tensor sharing this one's data (and version counter), cut from the
graph: no ``grad_fn``, ``requires_grad=False``.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> d = (x * 2).detach()
>>> d.requires_grad, d.grad_fn
(False, None)
""",
)

add_docstr_all(
    "detach_",
    """Detaches this tensor from the graph in place (not allowed on views).

>>> import npgrad as torch
>>> y = torch.ones(2, requires_grad=True) * 2
>>> y.detach_().requires_grad
False
""",
)

add_docstr_all(
    "data",
    """The same data as a tensor with no history and its own version counter,
so in-place changes through it are invisible to autograd. Assigning a tensor
replaces this tensor's data.

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> x.data.mul_(3)
tensor([3., 3.])
>>> x._version
0
""",
)

# ---------------------------------------------------------------- arithmetic

add_docstr_all(
    "sgn",
    """The sign of each element, ``torch.sgn(self)`` (``SgnBackward0``).

>>> import npgrad as torch
>>> torch.tensor([-2, 0, 5]).sgn()
tensor([-1,  0,  1])
""",
)

add_docstr_all(
    "square",
    """``self ** 2`` (``pow(self, 2)``, ``PowBackward0``).

>>> import npgrad as torch
>>> torch.tensor([1, -3]).square()
tensor([1, 9])
""",
)

add_docstr_all(
    "pow",
    """``self ** exponent`` elementwise; ``exponent`` is a number or a tensor.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).pow(2)
tensor([1., 4., 9.])
""",
)

add_docstr_all(
    "matmul",
    """Matrix product with NumPy's rules for 1-d and batched operands (``@``).

>>> import npgrad as torch
>>> a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> a.matmul(torch.tensor([1.0, 1.0]))
tensor([3., 7.])
""",
)

add_docstr_all(
    "outer",
    """The outer product with another 1-d tensor, see ``torch.outer``.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).outer(torch.tensor([3.0]))
tensor([[3.],
        [6.]])
""",
)

add_docstr_all(
    "kron",
    """The Kronecker product with ``other``, see ``torch.kron``.

>>> import npgrad as torch
>>> torch.tensor([[1.0], [2.0]]).kron(torch.ones(1, 2))
tensor([[1., 1.],
        [2., 2.]])
""",
)

add_docstr_all(
    "ger",
    """Alias of ``outer``.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).ger(torch.tensor([3.0]))
tensor([[3.],
        [6.]])
""",
)

# The op tables' methods: from each op's entry (their in-place forms below).


def _table_op_argument(op: dict) -> str:
    """The example's argument after the input (functions) or self (methods): none, or ``other``."""
    if op["family"] == "unary":
        return ""
    other = op["example_other"]
    if op["family"] == "reduction":
        return other  # the dims
    return f"torch.tensor({other})" if other.startswith("[") else other


for _op in _C._op_table:
    if not _op["public"]:
        continue
    _inplace = f" In place: ``{_op['inplace']}()``." if _op["inplace"] else ""
    _kind = {"unary": ", elementwise", "binary": ", elementwise and broadcasting"}.get(_op["family"], "")
    add_docstr_all(
        _op["name"],
        f"""{_op["summary"]}{_kind}.{_inplace}

>>> import npgrad as torch
>>> torch.tensor({_op["example_input"]}).{_op["name"]}({_table_op_argument(_op)})
{_op["example_output"]}
""",
    )

# The view table's methods and in-place view methods: from each op's entry.


def _view_nodes_doc(op: dict) -> str:
    """The backward nodes of a view op (squeeze's: one per form of ``dim``)."""
    if len(op["nodes"]) == 1:
        return f"Its backward node is ``{op['node']}``."
    return f"Its backward nodes are {', '.join(f'``{n}``' for n in op['nodes'])} (one per form of the call)."


for _op in _C._op_table:
    if _op["family"] != "view" or not _op["method"]:
        continue
    _inplace = f" In place: ``{_op['inplace']}()``." if _op["inplace"] else ""
    add_docstr_all(
        _op["name"],
        f"""{_op["summary"]}.{_inplace} {_view_nodes_doc(_op)}

>>> import npgrad as torch
>>> torch.tensor({_op["example_input"]}).{_op["name"]}({_op["example_other"]})
{_op["example_output"]}
""",
    )
    if _op["inplace"]:
        _nodes = " or ".join(f"``{n}``" for n in _op["inplace_view_nodes"])
        add_docstr_all(
            _op["inplace"],
            f"""In-place ``{_op["name"]}()`` ({_op["summary"]}): self's sizes and strides change, not its
elements, and self is returned; the version is bumped and the node recorded is {_nodes}.

>>> import npgrad as torch
>>> x = torch.tensor({_op["example_input"]})
>>> x.{_op["inplace"]}({_op["example_other"]}) is x
True
>>> x
{_op["example_output"]}
""",
        )

add_docstr_all(
    "clamp",
    """Limits every element to ``[min, max]`` (either bound may be ``None``, a number
or a tensor that broadcasts with self). The gradient is 1 where
``min <= x <= max`` and 0 elsewhere; tensor bounds get the rest.

>>> import npgrad as torch
>>> torch.tensor([-2.0, 0.5, 3.0]).clamp(min=0.0, max=1.0)
tensor([0.0000, 0.5000, 1.0000])
""",
)

add_docstr_all(
    "clip",
    """Alias for :meth:`clamp`.

>>> import npgrad as torch
>>> torch.tensor([-2.0, 0.5, 3.0]).clip(0.0, 1.0)
tensor([0.0000, 0.5000, 1.0000])
""",
)

add_docstr_all(
    "where",
    """``self if condition else other``, elementwise and broadcasting:
``torch.where(condition, self, other)``. ``other`` may be a number.

>>> import npgrad as torch
>>> x = torch.tensor([-1.0, 2.0])
>>> x.where(x > 0, 0.0)
tensor([0., 2.])
""",
)

add_docstr_all(
    "masked_fill",
    """self with ``value`` (a number or a 0-dim tensor) where the bool ``mask`` is
true; see :func:`torch.masked_fill`.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).masked_fill(torch.tensor([False, True]), -1.0)
tensor([ 1., -1.])
""",
)

add_docstr_all(
    "gather",
    """The elements at the positions ``index`` gives along ``dim``; see :func:`torch.gather`.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> t.gather(1, torch.tensor([[0], [0]]))
tensor([[1.],
        [3.]])
""",
)

add_docstr_all(
    "scatter",
    """A copy with ``src`` (or a number) written at the positions ``index`` gives along ``dim``; see :func:`torch.scatter`.

>>> import npgrad as torch
>>> torch.zeros(3).scatter(0, torch.tensor([1]), 2.0)
tensor([0., 2., 0.])
""",
)

add_docstr_all(
    "scatter_add",
    """A copy with ``src`` added at the positions ``index`` gives along ``dim``; see :func:`torch.scatter_add`.

>>> import npgrad as torch
>>> torch.zeros(3).scatter_add(0, torch.tensor([1, 1]), torch.tensor([1.0, 2.0]))
tensor([0., 3., 0.])
""",
)

add_docstr_all(
    "index_select",
    """The slices along ``dim`` at the positions ``index``; see :func:`torch.index_select`.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> t.index_select(1, torch.tensor([0]))
tensor([[1.],
        [3.]])
""",
)

add_docstr_all(
    "index_add",
    """A copy with ``alpha * source`` added at the slices ``index``; see :func:`torch.index_add`.

>>> import npgrad as torch
>>> torch.zeros(2).index_add(0, torch.tensor([1]), torch.tensor([3.0]))
tensor([0., 3.])
""",
)

add_docstr_all(
    "index_copy",
    """A copy with the slices of ``source`` written at the slices ``index``; see :func:`torch.index_copy`.

>>> import npgrad as torch
>>> torch.zeros(2).index_copy(0, torch.tensor([1]), torch.tensor([3.0]))
tensor([0., 3.])
""",
)

add_docstr_all(
    "masked_select",
    """The elements where the bool ``mask`` is true, as a 1-D tensor; see :func:`torch.masked_select`.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> t.masked_select(torch.tensor([True, False]))
tensor([1., 3.])
""",
)

add_docstr_all(
    "masked_scatter",
    """A copy with ``source``'s first elements written where ``mask`` is true; see :func:`torch.masked_scatter`.

>>> import npgrad as torch
>>> torch.zeros(2).masked_scatter(torch.tensor([True, False]), torch.tensor([9.0]))
tensor([9., 0.])
""",
)

add_docstr_all(
    "take_along_dim",
    """gather of self and ``indices`` broadcast outside ``dim``; see :func:`torch.take_along_dim`.

>>> import npgrad as torch
>>> t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> t.take_along_dim(torch.tensor([3, 0]))
tensor([4., 1.])
""",
)

add_docstr_all(
    "nonzero",
    """The positions of the nonzero elements; see :func:`torch.nonzero`.

>>> import npgrad as torch
>>> torch.tensor([0, 3, 0]).nonzero()
tensor([[1]])
""",
)

add_docstr_all(
    "index_put",
    """A copy with ``values`` written (or added) at ``self[indices]``; see :func:`torch.index_put`.

>>> import npgrad as torch
>>> torch.zeros(2).index_put((torch.tensor([1]),), torch.tensor(5.0))
tensor([0., 5.])
""",
)

add_docstr_all(
    "nan_to_num",
    """NaN, positive and negative infinity replaced; see :func:`torch.nan_to_num`.

>>> import npgrad as torch
>>> torch.tensor([float("nan"), float("-inf")]).nan_to_num(neginf=-1.0)
tensor([ 0., -1.])
""",
)

add_docstr_all(
    "isclose",
    """Whether each element is close to ``other``; see :func:`torch.isclose`.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).isclose(torch.tensor([1.0, 2.5]), atol=0.1)
tensor([ True, False])
""",
)

add_docstr_all(
    "allclose",
    """Whether every element is close to ``other``: a Python bool.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).allclose(torch.tensor([1.0, 2.5]), atol=0.6)
True
""",
)

add_docstr_all(
    "equal",
    """Whether ``other`` has the same sizes and equal elements: a Python bool.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0]).equal(torch.tensor([1.0, 2.0]))
True
""",
)

# ---------------------------------------------------------------- reductions

add_docstr_all(
    "argmax",
    """The index of the largest element along ``dim`` (of the flattened tensor by default).

>>> import npgrad as torch
>>> torch.tensor([[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]).argmax(dim=1)
tensor([1, 1])
""",
)

add_docstr_all(
    "argmin",
    """The index of the smallest element along ``dim`` (of the flattened tensor by default).

>>> import npgrad as torch
>>> torch.tensor([[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]).argmin()
tensor(0)
""",
)

add_docstr_all(
    "any",
    """Whether any element is non-zero (over ``dim`` if given): a bool tensor.

>>> import npgrad as torch
>>> torch.tensor([[0.0, 1.0], [0.0, 0.0]]).any()
tensor(True)
""",
)

add_docstr_all(
    "all",
    """Whether every element is non-zero (over ``dim`` if given): a bool tensor.

>>> import npgrad as torch
>>> torch.tensor([[True, False], [True, True]]).all(dim=1)
tensor([False,  True])
""",
)

add_docstr_all(
    "cumsum",
    """The cumulative sum along ``dim``, see ``torch.cumsum``.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).cumsum(0)
tensor([1., 3., 6.])
""",
)

add_docstr_all(
    "cumsum_",
    """In-place ``cumsum``; ``dtype``, if given, must be this tensor's.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).cumsum_(0)
tensor([1., 3., 6.])
""",
)

add_docstr_all(
    "cumprod",
    """The cumulative product along ``dim``, see ``torch.cumprod``.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).cumprod(0)
tensor([1., 2., 6.])
""",
)

add_docstr_all(
    "cumprod_",
    """In-place ``cumprod``; ``dtype``, if given, must be this tensor's.

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).cumprod_(0)
tensor([1., 2., 6.])
""",
)

add_docstr_all(
    "sort",
    """``(values, indices)`` of a stable sort along ``dim``, see ``torch.sort``.

>>> import npgrad as torch
>>> torch.tensor([3.0, 1.0, 2.0]).sort().values
tensor([1., 2., 3.])
""",
)

add_docstr_all(
    "argsort",
    """The indices that sort this tensor along ``dim``, see ``torch.argsort``.

>>> import npgrad as torch
>>> torch.tensor([3.0, 1.0, 2.0]).argsort(descending=True)
tensor([0, 2, 1])
""",
)

add_docstr_all(
    "msort",
    """This tensor sorted along dim 0, see ``torch.msort``.

>>> import npgrad as torch
>>> torch.tensor([3.0, 1.0, 2.0]).msort()
tensor([1., 2., 3.])
""",
)

add_docstr_all(
    "topk",
    """``(values, indices)`` of the ``k`` largest elements along ``dim``, see
``torch.topk``.

>>> import npgrad as torch
>>> torch.tensor([3.0, 1.0, 2.0]).topk(2, largest=False).indices
tensor([1, 2])
""",
)

add_docstr_all(
    "median",
    """The lower median, or ``(values, indices)`` along ``dim``, see ``torch.median``.

>>> import npgrad as torch
>>> torch.tensor([[3.0, 1.0, 2.0, 4.0]]).median(1).values
tensor([2.])
""",
)

add_docstr_all(
    "kthvalue",
    """``(values, indices)`` of the ``k``-th smallest element along ``dim``, see
``torch.kthvalue``.

>>> import npgrad as torch
>>> torch.tensor([3.0, 1.0, 2.0]).kthvalue(1).values
tensor(1.)
""",
)

add_docstr_all(
    "max",
    """The largest element; with ``dim``, a named tuple ``(values, indices)`` over
that dimension. Ties share the gradient evenly in the full reduction, as in
torch.

>>> import npgrad as torch
>>> x = torch.tensor([[1.0, 5.0], [3.0, 4.0]])
>>> x.max()
tensor(5.)
>>> x.max(dim=1).indices
tensor([1, 1])
""",
)

add_docstr_all(
    "min",
    """The smallest element; with ``dim``, a named tuple ``(values, indices)``.

>>> import npgrad as torch
>>> x = torch.tensor([[1.0, 5.0], [3.0, 4.0]])
>>> x.min(dim=0).values
tensor([1., 4.])
""",
)

add_docstr_all(
    "softmax",
    """``exp(x) / exp(x).sum(dim)`` along ``dim``, computed stably.

>>> import npgrad as torch
>>> torch.tensor([0.0, 1.0]).softmax(dim=0)
tensor([0.2689, 0.7311])
""",
)

add_docstr_all(
    "log_softmax",
    """``log(softmax(x, dim))``, computed stably.

>>> import npgrad as torch
>>> torch.tensor([0.0, 1.0]).log_softmax(dim=0)
tensor([-1.3133, -0.3133])
""",
)

# --------------------------------------------------------------------- views

add_docstr_all(
    "view_as",
    """``self.view(other.shape)``.

>>> import npgrad as torch
>>> torch.arange(4).view_as(torch.zeros(2, 2)).shape
torch.Size([2, 2])
""",
)

add_docstr_all(
    "reshape",
    """A tensor with the new shape: a view when the layout allows, a copy otherwise.

>>> import npgrad as torch
>>> torch.arange(6).reshape(3, -1).shape
torch.Size([3, 2])
""",
)

add_docstr_all(
    "expand_as",
    """``self.expand(other.shape)``.

>>> import npgrad as torch
>>> torch.tensor([1.0]).expand_as(torch.zeros(3))
tensor([1., 1., 1.])
""",
)

add_docstr_all(
    "split",
    """Views of consecutive pieces along ``dim``: each ``split_size`` long (the
last may be shorter), or of the lengths in a list. The views share one node and
may not be written in place.

>>> import npgrad as torch
>>> [p.shape for p in torch.zeros(5, 2).split(2)]
[torch.Size([2, 2]), torch.Size([2, 2]), torch.Size([1, 2])]
>>> [p.shape for p in torch.zeros(5, 2).split([1, 4])]
[torch.Size([1, 2]), torch.Size([4, 2])]
""",
)

add_docstr_all(
    "split_with_sizes",
    """Views of consecutive pieces along ``dim`` with the lengths in
``split_sizes`` (they must add up to the dimension's size).

>>> import npgrad as torch
>>> [p.shape for p in torch.zeros(2, 5).split_with_sizes([3, 2], dim=1)]
[torch.Size([2, 3]), torch.Size([2, 2])]
""",
)

add_docstr_all(
    "chunk",
    """At most ``chunks`` views along ``dim``, each of ``ceil(size / chunks)``
elements (the last may be shorter): a ``split``, as torch records it.

>>> import npgrad as torch
>>> [p.shape for p in torch.zeros(6, 4).chunk(3, dim=-1)]
[torch.Size([6, 2]), torch.Size([6, 2])]
""",
)

add_docstr_all(
    "unbind",
    """The slices along ``dim``, as a tuple of views without that dimension.

>>> import npgrad as torch
>>> [p.tolist() for p in torch.tensor([[1, 2], [3, 4]]).unbind(1)]
[[1, 3], [2, 4]]
""",
)

add_docstr_all(
    "__getitem__",
    """t[index]: basic indexing (ints, slices, ``None``, ``...``) gives a view;
advanced indexing (integer or bool tensors and lists) gives a copy.

>>> import npgrad as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> x[:, 1]
tensor([2., 4.], grad_fn=<SelectBackward0>)
>>> x[torch.tensor([1, 0])].grad_fn.name()
'IndexBackward0'
""",
)

add_docstr_all(
    "__setitem__",
    """t[index] = value: writes in place through the indexed view (or with
``index_put_`` for advanced indices); ``value`` is a tensor or a number.

>>> import npgrad as torch
>>> x = torch.zeros(3)
>>> x[1:] = 5.0
>>> x
tensor([0., 5., 5.])
""",
)

# ---------------------------------------------------------------- copies, dtype

add_docstr_all(
    "clone",
    """A copy with its own memory, differentiable (``CloneBackward0``).

>>> import npgrad as torch
>>> x = torch.ones(2, requires_grad=True)
>>> x.clone()
tensor([1., 1.], grad_fn=<CloneBackward0>)
""",
)

add_docstr_all(
    "contiguous",
    """The tensor itself if it is contiguous, else a contiguous copy.

>>> import npgrad as torch
>>> torch.zeros(2, 3).t().contiguous().is_contiguous()
True
""",
)

add_docstr_all(
    "to",
    """Converts the dtype (``to(torch.float64)``, ``to(dtype=...)``); a device
argument is accepted and ignored (everything is on the CPU). Returns the
tensor itself when nothing changes.

>>> import npgrad as torch
>>> x = torch.ones(2)
>>> x.to(torch.float64)
tensor([1., 1.], dtype=torch.float64)
>>> x.to("cpu") is x
True
""",
)

for _name, _dtype, _data, _out in (
    ("float", "float32", "[1, 2]", "tensor([1., 2.])"),
    ("double", "float64", "[1, 2]", "tensor([1., 2.], dtype=torch.float64)"),
    ("half", "float16", "[1, 2]", "tensor([1., 2.], dtype=torch.float16)"),
    ("bfloat16", "bfloat16", "[1, 2]", "tensor([1., 2.], dtype=torch.bfloat16)"),
    ("long", "int64", "[1.5, -2.5]", "tensor([ 1, -2])"),
    ("bool", "bool", "[0.0, 2.0]", "tensor([False,  True])"),
):
    add_docstr_all(
        _name,
        f"""``self.to(npgrad.{_dtype})``.

>>> import npgrad as torch
>>> torch.tensor({_data}).{_name}()
{_out}
""",
    )

# ------------------------------------------------------------------ in place

_INPLACE_NOTE = """In place: bumps the version counter of the storage, is an error on a
leaf that requires grad (outside ``no_grad``), and rebases the history of a
non-leaf (and of its base, through a view)."""

# torch's in-place form of a non-differentiable op (logical_not_): the result
# is converted to self's dtype, and no history is recorded.
_BOOL_INPLACE_NOTE = """The result is converted to self's dtype. Bumps the version counter of the
storage; not differentiable, so it records no history (and a leaf that requires
grad may be written)."""

for _name, _what, _example, _out in (
    ("zero_", "Fills with zeros", "x.zero_()", "tensor([0., 0.])"),
    ("fill_", "Fills with ``value`` (a number or a 0-d tensor)", "x.fill_(7)", "tensor([7., 7.])"),
    (
        "copy_",
        "Copies ``src`` (broadcast to self's shape) into self",
        "x.copy_(torch.tensor([1.0, 2.0]))",
        "tensor([1., 2.])",
    ),
    ("clamp_", "Limits every element to ``[min, max]``", "x.clamp_(max=0.5)", "tensor([0.5000, 0.5000])"),
    ("clip_", "Alias for ``clamp_()``", "x.clip_(max=0.5)", "tensor([0.5000, 0.5000])"),
    (
        "masked_fill_",
        "Writes ``value`` where the bool ``mask`` (broadcast to self's shape) is true",
        "x.masked_fill_(torch.tensor([True, False]), 3.0)",
        "tensor([3., 1.])",
    ),
    (
        "scatter_",
        "Writes ``src`` (or a number) at the positions ``index`` gives along ``dim``",
        "x.scatter_(0, torch.tensor([1]), 5.0)",
        "tensor([1., 5.])",
    ),
    (
        "scatter_add_",
        "Adds ``src`` at the positions ``index`` gives along ``dim``",
        "x.scatter_add_(0, torch.tensor([1, 1]), torch.tensor([2.0, 3.0]))",
        "tensor([1., 6.])",
    ),
    (
        "index_add_",
        "Adds ``alpha * source`` at the slices ``index`` gives along ``dim``",
        "x.index_add_(0, torch.tensor([0]), torch.tensor([2.0]), alpha=2)",
        "tensor([5., 1.])",
    ),
    (
        "index_copy_",
        "Writes the slices of ``source`` at the slices ``index`` gives along ``dim``",
        "x.index_copy_(0, torch.tensor([1]), torch.tensor([7.0]))",
        "tensor([1., 7.])",
    ),
    (
        "masked_scatter_",
        "Writes the first elements of ``source`` where the bool ``mask`` is true",
        "x.masked_scatter_(torch.tensor([False, True]), torch.tensor([4.0, 5.0]))",
        "tensor([1., 4.])",
    ),
    (
        "index_put_",
        "Writes (or with ``accumulate=True`` adds) ``values`` at ``self[indices]``",
        "x.index_put_((torch.tensor([0]),), torch.tensor(3.0), accumulate=True)",
        "tensor([4., 1.])",
    ),
    (
        "nan_to_num_",
        "Replaces NaN and infinities, as ``nan_to_num()`` does",
        "x.nan_to_num_()",
        "tensor([1., 1.])",
    ),
):
    add_docstr_all(
        _name,
        f"""{_what}, and returns self. {_INPLACE_NOTE}

>>> import npgrad as torch
>>> x = torch.ones(2)
>>> {_example}
{_out}
>>> x._version
1
""",
    )

for _op in _C._activation_table:
    if _op["binding"] == "torch_and_method":
        add_docstr_all(
            _op["name"],
            f"""{_op["summary"]}, elementwise. Its backward node is ``{_op["node"]}``.

>>> import npgrad as torch
>>> torch.tensor({_op["example_input"]}).{_op["name"]}()
{_op["example_output"]}
""",
        )

# The in-place comparisons (eq_): in self's dtype, and differentiable with zero gradients.
_COMPARISON_INPLACE_NOTE = """The result is converted to self's dtype. Bumps the version counter of the
storage and, as another in-place op, is an error on a leaf that requires grad; the
node it records (``{}`` for a tensor ``other``, ``{}`` for a number)
gives zero gradients."""


def _inplace_note(op: dict) -> str:
    if op["node"]:
        return _INPLACE_NOTE
    if op.get("inplace_nodes"):
        return _COMPARISON_INPLACE_NOTE.format(*op["inplace_nodes"])
    return _BOOL_INPLACE_NOTE


def _inplace_example_output(op: dict) -> str:
    """The example's printed self after the in-place form: a binary bool-valued op's
    result is written into the float example input as 0. and 1."""
    out = op["example_output"]
    if op["node"] or op["family"] != "binary":
        return out
    values = ", ".join("1." if word == "True" else "0." for word in re.findall(r"True|False", out))
    return f"tensor([{values}])"


for _op in _C._op_table:
    if not _op["public"]:
        continue
    if _op["inplace"]:
        add_docstr_all(
            _op["inplace"],
            f"""In-place ``{_op["name"]}()`` ({_op["summary"]}), and returns self. {_inplace_note(_op)}

>>> import npgrad as torch
>>> x = torch.tensor({_op["example_input"]})
>>> x.{_op["inplace"]}({_table_op_argument(_op)})
{_inplace_example_output(_op)}
>>> x._version
1
""",
        )

add_docstr_all(
    "sgn_",
    """In-place ``sgn()``, and returns self (``SgnBackward0``, saving the original
self and the result). """
    + _INPLACE_NOTE
    + """

>>> import npgrad as torch
>>> torch.tensor([-2.0, 0.0, 5.0]).sgn_()
tensor([-1.,  0.,  1.])
""",
)

add_docstr_all(
    "square_",
    """In-place ``square()``, and returns self: torch records it as ``pow_(2)``
(``PowBackward0``). """
    + _INPLACE_NOTE
    + """

>>> import npgrad as torch
>>> torch.tensor([1, -3]).square_()
tensor([1, 9])
""",
)

add_docstr_all(
    "pow_",
    """In-place ``pow()``, and returns self: ``PowBackward0`` for a number
``exponent``, ``PowBackward1`` for a tensor (broadcast to self's shape); a result
type self cannot hold (a float power of an integer tensor) is an error. """
    + _INPLACE_NOTE
    + """

>>> import npgrad as torch
>>> torch.tensor([1.0, 2.0, 3.0]).pow_(torch.tensor([2.0, 2.0, 0.5]))
tensor([1.0000, 4.0000, 1.7321])
""",
)

# The shape ops: (name, summary, example, printed result).
_SHAPE_DOCS = [
    (
        "flip",
        "A copy with the order of the elements reversed along each dim in ``dims``.",
        "torch.tensor([[1, 2], [3, 4]]).flip(0)",
        "tensor([[3, 4],\n        [1, 2]])",
    ),
    (
        "fliplr",
        "A copy with the columns (dim 1) in reverse order.",
        "torch.tensor([[1, 2], [3, 4]]).fliplr()",
        "tensor([[2, 1],\n        [4, 3]])",
    ),
    (
        "flipud",
        "A copy with the rows (dim 0) in reverse order.",
        "torch.tensor([[1, 2], [3, 4]]).flipud()",
        "tensor([[3, 4],\n        [1, 2]])",
    ),
    (
        "roll",
        "A copy with the elements shifted by ``shifts`` along ``dims``, wrapping around\n(of the flattened tensor, in its shape, when ``dims`` is not given).",
        "torch.tensor([[1, 2], [3, 4]]).roll(1, 1)",
        "tensor([[2, 1],\n        [4, 3]])",
    ),
    (
        "repeat",
        "The tensor repeated ``repeats[i]`` times along dim ``i`` (extra leading\n``repeats`` add dims).",
        "torch.tensor([1, 2]).repeat(2, 2)",
        "tensor([[1, 2, 1, 2],\n        [1, 2, 1, 2]])",
    ),
    (
        "tile",
        "``repeat``, with ``dims`` padded with leading ones to the tensor's dims.",
        "torch.tensor([[1, 2]]).tile(2)",
        "tensor([[1, 2, 1, 2]])",
    ),
    (
        "repeat_interleave",
        "Each element repeated ``repeats`` times (an int, or a tensor of one count per\nelement) along ``dim``, of the flattened tensor when ``dim`` is None.",
        "torch.tensor([[1, 2], [3, 4]]).repeat_interleave(torch.tensor([1, 2]), dim=0)",
        "tensor([[1, 2],\n        [3, 4],\n        [3, 4]])",
    ),
    (
        "narrow",
        "A view of ``length`` elements along ``dim`` from ``start`` (a slice).",
        "torch.tensor([1, 2, 3, 4]).narrow(0, 1, 2)",
        "tensor([2, 3])",
    ),
    (
        "flatten",
        "The dims ``start_dim`` to ``end_dim`` merged into one: a view when the layout\nallows it, else a copy (as ``reshape``).",
        "torch.zeros(2, 3, 4).flatten().shape",
        "torch.Size([24])",
    ),
    (
        "unflatten",
        "A view with dim ``dim`` split into ``sizes`` (one of them may be -1).",
        "torch.zeros(2, 6).unflatten(-1, (3, -1)).shape",
        "torch.Size([2, 3, 2])",
    ),
    (
        "movedim",
        "A view with the dims ``source`` moved to the positions ``destination``, the\nothers in their order (a permute).",
        "torch.zeros(2, 3, 4).movedim((0, 1), (2, 0)).shape",
        "torch.Size([3, 4, 2])",
    ),
    ("moveaxis", "An alias of ``movedim``.", "torch.zeros(2, 3, 4).moveaxis(-1, 0).shape", "torch.Size([4, 2, 3])"),
    (
        "swapaxes",
        "An alias of ``transpose``: a view with two dims swapped.",
        "torch.zeros(2, 3, 4).swapaxes(0, 2).shape",
        "torch.Size([4, 3, 2])",
    ),
    (
        "swapdims",
        "An alias of ``transpose``: a view with two dims swapped.",
        "torch.zeros(2, 3, 4).swapdims(0, 2).shape",
        "torch.Size([4, 3, 2])",
    ),
    (
        "triu",
        "A copy with the elements below diagonal ``diagonal`` of the last two dims zeroed.",
        "torch.ones(2, 3).triu(1)",
        "tensor([[0., 1., 1.],\n        [0., 0., 1.]])",
    ),
    (
        "tril",
        "A copy with the elements above diagonal ``diagonal`` of the last two dims zeroed.",
        "torch.ones(2, 3).tril()",
        "tensor([[1., 0., 0.],\n        [1., 1., 0.]])",
    ),
    ("triu_", "``triu`` in place.", "torch.ones(2, 2).triu_()", "tensor([[1., 1.],\n        [0., 1.]])"),
    ("tril_", "``tril`` in place.", "torch.ones(2, 2).tril_()", "tensor([[1., 0.],\n        [1., 1.]])"),
    (
        "diag",
        "A 1-D tensor on diagonal ``diagonal`` of a square matrix of zeros, or the\ndiagonal of a 2-D tensor (a copy).",
        "torch.tensor([[1, 2], [3, 4]]).diag(1)",
        "tensor([2])",
    ),
    (
        "diag_embed",
        "Zeros with the last dim written on the diagonal ``offset`` of the result's dims\n``dim1`` and ``dim2``.",
        "torch.tensor([1, 2]).diag_embed(1)",
        "tensor([[0, 1, 0],\n        [0, 0, 2],\n        [0, 0, 0]])",
    ),
    (
        "T",
        "The dims reversed (a permute); torch warns for tensors that are not 2-D.",
        "torch.tensor([[1, 2], [3, 4]]).T",
        "tensor([[1, 3],\n        [2, 4]])",
    ),
    (
        "mT",
        "The last two dims swapped: the transpose of a batch of matrices, as a view.",
        "torch.zeros(5, 2, 3).mT.shape",
        "torch.Size([5, 3, 2])",
    ),
    (
        "H",
        "The conjugate transpose of a matrix (the transpose, for real dtypes).",
        "torch.tensor([[1, 2], [3, 4]]).H",
        "tensor([[1, 3],\n        [2, 4]])",
    ),
    (
        "mH",
        "The conjugate transpose of a batch of matrices (``mT``, for real dtypes).",
        "torch.zeros(5, 2, 3).mH.shape",
        "torch.Size([5, 3, 2])",
    ),
]

for _name, _summary, _example, _result in _SHAPE_DOCS:
    add_docstr_all(_name, f"{_summary}\n\n>>> import npgrad as torch\n>>> {_example}\n{_result}\n")

# lerp, addcmul, addcdiv and their in-place forms.
_TERNARY_DOCS = [
    (
        "lerp",
        "``self + weight * (end - self)``, see ``torch.lerp``.",
        "torch.zeros(2).lerp(torch.ones(2), 0.25)",
        "tensor([0.2500, 0.2500])",
    ),
    (
        "lerp_",
        "In-place ``lerp``.",
        "torch.zeros(2).lerp_(torch.ones(2), torch.tensor([0.5, 1.0]))",
        "tensor([0.5000, 1.0000])",
    ),
    (
        "addcmul",
        "``self + value * tensor1 * tensor2``, see ``torch.addcmul``.",
        "torch.ones(2).addcmul(torch.ones(2), torch.tensor([2.0, 3.0]))",
        "tensor([3., 4.])",
    ),
    (
        "addcmul_",
        "In-place ``addcmul``.",
        "torch.ones(2).addcmul_(torch.ones(2), torch.ones(2), value=-1)",
        "tensor([0., 0.])",
    ),
    (
        "addcdiv",
        "``self + value * tensor1 / tensor2``, see ``torch.addcdiv``.",
        "torch.ones(2).addcdiv(torch.ones(2), torch.tensor([2.0, 4.0]))",
        "tensor([1.5000, 1.2500])",
    ),
    (
        "addcdiv_",
        "In-place ``addcdiv``.",
        "torch.zeros(2).addcdiv_(torch.ones(2), torch.tensor([2.0, 4.0]), value=2)",
        "tensor([1.0000, 0.5000])",
    ),
]

for _name, _summary, _example, _result in _TERNARY_DOCS:
    add_docstr_all(_name, f"{_summary}\n\n>>> import npgrad as torch\n>>> {_example}\n{_result}\n")

# clamp's one-sided forms (numbers or tensors as bounds).
_CLAMP_DOCS = [
    (
        "clamp_min",
        "``max(self, min)`` elementwise, see ``torch.clamp_min``.",
        "torch.tensor([-1.0, 0.5]).clamp_min(0.0)",
        "tensor([0.0000, 0.5000])",
    ),
    (
        "clamp_max",
        "``min(self, max)`` elementwise, see ``torch.clamp_max``.",
        "torch.tensor([-1.0, 0.5]).clamp_max(0.0)",
        "tensor([-1.,  0.])",
    ),
    (
        "clamp_min_",
        "In-place ``clamp_min``.",
        "torch.tensor([-1.0, 0.5]).clamp_min_(torch.tensor([0.0, 1.0]))",
        "tensor([0., 1.])",
    ),
    ("clamp_max_", "In-place ``clamp_max``.", "torch.tensor([-1.0, 0.5]).clamp_max_(0.0)", "tensor([-1.,  0.])"),
]
for _name, _summary, _example, _result in _CLAMP_DOCS:
    add_docstr_all(_name, f"{_summary}\n\n>>> import npgrad as torch\n>>> {_example}\n{_result}\n")
