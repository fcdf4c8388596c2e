"""The random functions: ``rand``, ``randn``, ``randint``, ``randperm``,
``normal``, ``bernoulli``, ``multinomial``, their ``*_like`` variants, and the
in-place fills (``Tensor.normal_``, ``uniform_``, ``bernoulli_``,
``exponential_``, ``random_``).

Each draws from the NumPy bit generator of ``generator`` (by default
``npgrad.default_generator``), with torch's argument checks and errors; the
results that depend on a tensor requiring grad, and the fills, are recorded
under torch's zero-gradient nodes by ``_C._record_random`` and
``_C._random_fill_`` (the engine's mutation path).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from . import _C
from ._C import Tensor, dtype, int64
from ._creation import (
    _NP_TO_DTYPE,
    _check_dtype,
    _check_sizes,
    _check_tensor_input,
    _default,
    _finish,
    _int_argument,
    _is_floating,
    _like,
    _np_dtype,
    _size_args,
    _size_sequence,
    zeros_like,
)
from ._generator import Generator, _numpy_generator


def _check_random_dtype(fname: str, dt: np.dtype) -> None:
    if not _is_floating(dt):
        kernel = (
            "check_uniform_bounds"
            if fname.startswith("rand") and not fname.startswith("randn")
            else "normal_kernel_cpu"
        )
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_NP_TO_DTYPE[dt]._scalar_type_name}'")


def rand(
    *size: Any,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform random values in ``[0, 1)``, drawn from ``generator`` (by
    default ``npgrad.default_generator``, seeded by ``manual_seed``).

    >>> import npgrad as torch
    >>> x = torch.rand(2, 3)
    >>> x.shape, 0 <= x.min().item() and x.max().item() < 1
    (torch.Size([2, 3]), True)
    """
    shape, dt = _size_args(size, "rand"), _default(dtype, "rand")
    _check_random_dtype("rand", dt)
    return _finish(_uniform(_numpy_generator("rand", generator), shape, dt), requires_grad)


