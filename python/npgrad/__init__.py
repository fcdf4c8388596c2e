"""npgrad: torch.autograd reimplemented natively in C++, with NumPy storage.

Code written for ``torch.autograd`` runs after ``import npgrad as torch``, as
long as it stays inside the API surface listed in the README.

>>> import npgrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

# The public submodules (npgrad.autograd, ...), and three imported for what
# importing them does: _gc makes full gc collections free autograd cycles, and
# _tensor_docs and _torch_docs attach the docstrings of the native names.
from . import _C, _gc, _tensor_docs, _torch_docs, autograd, cuda, nn, random, return_types, testing, utils  # noqa: F401
from ._C import *  # noqa: F403  (with the op tables' functions, npgrad.<name>)
from ._C import (
    addmm,
    addmv,
    all,
    allclose,
    any,
    argmax,
    argmin,
    baddbmm,
    bfloat16,
    bmm,
    bool,
    cat,
    chunk,
    clamp,
    clip,
    clone,
    diag,
    diag_embed,
    diagonal,
    dot,
    dtype,
    equal,
    flatten,
    flip,
    fliplr,
    flipud,
    float16,
    float32,
    float64,
    gather,
    ger,
    index_add,
    index_copy,
    index_put,
    index_put_,
    index_select,
    int8,
    int16,
    int32,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_warn_always_enabled,
    isclose,
    kron,
    log_softmax,
    masked_fill,
    masked_scatter,
    masked_select,
    matmul,
    max,
    min,
    mm,
    moveaxis,
    movedim,
    mv,
    nan_to_num,
    narrow,
    nonzero,
    outer,
    permute,
    pow,
    repeat_interleave,
    reshape,
    roll,
    scatter,
    scatter_add,
    select,
    selu,
    selu_,
    set_anomaly_enabled,
    set_warn_always,
    sgn,
    softmax,
    split,
    split_with_sizes,
    square,
    squeeze,
    stack,
    std_mean,
    swapaxes,
    swapdims,
    t,
    take_along_dim,
    tensordot,
    tile,
    transpose,
    tril,
    triu,
    uint8,
    unbind,
    unflatten,
    unsqueeze,
    var_mean,
    where,
)
from ._creation import (
    arange,
    as_tensor,
    asarray,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    is_tensor,
    linspace,
    logspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)

# _cpu and _check_to_device: the native side looks them up on this module
# (InputMetadata.device, Tensor.to).
from ._device import _check_to_device, _cpu, device, get_autocast_dtype, is_autocast_enabled  # noqa: F401
from ._generator import Generator, default_generator
from ._sampling import (
    bernoulli,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
from ._size import Size

# Importing _tensor installs the Python half of Tensor on the native class.
from ._tensor import Tensor
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .utils.dlpack import from_dlpack

# The version, in one place: the wheel's metadata is read from this line
# (pyproject.toml: scikit-build-core's regex version provider).
__version__ = "0.1.0"

float = float32  # noqa: A001
double = float64
half = float16
short = int16
int = int32  # noqa: A001
long = int64

__all__ = [
    "Generator",
    "Size",
    "Tensor",
    "addmm",
    "addmv",
    "all",
    "allclose",
    "any",
    "arange",
    "argmax",
    "argmin",
    "as_tensor",
    "asarray",
    "baddbmm",
    "bernoulli",
    "bfloat16",
    "bmm",
    "bool",
    "cat",
    "chunk",
    "clamp",
    "clip",
    "clone",
    "cuda",
    "default_generator",
    "device",
    "diag",
    "diag_embed",
    "diagonal",
    "dot",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "enable_grad",
    "equal",
    "eye",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "float",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "full",
    "full_like",
    "gather",
    "ger",
    "get_autocast_dtype",
    "get_rng_state",
    "half",
    "index_add",
    "index_copy",
    "index_put",
    "index_put_",
    "index_select",
    "inference_mode",
    "initial_seed",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_autocast_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_tensor",
    "is_warn_always_enabled",
    "isclose",
    "kron",
    "linspace",
    "log_softmax",
    "logspace",
    "long",
    "manual_seed",
    "masked_fill",
    "masked_scatter",
    "masked_select",
    "matmul",
    "max",
    "min",
    "mm",
    "moveaxis",
    "movedim",
    "multinomial",
    "mv",
    "nan_to_num",
    "narrow",
    "no_grad",
    "nonzero",
    "normal",
    "ones",
    "ones_like",
    "outer",
    "permute",
    "pow",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "random",
    "randperm",
    "repeat_interleave",
    "reshape",
    "roll",
    "scatter",
    "scatter_add",
    "seed",
    "select",
    "set_anomaly_enabled",
    "set_grad_enabled",
    "set_rng_state",
    "set_warn_always",
    "sgn",
    "short",
    "softmax",
    "split",
    "split_with_sizes",
    "square",
    "squeeze",
    "stack",
    "std_mean",
    "swapaxes",
    "swapdims",
    "t",
    "take_along_dim",
    "tensor",
    "tensordot",
    "tile",
    "transpose",
    "tril",
    "triu",
    "uint8",
    "unbind",
    "unflatten",
    "unsqueeze",
    "var_mean",
    "where",
    "zeros",
    "zeros_like",
]
__all__ += [_op["name"] for _op in _C._op_table if _op["public"]]
# The activation table's functions torch has at its top level (torch.celu,
# torch.threshold_, ...; the others are in npgrad.nn.functional), and selu.
__all__ += [
    _name for _op in _C._activation_table if _op["binding"] != "nn" for _name in (_op["name"], _op["inplace"]) if _name
]
__all__ += ["selu", "selu_"]
# lerp, addcmul, addcdiv, and the loss torch keeps at its top level.
from ._C import addcdiv, addcmul, binary_cross_entropy_with_logits, lerp  # noqa: E402

__all__ += ["addcdiv", "addcmul", "binary_cross_entropy_with_logits", "lerp"]
# The convolutions torch has at its top level (npgrad.nn.functional has them all).
from ._C import convolution  # noqa: E402
from .nn.functional import conv1d, conv2d, conv_transpose1d, conv_transpose2d  # noqa: E402

__all__ += ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "convolution"]
# torch.bilinear (torch.nn.functional.bilinear is the same function), and the
# private op it is made of, as torch._trilinear.
from ._C import _trilinear  # noqa: E402, F401
from .nn.functional import bilinear  # noqa: E402

__all__ += ["bilinear"]
# npgrad.utils.data (as torch.utils.data, there after `import torch`), and
# save/load.
from . import serialization  # noqa: E402, F401
from .serialization import load, save  # noqa: E402
from .utils import data as _utils_data  # noqa: E402, F401

__all__ += ["load", "save"]
# torch.functional's broadcasting helpers and cdist, at the top level as in torch.
from . import functional  # noqa: E402, F401
from .functional import broadcast_shapes, broadcast_tensors, cdist, einsum  # noqa: E402

__all__ += ["broadcast_shapes", "broadcast_tensors", "cdist", "einsum"]
# npgrad.optim, as torch.optim.
from . import optim  # noqa: E402,F401

# clamp's one-sided forms.
from ._C import clamp_max, clamp_min  # noqa: E402

__all__ += ["clamp_max", "clamp_min"]
