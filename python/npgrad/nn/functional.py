"""``npgrad.nn.functional``: torch's activation functions, softmaxes and dropouts.

Each records torch's graph: its own backward node (``LeakyReluBackward0``,
``GeluBackward0``, ...) from the activation table (``npgrad._C._nn``), or, where
torch's function is a composite, the nodes of the ops it is made of (``selu``
records ``EluBackward0``, ``softsign`` a ``DivBackward0``, ``dropout`` a
``MulBackward0`` with the scaled mask).

>>> import npgrad as torch
>>> import npgrad.nn.functional as F
>>> F.leaky_relu(torch.tensor([-2.0, 3.0]), 0.1)
tensor([-0.2000,  3.0000])
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _C
from .._C import Tensor, _nn
from .._creation import zeros

__all__ = [
    "alpha_dropout",
    "batch_norm",
    "celu",
    "celu_",
    "cosine_similarity",
    "dropout",
    "dropout1d",
    "dropout2d",
    "elu",
    "elu_",
    "embedding",
    "gelu",
    "group_norm",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "instance_norm",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "scaled_dot_product_attention",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(x, 0)``, elementwise (``ReluBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.relu(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_() if inplace else _C.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``.

    >>> import npgrad as torch
    >>> torch.nn.functional.relu_(torch.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(x, 0), 6)``: torch's ``hardtanh(x, 0, 6)`` (``HardtanhBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.relu6(torch.tensor([-1.0, 3.0, 8.0]))
    tensor([0., 3., 6.])
    """
    return _nn.hardtanh_(input, 0.0, 6.0) if inplace else _nn.hardtanh(input, 0.0, 6.0)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``negative_slope * x`` (``LeakyReluBackward0``; in place
    ``LeakyReluBackward1``, which saves the result).

    >>> import npgrad as torch
    >>> torch.nn.functional.leaky_relu(torch.tensor([-2.0, 3.0]))
    tensor([-0.0200,  3.0000])
    """
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``.

    >>> import npgrad as torch
    >>> torch.nn.functional.leaky_relu_(torch.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    return _nn.leaky_relu_(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)`` (``EluBackward0``; in place
    ``EluBackward1``).

    >>> import npgrad as torch
    >>> torch.nn.functional.elu(torch.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``.

    >>> import npgrad as torch
    >>> torch.nn.functional.elu_(torch.tensor([-1.0, 2.0]), 2.0)
    tensor([-1.2642,  2.0000])
    """
    return _nn.elu_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with torch's SELU constants (``EluBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.selu(torch.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """
    return _C.selu_(input) if inplace else _C.selu(input)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``.

    >>> import npgrad as torch
    >>> torch.nn.functional.selu_(torch.tensor([-1.0, 2.0]))
    tensor([-1.1113,  2.1014])
    """
    return _C.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x / alpha) - 1)`` (``CeluBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.celu(torch.tensor([-1.0, 2.0]), 2.0)
    tensor([-0.7869,  2.0000])
    """
    return _C.celu_(input, alpha) if inplace else _C.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``.

    >>> import npgrad as torch
    >>> torch.nn.functional.celu_(torch.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    return _C.celu_(input, alpha)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)``, Phi the standard normal cdf; ``approximate='tanh'`` uses torch's
    tanh approximation (``GeluBackward0``, saving ``approximate``).

    >>> import npgrad as torch
    >>> torch.nn.functional.gelu(torch.tensor([-1.0, 1.0]), approximate="tanh")
    tensor([-0.1588,  0.8412])
    """
    return _nn.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (``SiluBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.silu(torch.tensor([-1.0, 1.0]))
    tensor([-0.2689,  0.7311])
    """
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (``MishBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.mish(torch.tensor([-1.0, 1.0]))
    tensor([-0.3034,  0.8651])
    """
    return _nn.mish_(input) if inplace else _nn.mish(input)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (``SoftplusBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.softplus(torch.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    return _nn.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)``, torch's composite (``DivBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.softsign(torch.tensor([-1.0, 3.0]))
    tensor([-0.5000,  0.7500])
    """
    return input / (input.abs() + 1)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` clamped to ``[min_val, max_val]`` (``HardtanhBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.hardtanh(torch.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    >>> import npgrad as torch
    >>> torch.nn.functional.hardtanh_(torch.tensor([-2.0, 0.5]))
    tensor([-1.0000,  0.5000])
    """
    return _nn.hardtanh_(input, min_val, max_val)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6`` (``HardsigmoidBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.hardsigmoid(torch.tensor([-4.0, 0.0]))
    tensor([0.0000, 0.5000])
    """
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6`` (``HardswishBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.hardswish(torch.tensor([-4.0, 1.0]))
    tensor([-0.0000,  0.6667])
    """
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))`` (``LogSigmoidBackward0``, saving torch's ``buffer``).

    >>> import npgrad as torch
    >>> torch.nn.functional.logsigmoid(torch.tensor([-1.0, 1.0]))
    tensor([-1.3133, -0.3133])
    """
    return _nn.log_sigmoid(input)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``, torch's composite (``SubBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.tanhshrink(torch.tensor([-1.0, 2.0]))
    tensor([-0.2384,  1.0360])
    """
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0
    (``SoftshrinkBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.softshrink(torch.tensor([-2.0, 0.2, 1.0]))
    tensor([-1.5000,  0.0000,  0.5000])
    """
    return _nn.softshrink(input, lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``HardshrinkBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.hardshrink(torch.tensor([-2.0, 0.2, 1.0]))
    tensor([-2.,  0.,  1.])
    """
    return _C.hardshrink(input, lambd)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value`` (``ThresholdBackward0``; in place
    ``ThresholdBackward1``).

    >>> import npgrad as torch
    >>> torch.nn.functional.threshold(torch.tensor([-1.0, 2.0]), 0.5, -5.0)
    tensor([-5.,  2.])
    """
    return _C.threshold_(input, threshold, value) if inplace else _C.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``.

    >>> import npgrad as torch
    >>> torch.nn.functional.threshold_(torch.tensor([-1.0, 2.0]), 0.5, -5.0)
    tensor([-5.,  2.])
    """
    return _C.threshold_(input, threshold, value)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` (``SigmoidBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.sigmoid(torch.tensor([0.0]))
    tensor([0.5000])
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent (``TanhBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.tanh(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7616])
    """
    return input.tanh()


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    # torch's choice (and warning) when no dim is given.
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax(fn: Any, name: str, input: Tensor, dim: int | None, stacklevel: int, dtype: Any) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim(name, input.dim(), stacklevel + 1)
    if dtype is not None:
        input = input.to(dtype)
    return fn(input, dim)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)`` (``SoftmaxBackward0``); ``dtype`` converts the input
    first. Without ``dim``, torch's deprecated implicit choice, with its warning.

    >>> import npgrad as torch
    >>> torch.nn.functional.softmax(torch.tensor([[0.0, 0.6931]]), dim=1)
    tensor([[0.3333, 0.6667]])
    """
    return _softmax(_C.softmax, "softmax", input, dim, _stacklevel, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``log(softmax(x, dim))``, computed stably (``LogSoftmaxBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.log_softmax(torch.tensor([0.0, 0.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    return _softmax(_C.log_softmax, "log_softmax", input, dim, _stacklevel, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)``, torch's composite (``SoftmaxBackward0`` over ``NegBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.softmin(torch.tensor([0.0, 0.6931]), dim=0)
    tensor([0.6667, 0.3333])
    """
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    negated = -input
    if dtype is not None:
        negated = negated.to(dtype)
    return _C.softmax(negated, dim)


def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, noise_shape: tuple[int, ...]) -> Tensor:
    # torch's _dropout_impl: the input itself when nothing is dropped; a
    # multiplication by a 0-dim zero when everything is; otherwise by a
    # Bernoulli(1 - p) mask of noise_shape scaled by 1 / (1 - p), drawn from
    # the default generator (MulBackward0 saves the mask).
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    noise = zeros(noise_shape, dtype=input.dtype).bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the others by ``1 / (1 - p)``
    (``MulBackward0``, saving the scaled mask); ``manual_seed`` makes the mask reproducible.
    The input itself when ``p == 0`` or not ``training``.

    >>> import npgrad as torch
    >>> x = torch.ones(4)
    >>> torch.nn.functional.dropout(x, 0.5, training=False) is x
    True
    >>> torch.nn.functional.dropout(x, 1.0)
    tensor([0., 0., 0., 0.])
    """
    _check_probability(p)
    return _feature_dropout(input, p, training, inplace, tuple(input.shape))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps a SELU network's mean and variance: dropped elements take
    SELU's negative saturation value, and an affine map restores the moments
    (torch's composite, ``AddBackward0`` over ``MulBackward0``).

    >>> import npgrad as torch
    >>> x = torch.ones(3)
    >>> torch.nn.functional.alpha_dropout(x, 0.5) is x
    True
    """
    _check_probability(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = zeros((), dtype=input.dtype)
        return input.mul_(zero) if inplace else input * zero
    alpha = 1.7580993408473766
    a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
    noise = zeros(tuple(input.shape), dtype=input.dtype).bernoulli_(1 - p)
    b = noise.add(-1).mul_(alpha * a).add_(alpha * a * p)
    noise.mul_(a)
    return input.mul_(noise).add_(b) if inplace else (input * noise).add_(b)


def _channel_noise_shape(input: Tensor) -> tuple[int, ...]:
    # One mask value per (batch, channel): feature_dropout's noise shape.
    shape = tuple(input.shape)
    return shape[:2] + (1,) * (len(shape) - 2)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of a ``(N, C, L)`` or ``(C, L)`` input with probability ``p``
    (a mask of shape ``(N, C, 1)``, scaled by ``1 / (1 - p)``).

    >>> import npgrad as torch
    >>> torch.nn.functional.dropout1d(torch.ones(2, 3), 1.0)
    tensor([[0., 0., 0.],
            [0., 0., 0.]])
    """
    _check_probability(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    if ndim == 3:
        return _feature_dropout(input, p, training, inplace, _channel_noise_shape(input))
    if inplace:
        raise NotImplementedError("dropout1d(inplace=True) of an unbatched input needs Tensor.unsqueeze_")
    batched = input.unsqueeze(0)
    return _feature_dropout(batched, p, training, False, _channel_noise_shape(batched)).squeeze(0)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of a ``(N, C, H, W)`` input with probability ``p`` (a mask
    of shape ``(N, C, 1, 1)``, scaled by ``1 / (1 - p)``); a 3-D input is taken as
    ``(N, C, L)``, with torch's warning.

    >>> import npgrad as torch
    >>> torch.nn.functional.dropout2d(torch.ones(1, 2, 1, 2), 1.0)
    tensor([[[[0., 0.]],
    <BLANKLINE>
             [[0., 0.]]]])
    """
    _check_probability(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature_dropout(input, p, training, inplace, _channel_noise_shape(input))


# ---- normalization, embedding and distances ----
#
# layer_norm, group_norm and batch_norm call npgrad's native ops (the
# NativeLayerNormBackward0, NativeGroupNormBackward0 and
# NativeBatchNormBackward0 nodes), embedding records EmbeddingBackward0;
# instance_norm, rms_norm and cosine_similarity are torch's composites of
# those and of npgrad ops, so they record the same nodes as torch's.


def _normalized_shape(normalized_shape: Any) -> list[int]:
    if isinstance(normalized_shape, int):
        return [normalized_shape]
    return [int(s) for s in normalized_shape]


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes over the last ``len(normalized_shape)`` dims to zero mean and unit
    (biased) variance, then applies ``weight`` and ``bias`` elementwise
    (``NativeLayerNormBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.layer_norm(torch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    return _C._native_layer_norm(input, _normalized_shape(normalized_shape), weight, bias, eps)[0]


def rms_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Divides by the root mean square over the last ``len(normalized_shape)`` dims
    (``eps`` defaults to the dtype's machine epsilon), then scales by ``weight``: torch's
    composite (``MulBackward0`` over ``RsqrtBackward0``; float16 computes in float32).

    >>> import npgrad as torch
    >>> torch.nn.functional.rms_norm(torch.tensor([[3.0, 4.0]]), (2,))
    tensor([[0.8485, 1.1314]])
    """
    shape = _normalized_shape(normalized_shape)
    nd = len(shape)
    sizes = list(input.shape)
    if nd > len(sizes) or sizes[len(sizes) - nd :] != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*{', '.join(str(s) for s in shape)}], but got input of size{sizes}"
        )
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {shape}"
        )
    dtype = input.dtype
    x = input.float() if dtype == _C.float16 else input
    if eps is None:
        eps = float(np.finfo(np.dtype(str(x.dtype).removeprefix("torch."))).eps)
    dims = list(range(-nd, 0))
    # torch adds eps as a Scalar (AddBackward1), not as a wrapped number.
    out = x * _C._add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(dtype) if out.dtype != dtype else out


def _verify_batch_size(size: Any, shown: Any) -> None:
    count = size[0]
    for s in size[2:]:
        count *= s
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shown}")


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each sample's channels in ``num_groups`` groups, then applies the
    per-channel ``weight`` and ``bias`` (``NativeGroupNormBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.group_norm(torch.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    sizes = list(input.shape)
    n, c = sizes[0], sizes[1]
    if num_groups > 0 and c % num_groups == 0:
        _verify_batch_size([n * c // num_groups, num_groups, *sizes[2:]], [n * c // num_groups, num_groups, *sizes[2:]])
    hxw = 1
    for s in sizes[2:]:
        hxw *= s
    return _C._native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each channel (dim 1) over the batch and spatial dims, then applies
    ``weight`` and ``bias`` (``NativeBatchNormBackward0``). In training the running
    statistics, if given, are updated in place with ``momentum`` (the unbiased
    variance); in evaluation they normalize.

    >>> import npgrad as torch
    >>> mean, var = torch.zeros(1), torch.ones(1)
    >>> torch.nn.functional.batch_norm(torch.tensor([[1.0], [3.0]]), mean, var, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> mean, var
    (tensor([0.2000]), tensor([1.1000]))
    """
    if momentum is None or isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not {type(momentum).__name__}")
    if training:
        _verify_batch_size(list(input.shape), input.shape)
    return _C._native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalizes each channel of each sample over its spatial dims: torch's composite,
    a batch norm of the input viewed as ``(1, N * C, *)`` (``ViewBackward0`` over
    ``NativeBatchNormBackward0``); the running statistics get the batch's average.

    >>> import npgrad as torch
    >>> torch.nn.functional.instance_norm(torch.tensor([[[1.0, 3.0]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    sizes = list(input.shape)
    if use_input_stats:
        count = 1
        for s in sizes[2:]:
            count *= s
        if count == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if momentum is None or isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(
            f"instance_norm(): argument 'momentum' (position 7) must be float, not {type(momentum).__name__}"
        )
    n, c = sizes[0], sizes[1]
    reshaped = input.contiguous().view([1, n * c, *sizes[2:]])
    stats = [t.repeat(n) if t is not None else None for t in (weight, bias, running_mean, running_var)]
    out = _C._native_batch_norm(reshaped, *stats, use_input_stats, momentum, eps)[0]
    for running, repeated in zip((running_mean, running_var), stats[2:]):
        if running is not None:
            running.copy_(repeated.view(n, c).mean(0))
    return out.view(sizes)


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    # torch.embedding_renorm_: each row that input names whose norm exceeds
    # max_norm is scaled (in place) to norm max_norm.
    rows = np.unique(input.numpy().reshape(-1))
    from .. import no_grad, tensor

    with no_grad():
        index = tensor(rows)
        selected = weight.index_select(0, index)
        norms = selected.norm(norm_type, 1, True)
        scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
        weight.index_copy_(0, index, selected * scale)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of ``weight`` that the integer ``input`` names (``EmbeddingBackward0``):
    the gradient skips the ``padding_idx`` row; ``max_norm`` first rescales, in place,
    the named rows whose norm exceeds it.

    >>> import npgrad as torch
    >>> weight = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> torch.nn.functional.embedding(torch.tensor([1, 0, 1]), weight)
    tensor([[2., 3.],
            [0., 1.],
            [2., 3.]])
    """
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError("embedding(sparse=True): npgrad has no sparse tensors")
    if max_norm is not None:
        input = input.contiguous()
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _C._embedding(weight, input, padding_idx, scale_grad_by_freq)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast): each
    divided by its norm, clamped below at ``eps``, then multiplied and summed; torch's
    composite (``SumBackward1`` over ``DivBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    try:
        shape = list(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        x1.detach() - x2.detach()  # raises torch's error for shapes that do not broadcast
        raise
    # torch's expand_outplace: both expanded unless the shapes are the same.
    same = list(x1.shape) == list(x2.shape)
    a = x1 if same else x1.expand(shape)
    b = x2 if same else x2.expand(shape)
    from .. import no_grad

    na = a.norm(2, dim, True).clone()
    nb = b.norm(2, dim, True).clone()
    with no_grad():
        na.clamp_(min=eps)
        nb.clamp_(min=eps)
    return ((a / na) * (b / nb)).sum(dim)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key.mT * scale + mask) @ value`` over 4-D ``(batch, heads,
    tokens, features)`` inputs, as torch's CPU flash kernel
    (``ScaledDotProductFlashAttentionForCpuBackward0``). ``attn_mask`` is a bool mask
    (``False``: not attended) or an additive float mask; ``is_causal`` hides the keys
    after each query; ``key`` and ``value`` may have fewer heads than ``query``
    (grouped-query attention). ``scale`` defaults to ``1 / sqrt(features)``.

    >>> import npgrad as torch
    >>> q = torch.ones(1, 1, 2, 2)
    >>> v = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> torch.nn.functional.scaled_dot_product_attention(q, q, v, is_causal=True)
    tensor([[[[1., 2.],
              [2., 3.]]]])
    """
    if query.dtype != key.dtype or query.dtype != value.dtype:
        names = [_TORCH_SCALAR_NAMES.get(str(t.dtype), str(t.dtype)) for t in (query, key, value)]
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{names[0]} key.dtype: {names[1]} and value.dtype: {names[2]} instead."
        )
    if attn_mask is not None and attn_mask.dtype not in (_C.bool, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_TORCH_SCALAR_NAMES.get(str(attn_mask.dtype), str(attn_mask.dtype))} and  "
            f"query.dtype: {_TORCH_SCALAR_NAMES.get(str(query.dtype), str(query.dtype))} instead."
        )
    flash = (
        query.dim() == key.dim() == value.dim() == 4
        and query.shape[-1] == key.shape[-1] == value.shape[-1]
        and dropout_p == 0.0
        and query.dtype in (_C.float16, _C.float32, _C.float64)
    )
    if not flash:
        raise NotImplementedError(
            "scaled_dot_product_attention: npgrad has torch's CPU flash path only (4-D floating "
            "inputs with one feature size, dropout_p=0)"
        )
    if attn_mask is not None and attn_mask.dtype == _C.bool:
        attn_mask = zeros(tuple(attn_mask.shape), dtype=query.dtype).masked_fill_(
            attn_mask.logical_not(), float("-inf")
        )
    return _C._scaled_dot_product_flash_attention(query, key, value, attn_mask, is_causal, scale)[0]


# torch's C++ scalar type names in its sdpa messages.
_TORCH_SCALAR_NAMES = {"torch.float32": "float", "torch.float64": "double", "torch.int64": "long int"}
