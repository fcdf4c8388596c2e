"""The transformer layers of torch's ``torch/nn/modules/transformer.py``: encoder
and decoder layers (self-attention, cross-attention and a feed-forward block, each
with dropout, a residual connection and a ``LayerNorm`` after it, or before it with
``norm_first``), their stacks of deep copies, and the whole ``Transformer``.
torch's fused and nested-tensor inference paths are not taken (npgrad has no
nested tensors); the results are the same.

>>> import npgrad as torch
>>> layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
>>> encoder = torch.nn.TransformerEncoder(layer, num_layers=2)
>>> encoder(torch.randn(2, 5, 8)).shape
torch.Size([2, 5, 8])
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import Any

from ... import _creation
from ..._C import Tensor
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module, _typename
from .normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    # -inf above the diagonal: each position attends to itself and the ones before.
    return _creation.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    size = src.size()
    if len(size) == 2:
        return size[0]  # type: ignore[no-any-return]
    return size[1 if batch_first else 0]  # type: ignore[no-any-return]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    # The is_causal hint if given, else whether mask is the causal mask of size.
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        make_causal = mask.size() == causal.size() and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    # torch makes the n copies first and ModuleList then rejects a non-Module
    # with this error; checked first, a bad layer with a huge n fails at once
    # instead of copying for ever.
    if not isinstance(module, Module):
        raise TypeError(f"{_typename(module)} is not a Module subclass")
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _canonical_masks(
    mask: Tensor | None, padding_mask: Tensor | None, mask_name: str, padding_name: str, src: Tensor
) -> tuple[Tensor | None, Tensor | None]:
    # Both masks as additive floats of src's dtype, the padding mask first (its
    # dtype checked against the other's), as torch's encoder and encoder layer.
    padding_mask = F._canonical_mask(padding_mask, padding_name, F._none_or_dtype(mask), mask_name, src.dtype)
    mask = F._canonical_mask(mask, mask_name, None, "", src.dtype, check_other=False)
    return mask, padding_mask


class Transformer(Module):
    """An encoder of ``num_encoder_layers`` layers and a decoder of
    ``num_decoder_layers`` layers, each stack ending with a ``LayerNorm``
    (``custom_encoder``/``custom_decoder`` replace them); weights of two or more dims
    are drawn again with Xavier uniform.

    >>> import npgrad as torch
    >>> model = torch.nn.Transformer(8, 2, 1, 1, dim_feedforward=16, batch_first=True)
    >>> src, tgt = torch.randn(2, 5, 8), torch.randn(2, 3, 8)
    >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(3)).shape
    torch.Size([2, 3, 8])
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (
            d_model,
            nhead,
            dim_feedforward,
            dropout,
            activation,
            layer_norm_eps,
            batch_first,
            norm_first,
            bias,
        )
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args, **factory)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args, **factory)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The decoder's output for ``tgt`` over the encoder's memory of ``src``.

        >>> import npgrad as torch
        >>> model = torch.nn.Transformer(4, 2, 1, 1, 8, batch_first=True)
        >>> model(torch.ones(2, 3, 4), torch.ones(2, 2, 4)).shape
        torch.Size([2, 2, 4])
        """
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(  # type: ignore[no-any-return]
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of ``sz`` positions: ``-inf`` above the diagonal, ``0``
        elsewhere.

        >>> import npgrad as torch
        >>> torch.nn.Transformer.generate_square_subsequent_mask(3).tolist()
        [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then ``norm``
    if given. ``enable_nested_tensor`` is kept (and, as torch, turned off with a
    warning when the layer could not use it), but npgrad has no nested tensors: the
    padded computation is always the one run.

    >>> import npgrad as torch
    >>> layer = torch.nn.TransformerEncoderLayer(4, 2, 8)
    >>> encoder = torch.nn.TransformerEncoder(layer, 2, torch.nn.LayerNorm(4), enable_nested_tensor=False)
    >>> encoder(torch.ones(3, 2, 4), mask=encoder.layers[0].self_attn.in_proj_weight.new_zeros(3, 3)).shape
    torch.Size([3, 2, 4])
    """

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(
                f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Runs ``src`` through the layers (masks made additive floats once; a ``mask``
        equal to the causal mask sets ``is_causal`` unless given), then ``norm``.

        >>> import npgrad as torch
        >>> layer = torch.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
        >>> encoder = torch.nn.TransformerEncoder(layer, 1)
        >>> encoder(torch.ones(2, 3, 4), src_key_padding_mask=torch.tensor([[False, False, True]] * 2)).shape
        torch.Size([2, 3, 4])
        """
        mask, src_key_padding_mask = _canonical_masks(mask, src_key_padding_mask, "mask", "src_key_padding_mask", src)
        output = src
        first_layer = self.layers[0]
        seq_len = _get_seq_len(src, first_layer.self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


def _why_not_sparsity_fast_path(encoder_layer: Any) -> str:
    # torch's reasons, in its order, for a layer that cannot take nested tensors.
    name = "encoder_layer"
    if not isinstance(encoder_layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = encoder_layer.self_attn
    if encoder_layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not encoder_layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if encoder_layer.norm1.eps != encoder_layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer`` applied in turn to ``tgt`` over
    ``memory``, then ``norm`` if given.

    >>> import npgrad as torch
    >>> layer = torch.nn.TransformerDecoderLayer(4, 2, 8)
    >>> decoder = torch.nn.TransformerDecoder(layer, 2)
    >>> len(decoder.layers), decoder.layers[0] is decoder.layers[1]
    (2, False)
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """Runs ``tgt`` through the layers (a ``tgt_mask`` equal to the causal mask
        sets ``tgt_is_causal`` unless given), then ``norm``.

        >>> import npgrad as torch
        >>> decoder = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(4, 2, 8), 1)
        >>> mask = torch.nn.Transformer.generate_square_subsequent_mask(2)
        >>> decoder(torch.ones(2, 1, 4), torch.ones(3, 1, 4), tgt_mask=mask).shape
        torch.Size([2, 1, 4])
        """
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class _LayerBase(Module):
    # What the encoder and decoder layers share: torch's constructor (its
    # attention modules named in _ATTENTIONS, _NORMS norms and dropouts), the
    # feed-forward block, and the activation given by name or as a callable.
    _ATTENTIONS: tuple[str, ...] = ()
    _NORMS = 0

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        for name in self._ATTENTIONS:
            attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **factory)
            setattr(self, name, attn)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        for i in range(1, self._NORMS + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        for i in range(1, self._NORMS + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation
        self._init_extra()

    def _init_extra(self) -> None:
        pass

    def _self_attention(
        self,
        attn: MultiheadAttention,
        x: Tensor,
        mem: Tensor,
        mask: Tensor | None,
        padding: Tensor | None,
        causal: bool,
    ) -> Tensor:
        out = attn(x, mem, mem, attn_mask=mask, key_padding_mask=padding, is_causal=causal, need_weights=False)[0]
        return out  # type: ignore[no-any-return]

    def _sa_block(
        self, x: Tensor, attn_mask: Tensor | None, key_padding_mask: Tensor | None, is_causal: bool = False
    ) -> Tensor:
        return self.dropout1(self._self_attention(self.self_attn, x, x, attn_mask, key_padding_mask, is_causal))  # type: ignore[no-any-return]

    def _ff(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # type: ignore[no-any-return]


class TransformerEncoderLayer(_LayerBase):
    """Self-attention then a feed-forward block (``linear1``, activation, ``dropout``,
    ``linear2``), each followed by dropout and added to its input, with ``norm1`` and
    ``norm2`` after each sum, or before each block with ``norm_first``.
    ``activation``: ``"relu"``, ``"gelu"`` or a callable.

    >>> import npgrad as torch
    >>> layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu")
    >>> layer(torch.randn(5, 2, 8)).shape
    torch.Size([5, 2, 8])
    """

    __constants__ = ["norm_first"]
    _ATTENTIONS = ("self_attn",)
    _NORMS = 2

    def _init_extra(self) -> None:
        # Which activation torch's fused path would apply (1 relu, 2 gelu, 0 other).
        act = self.activation
        if act is F.relu or isinstance(act, ReLU):
            self.activation_relu_or_gelu = 1
        elif act is F.gelu or isinstance(act, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """The layer's output, shaped as ``src``; bool masks are ``True`` where not
        attended, float masks are added to the attention scores.

        >>> import npgrad as torch
        >>> layer = torch.nn.TransformerEncoderLayer(4, 2, 8, norm_first=True).eval()
        >>> layer(torch.ones(3, 4), src_mask=torch.zeros(3, 3, dtype=torch.bool)).shape
        torch.Size([3, 4])
        """
        src_mask, src_key_padding_mask = _canonical_masks(
            src_mask, src_key_padding_mask, "src_mask", "src_key_padding_mask", src
        )
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self._ff(x))  # type: ignore[no-any-return]


class TransformerDecoderLayer(_LayerBase):
    """Self-attention over ``tgt``, attention over ``memory`` (``multihead_attn``) and a
    feed-forward block, each followed by dropout and added to its input, with
    ``norm1``, ``norm2``, ``norm3`` after each sum, or before each block with
    ``norm_first``.

    >>> import npgrad as torch
    >>> layer = torch.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)
    >>> layer(torch.randn(2, 3, 8), torch.randn(2, 5, 8)).shape
    torch.Size([2, 3, 8])
    """

    __constants__ = ["norm_first"]
    _ATTENTIONS = ("self_attn", "multihead_attn")
    _NORMS = 3

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The layer's output, shaped as ``tgt``.

        >>> import npgrad as torch
        >>> layer = torch.nn.TransformerDecoderLayer(4, 2, 8)
        >>> mask = torch.nn.Transformer.generate_square_subsequent_mask(2)
        >>> layer(torch.ones(2, 1, 4), torch.ones(3, 1, 4), tgt_mask=mask, tgt_is_causal=True).shape
        torch.Size([2, 1, 4])
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(
        self,
        x: Tensor,
        mem: Tensor,
        attn_mask: Tensor | None,
        key_padding_mask: Tensor | None,
        is_causal: bool = False,
    ) -> Tensor:
        return self.dropout2(self._self_attention(self.multihead_attn, x, mem, attn_mask, key_padding_mask, is_causal))  # type: ignore[no-any-return]

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self._ff(x))  # type: ignore[no-any-return]
