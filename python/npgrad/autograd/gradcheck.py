"""``npgrad.autograd.gradcheck``: finite differences against the autograd engine.

Mirrors ``torch/autograd/gradcheck.py`` (torch 2.13): the same signatures and
defaults, the same sequence of checks and the same report text, so a failing
check reads the same in both libraries::

    >>> import npgrad as torch
    >>> x = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
    True

The numerical side runs in NumPy on the inputs' own storage (a perturbation is a
write to the array the tensor wraps, so it bypasses the version counter exactly as
torch's writes through ``.data`` do); the analytical side is ``autograd.grad``.
As with ``torch.autograd.gradcheck``, this module's name is shadowed on the
package by the function: ``from npgrad.autograd.gradcheck import GradcheckError``
still reaches the module.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from .. import _C
from .._creation import from_numpy, zeros_like
from .._size import Size
from ..testing import make_tensor
from ._backward import grad as _grad
from .function import Function

__all__ = [
    "GradcheckError",
    "get_analytical_jacobian",
    "get_numerical_jacobian",
    "get_numerical_jacobian_wrt_specific_input",
    "gradcheck",
    "gradgradcheck",
]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check fails."""


# Seed of the private generator that draws fast mode's projection vectors. Any fixed
# value works: a fresh generator per call keeps the check deterministic and leaves
# the user's random state (``npgrad.manual_seed``) untouched, as torch does.
_FAST_MODE_SEED = 67280421310721

# Messages that are torch's text word for word (users grep for them).
_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


# ---------------------------------------------------------------- small helpers


def _is_tensor(x: Any) -> bool:
    return isinstance(x, _C.Tensor)


def _is_float_tensor(x: Any) -> bool:
    return _is_tensor(x) and bool(x.dtype.is_floating_point)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _iter_tensors(x: Any, only_requiring_grad: bool = False) -> Iterator[Any]:
    """Tensors in ``x`` (nested iterables allowed), in order."""
    if _is_tensor(x):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, Iterable) and not isinstance(x, str):
        for elem in x:
            yield from _iter_tensors(elem, only_requiring_grad)


def _differentiable_outputs(x: Any) -> tuple[Any, ...]:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _snapshot(t: Any) -> np.ndarray:
    """A private copy of ``t``'s values (the tensor may alias an input we perturb)."""
    return np.array(t.detach().numpy(), copy=True)


def _storage_view(t: Any) -> np.ndarray:
    """The array ``t`` wraps, writable in place: writes are seen by every alias and do
    not bump the version counter (torch perturbs through ``.data`` for the same
    reason)."""
    storage: np.ndarray = t.detach().numpy()
    return storage


def _np_dtype(t: Any) -> np.dtype:
    return np.dtype(str(t.dtype._numpy_name))


def _as_npgrad(arr: np.ndarray) -> Any:
    """``arr`` as an npgrad tensor, for reports printed in torch's format."""
    return from_numpy(np.ascontiguousarray(arr))


def _promote(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dtype = np.promote_types(a.dtype, b.dtype)
    return a.astype(dtype, copy=False), b.astype(dtype, copy=False)


def _allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    # torch.allclose: |a - b| <= atol + rtol * |b|, NaN never close; NumPy's rule.
    a, b = _promote(np.asarray(a), np.asarray(b))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False))


def _tensor_from(arr: np.ndarray) -> Any:
    """A fresh tensor owning ``arr`` (never aliased by our later writes)."""
    return from_numpy(np.array(arr, copy=True))


# ---------------------------------------------------------------- input checks


def _check_inputs(tupled_inputs: tuple[Any, ...]) -> bool:
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype != _C.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and "
                    "is not a double precision floating point or complex. "
                    "This check will likely fail if all the inputs are "
                    "not of double precision floating point or complex. ",
                    stacklevel=4,
                )
            # Perturbing one element of an input whose elements share memory (an
            # expanded tensor) would move several elements at once.
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only "
                    "supports inputs that are non-overlapping to be able to "
                    "compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck."
                )
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True."
        )
    return True


