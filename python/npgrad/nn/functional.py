"""``npgrad.nn.functional``: torch's activations, softmaxes, dropouts, ``linear``,
convolutions, pooling, padding, norms, embedding, attention and losses.

Each records torch's graph: its own backward node (``LeakyReluBackward0``,
``ConvolutionBackward0``, ``NativeLayerNormBackward0``, ``NllLossBackward0``, ...)
from a native op (``npgrad._C._nn``), or, where torch's function is a composite, the
nodes of the ops it is made of (``selu`` records ``EluBackward0``, ``softsign`` a
``DivBackward0``, ``dropout`` a ``MulBackward0`` with the scaled mask,
``cross_entropy`` a ``NllLossBackward0`` over a ``LogSoftmaxBackward0``).

>>> import npgrad as torch
>>> import npgrad.nn.functional as F
>>> F.leaky_relu(torch.tensor([-2.0, 3.0]), 0.1)
tensor([-0.2000,  3.0000])
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _C
from .._C import Tensor, _nn
from .._creation import _is_reduced_float, arange, ones, ones_like, tensor, zeros, zeros_like
from ..autograd.grad_mode import no_grad

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "celu",
    "celu_",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "batch_norm",
    "celu",
    "celu_",
    "cosine_similarity",
    "dropout",
    "dropout1d",
    "dropout2d",
    "elu",
    "elu_",
    "fold",
    "embedding",
    "embedding_bag",
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
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "mish",
    "one_hot",
    "pad",
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
    "unfold",
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


# ---- Losses, and glu ----
# torch's signatures, legacy arguments and checks in Python; the native
# losses (npgrad._C._nn, and npgrad._C.binary_cross_entropy_with_logits) take
# torch's reduction enum (0 none, 1 mean, 2 sum). Where torch composes a loss
# of other ops (l1_loss, kl_div, cross_entropy with class probabilities or
# label smoothing, poisson_nll_loss, gaussian_nll_loss), so does this module,
# so that the same nodes are recorded.

__all__ += [  # noqa: PLE0604
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "gaussian_nll_loss",
    "glu",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "mse_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
]

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
# How torch's messages name the integer dtypes.
_SCALAR_TYPE_NAMES = {
    "torch.int64": "Long",
    "torch.int32": "Int",
    "torch.int16": "Short",
    "torch.int8": "Char",
    "torch.uint8": "Byte",
    "torch.bool": "Bool",
}


def _reduction_enum(reduction: str) -> int:
    # torch.nn._reduction.get_enum
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average: bool | None, reduce: bool | None, stacklevel: int = 3) -> str:
    # torch.nn._reduction.legacy_get_string, with its deprecation warning.
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
        stacklevel=stacklevel,
    )
    return reduction


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> int:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=4)
    return _reduction_enum(reduction)


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    # torch.broadcast_tensors of two tensors: each itself when its shape is
    # already the broadcast one, else an expand. Shapes that do not broadcast
    # are returned as they are, for the loss to raise torch's error.
    shape_a, shape_b = tuple(a.shape), tuple(b.shape)
    if shape_a == shape_b:
        return a, b
    try:
        shape = np.broadcast_shapes(shape_a, shape_b)
    except ValueError:
        return a, b
    return (a if shape_a == shape else a.expand(shape)), (b if shape_b == shape else b.expand(shape))


def _pointwise_operands(
    input: Tensor, target: Tensor, size_average: bool | None, reduce: bool | None, reduction: str
) -> tuple[Tensor, Tensor, str]:
    # What mse_loss, l1_loss, smooth_l1_loss and huber_loss do first: torch's
    # warning for a target of another size, the legacy arguments, and
    # broadcast_tensors.
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, stacklevel=4)
    input, target = _broadcast_pair(input, target)
    return input, target, reduction


def _weighted(loss: Tensor, weight: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
    # The weighted forms of mse_loss, l1_loss and huber_loss.
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def _check_weight_size(weight: Tensor, input: Tensor) -> None:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: the first half of ``dim`` times the sigmoid of the second
    (``GluBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.glu(torch.tensor([1.0, 2.0, 0.0, 0.0]))
    tensor([0.5000, 1.0000])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn.glu(input, dim)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum) of the squared differences (``MseLossBackward0``, which also
    differentiates the target); ``weight`` scales each element (torch's composite).

    >>> import npgrad as torch
    >>> torch.nn.functional.mse_loss(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 0.0]))
    tensor(2.5000)
    """
    input, target, reduction = _pointwise_operands(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted(_C.pow(input - target, 2), weight, reduction, True)
    return _nn.mse_loss(input, target, _reduction_enum(reduction))


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum) of the absolute differences: torch's composite
    ``(input - target).abs()`` then the reduction (``MeanBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.l1_loss(torch.tensor([1.0, -2.0]), torch.tensor([0.0, 0.0]))
    tensor(1.5000)
    """
    input, target, reduction = _pointwise_operands(input, target, size_average, reduce, reduction)
    if weight is not None:
        _check_weight_size(weight, input)
        return _weighted((input - target).abs(), weight, reduction, True)
    return _apply_reduction((input - target).abs(), _reduction_enum(reduction))


def _apply_reduction(loss: Tensor, reduction: int) -> Tensor:
    # torch's apply_loss_reduction: mean, sum or the elementwise loss.
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``, ``d = input -
    target`` (``SmoothL1LossBackward0``; ``beta == 0`` is ``l1_loss``).

    >>> import npgrad as torch
    >>> torch.nn.functional.smooth_l1_loss(torch.tensor([0.5, 3.0]), torch.tensor([0.0, 0.0]))
    tensor(1.3125)
    """
    input, target, reduction = _pointwise_operands(input, target, size_average, reduce, reduction)
    if beta == 0.0:
        return _apply_reduction((input - target).abs(), _reduction_enum(reduction))
    return _nn.smooth_l1_loss(input, target, _reduction_enum(reduction), beta)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``
    (``HuberLossBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.huber_loss(torch.tensor([0.5, 3.0]), torch.tensor([0.0, 0.0]))
    tensor(1.3125)
    """
    input, target, reduction = _pointwise_operands(input, target, None, None, reduction)
    if weight is None:
        return _nn.huber_loss(input, target, _reduction_enum(reduction), delta)
    _check_weight_size(weight, input)
    return _weighted(_nn.huber_loss(input, target, 0, delta), weight, reduction, False)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target * input))`` (``SoftMarginLossBackward0``; the target gets
    no gradient).

    >>> import npgrad as torch
    >>> torch.nn.functional.soft_margin_loss(torch.tensor([0.0, 2.0]), torch.tensor([1.0, -1.0]))
    tensor(1.4100)
    """
    return _nn.soft_margin_loss(input, target, _reduction(size_average, reduce, reduction))


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-(t log(x) + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1], each log
    clamped at -100 (``BinaryCrossEntropyBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.binary_cross_entropy(torch.tensor([0.5, 0.9]), torch.tensor([1.0, 1.0]))
    tensor(0.3993)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is deprecated. "
            "Please ensure they have the same size."
        )
    if weight is not None:
        shape = np.broadcast_shapes(tuple(target.shape), tuple(weight.shape))
        weight = weight.expand(shape)
    return _nn.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``binary_cross_entropy(sigmoid(x), t)`` computed stably from the logits ``x``;
    ``pos_weight`` scales the positive term (``BinaryCrossEntropyWithLogitsBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor([0.0, 2.0]), torch.tensor([1.0, 0.0]))
    tensor(1.4100)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)


def _nll_loss_nd(input: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int) -> Tensor:
    # torch's nll_loss_nd: nll_loss for 1-D and 2-D inputs, nll_loss2d for 4-D
    # ones; other inputs are viewed as (N, C, 1, -1) first.
    # The plain shape tuples (``_shape``): ``.shape`` builds a Size per call.
    shape, target_shape = input._shape, target._shape
    ndim = len(shape)
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    if ndim != 1 and target_shape and shape[0] != target_shape[0]:
        raise ValueError(f"Expected input batch_size ({shape[0]}) to match target batch_size ({target_shape[0]}).")
    if ndim <= 2:
        return _nn.nll_loss(input, target, weight, reduction, ignore_index)
    if ndim == 4:
        return _nn.nll_loss2d(input, target, weight, reduction, ignore_index)
    n, c = shape[0], shape[1]
    out_size = [n, *shape[2:]]
    if target_shape[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {out_size}, got {list(target_shape)}")
    input, target = input.contiguous(), target.contiguous()
    input = input.view(n, c, 1, -1) if input.numel() > 0 else input.view(n, c, 0, 0)
    target = target.view(n, 1, -1) if target.numel() > 0 else target.view(n, 0, 0)
    out = _nn.nll_loss2d(input, target, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == 0 else out


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of class indices ``target`` under log-probabilities
    ``input`` (classes along dim 1; ``NllLossBackward0``, ``NllLoss2DBackward0`` for
    inputs of 3 or more dims). ``weight`` weighs each class; targets equal to
    ``ignore_index`` count for nothing; ``mean`` divides by the total weight.

    >>> import npgrad as torch
    >>> logp = torch.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> torch.nn.functional.nll_loss(logp, torch.tensor([0, 1]))
    tensor(0.3000)
    """
    return _nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def _class_weight_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    # weight viewed to broadcast along the class dim of an ndim-dim input.
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probabilities(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: int, label_smoothing: float
) -> Tensor:
    # torch's cross_entropy_loss_prob_target.
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no classes "
            f"but got weight tensor of shape: {list(weight.shape)}"
        )
    logp = _C.log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    product = logp * target
    if weight is not None:
        product = product * (_class_weight_view(weight, logp.dim(), 1) if logp.dim() > 1 else weight)
    if reduction == 1:
        if logp.numel() == 0:
            return (-product.sum()).fill_(float("nan"))
        return -product.sum() / (logp.numel() // n_classes)
    if reduction == 2:
        return -product.sum()
    return -product.sum(class_dim)


def _cross_entropy_label_smoothing(
    input: Tensor, target: Tensor, weight: Tensor | None, reduction: int, ignore_index: int, label_smoothing: float
) -> Tensor:
    # torch's cross_entropy_loss_label_smoothing.
    class_dim = 0 if input.dim() == 1 else 1
    logp = _C.log_softmax(input, class_dim)
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[class_dim]
    if weight is not None:
        smooth = -(logp * _class_weight_view(weight, logp.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    if reduction == 1:
        if weight is not None:
            total = weight.gather(0, target.masked_select(ignored.logical_not()).flatten()).sum()
        else:
            total = ignored.logical_not().sum()
        smoothed = smooth.sum() / total
    elif reduction == 2:
        smoothed = smooth.sum()
    else:
        smoothed = smooth
    return (1 - label_smoothing) * nll + smoothed * (label_smoothing / n_classes)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)`` for class indices (classes along dim 1,
    ``NllLossBackward0`` over ``LogSoftmaxBackward0``); a target of the input's shape
    holds class probabilities (torch's composite). ``label_smoothing`` mixes the target
    with the uniform distribution.

    >>> import npgrad as torch
    >>> logits = torch.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1]))
    tensor(0.1269)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    if input._shape == target._shape:
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {_SCALAR_TYPE_NAMES.get(str(target.dtype), str(target.dtype))}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probabilities(input, target, weight, reduction_enum, label_smoothing)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _cross_entropy_label_smoothing(input, target, weight, reduction_enum, ignore_index, label_smoothing)
    class_dim = 0 if len(input._shape) == 1 else 1
    return _nll_loss_nd(_C.log_softmax(input, class_dim), target, weight, reduction_enum, ignore_index)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of log-probabilities ``input`` from ``target``
    (probabilities, or log-probabilities with ``log_target``): torch's composite.
    ``batchmean`` divides the sum by the batch size.

    >>> import npgrad as torch
    >>> logq = torch.tensor([[0.5, 0.5]]).log()
    >>> torch.nn.functional.kl_div(logq, torch.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.)
    """
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        reduction_enum = 2 if reduction == "batchmean" else _reduction_enum(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    reduced = _apply_reduction(loss, reduction_enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


def _xlogy_self(t: Tensor) -> Tensor:
    # t * log(t), 0 where t is 0 (torch's xlogy(t, t)).
    return _C.where(t == 0, zeros((), dtype=t.dtype), t * t.log())


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of ``target`` under a Poisson distribution of rate
    ``exp(input)`` (or ``input`` without ``log_input``): torch's composite; ``full``
    adds Stirling's approximation of ``log(target!)``.

    >>> import npgrad as torch
    >>> torch.nn.functional.poisson_nll_loss(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    tensor(0.8591)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    reduction_enum = _reduction_enum(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction_enum)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of ``target`` under normal distributions of mean
    ``input`` and variance ``var`` (clamped at ``eps``): torch's composite.

    >>> import npgrad as torch
    >>> torch.nn.functional.gaussian_nll_loss(torch.tensor([0.0]), torch.tensor([1.0]), torch.tensor([1.0]))
    tensor(0.5000)
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ---- Pooling, one_hot and pad ----
# The 2-D pools run in C++ (npgrad._C._nn, the names of torch._C._nn); the 1-D
# ones are torch's composites: the 2-D pool of ``input.unsqueeze(-2)``,
# squeezed back (``SqueezeBackward1``), after torch's 1-D argument checks.


def _int_list(value: Any, fn: str, arg: str, position: int) -> list[int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, not {type(value).__name__}")


def _one_int(value: Any, fn: str, arg: str, position: int) -> int:
    values = _int_list(value, fn, arg, position)
    if len(values) != 1:
        raise RuntimeError(f"{fn}() argument '{arg}' should contain one int (got {len(values)})")
    return values[0]


def _check_1d_input(input: Tensor, fn: str) -> None:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {fn})"
        )


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The maximum over each ``kernel_size`` window of the last two dims of a
    ``(C, H, W)`` or ``(N, C, H, W)`` input (``MaxPool2DWithIndicesBackward0``);
    with ``return_indices`` also the flat ``H * W`` index of each maximum.

    >>> import npgrad as torch
    >>> x = torch.arange(16.0).reshape(1, 4, 4)
    >>> torch.nn.functional.max_pool2d(x, 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    fn = "max_pool2d"
    out, indices = _nn.max_pool2d_with_indices(
        input,
        _int_list(kernel_size, fn, "kernel_size", 2),
        [] if stride is None else _int_list(stride, fn, "stride", 3),
        _int_list(padding, fn, "padding", 4),
        _int_list(dilation, fn, "dilation", 5),
        ceil_mode,
    )
    return (out, indices) if return_indices else out


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` with its indices, always.

    >>> import npgrad as torch
    >>> torch.nn.functional.max_pool2d_with_indices(torch.tensor([[[1.0, 3.0], [2.0, 0.0]]]), 2)[1]
    tensor([[[1]]])
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)  # type: ignore[no-any-return]


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """The maximum over each window of the last dim of a ``(C, L)`` or ``(N, C, L)``
    input (torch's composite: ``SqueezeBackward1`` of a ``max_pool2d``).

    >>> import npgrad as torch
    >>> torch.nn.functional.max_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    fn = "max_pool1d"
    shape = input.shape
    if input.dim() not in (2, 3) or shape[-1] == 0 or shape[-2] == 0:
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(shape)}"
        )
    k = _int_list(kernel_size, fn, "kernel_size", 2)
    s = [] if stride is None else _int_list(stride, fn, "stride", 3)
    p = _int_list(padding, fn, "padding", 4)
    d = _int_list(dilation, fn, "dilation", 5)
    for values, what, sep in (
        (k, "kernel_size must be", ""),
        (s, "stride must be None,", ","),
        (p, "padding must be", ","),
    ):
        if len(values) != 1 and not (values is s and not values):
            raise RuntimeError(
                f"max_pool1d() {what} an int, list of ints{sep} or tuple of ints of size 1 but got size {len(values)}"
            )
    if len(d) != 1:
        raise RuntimeError(
            f"max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size {len(d)}"
        )
    step = s[0] if s else k[0]
    if k[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k[0]}")
    if step <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {step}")
    if p[0] < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p[0]}")
    if p[0] > k[0] // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p[0]} and kernel_size={k[0]}"
        )
    if d[0] <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
    span = shape[-1] + 2 * p[0] - d[0] * (k[0] - 1) - 1
    size = (span + (step - 1 if ceil_mode else 0)) // step + 1
    if ceil_mode and (size - 1) * step >= shape[-1] + p[0]:
        size -= 1
    if size < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    if input.dtype == _C.bool:
        raise NotImplementedError("\"max_pool1d_impl\" not implemented for 'Bool'")
    out, indices = _nn.max_pool2d_with_indices(
        input.unsqueeze(-2), [1, k[0]], [1, step], [0, p[0]], [1, d[0]], ceil_mode
    )
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` with its indices, always.

    >>> import npgrad as torch
    >>> torch.nn.functional.max_pool1d_with_indices(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)[1]
    tensor([[1, 2]])
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)  # type: ignore[no-any-return]


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean over each ``kernel_size`` window of the last two dims
    (``AvgPool2DBackward0``); padding counts in the divisor unless
    ``count_include_pad=False``, and ``divisor_override`` replaces it.

    >>> import npgrad as torch
    >>> torch.nn.functional.avg_pool2d(torch.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 2.5000,  4.5000],
             [10.5000, 12.5000]]])
    """
    fn = "avg_pool2d"
    return _nn.avg_pool2d(  # type: ignore[no-any-return]
        input,
        _int_list(kernel_size, fn, "kernel_size", 2),
        [] if stride is None else _int_list(stride, fn, "stride", 3),
        _int_list(padding, fn, "padding", 4),
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """The mean over each window of the last dim (torch's composite:
    ``SqueezeBackward1`` of an ``avg_pool2d``).

    >>> import npgrad as torch
    >>> torch.nn.functional.avg_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    fn = "avg_pool1d"
    k = _one_int(kernel_size, fn, "kernel_size", 2)
    s = k if stride is None else _one_int(stride, fn, "stride", 3)
    p = _one_int(padding, fn, "padding", 4)
    _check_1d_input(input, fn)
    out = _nn.avg_pool2d(input.unsqueeze(-2), [1, k], [1, s], [0, p], ceil_mode, count_include_pad, None)
    return out.squeeze(-2)  # type: ignore[no-any-return]


def _adaptive_size(output_size: Any, sizes: Any) -> list[int]:
    # torch's _list_with_default: None takes the input's size.
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        return [output_size, output_size]
    if len(sizes) <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    defaults = list(sizes)[-len(output_size) :]
    return [d if v is None else v for v, d in zip(output_size, defaults)]


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over ``output_size`` windows that tile the last two dims
    (``AdaptiveAvgPool2DBackward0``; an output of ``(1, 1)`` is a ``mean``, as
    torch computes it). ``None`` in ``output_size`` keeps that dim.

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_avg_pool2d(torch.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[2., 3.]]])
    """
    return _nn.adaptive_avg_pool2d(input, _adaptive_size(output_size, input.shape))  # type: ignore[no-any-return]


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over ``output_size`` windows that tile the last two dims
    (``AdaptiveMaxPool2DBackward0``); with ``return_indices`` also the flat
    ``H * W`` index of each maximum.

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_max_pool2d(torch.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[4., 5.]]])
    """
    out, indices = _nn.adaptive_max_pool2d(input, _adaptive_size(output_size, input.shape))
    return (out, indices) if return_indices else out


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` with its indices, always.

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_max_pool2d_with_indices(torch.arange(6.0).reshape(1, 2, 3), (1, 2))[1]
    tensor([[[4, 5]]])
    """
    return adaptive_max_pool2d(input, output_size, True)  # type: ignore[no-any-return]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """The mean over ``output_size`` windows that tile the last dim (torch's
    composite: ``SqueezeBackward1`` of an ``adaptive_avg_pool2d``).

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_avg_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    fn = "adaptive_avg_pool1d"
    n = _one_int(output_size, fn, "output_size", 2)
    _check_1d_input(input, fn)
    return _nn.adaptive_avg_pool2d(input.unsqueeze(-2), [1, n]).squeeze(-2)  # type: ignore[no-any-return]


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """The maximum over ``output_size`` windows that tile the last dim (torch's
    composite: ``SqueezeBackward1`` of an ``adaptive_max_pool2d``).

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_max_pool1d(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    fn = "adaptive_max_pool1d"
    n = _one_int(output_size, fn, "output_size", 2)
    _check_1d_input(input, fn)
    out, indices = _nn.adaptive_max_pool2d(input.unsqueeze(-2), [1, n])
    out = out.squeeze(-2)
    return (out, indices.squeeze(-2)) if return_indices else out


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` with its indices, always.

    >>> import npgrad as torch
    >>> torch.nn.functional.adaptive_max_pool1d_with_indices(torch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)[1]
    tensor([[1, 2]])
    """
    return adaptive_max_pool1d(input, output_size, True)  # type: ignore[no-any-return]


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of ``tensor.shape + (num_classes,)`` with a 1 at each
    element's class; ``num_classes=-1`` takes the largest class plus one.

    >>> import npgrad as torch
    >>> torch.nn.functional.one_hot(torch.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return zeros((*tensor.shape, num_classes), dtype=_C.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = int(tensor.max())
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes)
    return (tensor.unsqueeze(-1) == classes).long()


_PAD_SIZES = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """``input`` with ``pad = (before, after, ...)`` elements added to its dims, from the
    last one backwards; mode ``constant`` fills them with ``value`` (0 by default), and
    negative padding crops (``ConstantPadNdBackward0``). ``reflect`` mirrors the input
    at its edges, ``replicate`` repeats the edge values and ``circular`` wraps around;
    these record ``IndexSelectBackward0`` nodes where torch records its padding nodes.

    >>> import npgrad as torch
    >>> torch.nn.functional.pad(torch.tensor([[1.0, 2.0]]), (1, 2), value=9.0)
    tensor([[9., 1., 2., 9., 9.]])
    """
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):
        if not isinstance(p, int) or isinstance(p, bool):
            raise TypeError(
                f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                f"{type(p).__name__} at pos {i}"
            )
    if mode == "constant":
        return _nn.constant_pad_nd(input, list(pad), 0.0 if value is None else value)  # type: ignore[no-any-return]
    # torch's order: the mode, the length, then the value.
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.dim()
    if len(pad) > 2 * ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {ndim}"
        )
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) not in (2, 4, 6) or not len(pad) // 2 + 1 <= ndim <= len(pad) // 2 + 2:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n{_PAD_SIZES}")
    return _index_pad(input, pad, mode)


def _index_pad(input: Tensor, pad: Any, mode: str) -> Tensor:
    """The reflect, replicate and circular modes as one ``index_select`` per padded
    dim (values and gradients as torch's; the nodes are ``IndexSelectBackward0``,
    not torch's ``ReflectionPad*Backward0``/``ReplicationPad*Backward0``)."""
    out = input
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        size = input.shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({before}, {after}) at dimension {dim} of input {list(input.shape)}"
            )
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular":
            # torch crops first (negative padding), then wraps the cropped dim.
            start, stop = max(-before, 0), size - max(-after, 0)
            kept = stop - start
            positions = [start + (i % kept) for i in range(-max(before, 0), kept + max(after, 0))]
        elif mode == "reflect":
            positions = [
                -i if i < 0 else (2 * (size - 1) - i if i >= size else i) for i in range(-before, size + after)
            ]
        else:
            positions = [min(max(i, 0), size - 1) for i in range(-before, size + after)]
        out = out.index_select(dim, tensor(positions))
    return out


