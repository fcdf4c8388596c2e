"""Named results of reductions, like ``torch.return_types``."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ._C import Tensor


class max(NamedTuple):  # noqa: A001
    """``(values, indices)`` of ``Tensor.max(dim)``.

    >>> import npgrad as torch
    >>> torch.tensor([[1.0, 5.0], [3.0, 4.0]]).max(dim=1).values
    tensor([5., 4.])
    """

    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: A001
    """``(values, indices)`` of ``Tensor.min(dim)``.

    >>> import npgrad as torch
    >>> torch.tensor([[1.0, 5.0], [3.0, 4.0]]).min(dim=1).indices
    tensor([0, 0])
    """

    values: Tensor
    indices: Tensor


class sort(NamedTuple):
    """``(values, indices)`` of ``Tensor.sort(dim)``.

    >>> import npgrad as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).sort().indices
    tensor([1, 2, 0])
    """

    values: Tensor
    indices: Tensor


class topk(NamedTuple):
    """``(values, indices)`` of ``Tensor.topk(k)``.

    >>> import npgrad as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).topk(2).values
    tensor([3., 2.])
    """

    values: Tensor
    indices: Tensor


class median(NamedTuple):
    """``(values, indices)`` of ``Tensor.median(dim)``.

    >>> import npgrad as torch
    >>> torch.tensor([[3.0, 1.0, 2.0]]).median(dim=1).values
    tensor([2.])
    """

    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):
    """``(values, indices)`` of ``Tensor.kthvalue(k)``.

    >>> import npgrad as torch
    >>> torch.tensor([3.0, 1.0, 2.0]).kthvalue(1).indices
    tensor(1)
    """

    values: Tensor
    indices: Tensor


def _structseq_repr(self: tuple) -> str:
    """As torch prints its return types: one field per line.

    >>> import npgrad as torch
    >>> torch.tensor([[1, 5], [3, 4]]).max(dim=1)
    torch.return_types.max(
    values=tensor([5, 4]),
    indices=tensor([1, 1]))
    """
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))  # type: ignore[attr-defined]
    return f"torch.return_types.{type(self).__name__}(\n{fields})"


# Every named result of this module prints as torch's.
for _cls in [c for c in list(globals().values()) if isinstance(c, type) and issubclass(c, tuple) and c is not tuple]:
    _cls.__repr__ = _structseq_repr  # type: ignore[method-assign]