def _check_outputs_same_dtype_and_shape(
    out_a: np.ndarray, out_b: np.ndarray, eps: float, idx: tuple[int, ...] | None = None
) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if out_a.shape != out_b.shape:
        raise AssertionError(
            f"Expected `func` to return outputs with the same shape"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" shapes {Size(out_a.shape)} and {Size(out_b.shape)}."
        )
    if out_a.dtype != out_b.dtype:
        raise AssertionError(
            f"Expected `func` to return outputs with the same dtype"
            f" when inputs are perturbed {on_index}by {eps}, but got:"
            f" dtypes torch.{out_a.dtype.name} and torch.{out_b.dtype.name}."
        )


# ------------------------------------------------------- numerical derivatives


def _evaluate(func: Callable[..., Any], inputs: tuple[Any, ...]) -> list[np.ndarray | None]:
    """Runs ``func`` and snapshots each tensor output (``None`` for non-tensors)."""
    return [_snapshot(o) if _is_tensor(o) else None for o in _as_tuple(func(*inputs))]


def _central_difference(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    storage: np.ndarray,
    where: Any,
    delta: Any,
    eps: float,
    idx: tuple[int, ...] | None,
) -> list[np.ndarray | None]:
    """(f(x + delta) - f(x - delta)) / (2 eps), flattened, per output; ``storage[where]``
    is perturbed in place and restored bit for bit, whatever ``func`` raises."""
    orig = np.array(storage[where], copy=True)
    try:
        # orig +- delta stays in the input's dtype (NumPy 2 keeps Python floats weak),
        # which is what torch's in-place copy_ of a same-dtype tensor computes.
        storage[where] = orig - delta
        out_a = _evaluate(func, inputs)
        storage[where] = orig + delta
        out_b = _evaluate(func, inputs)
    finally:
        storage[where] = orig
    cols: list[np.ndarray | None] = []
    for a, b in zip(out_a, out_b):
        if a is None or b is None or a.dtype.kind != "f":
            cols.append(None)
            continue
        _check_outputs_same_dtype_and_shape(a, b, eps, idx)
        cols.append(((b - a) / (2 * eps)).reshape(-1))
    return cols


def _numerical_jacobian_wrt_input(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    input_idx: int,
    func_out: tuple[Any, ...],
    eps: float,
) -> list[np.ndarray | None]:
    """Per output of ``func_out``: the (input numel, output numel) Jacobian of that
    output w.r.t. ``inputs[input_idx]``, column by column (``None`` for outputs that
    are not floating tensors)."""
    inp = inputs[input_idx]
    if not inp.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    storage = _storage_view(inp)
    jacobians: list[np.ndarray | None] = [
        np.zeros((inp.numel(), o.numel()), dtype=_np_dtype(o)) if _is_float_tensor(o) else None for o in func_out
    ]
    for flat, idx in enumerate(np.ndindex(*storage.shape)):
        cols = _central_difference(func, inputs, storage, idx, eps, eps, idx)
        for jac, col in zip(jacobians, cols):
            if jac is not None and col is not None:
                jac[flat] = col
    return jacobians


def _numerical_jacobians(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Any, ...],
    eps: float,
) -> list[list[np.ndarray | None]]:
    """``[input][output]`` numerical Jacobians, for every input requiring grad."""
    return [
        _numerical_jacobian_wrt_input(func, inputs, i, func_out, eps)
        for i, a in enumerate(inputs)
        if _is_tensor(a) and a.requires_grad
    ]


# ------------------------------------------------------ analytical derivatives