# ---------------------------------------------------------------- linear layers

__all__ += ["linear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, recording torch's nodes: ``AddmmBackward0``
    for a 2-D input with a bias (a flattened contiguous N-D input adds two
    ``ViewBackward0``), matmul's nodes (``MmBackward0``, ``UnsafeViewBackward0``,
    ``SqueezeBackward4``) without one, and an in-place add of the bias otherwise.

    >>> import npgrad as torch
    >>> w = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    >>> torch.nn.functional.linear(torch.tensor([[1.0, 1.0]]), w, torch.tensor([0.5, 0.0]))
    tensor([[3.5000, 1.0000]])
    """
    for position, (name, value) in enumerate((("input", input), ("weight", weight), ("bias", bias)), 1):
        if not isinstance(value, Tensor) and (value is not None or name != "bias"):
            raise TypeError(
                f"linear(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
            )
    input_dim = input.dim()
    if input_dim == 0 or weight.dim() == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {input_dim}D and {weight.dim()}D"
        )
    if bias is not None:
        if input_dim == 2:
            return _C.addmm(bias, input, weight.t())
        if input.is_contiguous() and (input_dim == 3 or bias.dim() == 1):
            # torch's _flatten_nd_linear: the leading dims folded into one.
            sizes = input.shape
            rows = 1
            for size in sizes[:-1]:
                rows *= size
            result = _C.addmm(bias, input.reshape(rows, sizes[-1]), weight.t())
            return result.view(*sizes[:-1], result.shape[1])
    output = _C.matmul(input, weight.t())
    if bias is not None:
        output.add_(bias)
    return output


__all__ += ["bilinear"]


def _flatten_rows(t: Tensor) -> Tensor:
    # torch's reshape(-1, t.size(-1)): a view (ViewBackward0) when viewable, which
    # an empty tensor always is.
    if t.numel() == 0 or t.is_contiguous():
        return t.view(-1, t.size(-1))
    return t.reshape(-1, t.size(-1))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., k] = input1[..., :] @ weight[k] @ input2[..., :] + bias[k]``: torch's
    composite, which flattens the leading dims of both inputs (``ViewBackward0``),
    takes one ``_trilinear`` of them and ``weight`` (``TrilinearBackward0``), shapes the
    result back (``ViewBackward0``) and adds the bias (``AddBackward0``).

    >>> import npgrad as torch
    >>> w = torch.tensor([[[1.0, 0.0], [0.0, 2.0]]])
    >>> torch.nn.functional.bilinear(torch.tensor([[1.0, 1.0]]), torch.tensor([[3.0, 1.0]]), w)
    tensor([[5.]])
    """
    named = (("input1", input1), ("input2", input2), ("weight", weight), ("bias", bias))
    for position, (name, value) in enumerate(named, 1):
        if not isinstance(value, Tensor) and (value is not None or name != "bias"):
            raise TypeError(
                f"bilinear(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
            )
    given = [(name, value) for name, value in named if value is not None]
    if len({value.dtype for _, value in given}) > 1:
        names = ", ".join(
            f"{name}: {_TORCH_SCALAR_NAMES.get(str(value.dtype), str(value.dtype))}" for name, value in given
        )
        raise RuntimeError(f"All tensors must have the same dtype, got {names}")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.size(i)} and {input2.size(i)}"
            )
    if input1.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input1.size(-1) != weight.size(1):
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.size(-1)} but expected {weight.size(1)}"
        )
    if input2.size(-1) != weight.size(2):
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.size(-1)} but expected {weight.size(2)}"
        )
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.size(0)} but expected {weight.size(0)}"
        )
    output_size = (*input1.shape[:-1], weight.size(0))
    flat1, flat2 = _flatten_rows(input1), _flatten_rows(input2)
    # The dims of the product: (row, out, in1, in2); in1 and in2 are summed.
    output = _C._trilinear(flat1, weight, flat2, [1, 3], [0], [1, 2], [2, 3]).view(output_size)
    return output if bias is None else output + bias


