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
from . import _C, _gc, _tensor_docs, _torch_docs, autograd, return_types, testing, utils  # noqa: F401
from ._C import *  # noqa: F403  (with the op tables' functions, npgrad.<name>)
from ._C import (
    addmm,
    addmv,
    baddbmm,
    bmm,
    bool,
    cat,
    clamp,
    clone,
    dot,
    dtype,
    float16,
    float32,
    float64,
    ger,
    int64,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    kron,
    log_softmax,
    matmul,
    max,
    mean,
    min,
    mm,
    mv,
    outer,
    permute,
    pow,
    reshape,
    set_anomaly_enabled,
    softmax,
    square,
    squeeze,
    stack,
    sum,
    t,
    tensordot,
    transpose,
    unsqueeze,
    where,
)
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
    "Size",
    "Tensor",
    "addmm",
    "addmv",
    "arange",
    "baddbmm",
    "bmm",
    "bool",
    "cat",
    "clamp",
    "clone",
    "device",
    "dot",
    "double",
    "dtype",
    "empty",
    "empty_like",
    "enable_grad",
    "float",
    "float16",
    "float32",
    "float64",
    "from_dlpack",
    "from_numpy",
    "full",
    "ger",
    "half",
    "int64",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_tensor",
    "kron",
    "log_softmax",
    "long",
    "manual_seed",
    "matmul",
    "max",
    "mean",
    "min",
    "mm",
    "mv",
    "no_grad",
    "ones",
    "ones_like",
    "outer",
    "permute",
    "pow",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "reshape",
    "set_anomaly_enabled",
    "set_grad_enabled",
    "softmax",
    "square",
    "squeeze",
    "stack",
    "sum",
    "t",
    "tensor",
    "tensordot",
    "transpose",
    "unsqueeze",
    "where",
    "zeros",
    "zeros_like",
]
__all__ += [_op["name"] for _op in _C._op_table if _op["public"]]
