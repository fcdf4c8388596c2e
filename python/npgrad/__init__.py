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

import numpy as _np

from ._C import (
    abs,
    add,
    bool,
    cat,
    clamp,
    clone,
    cos,
    div,
    dtype,
    exp,
    float16,
    float32,
    float64,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    log,
    log_softmax,
    matmul,
    max,
    mean,
    min,
    mm,
    mul,
    neg,
    permute,
    pow,
    reciprocal,
    relu,
    reshape,
    set_anomaly_enabled,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    t,
    tanh,
    transpose,
    unsqueeze,
    where,
)

_NP_TO_DTYPE = {
    _np.dtype("float16"): float16,
    _np.dtype("float32"): float32,
    _np.dtype("float64"): float64,
    _np.dtype("int64"): int64,
    _np.dtype("bool"): bool,
}

# torch's names of the dtypes in kernel errors ("not implemented for 'Long'").
_DTYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}

# Everything below is imported after the dtype tables, which npgrad._creation
# reads from this module.
#
# The public submodules (npgrad.autograd, ...), and three imported for what
# importing them does: _gc makes full gc collections free autograd cycles, and
# _tensor_docs and _torch_docs attach the docstrings of the native names.
from . import _gc, _tensor_docs, _torch_docs, autograd, return_types, testing, utils  # noqa: F401
from ._creation import (
    arange,
    empty,
    empty_like,
    from_numpy,
    full,
    is_tensor,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)

# _cpu and _check_to_device: the native side looks them up on this module
# (InputMetadata.device, Tensor.to).
from ._device import _check_to_device, _cpu, device  # noqa: F401
from ._size import Size

# Importing _tensor installs the Python half of Tensor on the native class.
from ._tensor import Tensor
from .autograd.grad_mode import enable_grad, no_grad, set_grad_enabled
from .utils.dlpack import from_dlpack

# The version, in one place: the wheel's metadata is read from this line
# (pyproject.toml: scikit-build-core's regex version provider).
__version__ = "0.1.0"

float = float32  # noqa: A001
double = float64
half = float16
long = int64

__all__ = [
    "Size", "Tensor", "abs", "add", "arange", "bool", "cat", "clamp", "clone", "cos", "device",
    "div", "double", "dtype", "empty", "empty_like", "enable_grad", "exp", "float", "float16", "float32",
    "float64", "from_dlpack", "from_numpy", "full", "half", "int64", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled", "is_tensor", "log",
    "log_softmax", "long", "manual_seed", "matmul", "max", "mean", "min", "mm", "mul", "neg",
    "no_grad", "ones", "ones_like", "permute", "pow", "rand", "rand_like", "randn",
    "randn_like", "reciprocal", "relu", "reshape", "set_anomaly_enabled", "set_grad_enabled", "sigmoid", "sin",
    "softmax", "sqrt", "squeeze", "stack", "sub", "sum", "t", "tanh", "tensor", "transpose",
    "unsqueeze", "where", "zeros", "zeros_like",
]