# ---- Convolutions and sliding windows ----
# conv1d, conv2d and the transposed forms call npgrad.convolution (one
# ConvolutionBackward0 node), with torch's unbatched inputs (an unsqueeze and a
# squeeze around it) and padding strings; unfold and fold are torch's im2col and
# col2im (Im2ColBackward0, Col2ImBackward0).


def _int_tuple(value: Any, n: int) -> list[int] | None:
    """An int or a sequence of ints as a list (an int repeated n times); None otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [value] * n
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return list(value)
    return None


def _conv_arg(fn: str, name: str, value: Any, n: int, overloaded: bool) -> list[int]:
    """torch's parse of an ``int[n]`` argument, with its TypeError for anything else."""
    ints = _int_tuple(value, n)
    if ints is None:
        if overloaded:
            raise TypeError(
                f"{fn}() received an invalid combination of arguments - got {name}={type(value).__name__}, "
                f"but expected a tuple of ints or an int for '{name}'"
            )
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(value).__name__}")
    return ints


def _check_conv_input(fn: str, input: Tensor, nd: int) -> bool:
    """Whether ``input`` is unbatched; torch's error when it has neither rank."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, "
            f"but got input of size: {list(input.shape)}"
        )
    return input.dim() == nd + 1


_same_padding_warned = False


def _warn_same_padding_copy_once() -> None:
    """torch's once-per-process note that an even kernel under ``padding='same'``
    pads a copy of the input."""
    global _same_padding_warned
    if not _same_padding_warned:
        _same_padding_warned = True
        warnings.warn(
            "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of "
            "the input be created",
            UserWarning,
            stacklevel=4,
        )


def _conv(
    fn: str,
    nd: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    unbatched = _check_conv_input(fn, input, nd)
    strides = _conv_arg(fn, "stride", stride, nd, True)
    dilations = _conv_arg(fn, "dilation", dilation, nd, True)
    extra_pad: list[int] = []
    if isinstance(padding, str):
        if padding == "valid":
            pads = [0] * nd
        elif padding == "same":
            if any(s != 1 for s in strides):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            kernel = list(weight.shape[2:]) if isinstance(weight, Tensor) else []
            if len(kernel) != nd:
                pads = [0] * nd  # npgrad.convolution reports the weight's rank
            else:
                if len(dilations) == 1:
                    dilations = dilations * nd
                totals = [d * (k - 1) for d, k in zip(dilations, kernel)]
                pads = [t // 2 for t in totals]
                # An even dilated kernel needs one more zero after the input than
                # before it: as torch, the input is padded first (constant_pad_nd,
                # last dim first) and the convolution pads symmetrically.
                if any(t % 2 for t in totals):
                    extra_pad = [x for t in reversed(totals) for x in (0, t % 2)]
                    _warn_same_padding_copy_once()
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = _conv_arg(fn, "padding", padding, nd, True)
    if unbatched:
        input = input.unsqueeze(0)
    if extra_pad:
        input = _nn.constant_pad_nd(input, extra_pad, 0.0)
    out = _C._conv_function(input, weight, bias, strides, pads, dilations, False, [0] * nd, groups)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(
    fn: str,
    nd: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
) -> Tensor:
    strides = _conv_arg(fn, "stride", stride, nd, False)
    pads = _conv_arg(fn, "padding", padding, nd, False)
    output_pads = _conv_arg(fn, "output_padding", output_padding, nd, False)
    dilations = _conv_arg(fn, "dilation", dilation, nd, False)
    unbatched = _check_conv_input(fn, input, nd)
    if unbatched:
        input = input.unsqueeze(0)
    out = _C._conv_function(input, weight, bias, strides, pads, dilations, True, output_pads, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """The 1-D convolution (cross-correlation) of a ``(N, C, L)`` or unbatched ``(C, L)``
    input with a ``(out, C / groups, k)`` weight; ``padding`` is ints, ``'valid'`` or
    ``'same'`` (``ConvolutionBackward0``).

    >>> import npgrad as torch
    >>> x = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> torch.nn.functional.conv1d(x, torch.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1.]]])
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """The 2-D convolution (cross-correlation) of a ``(N, C, H, W)`` or unbatched
    ``(C, H, W)`` input with an ``(out, C / groups, kH, kW)`` weight; ``padding`` is
    ints, ``'valid'`` or ``'same'`` (``ConvolutionBackward0``).

    >>> import npgrad as torch
    >>> x = torch.arange(9.0).reshape(1, 1, 3, 3)
    >>> torch.nn.functional.conv2d(x, torch.ones(1, 1, 2, 2))
    tensor([[[[ 8., 12.],
              [20., 24.]]]])
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transposed 1-D convolution (the gradient of ``conv1d`` with respect to its
    input) of a ``(N, C, L)`` or ``(C, L)`` input with a ``(C, out / groups, k)`` weight
    (``ConvolutionBackward0``).

    >>> import npgrad as torch
    >>> x = torch.tensor([[[1.0, 2.0]]])
    >>> torch.nn.functional.conv_transpose1d(x, torch.tensor([[[1.0, 1.0, 1.0]]]), stride=2)
    tensor([[[1., 1., 3., 2., 2.]]])
    """
    return _conv_transpose(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """The transposed 2-D convolution (the gradient of ``conv2d`` with respect to its
    input) of a ``(N, C, H, W)`` or ``(C, H, W)`` input with a ``(C, out / groups, kH,
    kW)`` weight (``ConvolutionBackward0``).

    >>> import npgrad as torch
    >>> x = torch.ones(1, 1, 2, 2)
    >>> torch.nn.functional.conv_transpose2d(x, torch.ones(1, 1, 2, 2))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    return _conv_transpose(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


def _pair(value: Any) -> Any:
    return [value, value] if isinstance(value, int) and not isinstance(value, bool) else value


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """The sliding blocks of a ``(N, C, H, W)`` or ``(C, H, W)`` input as columns,
    ``(N, C * kH * kW, L)`` (torch's ``im2col``, ``Im2ColBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.unfold(torch.arange(4.0).reshape(1, 1, 2, 2), 1)
    tensor([[[0., 1., 2., 3.]]])
    """
    return _C._im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(
    input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Columns ``(N, C * kH * kW, L)`` or ``(C * kH * kW, L)`` summed back into their
    sliding blocks of an ``output_size`` image (torch's ``col2im``, ``Col2ImBackward0``):
    the adjoint of ``unfold``.

    >>> import npgrad as torch
    >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    return _C._col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


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
    composite (``MulBackward0`` over ``RsqrtBackward0``; float16 and bfloat16 compute in float32).

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
    x = input.float() if _is_reduced_float(dtype) else input
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


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of ``weight``'s rows (``EmbeddingBagBackward0``):
    a 2-D ``input`` is one bag per row; a 1-D ``input`` is cut into bags where
    ``offsets`` start them (``include_last_offset``: the last offset ends the input).
    ``per_sample_weights`` scales each row (``mode="sum"``); ``padding_idx`` rows are
    left out (an empty bag gives zeros).

    >>> import npgrad as torch
    >>> weight = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> torch.nn.functional.embedding_bag(torch.tensor([0, 1, 2]), weight, torch.tensor([0, 2]))
    tensor([[2., 3.],
            [5., 6.]])
    """
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. "
            "Usage `embedding_bag(weight, input, ...)` is deprecated, "
            "and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of"
                f" fixed length sequences. However, found offsets of type {type(offsets)}"
            )
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): npgrad has no sparse tensors")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. "
            "per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    num_weights = weight.size(0)
    if padding_idx is None:
        padding_idx = -1
    elif not -num_weights <= padding_idx < num_weights:
        raise RuntimeError(
            f"padding_idx must be within the number of embeddings, -{num_weights} through "
            f"{num_weights - 1}, but got {padding_idx}"
        )
    elif padding_idx < 0:
        padding_idx += num_weights
    return _C._embedding_bag(
        weight,
        input,
        offsets,
        scale_grad_by_freq,
        modes[mode],
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )[0]


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcast): each
    divided by its norm, clamped below at ``eps``, then multiplied and summed; torch's
    composite (``SumBackward1`` over ``DivBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    for position, (name, value) in enumerate((("x1", x1), ("x2", x2)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"cosine_similarity(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}"
            )
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"cosine_similarity(): argument 'dim' (position 3) must be int, not {type(dim).__name__}")
    if not isinstance(eps, int | float):
        raise TypeError(f"cosine_similarity(): argument 'eps' (position 4) must be float, not {type(eps).__name__}")
    return _C._cosine_similarity(x1, x2, dim, eps)


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
    (``ScaledDotProductFlashAttentionForCpuBackward0``); other shapes and
    ``dropout_p > 0`` (float32 and float64) take torch's math path, a composite of
    matmul, softmax and dropout (fully masked rows give zeros). ``attn_mask`` is a bool mask
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
        and query.dtype.is_floating_point
    )
    use_math = not flash and not enable_gqa and query.dtype in (_C.float32, _C.float64) and query.dim() >= 2
    if not flash and not use_math:
        raise NotImplementedError(
            "scaled_dot_product_attention: npgrad has torch's CPU flash path (4-D floating inputs with "
            "one feature size, dropout_p=0) and its math path for float32/float64 without enable_gqa"
        )
    if attn_mask is not None and attn_mask.dtype == _C.bool:
        attn_mask = zeros(tuple(attn_mask.shape), dtype=query.dtype).masked_fill_(
            attn_mask.logical_not(), float("-inf")
        )
    if use_math:
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale)
    return _C._scaled_dot_product_flash_attention(query, key, value, attn_mask, is_causal, scale)[0]


