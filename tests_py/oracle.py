"""Helpers shared by the npgrad tests: the library under test, torch as an oracle.

The library under test is ``npgrad``; with ``NPGRAD_TESTS_AGAINST_TORCH=1`` it is
``torch`` itself, which proves that every test states real PyTorch behaviour.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

AGAINST_TORCH = os.environ.get("NPGRAD_TESTS_AGAINST_TORCH") == "1"
LIB_NAME = "torch" if AGAINST_TORCH else "npgrad"


def lib() -> Any:
    """The library under test (npgrad, or torch when testing the tests)."""
    return importlib.import_module(LIB_NAME)


def torch_or_skip() -> Any:
    """Real torch, or skip the calling test when it is not installed."""
    return pytest.importorskip("torch")


# ----------------------------------------------------------------------------------
# Values


def is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "requires_grad")


def to_np(t: Any) -> np.ndarray:
    """A tensor (of either library) as a NumPy array (a copy). ``force``: torch's
    double backward may give a ZeroTensor, which converts only when forced.
    torch's ``numpy()`` has no bfloat16: its bits become ml_dtypes' bfloat16."""
    t = t.detach()
    if dtype_name(t.dtype) == "bfloat16" and type(t).__module__.split(".")[0] == "torch":
        import torch

        return np.array(t.view(torch.int16).numpy(force=True), copy=True).view(ml_dtypes.bfloat16)
    return np.array(t.numpy(force=True), copy=True)


def from_np(lib_: Any, arr: np.ndarray, requires_grad: bool = False) -> Any:
    """A tensor of ``lib_`` holding a copy of ``arr`` (for torch, an ml_dtypes
    bfloat16 array goes in as its bits)."""
    arr = np.array(arr, copy=True, order="C")
    if arr.dtype == ml_dtypes.bfloat16 and lib_.__name__ == "torch":
        t = lib_.from_numpy(arr.view(np.int16)).view(lib_.bfloat16)
    else:
        t = lib_.from_numpy(arr)
    if requires_grad:
        t.requires_grad_()
    return t


def dtype_name(dtype: Any) -> str:
    """``torch.float32`` / ``npgrad.float32`` -> ``"float32"``."""
    return str(dtype).rsplit(".", 1)[-1]


def assert_close(got: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    got = to_np(got) if is_tensor(got) else np.asarray(got)
    expected = to_np(expected) if is_tensor(expected) else np.asarray(expected)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def same_value(got: Any, expected: Any) -> bool:
    """Value equality across libraries: tensors by shape and values, tuples item by
    item, None only with None, anything else with ``==``."""
    if expected is None or got is None:
        return got is None and expected is None
    if is_tensor(expected):
        if not is_tensor(got):
            return False
        a, b = to_np(got), to_np(expected)
        return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=0, equal_nan=True)
    if isinstance(expected, (tuple, list)):
        return (
            isinstance(got, (tuple, list))
            and len(got) == len(expected)
            and all(same_value(g, e) for g, e in zip(got, expected))
        )
    return got == expected


def assert_same_result(got: Any, expected: Any) -> None:
    """An op's result against torch's: values, shape and dtype, item by item for
    tuples, whose type names must match too (``torch.return_types.sort``...).
    float16 compares to 1e-3, the rest to 1e-6; NaN equals NaN."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        assert type(got).__name__ == type(expected).__name__
        for g, e in zip(got, expected):
            assert_same_result(g, e)
        return
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    tol = 1e-3 if "16" in str(expected.dtype) else 1e-6
    a, b = to_np(got), to_np(expected)
    assert a.shape == b.shape
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol * 1e-6, equal_nan=True)


# ----------------------------------------------------------------------------------
# Graphs


def graph_desc(node: Any) -> str:
    """``SumBackward0(MulBackward0(AccumulateGrad(), None))``: the node type names of
    the graph below ``node``, ``None`` for invalid edges."""
    if node is None:
        return "None"
    children = ", ".join(graph_desc(child) for child, _ in node.next_functions)
    return f"{type(node).__name__}({children})"


# ----------------------------------------------------------------------------------
# Differential testing


