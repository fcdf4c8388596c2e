"""Activation modules (torch's ``torch/nn/modules/activation.py``): each
holds its function's settings and calls it from ``nn.functional`` in
``forward``; ``extra_repr`` prints the settings as torch does.

>>> import npgrad as torch
>>> torch.nn.LeakyReLU(0.2, inplace=True)
LeakyReLU(negative_slope=0.2, inplace=True)
"""

from __future__ import annotations

import warnings
from typing import Any

from ... import _creation
from ..._C import Tensor
from .. import functional as F
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "ReLU",
    "ReLU6",
    "SELU",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


class _InplaceOnly(Module):
    # An activation whose only setting is ``inplace``.
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Stateless(Module):
    # An activation without settings; torch's accept and ignore arguments.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()


class ReLU(_InplaceOnly):
    """``max(0, x)``, as ``F.relu``.

    >>> import npgrad as torch
    >>> torch.nn.ReLU()(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)


class SELU(_InplaceOnly):
    """Scaled ELU, as ``F.selu``.

    >>> import npgrad as torch
    >>> torch.nn.SELU()(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.selu(input, self.inplace)


class SiLU(_InplaceOnly):
    """``x * sigmoid(x)``, as ``F.silu``.

    >>> import npgrad as torch
    >>> torch.nn.SiLU()(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(input, inplace=self.inplace)


class Mish(_InplaceOnly):
    """``x * tanh(softplus(x))``, as ``F.mish``.

    >>> import npgrad as torch
    >>> torch.nn.Mish()(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_InplaceOnly):
    """Piecewise linear sigmoid, as ``F.hardsigmoid``; no ``extra_repr``.

    >>> import npgrad as torch
    >>> torch.nn.Hardsigmoid(inplace=True)
    Hardsigmoid()
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardswish(_InplaceOnly):
    """``x * hardsigmoid(x)``, as ``F.hardswish``; no ``extra_repr``.

    >>> import npgrad as torch
    >>> torch.nn.Hardswish()(torch.tensor([-4.0, 1.0]))
    tensor([-0.0000,  0.6667])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardswish(input, self.inplace)

    def extra_repr(self) -> str:
        return ""


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``, as ``F.hardtanh``
    (``min_value``/``max_value``: deprecated spellings).

    >>> import npgrad as torch
    >>> torch.nn.Hardtanh(-2.0, 2.0)(torch.tensor([-3.0, 1.0]))
    tensor([-2.,  1.])
    """

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning, stacklevel=2
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning, stacklevel=2
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``, as ``F.relu6`` (a ``Hardtanh(0, 6)``).

    >>> import npgrad as torch
    >>> torch.nn.ReLU6()(torch.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` if positive else ``negative_slope * x``, as ``F.leaky_relu``.

    >>> import npgrad as torch
    >>> torch.nn.LeakyReLU(0.5)(torch.tensor([-2.0, 2.0]))
    tensor([-1.,  2.])
    """

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class _AlphaActivation(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class ELU(_AlphaActivation):
    """``x`` if positive else ``alpha * (exp(x) - 1)``, as ``F.elu``.

    >>> import npgrad as torch
    >>> torch.nn.ELU()
    ELU(alpha=1.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)


class CELU(_AlphaActivation):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``, as ``F.celu``.

    >>> import npgrad as torch
    >>> torch.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """Gaussian error linear unit, as ``F.gelu`` (``approximate``: ``'none'``
    or ``'tanh'``).

    >>> import npgrad as torch
    >>> torch.nn.GELU("tanh")
    GELU(approximate='tanh')
    """

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``, as
    ``F.softplus``.

    >>> import npgrad as torch
    >>> torch.nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _Shrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0, as
    ``F.softshrink``.

    >>> import npgrad as torch
    >>> torch.nn.Softshrink()
    Softshrink(0.5)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0, as ``F.hardshrink``.

    >>> import npgrad as torch
    >>> torch.nn.Hardshrink(1.0)(torch.tensor([0.5, 2.0]))
    tensor([0., 2.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``, as ``F.threshold``.

    >>> import npgrad as torch
    >>> torch.nn.Threshold(0.1, 20.0)
    Threshold(threshold=0.1, value=20.0)
    """

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class Sigmoid(_Stateless):
    """``1 / (1 + exp(-x))``.

    >>> import npgrad as torch
    >>> torch.nn.Sigmoid()(torch.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(input)


class Tanh(_Stateless):
    """Hyperbolic tangent.

    >>> import npgrad as torch
    >>> torch.nn.Tanh()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(input)


class Softsign(_Stateless):
    """``x / (1 + |x|)``, as ``F.softsign``.

    >>> import npgrad as torch
    >>> torch.nn.Softsign()(torch.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softsign(input)


class LogSigmoid(_Stateless):
    """``log(sigmoid(x))``, as ``F.logsigmoid``.

    >>> import npgrad as torch
    >>> torch.nn.LogSigmoid()(torch.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.logsigmoid(input)


class Tanhshrink(_Stateless):
    """``x - tanh(x)``, as ``F.tanhshrink``.

    >>> import npgrad as torch
    >>> torch.nn.Tanhshrink()(torch.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    __constants__ = ["dim"]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x))`` along ``dim``, as ``F.softmax``.

    >>> import npgrad as torch
    >>> torch.nn.Softmax(dim=0)(torch.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    """``softmax(-x)`` along ``dim``, as ``F.softmin``.

    >>> import npgrad as torch
    >>> torch.nn.Softmin(dim=0)
    Softmin(dim=0)
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """``log(softmax(x))`` along ``dim``, as ``F.log_softmax``.

    >>> import npgrad as torch
    >>> torch.nn.LogSoftmax(dim=0)(torch.tensor([0.0, 0.0]))
    tensor([-0.6931, -0.6931])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim, _stacklevel=5)


# ---- multi-head attention ----

__all__ += ["MultiheadAttention"]  # noqa: PLE0604


class MultiheadAttention(Module):
    """Attention of ``num_heads`` heads over ``embed_dim`` features
    (``F.multi_head_attention_forward``), as torch's: a packed ``in_proj_weight``
    ``(3 * embed_dim, embed_dim)`` (separate ``q/k/v_proj_weight`` when ``kdim`` or
    ``vdim`` differ), ``in_proj_bias``, ``out_proj`` and, with ``add_bias_kv``,
    ``bias_k``/``bias_v``; inputs ``(L, N, E)`` or ``(N, L, E)`` with ``batch_first``.
    Initialised as torch's (Xavier uniform weights, zero biases, Xavier normal
    ``bias_k``/``bias_v``). torch's fused inference path is not taken; the results are
    the same.

    >>> import npgrad as torch
    >>> mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    >>> x = torch.ones(1, 3, 4)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (torch.Size([1, 3, 4]), torch.Size([1, 3, 3]))
    >>> mha
    MultiheadAttention(
      (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    )
    """

    __constants__ = ["batch_first"]
    bias_k: Tensor | None
    bias_v: Tensor | None

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_creation.empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(_creation.empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(_creation.empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_creation.empty((3 * embed_dim, embed_dim), **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(_creation.empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Pickles from before kdim/vdim are packed.
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """``(output, weights)``: the attention output, shaped as ``query``, and with
        ``need_weights`` the attention weights ``(N, L, S)`` (per head ``(N,
        num_heads, L, S)`` unless ``average_attn_weights``), else ``None``.

        >>> import npgrad as torch
        >>> mha = torch.nn.MultiheadAttention(4, 1)
        >>> x = torch.ones(2, 4)
        >>> mask = torch.tensor([False, True])
        >>> mha(x, x, x, key_padding_mask=mask)[1]
        tensor([[1., 0.],
                [1., 0.]], grad_fn=<SqueezeBackward1>)
        """
        key_padding_mask = F._canonical_mask(
            key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask), "attn_mask", query.dtype
        )
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            # (N, L, E) -> (L, N, E), keeping which inputs are the same tensor.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = {
                "use_separate_proj_weight": True,
                "q_proj_weight": self.q_proj_weight,
                "k_proj_weight": self.k_proj_weight,
                "v_proj_weight": self.v_proj_weight,
            }
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
            **separate,
        )
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(
        self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor
    ) -> tuple[Tensor | None, int | None]:
        """torch's mask merge for its fused path: ``(mask, type)``, type 1 for a
        ``(N, S)`` key padding mask alone, 2 for an attention mask expanded to ``(N,
        num_heads, L, S)`` (plus the padding mask), ``None`` without masks.

        >>> import npgrad as torch
        >>> mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
        >>> mask, kind = mha.merge_masks(torch.zeros(3, 3), None, torch.ones(2, 3, 4))
        >>> mask.shape, kind
        (torch.Size([2, 2, 3, 3]), 2)
        """
        mask_type: int | None = None
        merged_mask: Tensor | None = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            merged_mask = expanded
            if key_padding_mask is not None:
                merged_mask = expanded + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1
                )
        return merged_mask, mask_type