# torch's C++ scalar type names in its sdpa messages.
_TORCH_SCALAR_NAMES = {
    "torch.float16": "c10::Half",
    "torch.float32": "float",
    "torch.float64": "double",
    "torch.int64": "long int",
}


# ---- multi-head attention ----
# torch's Python composite: the in-projection (linear), the heads as a batch,
# then either the explicit weights (baddbmm, softmax, bmm: need_weights) or
# scaled_dot_product_attention, and the out-projection; the same checks and
# messages, and the masks made additive floats as torch's _canonical_mask.

__all__ += ["multi_head_attention_forward"]  # noqa: PLE0604


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type: Any,
    other_name: str,
    target_type: Any,
    check_other: bool = True,
) -> Tensor | None:
    # A bool mask (True: not attended) as an additive float mask of target_type.
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _C.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both instead.",
            stacklevel=3,
        )
    if not is_float:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input: Tensor | None) -> Any:
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    # Whether the input is batched (3-D query) or not (2-D), after torch's checks.
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                f" but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                f" but found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                f" but found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor")


def _split_packed(proj: Tensor, n: int, e: int) -> Tensor:
    # (..., n * e) -> (n, ..., e), contiguous: torch's unflatten, unsqueeze,
    # transpose, squeeze and contiguous.
    return proj.unflatten(-1, (n, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()


def _in_projection_packed(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    # One linear for self-attention, two when key is value, else three.
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = _split_packed(linear(q, w, b), 3, e)
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        kv = _split_packed(linear(k, w_kv, b_kv), 2, e)
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    b_q: Tensor | None = None,
    b_k: Tensor | None = None,
    b_v: Tensor | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    # Separate projections, key and value of their own sizes.
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)), ("value", w_v, (eq, ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b is not None and b.shape != (eq,):
            raise AssertionError(f"expecting {name} bias shape of {(eq,)}, but got {b.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_static(name: str, static: Tensor, rows: int, head_dim: int) -> None:
    if static.size(0) != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of ``(L, N, E)`` queries over ``(S, N, E)`` keys and values
    (or unbatched ``(L, E)``, ``(S, E)``): torch's composite. The inputs are projected
    (packed ``in_proj_weight`` or the separate ``q/k/v_proj_weight``), split into
    ``num_heads`` heads, attended with the masks (``key_padding_mask`` ``(N, S)``,
    ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)``; bool: ``True`` is not
    attended, float: added), and projected out. Returns ``(output, weights)``: with
    ``need_weights`` the softmax weights are computed explicitly (averaged over the
    heads when ``average_attn_weights``), otherwise ``scaled_dot_product_attention``
    computes the output and the weights are ``None``.

    >>> import npgrad as torch
    >>> import npgrad.nn.functional as F
    >>> x = torch.ones(2, 1, 4)
    >>> w, b = torch.eye(4).repeat(3, 1), torch.zeros(12)
    >>> out, weights = F.multi_head_attention_forward(
    ...     x, x, x, 4, 2, w, b, None, None, False, 0.0, torch.eye(4), None)
    >>> out.shape, weights
    (torch.Size([2, 1, 4]), tensor([[[0.5000, 0.5000],
             [0.5000, 0.5000]]]))
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        # A batch of one at dim 1, squeezed off the results.
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask", query.dtype
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        # scaled_dot_product_attention applies the causal mask itself.
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)  # type: ignore[arg-type]

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct_2d_size = (tgt_len, src_len)
            if attn_mask.shape != correct_2d_size:
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {correct_2d_size}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            correct_3d_size = (bsz * num_heads, tgt_len, src_len)
            if attn_mask.shape != correct_3d_size:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {correct_3d_size}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        # One more key and value per batch element, attended by every query.
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # The heads as batch elements: (N * num_heads, tokens, head_dim).
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static("static_k", static_k, bsz * num_heads, head_dim)
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        _check_static("static_v", static_v, bsz * num_heads, head_dim)
        v = static_v

    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = _C.cat([k, zeros(zero_attn_shape, dtype=k.dtype)], dim=1)
        v = _C.cat([v, zeros(zero_attn_shape, dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got {key_padding_mask.shape[1]}"
            )
        key_padding_mask = (
            key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = _C.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _C.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = _C.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        # (1, L, S) broadcasts over batch and heads; else one mask per head.
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if is_batched else out.squeeze(1)), None


def _sdpa_math(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
) -> Tensor:
    # torch's _scaled_dot_product_attention_math: query and key each scaled by
    # sqrt(scale), the float mask added in place, a softmax whose fully masked
    # rows are zeros (torch's _safe_softmax), dropout, and the product with value.
    # torch records MulBackward1 and SafeSoftmaxBackward0 where npgrad records
    # MulBackward0 and SoftmaxBackward0 (between MaskedFillBackward0 nodes when
    # a row is fully masked); the values and gradients are the same.
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
            )
        causal = ones(query.size(-2), key.size(-2), dtype=_C.bool).tril()
        attn_mask = zeros(tuple(causal.shape), dtype=query.dtype).masked_fill_(causal.logical_not(), float("-inf"))
    s = scale if scale is not None else 1.0 / math.sqrt(query.size(-1))
    factor = math.sqrt(abs(s))
    attn = _C.matmul(query * (-factor if s < 0 else factor), key.transpose(-2, -1) * factor)
    if attn_mask is not None:
        attn = attn.add_(attn_mask)
    masked_rows = (attn == float("-inf")).all(-1, keepdim=True)
    if bool(masked_rows.any()):
        # Softmax of zeros there (finite, so no NaN reaches the gradients), then zeros.
        weights = softmax(attn.masked_fill(masked_rows, 0.0), -1).masked_fill(masked_rows, 0.0)
    else:
        weights = softmax(attn, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return _C.matmul(weights, value)


# ---- normalize and the embedding losses (torch's composites) ----
# Each records the graph torch's ATen composite records: normalize is norm,
# clamp_min, expand and div; the losses are where/clamp_min_ over pointwise ops,
# then the reduction (MeanBackward0 or SumBackward0). A number ATen adds as a
# Scalar is added with _C._add_scalar (AddBackward1, as torch records it), and
# one it subtracts with _C._sub_scalar (SubBackward1).

from .._creation import zeros_like as _zeros_like  # noqa: E402

__all__ += ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "normalize"]


def _apply_loss_reduction(loss: Tensor, reduction: int) -> Tensor:
    # ATen's apply_loss_reduction: 0 none, 1 mean, 2 sum.
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


def _number(value: float, like: Tensor) -> Tensor:
    # A 0-dim operand of like's dtype for `value - like`: torch's C++
    # `margin - self` records SubBackward0, not RsubBackward1.
    return tensor(value, dtype=like.dtype)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim``, the norm clamped below at
    ``eps``: torch's composite (``DivBackward0`` over ``ExpandBackward0`` over
    ``ClampMinBackward0`` over ``LinalgVectorNormBackward0``). With ``out``, the
    result is written there (no graph, as torch's ``div(..., out=)``).

    >>> import npgrad as torch
    >>> torch.nn.functional.normalize(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    with no_grad():
        out.copy_(input / denom)
    return out


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, then the reduction: torch's
    composite (``ClampMinBackward0`` over ``AddBackward1`` over ``MulBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.margin_ranking_loss(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 0.0]), torch.tensor([1.0, 1.0]))
    tensor(0.5000)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    output = _C._add_scalar(-target * (input1 - input2), margin).clamp_min_(0)
    return _apply_loss_reduction(output, reduction_enum)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target == 1`` and ``max(0, margin - input)`` where
    ``target == -1`` (both where ``target`` is neither), then the reduction: torch's
    composite.

    >>> import npgrad as torch
    >>> torch.nn.functional.hinge_embedding_loss(torch.tensor([0.3, 2.0]), torch.tensor([1.0, -1.0]))
    tensor(0.1500)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    margin_clamp = (_number(margin, input) - input).clamp_min_(0)
    output = _C.where(target != 1, margin_clamp, zeros) + _C.where(target != -1, input, zeros)
    return _apply_loss_reduction(output, reduction_enum)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where ``target == 1`` and ``max(0, cos - margin)``
    where ``target == -1`` (0 where it is neither), the cosine along the last dim, then
    the reduction: torch's composite (the cosine from sums of products with
    ``AddBackward1`` for its epsilon, ``SubBackward1`` for the margin,
    ``WhereBackward0`` for the two cases).

    >>> import npgrad as torch
    >>> a = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> b = torch.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> torch.nn.functional.cosine_embedding_loss(a, b, torch.tensor([1.0, -1.0]), reduction="none")
    tensor([1.0000, 0.7071])
    """
    for position, (name, value) in enumerate((("input1", input1), ("input2", input2), ("target", target)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"cosine_embedding_loss(): argument '{name}' (position {position}) must be Tensor, "
                f"not {type(value).__name__}"
            )
    reduction_enum = _reduction(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != targ_dim + 1 or input2.dim() != targ_dim + 1:
        raise RuntimeError(
            f"{targ_dim}D target tensor expects {targ_dim + 1}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12  # ATen's EPSILON
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = _C._add_scalar((input1 * input1).sum(targ_dim), eps)
    mag_square2 = _C._add_scalar((input2 * input2).sum(targ_dim), eps)
    denom = (mag_square1 * mag_square2).sqrt_()
    cos = prod_sum / denom
    zeros = _zeros_like(cos)
    # ATen's `1 - cos` fills a new tensor with 1 and subtracts in place.
    pos = ones_like(cos).sub_(cos)
    neg = _C._sub_scalar(cos, margin).clamp_min_(0)
    output = _C.where(target == 1, pos, zeros) + _C.where(target == -1, neg, zeros)
    return _apply_loss_reduction(output, reduction_enum)


__all__ += ["pairwise_distance", "triplet_margin_loss"]


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim (broadcast): torch's
    composite (``NormBackward1`` over ``AddBackward1`` over ``SubBackward0``).

    >>> import npgrad as torch
    >>> torch.nn.functional.pairwise_distance(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    innermost = max(x1.dim(), x2.dim()) - 1
    return _C._norm(_C._add_scalar(x1 - x2, eps), float(p), [innermost], keepdim)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the
    ``pairwise_distance``; with ``swap``, ``d(anchor, negative)`` is the smaller of it
    and ``d(positive, negative)``. Then the reduction: torch's composite.

    >>> import npgrad as torch
    >>> a = torch.tensor([[0.0, 0.0]])
    >>> torch.nn.functional.triplet_margin_loss(a, torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.5]]), eps=0.0)
    tensor(0.5000)
    """
    reduction_enum = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
            f"anchor {dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs"
        )
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _C.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    output = (_C._add_scalar(dist_pos, margin) - dist_neg).clamp_min(0)
    return _apply_loss_reduction(output, reduction_enum)


# ---- Upsampling (interpolate) ----
# torch's Python front end of the upsample ops: the argument checks, the output
# size or scale factors, then the native op of the mode and rank
# (_C._nn.upsample_nearest1d, ..., UpsampleBilinear2DBackward0). "area" is
# torch's adaptive average pooling; bicubic, trilinear, lanczos, antialias and
# 5-D inputs are not implemented in npgrad.

__all__ += ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]  # noqa: PLE0604