def _analytical_jacobian(
    inputs: tuple[Any, ...],
    output: Any,
    nondet_tol: float,
    check_grad_dtypes: bool,
    v: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Per input requiring grad: the (input numel, output numel) Jacobian of ``output``
    by backward passes with one-hot grad_outputs; with ``v`` (fast mode), the single
    column ``v^T J``. Everything is computed twice, to catch a backward that is not
    deterministic ("not reentrant" in torch's words)."""
    diff_inputs = list(_iter_tensors(inputs, True))
    out_dtype = _np_dtype(output)

    def vjp(grad_output: np.ndarray) -> tuple[Any, ...]:
        return _grad(
            output,
            diff_inputs,
            _tensor_from(grad_output),
            retain_graph=True,
            allow_unused=True,
        )

    def rows() -> list[list[np.ndarray | None]]:
        # rows[i][j]: row j of the Jacobian w.r.t. input i, i.e. e_j^T J.
        if v is not None:
            directions: Iterable[np.ndarray] = [v.reshape(tuple(output.shape))]
        else:
            directions = (
                np.eye(1, output.numel(), j, dtype=out_dtype).reshape(tuple(output.shape))
                for j in range(output.numel())
            )
        result: list[list[np.ndarray | None]] = [[] for _ in diff_inputs]
        for direction in directions:
            for i, d_x in enumerate(vjp(direction)):
                result[i].append(_snapshot(d_x) if _is_tensor(d_x) else None)
        return result

    n_cols = 1 if v is not None else output.numel()
    jac1, sizes_ok, types_ok = _stack_rows(rows(), diff_inputs, n_cols)
    jac2, _, _ = _stack_rows(rows(), diff_inputs, n_cols)
    reentrant = all(j1.size == 0 or not np.max(np.abs(j1 - j2)) > nondet_tol for j1, j2 in zip(jac1, jac2))
    # Deviation from torch: torch's caller swaps the size and dtype flags returned
    # by _stack_and_check_tensors, so a dtype mismatch reports "incorrect size".
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with "
            "same input and grad_output multiple times gives different values, "
            "although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + _FAILED_NONDET_MSG
        )
    return jac1


def _stack_rows(
    rows: list[list[np.ndarray | None]], diff_inputs: list[Any], n_cols: int
) -> tuple[list[np.ndarray], bool, bool]:
    """Rows of gradients -> one (input numel, n_cols) matrix per input, plus whether
    every gradient had its input's shape and dtype."""
    sizes_ok = types_ok = True
    jacobians = []
    for inp, inp_rows in zip(diff_inputs, rows):
        inp_dtype = _np_dtype(inp)
        jac = np.zeros((inp.numel(), n_cols), dtype=inp_dtype)
        for j, g in enumerate(inp_rows):
            if g is None:
                continue
            if g.shape != tuple(inp.shape):
                sizes_ok = False
                continue
            if g.dtype != inp_dtype:
                types_ok = False
            jac[:, j] = g.reshape(-1)
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


# --------------------------------------------------------------- the reports


def _notallclose_msg(analytical: Any, numerical: Any, output_idx: int, input_idx: int) -> str:
    return (
        f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
        f"numerical:{numerical}\nanalytical:{analytical}\n"
    )


# ------------------------------------------------------------------ slow mode


def _slow_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    tupled_inputs: tuple[Any, ...],
    outputs: tuple[Any, ...],
    eps: float,
    rtol: float,
    atol: float,
    check_grad_dtypes: bool,
    nondet_tol: float,
) -> bool:
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
    # numerical[input][k] for the k-th differentiable output. (torch zips all
    # outputs with the float ones; keeping positions avoids its misalignment when an
    # integer output comes first.)
    numerical = [
        [jac for o, jac in zip(func_out, per_input) if _is_tensor(o) and o.requires_grad]
        for per_input in _numerical_jacobians(func, tupled_inputs, func_out, eps)
    ]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(tupled_inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, per_output) in enumerate(zip(analytical, numerical)):
            n = per_output[i]
            assert n is not None  # differentiable outputs are floating point
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(_as_npgrad(a), _as_npgrad(n), i, j))
    return True


def _check_no_differentiable_outputs(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    func_out: tuple[Any, ...],
    eps: float,
) -> bool:
    # No output requires grad, so every finite difference must vanish.
    for per_input in _numerical_jacobians(func, inputs, func_out, eps):
        for jac in per_input:
            if jac is not None and np.count_nonzero(jac) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


# ------------------------------------------------------------------ fast mode


def _random_unit_vector(numel: int, dtype: np.dtype, generator: np.random.Generator) -> np.ndarray:
    vec = generator.random(numel, dtype=np.float32).astype(dtype)
    if numel:
        vec /= np.linalg.norm(vec)
    return vec