def run_both(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``(fn(library under test), fn(torch))``; skips when torch is absent."""
    torch = torch_or_skip()
    return fn(lib()), fn(torch)


def assert_same_error(fn: Callable[[Any], Any], key: str | None = None, length: int = 60) -> BaseException:
    """Run ``fn`` on torch and on the library under test: both must raise, with the
    same exception type, and torch's key phrase (``key`` if given, else the first
    ``length`` characters of torch's message) must appear in both messages."""
    torch = torch_or_skip()
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(lib())
    assert type(got.value) is type(expected.value), (got.value, expected.value)
    phrase = key if key is not None else str(expected.value)[:length]
    assert phrase in str(expected.value), "the key phrase is not torch's"
    assert phrase in str(got.value)
    return got.value


@contextlib.contextmanager
def graph_debug_log(lib_: Any, caplog: Any) -> Iterator[Callable[[], list[Any]]]:
    """Records ``lib_.autograd.graph``'s debug log in pytest's ``caplog`` for the
    block; yields a function returning the records so far."""
    name = lib_.__name__ + ".autograd.graph"
    logger = logging.getLogger(name)
    caplog.set_level(logging.DEBUG, logger=name)
    propagate = logger.propagate
    logger.propagate = False  # torch's loggers do not propagate; record exactly once
    logger.addHandler(caplog.handler)
    try:
        caplog.clear()
        yield lambda: [r for r in caplog.records if r.name == name]
    finally:
        logger.removeHandler(caplog.handler)
        logger.propagate = propagate


# ----------------------------------------------------------------------------------
# Finite differences


def numerical_grad(
    f: Callable[..., Any],
    inputs: list[Any],
    grad_output: np.ndarray | None = None,
    eps: float = 1e-6,
) -> list[np.ndarray]:
    """Central-difference gradient of ``sum(f(*inputs) * grad_output)`` with respect to
    each tensor of ``inputs`` (float64 tensors of the library under test).

    ``f`` is evaluated on fresh tensors built with ``from_numpy`` from perturbed
    copies, so the inputs themselves are never touched."""
    arrays = [to_np(t) for t in inputs]
    lib_ = lib()

    def loss(arrs: list[np.ndarray]) -> float:
        with lib_.no_grad():
            out = to_np(f(*[from_np(lib_, a) for a in arrs]))
        weights = np.ones_like(out) if grad_output is None else grad_output
        return float(np.sum(out * weights))

    grads = []
    for i, base in enumerate(arrays):
        grad = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            shifted = [a.copy() for a in arrays]
            shifted[i][idx] = base[idx] + eps
            plus = loss(shifted)
            shifted[i][idx] = base[idx] - eps
            minus = loss(shifted)
            grad[idx] = (plus - minus) / (2 * eps)
        grads.append(grad)
    return grads


def child_env() -> dict[str, str]:
    """The environment for a child Python process that must import the same npgrad
    as this one (the installed package in CI, the source tree in development)."""
    import importlib.util

    env = dict(os.environ)
    spec = importlib.util.find_spec("npgrad")
    if spec is not None and spec.origin:
        root = os.path.dirname(os.path.dirname(spec.origin))
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_in_threads(target: Callable[[int], Any], n: int, timeout: float = 120.0) -> None:
    """Run ``target(i)`` for i in range(n), each in its own thread; re-raise the
    first exception a thread raised, and fail if a thread is still running after
    ``timeout`` seconds."""
    errors: list[BaseException] = []

    def wrapped(i: int) -> None:
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


# ----------------------------------------------------------------------------------
# Modules against torch's


def _floats(out: Any) -> list[Any]:
    """The floating-point tensors of a module's output (a tensor or a tuple)."""
    items = out if isinstance(out, (tuple, list)) else [out]
    return [t for t in items if is_tensor(t) and t.dtype.is_floating_point]


def assert_module_matches_torch(
    build: Callable[[Any], Any],
    inputs: list[np.ndarray],
    forward: Callable[..., Any] | None = None,
    requires_grad: list[bool] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> tuple[Any, Any]:
    """``build(lib)`` in torch and in the library under test; torch's state dict is
    loaded into the other (so both hold torch's initial values), then both run
    ``forward(module, *inputs)`` (default ``module(*inputs)``; the inputs flagged in
    ``requires_grad``, by default the float ones, require grad) and backward a fixed random weighting of their float outputs. Checks the
    repr, the parameter and buffer names, shapes and dtypes, the outputs, the
    gradients of the inputs and of every parameter, and the state dict after the
    call (running statistics). Returns ``(module, torch module)``."""
    torch = torch_or_skip()
    # torch's initial values from a fixed seed, whatever ran before in this
    # process (pytest-xdist hands each worker a different set of tests).
    with torch.random.fork_rng():
        torch.manual_seed(0)
        ref = build(torch)
    mod = build(lib())
    assert repr(mod) == repr(ref)
    assert list(mod.state_dict()) == list(ref.state_dict())
    for (name, got), (ref_name, want) in zip(
        [*mod.named_parameters(), *mod.named_buffers()], [*ref.named_parameters(), *ref.named_buffers()]
    ):
        assert name == ref_name and tuple(got.shape) == tuple(want.shape)
        assert dtype_name(got.dtype) == dtype_name(want.dtype)
    mod.load_state_dict({k: from_np(lib(), to_np(v)) for k, v in ref.state_dict().items()})
    rng = np.random.default_rng(7)
    results = []
    for lib_, m in ((lib(), mod), (torch, ref)):
        flags = requires_grad if requires_grad is not None else [a.dtype.kind == "f" for a in inputs]
        xs = [from_np(lib_, a, requires_grad=flag) for a, flag in zip(inputs, flags)]
        out = forward(m, *xs) if forward is not None else m(*xs)
        total = None
        for t in _floats(out):
            weighted = (t * from_np(lib_, rng.standard_normal(tuple(t.shape)).astype(to_np(t).dtype))).sum()
            total = weighted if total is None else total + weighted
        rng = np.random.default_rng(7)  # the same weights for torch
        if total is not None and total.requires_grad:
            total.backward()
        results.append(
            (
                [to_np(t) for t in (out if isinstance(out, (tuple, list)) else [out])],
                [None if x.grad is None else to_np(x.grad) for x in xs],
                {n: None if p.grad is None else to_np(p.grad) for n, p in m.named_parameters()},
                {k: to_np(v) for k, v in m.state_dict().items()},
            )
        )
    (out, grads, pgrads, state), (ref_out, ref_grads, ref_pgrads, ref_state) = results
    for a, b in [*zip(out, ref_out), *zip(grads, ref_grads)]:
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert len(out) == len(ref_out) and list(pgrads) == list(ref_pgrads) and list(state) == list(ref_state)
    for name in ref_pgrads:
        assert (pgrads[name] is None) == (ref_pgrads[name] is None), name
        if ref_pgrads[name] is not None:
            np.testing.assert_allclose(pgrads[name], ref_pgrads[name], rtol=rtol, atol=atol, err_msg=name)
    for name in ref_state:
        np.testing.assert_allclose(state[name], ref_state[name], rtol=rtol, atol=atol, err_msg=name)
    return mod, ref