_INTERPOLATE_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def _is_integer(x: Any) -> bool:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return True
    return isinstance(x, Tensor) and not x.is_floating_point()


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resamples the spatial dims of an ``(N, C, L)`` or ``(N, C, H, W)`` input to
    ``size``, or to each size times ``scale_factor`` (floored): ``nearest``
    (``UpsampleNearest1DBackward0``, ...), ``nearest-exact``, ``linear`` (3-D) and
    ``bilinear`` (4-D), with ``align_corners`` for the linear modes; ``area`` is
    ``adaptive_avg_pool``. The given scale factors set the source positions unless
    ``recompute_scale_factor`` (then they only set the output size), as torch's.

    >>> import npgrad as torch
    >>> x = torch.tensor([[[1.0, 2.0, 4.0]]])
    >>> torch.nn.functional.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2., 4., 4.]]])
    >>> torch.nn.functional.interpolate(x, size=5, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.5000, 2.0000, 3.0000, 4.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the "
                "interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    scale_factors: list[float] | None
    output_size: list[int] | None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        assert scale_factors is not None
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input"
        )
    nearest = {
        (3, "nearest"): _nn.upsample_nearest1d,
        (4, "nearest"): _nn.upsample_nearest2d,
        (3, "nearest-exact"): _nn._upsample_nearest_exact1d,
        (4, "nearest-exact"): _nn._upsample_nearest_exact2d,
    }.get((input.dim(), mode))
    if nearest is not None:
        return nearest(input, output_size, scale_factors)
    if mode == "area" and input.dim() in (3, 4):
        assert output_size is not None
        pool = adaptive_avg_pool1d if input.dim() == 3 else adaptive_avg_pool2d
        return pool(input, output_size)
    if input.dim() == 3 and mode == "linear":
        return _nn.upsample_linear1d(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bilinear" and not antialias:
        return _nn.upsample_bilinear2d(input, output_size, align_corners, scale_factors)
    if (input.dim(), mode) in ((4, "bilinear"), (4, "bicubic"), (4, "lanczos"), (5, "trilinear")) or (
        input.dim() == 5 and mode in ("nearest", "nearest-exact", "area")
    ):
        what = f"{mode} with antialias=True" if antialias and mode == "bilinear" else mode
        raise NotImplementedError(f"interpolate: mode {what} of a {input.dim()}-D input is not implemented in npgrad")
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if input.dim() in (3, 4, 5) and mode in needs and needs[mode] != input.dim():
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {needs[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: {_INTERPOLATE_MODES}"
        f" (got {mode})"
    )


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """``interpolate``, under torch's deprecated name (with its warning).

    >>> import warnings
    >>> import npgrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.nn.functional.upsample(torch.tensor([[[1.0, 2.0]]]), size=4)
    tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """``interpolate(mode="nearest")``, under torch's deprecated name (with its warning).

    >>> import warnings
    >>> import npgrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.nn.functional.upsample_nearest(torch.tensor([[[[1.0]]]]), size=2)
    tensor([[[[1., 1.],
              [1., 1.]]]])
    """
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """``interpolate(mode="bilinear", align_corners=True)``, under torch's deprecated
    name (with its warning).

    >>> import warnings
    >>> import npgrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.nn.functional.upsample_bilinear(torch.tensor([[[[0.0, 2.0]]]]), size=(1, 3))
    tensor([[[[0., 1., 2.]]]])
    """
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