def _fast_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    outputs: tuple[Any, ...],
    eps: float,
    rtol: float,
    atol: float,
    check_grad_dtypes: bool,
    nondet_tol: float,
) -> bool:
    """Compares the scalars v^T J u (analytical: one backward pass per output) and
    v^T (J u) (numerical: one central difference per input along u) for random unit
    vectors u (per input) and v (per output), instead of whole Jacobians. See torch
    issue #53876 for the method."""
    func_out = _as_tuple(func_out)
    generator = np.random.default_rng(_FAST_MODE_SEED)
    inp_indices = [i for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    all_u = [_random_unit_vector(inputs[i].numel(), _np_dtype(inputs[i]), generator) for i in inp_indices]
    all_v = [_random_unit_vector(o.numel(), _np_dtype(o), generator) for o in outputs]

    # Ju per input, per output of func_out (the directional derivative along u).
    all_ju = []
    for inp_idx, u in zip(inp_indices, all_u):
        storage = _storage_view(inputs[inp_idx])
        delta = (u * eps).reshape(storage.shape)
        all_ju.append(_central_difference(func, inputs, storage, Ellipsis, delta, eps, None))

    if not outputs:
        for per_input in all_ju:
            for ju in per_input:
                if ju is not None and ju.size and np.max(np.abs(ju)) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True

    diff_positions = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    numerical = []  # numerical[i][k] = v_k . J_ki u_i
    for per_input in all_ju:
        row: list[Any] = []
        for v, pos in zip(all_v, diff_positions):
            ju = per_input[pos]
            assert ju is not None
            v_p, ju_p = _promote(v, ju)
            row.append((v_p * ju_p).sum())
        numerical.append(row)

    analytical = []  # analytical[k][i] = (v_k^T J_ki) . u_i
    for o, v in zip(outputs, all_v):
        vj = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes, v=v)
        analytical.append([col.reshape(-1).dot(u) for col, u in zip(vj, all_u)])

    for i, numerical_row in enumerate(numerical):
        for k, n in enumerate(numerical_row):
            a = analytical[k][i]
            # Element-wise, slow mode allows |a - b| <= atol + rtol |b|; summed over
            # v^T (.) u that budget becomes atol * sum(u) * sum(v).
            scaled_atol = atol * float(all_u[i].sum()) * float(all_v[k].sum())
            if not _allclose(a, n, rtol, scaled_atol):
                report = _slow_mode_report(func, inputs, outputs, i, k, rtol, atol, eps)
                # Scalars print as Python numbers: torch formats its 0-dim tensors
                # in f-strings through .item().
                raise GradcheckError(_notallclose_msg(a.item(), n.item(), k, i) + report)
    return True