def randn(
    *size: Any,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal random values, drawn from ``generator`` (by default
    ``npgrad.default_generator``).

    >>> import npgrad as torch
    >>> _ = torch.manual_seed(0)
    >>> torch.randn(3).shape
    torch.Size([3])
    """
    shape, dt = _size_args(size, "randn"), _default(dtype, "randn")
    _check_random_dtype("randn", dt)
    return _finish(_standard_normal(_numpy_generator("randn", generator), shape, dt), requires_grad)


def _uniform(gen: np.random.Generator, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Uniform values in ``[0, 1)`` of dtype ``dt``. A 16-bit float draws
    multiples of 2**-digits (its significand: 11 bits for float16, 8 for
    bfloat16), as torch does, so that none rounds up to 1."""
    if dt.itemsize == 2:
        digits = ml_dtypes.finfo(dt).nmant + 1
        return (gen.integers(0, 2**digits, shape) * 2.0**-digits).astype(dt)
    return gen.random(shape).astype(dt)


def _standard_normal(gen: np.random.Generator, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    return gen.standard_normal(shape).astype(dt)


# The largest magnitude each dtype holds every integer up to (torch's bounds of
# random_(from, to)), with the name its error gives the dtype.
_RANDOM_BOUNDS = {
    np.dtype(np.bool_): (0, 1, "bool"),
    np.dtype(np.float16): (-(2**11), 2**11, "c10::Half"),
    np.dtype(ml_dtypes.bfloat16): (-(2**8), 2**8, "c10::BFloat16"),
    np.dtype(np.float32): (-(2**24), 2**24, "float"),
    np.dtype(np.float64): (-(2**53), 2**53, "double"),
}


def _random_integers(gen: np.random.Generator, low: int, high: int, shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Integers uniform in ``[low, high)`` as dtype ``dt``, with torch's
    checks of random_(from, to)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    bounds = _RANDOM_BOUNDS.get(dt)
    if bounds is not None:
        lo, hi, name = bounds
        if not lo <= low <= hi and dt.kind == "b":
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")
    return gen.integers(low, high, shape, dtype=np.int64, endpoint=False).astype(dt)


def randint(
    low: Any = None,
    high: Any = None,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers drawn uniformly from ``[low, high)`` (``low`` defaults to 0:
    ``randint(high, size)``), ``int64`` unless ``dtype`` is given.

    >>> import npgrad as torch
    >>> x = torch.randint(3, 10, (4,))
    >>> x.dtype, all(3 <= v < 10 for v in x.tolist())
    (torch.int64, True)
    >>> torch.randint(2, (3,), dtype=torch.float64).dtype
    torch.float64
    """
    if size is None:
        if high is None:
            raise TypeError('randint() missing required arguments: "high" and "size"')
        if not isinstance(high, (tuple, list)):
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type(high).__name__}")
        low, high, size = None, low, high
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 3) must be tuple of ints, not {type(size).__name__}")
    lo = 0 if low is None else _int_argument("randint", "low", 1, low)
    hi = _int_argument("randint", "high", 2 if low is not None else 1, high)
    shape = _check_sizes("randint", _size_sequence("randint", size))
    _check_dtype("randint", dtype)
    dt = _np_dtype(int64 if dtype is None else dtype)
    gen = _numpy_generator("randint", generator)
    return _finish(_random_integers(gen, lo, hi, shape, dt), requires_grad)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A random permutation of ``0, ..., n - 1`` (``int64`` unless ``dtype``).

    >>> import npgrad as torch
    >>> sorted(torch.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    count = _int_argument("randperm", "n", 1, n)
    _check_sizes("randperm", (count,))
    _check_dtype("randperm", dtype)
    dt = _np_dtype(int64 if dtype is None else dtype)
    if dt.kind == "b":
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if dt == np.float16 and count > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    gen = _numpy_generator("randperm", generator)
    return _finish(gen.permutation(count).astype(dt), requires_grad)


def rand_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``rand`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.rand_like(torch.zeros(2, dtype=torch.float64)).dtype
    torch.float64
    """
    shape, dt = _like(input, dtype, "rand_like")
    _check_random_dtype("rand_like", dt)
    return _finish(_uniform(_numpy_generator("rand_like", generator), shape, dt), requires_grad)


def randn_like(
    input: Tensor,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``randn`` with the shape (and, unless given, the dtype) of ``input``.

    >>> import npgrad as torch
    >>> torch.randn_like(torch.zeros(4)).shape
    torch.Size([4])
    """
    shape, dt = _like(input, dtype, "randn_like")
    _check_random_dtype("randn_like", dt)
    return _finish(_standard_normal(_numpy_generator("randn_like", generator), shape, dt), requires_grad)


def randint_like(
    input: Tensor,
    low: Any = 0,
    high: Any = None,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``randint`` with the shape (and, unless given, the dtype) of ``input``:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``.

    >>> import npgrad as torch
    >>> torch.randint_like(torch.zeros(3), 1, 2)
    tensor([1., 1., 1.])
    """
    if high is None:
        low, high = 0, low
    shape, dt = _like(input, dtype, "randint_like")
    lo = _int_argument("randint_like", "low", 2, low)
    hi = _int_argument("randint_like", "high", 3, high)
    gen = _numpy_generator("randint_like", generator)
    return _finish(_random_integers(gen, lo, hi, shape, dt), requires_grad)


def _check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Sequence[int] | None = None,
    *,
    generator: Generator | None = None,
    dtype: dtype | None = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal random values of mean ``mean`` and standard deviation ``std``:
    tensors (broadcast together; the result has the mean's dtype, or the
    std's when the mean is a number), or two numbers and a ``size``.

    >>> import npgrad as torch
    >>> torch.normal(torch.zeros(2, 3), 1.0).shape
    torch.Size([2, 3])
    >>> torch.normal(2.0, 0.0, (2,))
    tensor([2., 2.])
    """
    gen = _numpy_generator("normal", generator)
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got "
                f"({type(mean).__name__}, {type(std).__name__}): a number mean and std need a size"
            )
        _check_std(float(std))
        shape, dt = _check_sizes("normal", _size_sequence("normal", size)), _default(dtype, "normal")
        _check_random_dtype("normal", dt)
        return _finish(mean + std * _standard_normal(gen, shape, dt), requires_grad)
    dt = _np_dtype(mean.dtype if isinstance(mean, Tensor) else std.dtype)
    _check_random_dtype("normal", dt)
    if isinstance(std, Tensor):
        if not (std._array >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(float(std))
    # The broadcast shape, with torch's error when there is none.
    shape = (
        zeros_like(mean) + zeros_like(std)
        if isinstance(std, Tensor) and isinstance(mean, Tensor)
        else zeros_like(tensors[0])
    ).shape
    mean_arr = mean._array if isinstance(mean, Tensor) else float(mean)
    std_arr = std._array if isinstance(std, Tensor) else float(std)
    values = Tensor._from_numpy((mean_arr + std_arr * gen.standard_normal(shape)).astype(dt))
    # torch's node per overload, showing the sizes of its tensor operands.
    node, inputs, attributes = {
        (True, False): ("NormalBackward1", [mean], ["_saved_mean_sym_sizes"]),
        (False, True): ("NormalBackward2", [std], ["_saved_std_sym_sizes"]),
        (True, True): ("NormalBackward3", [mean, std], ["_saved_mean_sym_sizes", "_saved_std_sym_sizes"]),
    }[(isinstance(mean, Tensor), isinstance(std, Tensor))]
    return _C._record_random(values, node, inputs, attributes)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """Draws 1 with probability ``input`` (or ``p``, when given) and 0
    otherwise, in ``input``'s shape and dtype.

    >>> import npgrad as torch
    >>> torch.bernoulli(torch.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.])
    """
    _check_tensor_input("bernoulli", input)
    gen = _numpy_generator("bernoulli", generator)
    dt = _np_dtype(input.dtype)
    if p is None:
        probs = _bernoulli_probabilities(input)
        drawn = Tensor._from_numpy((gen.random(probs.shape) < probs).astype(dt))
        return _C._record_random(drawn, "BernoulliBackward0", [input], [])
    _check_bernoulli_p(p)
    drawn = Tensor._from_numpy((gen.random(tuple(input._shape)) < p).astype(dt))
    return _C._record_not_implemented(drawn, "aten::bernoulli", [input])  # as torch: no derivative


def _check_bernoulli_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")


def _bernoulli_probabilities(p: Tensor) -> np.ndarray:
    """The values of a probability tensor, with torch's checks."""
    if not p.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{p.dtype._scalar_type_name}'")
    arr = p._array
    if not ((arr >= 0) & (arr <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
            "If so, please report an enhancement request to PyTorch.)"
        )
    return arr


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None
) -> Tensor:
    """Indices drawn from the categories of each row of ``input`` (weights,
    not necessarily normalized): ``num_samples`` per row, with or without
    replacement. The result is ``int64``, of shape ``(num_samples,)`` or
    ``(rows, num_samples)``.

    >>> import npgrad as torch
    >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 1)
    tensor([1])
    >>> torch.multinomial(torch.tensor([0.0, 1.0]), 3, replacement=True)
    tensor([1, 1, 1])
    """
    _check_tensor_input("multinomial", input)
    n = _int_argument("multinomial", "num_samples", 2, num_samples)
    gen = _numpy_generator("multinomial", generator)
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {input.dtype._scalar_type_name}"
        )
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input._shape[-1]
    if not replacement and n > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    probs = input._array.astype(np.float64).reshape(-1, categories)
    if not (np.isfinite(probs) & (probs >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if probs.shape[0] and not (probs.sum(axis=1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        cdf = np.cumsum(probs, axis=1)
        u = gen.random((probs.shape[0], n)) * cdf[:, -1:]
        picks = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)]) if len(cdf) else u
        picks = np.minimum(picks, categories - 1)
    else:
        # Without replacement: the n largest of p / Exp(1) (torch's method).
        keys = probs / gen.exponential(size=probs.shape)
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :n]
    out_shape = (n,) if input.dim() == 1 else (probs.shape[0], n)
    return Tensor._from_numpy(picks.astype(np.int64).reshape(out_shape))


# ---- The in-place random fills (Tensor methods, installed by _tensor.py) ----


def _fill_random(self: Tensor, values: np.ndarray, node: str, p: Tensor | None = None) -> Tensor:
    """Writes drawn values into self through the mutation path (torch's
    checks, version bump and zero-gradient node ``node``)."""
    _C._random_fill_(self, Tensor._from_numpy(np.asarray(values, dtype=_np_dtype(self.dtype))), node, p)
    return self


def _shape_and_gen(self: Tensor, fname: str, generator: Any) -> tuple[tuple[int, ...], np.random.Generator]:
    return tuple(self._shape), _numpy_generator(fname, generator)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fills self with normal random values of mean ``mean`` and standard
    deviation ``std``; returns self.

    >>> import npgrad as torch
    >>> torch.zeros(2).normal_(3.0, 0.0)
    tensor([3., 3.])
    """
    shape, gen = _shape_and_gen(self, "normal_", generator)
    _check_random_dtype("normal_", _np_dtype(self.dtype))
    _check_std(float(std))
    return _fill_random(self, mean + std * gen.standard_normal(shape), "NormalBackward0")


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fills self with values drawn uniformly from ``[from, to)``; returns self.

    >>> import npgrad as torch
    >>> x = torch.zeros(100).uniform_(2.0, 3.0)
    >>> all(2 <= v < 3 for v in x.tolist())
    True
    """
    shape, gen = _shape_and_gen(self, "uniform_", generator)
    dt = _np_dtype(self.dtype)
    _check_random_dtype("rand", dt)
    low, high = float(from_), float(to)
    for name, v in (("from", low), ("to", high)):
        if not np.isfinite(v) or (dt.itemsize < 8 and abs(v) > ml_dtypes.finfo(dt).max):
            raise RuntimeError(f"{name} is out of bounds for {_RANDOM_BOUNDS[dt][2]}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low:g} > to={high:g}")
    # u drawn in self's dtype: [0, 1) stays below 1 (float16 included).
    return _fill_random(self, low + (high - low) * _uniform(gen, shape, dt).astype(np.float64), "UniformBackward0")


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fills self with 1 drawn with probability ``p`` (a number, or a tensor
    broadcast to self's shape) and 0 otherwise; returns self.

    >>> import npgrad as torch
    >>> torch.zeros(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    shape, gen = _shape_and_gen(self, "bernoulli_", generator)
    if isinstance(p, Tensor):
        _bernoulli_probabilities(p)
        probs = p.detach().expand(*shape)._array  # torch's error when p does not broadcast to self
        drawn = gen.random(shape) < probs
        return _fill_random(self, drawn, "BernoulliBackward1", p)
    _check_bernoulli_p(float(p))
    return _fill_random(self, gen.random(shape) < float(p), "BernoulliBackward2")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fills self with exponential random values of rate ``lambd``; returns self.

    >>> import npgrad as torch
    >>> min(torch.zeros(5).exponential_(2.0).tolist()) >= 0
    True
    """
    shape, gen = _shape_and_gen(self, "exponential_", generator)
    if not self.dtype.is_floating_point:
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a floating point "
            f"but you specified {self.dtype._scalar_type_name}"
        )
    if not float(lambd) > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={float(lambd):g}")
    return _fill_random(self, gen.exponential(1.0 / float(lambd), shape), "ExponentialBackward0")


def random_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fills self with integers drawn uniformly: ``random_(from, to)`` from
    ``[from, to)``, ``random_(to)`` from ``[0, to)``, ``random_()`` (and
    ``to=None``) up to the largest integer the dtype holds exactly (``[0,
    2**24]`` for float32); returns self.

    >>> import npgrad as torch
    >>> torch.zeros(3).random_(1, 2)
    tensor([1., 1., 1.])
    """
    bounds = list(args)
    if "from" in kwargs:
        bounds.insert(0, kwargs.pop("from"))
    if "to" in kwargs:
        bounds.append(kwargs.pop("to"))
    if kwargs or len(bounds) > 2:
        raise TypeError("random_() received an invalid combination of arguments")
    node = ("RandomBackward2", "RandomBackward1", "RandomBackward0")[len(bounds)]
    low, high = (0, None) if not bounds else (0, bounds[0]) if len(bounds) == 1 else bounds
    shape, gen = _shape_and_gen(self, "random_", generator)
    dt = _np_dtype(self.dtype)
    lo = _int_argument("random_", "from", 1, low)
    if high is None:
        # The dtype's largest exactly held integer, included.
        hi = 2 if dt.kind == "b" else _RANDOM_BOUNDS[dt][1] + 1 if _is_floating(dt) else 2**63
    else:
        hi = _int_argument("random_", "to", 2, high)
    return _fill_random(self, _random_integers(gen, lo, hi, shape, dt), node)
