"""``Embedding`` and ``EmbeddingBag`` (torch's ``torch/nn/modules/sparse.py``): a
lookup table of ``num_embeddings`` vectors of size ``embedding_dim`` over
``F.embedding`` (or reduced over bags by ``F.embedding_bag``), initialised from
``N(0, 1)`` with the ``padding_idx`` row zeroed.

>>> import npgrad as torch
>>> torch.nn.Embedding(10, 3, padding_idx=-1)
Embedding(10, 3, padding_idx=9)
"""

from __future__ import annotations

from typing import Any

from ... import _creation
from ..._C import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _reset_table(table: Embedding | EmbeddingBag) -> None:
    """Both modules' ``reset_parameters``: the weight from ``N(0, 1)``, then the
    ``padding_idx`` row zeroed (through the module's method, as torch's)."""
    init.normal_(table.weight)
    table._fill_padding_idx_with_zero()


def _zero_padding_row(table: Embedding | EmbeddingBag) -> None:
    """Both modules' ``_fill_padding_idx_with_zero``."""
    if table.padding_idx is not None:
        with no_grad():
            table.weight[table.padding_idx].fill_(0)


class Embedding(Module):
    """The rows of ``weight`` named by an integer input: ``(*)`` indices give
    ``(*, embedding_dim)``. The ``padding_idx`` row gets no gradient; ``max_norm``
    renormalizes, in place, the looked-up rows whose norm exceeds it.

    >>> import npgrad as torch
    >>> emb = torch.nn.Embedding(3, 2, padding_idx=0)
    >>> emb(torch.tensor([[0, 0]])).detach()
    tensor([[[0., 0.],
             [0., 0.]]])
    """

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "padding_idx",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "sparse",
    ]
    num_embeddings: int
    embedding_dim: int
    padding_idx: int | None
    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool
    weight: Tensor
    sparse: bool

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            weight = _creation.empty((num_embeddings, embedding_dim), device=device, dtype=dtype)
            self.weight = Parameter(weight, requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Draws the weight from ``N(0, 1)`` again and zeroes the ``padding_idx`` row.

        >>> import npgrad as torch
        >>> emb = torch.nn.Embedding(2, 3, padding_idx=1)
        >>> emb.reset_parameters()
        >>> emb.weight[1].tolist()
        [0.0, 0.0, 0.0]
        """
        _reset_table(self)

    def _fill_padding_idx_with_zero(self) -> None:
        _zero_padding_row(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        """The sizes, then the settings that differ from their defaults.

        >>> import npgrad as torch
        >>> torch.nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0).extra_repr()
        '4, 2, max_norm=1.0, norm_type=1.0'
        """
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An ``Embedding`` whose weight is the 2-D ``embeddings`` (shared, not
        copied), frozen (``requires_grad=False``) unless ``freeze=False``.

        >>> import npgrad as torch
        >>> emb = torch.nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> emb(torch.tensor([1])), emb.weight.requires_grad
        (tensor([[3., 4.]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class EmbeddingBag(Module):
    """Sums, means or maxima over bags of embeddings (``F.embedding_bag``), without
    the per-row ``(*, embedding_dim)`` tensor: ``(B, N)`` inputs are ``B`` bags; a 1-D
    input is cut into bags by ``offsets``. The weight is drawn from ``N(0, 1)`` with
    the ``padding_idx`` row zeroed.

    >>> import npgrad as torch
    >>> bag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), mode="sum")
    >>> bag(torch.tensor([[0, 1], [1, 1]]))
    tensor([[4., 6.],
            [6., 8.]])
    """

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "mode",
        "sparse",
        "include_last_offset",
        "padding_idx",
    ]
    num_embeddings: int
    embedding_dim: int
    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool
    weight: Tensor
    mode: str
    sparse: bool
    include_last_offset: bool
    padding_idx: int | None

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= self.num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -self.num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_creation.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Draws the weight from ``N(0, 1)`` again and zeroes the ``padding_idx`` row.

        >>> import npgrad as torch
        >>> bag = torch.nn.EmbeddingBag(2, 3, padding_idx=0)
        >>> bag.reset_parameters()
        >>> bag.weight[0].tolist()
        [0.0, 0.0, 0.0]
        """
        _reset_table(self)

    def _fill_padding_idx_with_zero(self) -> None:
        _zero_padding_row(self)

    def forward(self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None) -> Tensor:
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        """The sizes and the mode, with the settings that differ from their defaults.

        >>> import npgrad as torch
        >>> torch.nn.EmbeddingBag(4, 2, mode="max", padding_idx=0).extra_repr()
        "4, 2, mode='max', padding_idx=0"
        """
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An ``EmbeddingBag`` whose weight is the 2-D ``embeddings`` (shared, not
        copied), frozen (``requires_grad=False``) unless ``freeze=False``.

        >>> import npgrad as torch
        >>> bag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor([[1.0, 2.0], [3.0, 5.0]]))
        >>> bag(torch.tensor([[0, 1]])), bag.weight.requires_grad
        (tensor([[2.0000, 3.5000]]), False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