def _slow_mode_report(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    outputs: tuple[Any, ...],
    input_idx: int,
    output_idx: int,
    rtol: float,
    atol: float,
    eps: float,
) -> str:
    """Recomputes one full Jacobian pair in slow mode for fast mode's report."""
    func_out = _as_tuple(func(*inputs))
    # output_idx counts differentiable outputs; the numerical side counts all outputs.
    position = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad][output_idx]
    numerical = _numerical_jacobians(func, inputs, func_out, eps)[input_idx][position]
    analytical = _analytical_jacobian(inputs, outputs[output_idx], math.inf, False)[input_idx]
    assert numerical is not None  # a differentiable output is a floating tensor
    max_diff = np.max(np.abs(numerical - analytical)) if numerical.size else np.float64(0)
    msg = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
        f"Numerical:\n {_as_npgrad(numerical)}\n"
        f"Analytical:\n{_as_npgrad(analytical)}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff.item()}.\n"
    )
    if _allclose(analytical, numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


# ------------------------------------------------------- backward-only checks


class UndefinedGrad(Function):
    """Identity whose backward sends an undefined (``None``) gradient upstream, like
    torch's ``torch._C._functions.UndefinedGrad``; its node is ``UndefinedGradBackward``."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return None


def _test_backward_mul_by_grad_output(outputs: tuple[Any, ...], inputs: tuple[Any, ...], masked: bool | None) -> bool:
    # A zero grad_output must give zero input gradients: catches a backward that
    # ignores its incoming gradient.
    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = _grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads_input, diff_inputs):
        if gi is None:
            continue
        values = _snapshot(gi)
        if masked:
            if not _allclose(values, np.zeros_like(values), 1e-05, 1e-08):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not np.all(values == 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func: Callable[..., Any], outputs: tuple[Any, ...], inputs: tuple[Any, ...]) -> bool:
    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking() -> None:
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking "
            "feature is enabled by default, but it may break existing callers "
            "of this function. If this is true for you, you can call this "
            'function with "check_undefined_grad=False" to disable the feature',
            stacklevel=2,
        )

    def check_undefined_grad_support(output_to_check: list[Any]) -> bool:
        grads_output = [zeros_like(o) for o in output_to_check]
        try:
            grads_input = _grad(output_to_check, diff_inputs, grads_output, allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. "
                'Please look at "Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"'
            ) from e
        for gi in grads_input:
            if gi is not None and not np.all(_snapshot(gi) == 0):
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined "
                    'or zero. Please look at "Notes about undefined output gradients" in '
                    '"tools/autograd/derivatives.yaml"'
                )
        return True

    # Every backward must cope with all of its output gradients undefined ...
    outputs_to_check = [[UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs)) if _is_tensor(o)]]
    # ... and, with several outputs, with any one of them undefined.
    if len(outputs_to_check[0]) > 1:
        for undef_grad_idx in range(len(outputs)):
            output_to_check = _differentiable_outputs(func(*inputs))
            outputs_to_check.append(
                [UndefinedGrad.apply(o) if idx == undef_grad_idx else o for idx, o in enumerate(output_to_check)]
            )
    return all(check_undefined_grad_support(output) for output in outputs_to_check)


# ------------------------------------------------------------------ the entry points


def _reject_unsupported(**flags: bool) -> None:
    """npgrad has neither forward-mode AD nor vmap: refuse, loudly, the checks that
    need them instead of skipping them silently."""
    needs = {
        "check_forward_ad": "forward-mode AD (npgrad has no torch.autograd.forward_ad)",
        "check_batched_forward_grad": "forward-mode AD and vmap, which npgrad does not implement",
        "check_batched_grad": "vmap (batched gradients), which npgrad does not implement",
    }
    for name, value in flags.items():
        if value:
            raise NotImplementedError(f"gradcheck({name}=True) needs {needs[name]}; pass {name}=False")


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Checks the gradients of ``func`` at ``inputs`` against central finite differences.

    For every input requiring grad and every output requiring grad, the Jacobian from
    backward passes must match ``(f(x + eps) - f(x - eps)) / 2 eps`` within
    ``atol + rtol * |numerical|``; ``fast_mode=True`` compares random projections
    ``v^T J u`` instead of whole Jacobians. Then a zero ``grad_output`` must give zero
    gradients, and (``check_undefined_grad``) backward must accept undefined output
    gradients. Use float64 inputs: the defaults assume double precision.

    Returns ``True``; on failure raises :class:`GradcheckError` (a ``RuntimeError``)
    whose message starts ``Jacobian mismatch for output 0 with respect to input 0``,
    or returns ``False`` when ``raise_exception=False``.

    >>> import npgrad as torch
    >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(torch.exp, (x,))
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    _reject_unsupported(
        check_forward_ad=check_forward_ad,
        check_batched_forward_grad=check_batched_forward_grad,
        check_batched_grad=check_batched_grad,
    )
    try:
        return _gradcheck_helper(
            func,
            inputs,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad,
            check_grad_dtypes=check_grad_dtypes,
            fast_mode=fast_mode,
            masked=masked,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
    fast_mode: bool,
    masked: bool | None,
) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(
        func,
        func_out,
        tupled_inputs,
        outputs,
        eps,
        rtol,
        atol,
        check_grad_dtypes,
        nondet_tol,
    )
    _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Checks second derivatives: :func:`gradcheck` applied to the function
    ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True)``.

    ``grad_outputs`` defaults to random tensors in ``[-1, 1)`` drawn from npgrad's
    generator (``npgrad.manual_seed`` makes them reproducible), non-contiguous with
    ``gen_non_contig_grad_outputs=True``.

    >>> import npgrad as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda t: t ** 3, (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)

    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            make_tensor(
                tuple(x.shape),
                dtype=x.dtype if x.dtype.is_floating_point else _C.float64,
                device=x.device,
                low=-1,
                high=1,
                requires_grad=True,
                noncontiguous=gen_non_contig_grad_outputs,
            )
            for x in outputs
        )
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)

    num_outputs = len(tupled_grad_outputs)
    # gradcheck detaches nothing here, but record which arguments require grad so
    # that new_func can restore it on the tensors it is handed.
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args: Any) -> tuple[Any, ...]:
        input_args = tuple(
            x.requires_grad_() if i in diff_input_args_indices else x for i, x in enumerate(args[:-num_outputs])
        )
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(
            x.requires_grad_() if i in diff_grad_output_indices else x for i, x in enumerate(args[-num_outputs:])
        )
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = _grad(outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(
        new_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
        masked=masked,
    )


# ------------------------------------------------- torch's older public helpers

_F = TypeVar("_F", bound=Callable[..., Any])


def _deprecated(message: str) -> Callable[[_F], _F]:
    # typing_extensions.deprecated without the dependency: a FutureWarning per call.
    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            warnings.warn(message, FutureWarning, stacklevel=2)
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def _deprecation_message(name: str) -> str:
    return (
        f"`{name}` was part of PyTorch's private API and not "
        "meant to be exposed. We are deprecating it and it will be removed "
        "in a future version of PyTorch. If you have a specific use for "
        "this or feature request for this to be a stable API, please file "
        "us an issue at https://github.com/pytorch/pytorch/issues/new"
    )


def get_numerical_jacobian_wrt_specific_input(
    fn: Callable[..., Any],
    input_idx: int,
    inputs: Sequence[Any],
    outputs: Sequence[Any],
    eps: float,
    input: Any = None,
    is_forward_ad: bool = False,
) -> tuple[Any, ...]:
    """The numerical Jacobians ``(input numel, output numel)`` of each floating output
    in ``outputs`` w.r.t. ``inputs[input_idx]``, as tensors."""
    if input is not None and input is not inputs[input_idx]:
        raise NotImplementedError("npgrad perturbs inputs[input_idx] itself; pass input=None")
    jacobians = _numerical_jacobian_wrt_input(fn, tuple(inputs), input_idx, tuple(outputs), eps)
    return tuple(_as_npgrad(j) for j in jacobians if j is not None)


@_deprecated(_deprecation_message("get_numerical_jacobian"))
def get_numerical_jacobian(
    fn: Callable[..., Any],
    inputs: Any,
    target: Any = None,
    eps: float = 1e-3,
    grad_out: float = 1.0,
) -> tuple[Any, ...]:
    """Deprecated (as in torch): numerical Jacobians of ``fn(inputs)``'s first output,
    one per input requiring grad; ``fn`` takes the inputs as one tuple."""
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of grad_out != 1.0."
        )
    if target is not None:
        raise NotImplementedError("npgrad's get_numerical_jacobian does not take target")
    tupled = _as_tuple(inputs)

    def fn_pack_inps(*inps: Any) -> Any:
        return fn(inps)

    func_out = _as_tuple(fn_pack_inps(*tupled))
    firsts = [per[0] for per in _numerical_jacobians(fn_pack_inps, tupled, func_out, eps)]
    return tuple(_as_npgrad(j) for j in firsts if j is not None)


@_deprecated(_deprecation_message("get_analytical_jacobian"))
def get_analytical_jacobian(
    inputs: Any, output: Any, nondet_tol: float = 0.0, grad_out: float = 1.0
) -> tuple[tuple[Any, ...], bool, bool, bool]:
    """Deprecated (as in torch): ``(jacobians, reentrant, sizes_ok, types_ok)`` of
    ``output`` w.r.t. the inputs requiring grad."""
    if grad_out != 1.0:
        raise ValueError(
            "Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of grad_out != 1.0."
        )
    try:
        jacobians = _analytical_jacobian(_as_tuple(inputs), output, nondet_tol, True)
    except GradcheckError as e:
        text = str(e)
        if text.startswith("Backward is not reentrant"):
            jacobians = _analytical_jacobian(_as_tuple(inputs), output, math.inf, False)
            return tuple(_as_npgrad(j) for j in jacobians), False, True, True
        return (), True, "size" not in text, "dtype" not in text
    return tuple(_as_npgrad(j) for j in jacobians), True, True, True
