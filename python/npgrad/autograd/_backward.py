"""``backward`` and ``grad``, with torch's signatures: their arguments checked,
and the implicit gradient of a scalar output made, before the engine runs."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from .. import _C
from .._creation import ones, zeros_like
from .graph import GradientEdge, _engine_run_backward


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, (_C.Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _tensor_or_tensors_to_tuple(tensors: Any, length: int) -> tuple[Any, ...]:
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, _C.Tensor):
        return (tensors,)
    return tuple(tensors)


def _implicit_grad(out: _C.Tensor) -> _C.Tensor | None:
    # The common case, ``loss.backward()`` of a plain tensor, in one native
    # call (a fresh tensor of ones): the general path's Size, generator and
    # creation-function calls cost a few microseconds of a tiny op's forward +
    # backward. None from it: out does not require grad, or is not a
    # one-element floating tensor, and torch's errors follow.
    grad = _C._implicit_grad(out)
    if grad is not None or not out.requires_grad:
        return grad
    shape = out._shape
    if shape and not all(s == 1 for s in shape):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")


def _make_grads(outputs: Sequence[Any], grads: Sequence[Any]) -> tuple[Any, ...]:
    new_grads: list[_C.Tensor | None] = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if grad is None and type(out) is _C.Tensor:
            new_grads.append(_implicit_grad(out))
            continue
        if isinstance(out, GradientEdge):
            _C._check_gradient_edge(out)
            meta = out.node._input_metadata[out.output_nr]
            out_size, out_dtype = meta.shape, meta.dtype
        else:
            out_size, out_dtype = out.shape, out.dtype
        if isinstance(grad, _C.Tensor):
            if tuple(out_size) != tuple(grad.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and "
                    f"output[{i}] has a shape of {out_size}."
                )
            new_grads.append(grad)
        elif grad is None:
            if isinstance(out, GradientEdge) or out.requires_grad:
                if not all(s == 1 for s in out_size):
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out_dtype.is_floating_point:
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {out_dtype}"
                    )
                new_grads.append(ones(tuple(out_size), dtype=out_dtype))
            else:
                new_grads.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got " + type(grad).__name__)
    return tuple(new_grads)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulates into ``.grad`` the gradients of ``tensors`` w.r.t. graph leaves."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    t_tensors = _as_tuple(tensors)
    t_inputs = _as_tuple(inputs) if inputs is not None else ()
    grads = _make_grads(t_tensors, _tensor_or_tensors_to_tuple(grad_tensors, len(t_tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.",
            UserWarning,
            stacklevel=2,
        )
    _engine_run_backward(t_tensors, grads, retain_graph, create_graph, t_inputs, True, True)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Any, ...]:
    """The gradients of ``outputs`` w.r.t. ``inputs``; ``.grad`` is left alone."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if is_grads_batched:
        raise NotImplementedError("npgrad does not implement is_grads_batched (it needs vmap)")
    if allow_unused is None:
        allow_unused = materialize_grads
    t_outputs = _as_tuple(outputs)
    t_inputs = _as_tuple(inputs)
    if not t_inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _make_grads(t_outputs, _tensor_or_tensors_to_tuple(grad_outputs, len(t_outputs)))
    if retain_graph is None:
        retain_graph = create_graph
    result: tuple[Any, ...] = _engine_run_backward(
        t_outputs, grads, retain_graph, create_graph, t_inputs, allow_unused, False
    )
    if materialize_grads:
        # A GradientEdge has no shape to make zeros of.
        if any(r is None and isinstance(i, GradientEdge) for r, i in zip(result, t_inputs)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
        result = tuple(
            r if r is not None else zeros_like(i, requires_grad=create_graph) for r, i in zip(result, t_inputs)
        )
    return result
