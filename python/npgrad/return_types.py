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
