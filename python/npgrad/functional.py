"""The functions torch keeps in ``torch.functional``: ``broadcast_shapes``,
``broadcast_tensors``, ``cdist`` and ``einsum`` (exported at the top level, as
``npgrad.broadcast_tensors``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _C
from ._C import Tensor
from ._size import Size

__all__ = ["broadcast_shapes", "broadcast_tensors", "cdist", "einsum"]


def _as_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for i, d in enumerate(dims):
        if not isinstance(d, int):
            raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(d).__name__}')")
    return dims


def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    """The shape that tensors of the given shapes broadcast to, as torch's.

    Each shape is a sequence of ints, or an int (a one-dimensional shape).

    >>> import npgrad
    >>> npgrad.broadcast_shapes((2, 1), (3,), 1)
    torch.Size([2, 3])
    """
    given = [_as_shape(shape) for shape in shapes]
    if any(d < 0 for dims in given for d in dims):
        raise ValueError("Attempting to broadcast a dimension with negative length!")
    common = [1] * max((len(dims) for dims in given), default=0)
    for index, (shape, dims) in enumerate(zip(shapes, given)):
        for d in range(-1, -len(dims) - 1, -1):
            if common[d] == 1:
                common[d] = dims[d]
            elif dims[d] not in (1, common[d]):
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {dims[d]} at {d}! Mismatching argument at "
                    f"index {index} had {shape if not isinstance(shape, int) else dims}; but expected shape "
                    f"should be broadcastable to {common}"
                )
    return Size(common)


def _infer_size(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of two shapes, with torch's error (infer_size)."""
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        size_a = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        size_b = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                f"at non-singleton dimension {i}"
            )
        out.append(size_b if size_a == 1 else size_a)
    return tuple(out)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common shape, as torch's: a tensor that has it
    already is returned as it is; the others are views (``ExpandBackward0``).

    >>> import npgrad
    >>> a, b = npgrad.broadcast_tensors(npgrad.tensor([[1.0], [2.0]]), npgrad.tensor([3.0, 4.0]))
    >>> a
    tensor([[1., 1.],
            [2., 2.]])
    >>> b.shape
    torch.Size([2, 2])
    """
    shape: tuple[int, ...] = ()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
        shape = _infer_size(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def _subscript(n: Any) -> str:
    """A label of einsum's sublist format: ``...`` or an int in [0, 52)."""
    if n is Ellipsis:
        return "..."
    # Compared as torch's are, so a label of another type raises torch's TypeError.
    if n >= 0 and n < 26:  # noqa: PLR1716
        return chr(ord("A") + n)
    if n >= 26 and n < 52:  # noqa: PLR1716
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args: Any) -> Tensor:
    """einsum(equation, *operands) -> Tensor

    The sum of products of the operands' elements over the dims the equation
    (Einstein notation) names, as torch's: implicit or explicit (``->``) output,
    ``...`` for broadcast dims, repeated labels for diagonals. The operands may
    also be one list, or given in the sublist format
    (``einsum(a, [0, 1], b, [1, 2], [0, 2])``). The pairs are contracted left to
    right by permute, reshape and bmm, so the graph is torch's.

    >>> import npgrad
    >>> a = npgrad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> npgrad.einsum("ij,jk->ik", a, a)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> npgrad.einsum("ii", a)
    tensor(5.)
    """
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )
    if isinstance(args[0], Tensor):
        # Sublist format: operand, labels, operand, labels, ..., [output labels].
        equation = ",".join("".join(_subscript(s) for s in labels) for labels in args[1::2])
        if len(args) % 2 == 1:
            equation += "->" + "".join(_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation = args[0]
        operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        # The old form: the operands as one list.
        return einsum(equation, *operands[0])
    return _C.einsum(equation, operands)


# torch.cdist's compute_mode strings as the mode of its native op.
_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2``
    (batch dims broadcast), as torch's: ``CdistBackward0``, or for ``p = 2`` by the
    matrix-product formula (``EuclideanDistBackward0`` under a ``ViewBackward0``) when
    ``compute_mode`` asks for it or, by default, when a side has more than 25 rows.
    ``CdistBackward0``'s gradient is not differentiable again (torch's
    ``NotImplementedError``); the matrix-product path's is.

    >>> import npgrad
    >>> npgrad.cdist(npgrad.tensor([[0.0, 0.0]]), npgrad.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for position, (name, value) in enumerate((("x1", x1), ("x2", x2)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"cdist(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
            )
    return _C._cdist(x1, x2, float(p), _CDIST_MODES[compute_mode])
