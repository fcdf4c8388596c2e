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

from .. import _C
from .._C import Tensor, _nn
from .._creation import zeros

__all__ = [
    "alpha_dropout",
    "celu",
    "celu_",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "dropout",
    "dropout1d",
    "dropout2d",
    "elu",
    "elu_",
    "fold",
    "gelu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "log_softmax",
    "logsigmoid",
    "mish",
    "relu",
    "relu6",
    "relu_",
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
                if any(t % 2 for t in totals):
                    raise NotImplementedError(
                        f"{fn}: padding='same' with an even dilated kernel size needs an asymmetric zero "
                        "padding of the input (torch's constant_pad_nd), which npgrad does not have yet"
                    )
                pads = [t // 2 for t in totals]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = _conv_arg(fn, "padding", padding, nd, True)
    if unbatched:
        input = input.unsqueeze(0)
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
