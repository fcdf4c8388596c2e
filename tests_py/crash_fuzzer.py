"""The crash fuzzer: no input may kill the interpreter, hang, or raise SystemError.

Two modes, each run in child processes so that a crash or a hang is caught and
named with the call that caused it:

- ``api``: every public callable of npgrad, discovered (not listed): the public
  functions and classes of ``npgrad`` and of each public submodule (``autograd``,
  ``autograd.graph``, ... and any module added later), every ``Tensor`` method and
  operator, called on a tensor and unbound, every ``Tensor`` property set to a
  generated value, and every method of a backward node. Arguments are generated:
  ``None``, bools, 0, negative and huge ints, NaN and inf, strings, bytes, tuples
  and nested lists, dtypes, callables, NumPy arrays, and tensors of every dtype
  and shape (0-d, empty, non-contiguous, expanded, requiring grad, non-leaf),
  with keyword arguments under the callable's own parameter names and torch's.
- ``graph``: small random graphs with misbehaving callbacks (tensor, node and
  post-accumulate hooks, pack/unpack hooks, custom Function forward/backward,
  multi-grad hooks, queued callbacks) whose results are generated values or that
  raise, re-enter backward or drop the graph, and GradientEdges with fuzzed nodes
  and numbers; after each program a plain backward on a fresh graph must still
  compute the right gradient.

Ordinary exceptions are fine. Every call is derived from ``(seed, index)`` alone,
so a failure is reproduced by ``python crash_fuzzer.py --mode M --seed S --start I
--count 1``. Long local runs: ``python tests_py/crash_fuzzer.py --mode api --seed 7
--count 200000`` (prints failures and exits non-zero if there were any).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import os
import pkgutil
import random
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------- discovery

# Attributes that are not calls into npgrad, or that only disturb the fuzzer.
SKIPPED_TENSOR_ATTRIBUTES = {
    "__class__",
    "__new__",
    "__init_subclass__",
    "__subclasshook__",
    "__getattribute__",
    "__getattr__",
    "__delattr__",
    "__dir__",
    "__sizeof__",
    "__reduce__",
    "__reduce_ex__",
    "__format__",
    "__str__",
    "__repr__",
    "__hash__",
    "__doc__",
    "__module__",
    "__weakref__",
    "__dict__",
}
# Public submodules that are not library surface: the pytest plugin hooks into a
# pytest session.
SKIPPED_MODULES = {"npgrad.pytest_plugin"}


def public_modules(lib: Any) -> list[Any]:
    """npgrad and every public submodule, imported, in name order."""
    mods = {lib.__name__: lib}
    for info in pkgutil.walk_packages(lib.__path__, lib.__name__ + "."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or info.name in SKIPPED_MODULES:
            continue
        mods[info.name] = importlib.import_module(info.name)
    return [mods[k] for k in sorted(mods)]


@dataclass
class Target:
    """One fuzzed entry point: ``kind`` is "call" (a function or class), "method"
    (a Tensor method, called on a tensor), "unbound" (Tensor.method(self, ...)),
    "setattr" (a Tensor property) or "node" (a backward node's method)."""

    kind: str
    name: str
    obj: Any = None
    params: list[str] = field(default_factory=list)


def _param_names(obj: Any) -> list[str]:
    try:
        sig = inspect.signature(obj)
        return [p.name for p in sig.parameters.values() if p.name not in ("self", "args", "kwargs")]
    except (TypeError, ValueError):
        pass
    doc = getattr(obj, "__doc__", None) or ""
    first = doc.split("\n", 1)[0]
    if "(" not in first:
        return []
    inside = first[first.index("(") + 1 : first.rfind(")")] if ")" in first else ""
    names = []
    for part in inside.split(","):
        name = part.split(":")[0].split("=")[0].strip().lstrip("*")
        if name and name not in ("self", "args", "kwargs", "/"):
            names.append(name)
    return names


def discover(lib: Any) -> list[Target]:
    targets: list[Target] = []
    seen: set[int] = set()
    for mod in public_modules(lib):
        for name in sorted(dir(mod)):
            if name.startswith("_"):
                continue
            obj = getattr(mod, name)
            if not callable(obj) or inspect.ismodule(obj):
                continue
            owner = getattr(obj, "__module__", "") or ""
            if not owner.startswith("npgrad"):
                continue  # typing helpers, numpy functions re-imported by a module
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            targets.append(Target("call", f"{mod.__name__}.{name}", obj, _param_names(obj)))
    for name in sorted(dir(lib.Tensor)):
        if name in SKIPPED_TENSOR_ATTRIBUTES:
            continue
        attr = inspect.getattr_static(lib.Tensor, name)
        if isinstance(attr, property) or type(attr).__name__ in ("getset_descriptor", "property"):
            targets.append(Target("setattr", f"Tensor.{name}", name))
            continue
        obj = getattr(lib.Tensor, name, None)
        if not callable(obj):
            continue
        params = _param_names(obj)
        targets.append(Target("method", f"Tensor.{name}", name, params))
        targets.append(Target("unbound", f"Tensor.{name}", name, params))
    node = (lib.ones(2, requires_grad=True) * 2).grad_fn
    for name in sorted(dir(type(node))):
        if name.startswith("__") and name not in ("__call__",):
            continue
        if callable(getattr(node, name, None)):
            targets.append(Target("node", f"Node.{name}", name))
    return targets


# ---------------------------------------------------------------- values

TORCH_KWARGS = [
    "input",
    "other",
    "dim",
    "keepdim",
    "dtype",
    "alpha",
    "min",
    "max",
    "out",
    "size",
    "device",
    "requires_grad",
    "retain_graph",
    "create_graph",
    "inputs",
    "grad_outputs",
    "allow_unused",
    "materialize_grads",
    "gradient",
    "mode",
    "pack_hook",
    "unpack_hook",
    "fn",
    "non_blocking",
    "exponent",
    "mat2",
    "condition",
    "tensors",
    "shape",
    "dims",
    "dim0",
    "dim1",
    "value",
    "src",
    "index",
    "eps",
    "atol",
    "rtol",
    "grad_tensors",
    "outputs",
    "is_grads_batched",
    "p",
]
TENSOR_PARAMS = {
    "input",
    "other",
    "self",
    "tensor",
    "mat2",
    "condition",
    "x",
    "t",
    "src",
    "outputs",
    "inputs",
    "tensors",
    "gradient",
    "grad_outputs",
    "exponent",
    "end",
    "actual",
    "expected",
    "tensor_or_tensors",
}
INT_PARAMS = {"dim", "dim0", "dim1", "dims", "size", "shape", "output_nr", "n", "low", "high"}
BOOL_PARAMS = {
    "keepdim",
    "retain_graph",
    "create_graph",
    "requires_grad",
    "allow_unused",
    "materialize_grads",
    "non_blocking",
    "force",
    "accumulate_grad",
}
HUGE_INTS = [2**62, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 + 1, 10**30]
SMALL_INTS = [0, 1, 2, 3, -1, -2, -7, 7]
FLOATS = [0.0, -0.0, 0.5, -2.5, 1e308, 5e-324, math.nan, math.inf, -math.inf]
STRINGS = ["", "abc", "cpu", "cuda", "cuda:1", "float32", "sum", "mean", "fro", "all", "any", "\x00", "é"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 0, 3), (1, 1, 1), (3, 4)]


class Values:
    """Generated arguments, built fresh for each call from its own rng."""

    def __init__(self, lib: Any, rng: random.Random) -> None:
        self.lib = lib
        self.rng = rng
        self.dtypes = [getattr(lib, n) for n in ("float32", "float64", "float16", "int64", "bool") if hasattr(lib, n)]

    def tensor(self) -> Any:
        import numpy as np

        lib, rng = self.lib, self.rng
        dtype = rng.choice(self.dtypes)
        shape = rng.choice(SHAPES)
        arr = np.asarray(np.random.default_rng(rng.randrange(2**32)).standard_normal(shape) * 3)
        t = lib.tensor(arr.tolist() if arr.ndim else float(arr), dtype=dtype)
        floating = dtype.is_floating_point
        kind = rng.randrange(9)
        if kind == 1 and t.dim() >= 2:
            t = t.transpose(0, -1)  # non-contiguous
        elif kind == 2 and t.dim() >= 1 and t.shape[0] > 1:
            t = t[1:]  # a view at an offset
        elif kind == 3 and t.dim() >= 1:
            t = t[:1].expand(3, *t.shape[1:]) if t.shape[0] >= 1 else t  # stride 0
        elif kind in (4, 5) and floating:
            t = t.detach().requires_grad_(True)  # a leaf
            if kind == 5:
                t = t * 2  # a non-leaf with a grad_fn
        elif kind == 6 and floating:
            t = (t.detach().requires_grad_(True) * 1).view(t.shape)  # a view of a non-leaf
        return t

    def misc(self) -> Any:
        import numpy as np

        lib, rng = self.lib, self.rng
        pick = rng.randrange(22)
        if pick == 0:
            return None
        if pick == 1:
            return rng.choice([True, False])
        if pick == 2:
            return rng.choice(SMALL_INTS)
        if pick == 3:
            return rng.choice(HUGE_INTS)
        if pick == 4:
            return rng.choice(FLOATS)
        if pick == 5:
            return rng.choice(STRINGS)
        if pick == 6:
            return rng.choice([b"", b"x", bytearray(b"ab")])
        if pick == 7:
            return tuple(rng.choice(SMALL_INTS) for _ in range(rng.randrange(4)))
        if pick == 8:
            return rng.choice([[], [[1, 2], [3]], [1, [2, [3]]], [[[]]], [1.5, "a"], [None], (None,)])
        if pick == 9:
            return rng.choice(self.dtypes)
        if pick == 10:
            return rng.choice(
                [lambda *a, **k: None, lambda *a, **k: a[0] if a else 0, lambda *a, **k: 1 / 0, print, int]
            )
        if pick == 11:
            return rng.choice(
                [object(), {}, {"a": 1}, set(), complex(1, 2), slice(None), Ellipsis, NotImplemented, iter([1, 2])]
            )
        if pick == 12:
            return np.arange(6.0).reshape(2, 3)
        if pick == 13:
            return rng.choice([np.float32(2.0), np.int64(-3), np.bool_(True), np.float64(math.nan)])
        if pick == 14:
            return [self.tensor() for _ in range(rng.randrange(1, 3))]
        if pick == 15:
            return (self.tensor(), None)
        if pick == 16:
            return tuple(self.tensor() for _ in range(rng.randrange(1, 3)))
        if pick == 17:
            return lib.Size([2, 3]) if hasattr(lib, "Size") else (2, 3)
        if pick == 18:
            t = self.tensor()
            return t.grad_fn if t.grad_fn is not None else t
        if pick == 19:
            return self.gradient_edge()
        if pick == 20:
            return rng.choice([-1, 0, 1, 2])
        return rng.choice([lib.device("cpu"), "cpu"]) if hasattr(lib, "device") else "cpu"

    def gradient_edge(self) -> Any:
        from npgrad.autograd.graph import GradientEdge

        rng = self.rng
        x = self.lib.ones(2, 3, requires_grad=True)
        node = rng.choice([(x * 2).grad_fn, x.sin().grad_fn, None, object(), x, "node"])
        return GradientEdge(node, rng.choice([0, 1, -1, 99, 2**70, "0", None, 0.5]))

    def any(self) -> Any:
        return self.tensor() if self.rng.random() < 0.45 else self.misc()

    def for_param(self, name: str) -> Any:
        """Mostly a value of the kind the parameter's name suggests (so that
        calls get past the first check), else anything."""
        if self.rng.random() < 0.35:
            return self.any()
        if name in TENSOR_PARAMS:
            return self.tensor()
        if name in INT_PARAMS:
            return self.rng.choice(SMALL_INTS)
        if name in BOOL_PARAMS:
            return self.rng.choice([True, False])
        return self.any()


def describe(v: Any, depth: int = 0) -> str:
    """A short, readable description of a generated value."""
    mod = type(v).__module__ or ""
    if type(v).__name__ == "Tensor" and mod.startswith("npgrad"):
        flags = ("" if v.is_contiguous() else ",strided") + (
            ",grad_fn" if v.grad_fn is not None else ",leaf" if v.requires_grad else ""
        )
        return f"tensor({str(v.dtype).split('.')[-1]},{tuple(v.shape)}{flags})"
    if isinstance(v, (list, tuple)) and depth < 2:
        inner = ", ".join(describe(x, depth + 1) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if callable(v) and getattr(v, "__name__", "") == "<lambda>":
        return "lambda"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- the API mode


def api_call(lib: Any, targets: list[Target], seed: int, index: int) -> tuple[str, Callable[[], Any]]:
    """Call number `index` of the API mode: its description and a thunk."""
    rng = random.Random(f"api:{seed}:{index}")
    target = targets[index % len(targets)]
    values = Values(lib, rng)
    n_pos = (
        rng.choice([0, 1, 1, 2, 2, 2, 3, 4])
        if not target.params
        else min(len(target.params) + rng.choice([-1, 0, 0, 0, 1]), 5)
    )
    names = target.params + [""] * 5
    args = [values.for_param(names[i]) for i in range(max(n_pos, 0))]
    kwargs: dict[str, Any] = {}
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        pool = target.params if target.params and rng.random() < 0.7 else TORCH_KWARGS
        name = rng.choice(pool)
        kwargs[name] = values.for_param(name)
    text_args = ", ".join([describe(a) for a in args] + [f"{k}={describe(v)}" for k, v in kwargs.items()])
    if target.kind == "call":
        return f"{target.name}({text_args})", lambda: target.obj(*args, **kwargs)
    if target.kind == "method":
        receiver = values.tensor()
        return (
            f"{describe(receiver)}.{target.obj}({text_args})",
            lambda: getattr(receiver, target.obj)(*args, **kwargs),
        )
    if target.kind == "unbound":
        self_arg = values.any()
        return (
            f"Tensor.{target.obj}({describe(self_arg)}, {text_args})",
            lambda: getattr(lib.Tensor, target.obj)(self_arg, *args, **kwargs),
        )
    if target.kind == "setattr":
        receiver = values.tensor()
        value = values.any()
        return (f"{describe(receiver)}.{target.obj} = {describe(value)}", lambda: setattr(receiver, target.obj, value))
    receiver = values.tensor()
    node = receiver.grad_fn if receiver.grad_fn is not None else (lib.ones(2, requires_grad=True) * 2).grad_fn
    return (f"{node.name()}.{target.obj}({text_args})", lambda: getattr(node, target.obj)(*args, **kwargs))


# ---------------------------------------------------------------- the graph mode


def graph_program(lib: Any, seed: int, index: int) -> tuple[str, Callable[[], Any]]:
    """Program number `index` of the graph mode: a random graph with misbehaving
    callbacks, run backward; its description and a thunk."""
    rng = random.Random(f"graph:{seed}:{index}")
    values = Values(lib, rng)
    graph = lib.autograd.graph
    steps = _Steps()

    def junk() -> Any:
        return values.any()

    def misbehave(name: str, good: Callable[..., Any]) -> Callable[..., Any]:
        """A callback that, by a coin toss per program, returns a generated value,
        raises, re-enters backward, drops references, or behaves."""
        kind = rng.choice(["junk", "raise", "reenter", "reenter_same", "good", "none", "grad_of"])
        steps.append(f"{name}:{kind}")
        result = junk()

        def cb(*a: Any, **k: Any) -> Any:
            # Re-entering the running graph recurses, and so does a fresh
            # backward from an unpack hook while its saved_tensors_hooks are
            # active (each nested product saves through the same hooks):
            # three levels show the nesting works (unbounded recursion has
            # its own test, and reaching its limit here took 20 s a program).
            if kind in ("reenter", "reenter_same", "grad_of") and state.get("depth", 0) >= 3:
                return good(*a, **k)
            state["depth"] = state.get("depth", 0) + 1
            try:
                return act(*a, **k)
            finally:
                state["depth"] -= 1

        def act(*a: Any, **k: Any) -> Any:
            if kind == "junk":
                return result
            if kind == "raise":
                raise ValueError(f"{name} raised on purpose")
            if kind == "reenter":
                with lib.enable_grad():  # also from a custom forward (no grad there)
                    z = lib.ones(2, requires_grad=True)
                    (z * z).sum().backward()
                return good(*a, **k)
            if kind == "reenter_same":
                state["root"].backward()  # the graph that is running
                return good(*a, **k)
            if kind == "grad_of":
                lib.autograd.grad(state["root"], state["leaves"], retain_graph=True, allow_unused=True)
                return good(*a, **k)
            if kind == "none":
                return None
            return good(*a, **k)

        return cb

    state: dict[str, Any] = {}

    def program() -> None:
        leaves = [lib.randn(2, 3, dtype=lib.float64, requires_grad=True) for _ in range(rng.randint(1, 3))]
        state["leaves"] = leaves
        state["root"] = (leaves[0] * 1).sum()  # until the program's own root exists
        cur = leaves[0]
        handles = []
        use_saved_hooks = rng.random() < 0.4
        ctx = (
            graph.saved_tensors_hooks(misbehave("pack", lambda t: t), misbehave("unpack", lambda p: p))
            if use_saved_hooks
            else _null()
        )
        with ctx:
            for step in range(rng.randint(1, 5)):
                op = rng.choice(["sin", "mul", "add", "exp", "matmul", "clone", "view", "function", "tanh"])
                steps.append(op)
                other = rng.choice(leaves)
                if op == "sin":
                    cur = cur.sin()
                elif op == "mul":
                    cur = cur * other
                elif op == "add":
                    cur = cur + other
                elif op == "exp":
                    cur = (cur * 0.1).exp()
                elif op == "matmul":
                    cur = cur @ other.t() @ other
                elif op == "clone":
                    cur = cur.clone()
                elif op == "view":
                    cur = cur.view(3, 2).view(2, 3)
                elif op == "tanh":
                    cur = cur.tanh()
                else:
                    cur = _fuzzed_function(lib, rng, misbehave).apply(cur)
                    if not isinstance(cur, lib.Tensor) or cur.shape != (2, 3):
                        cur = leaves[0] * 1
                if rng.random() < 0.4 and cur.requires_grad:
                    handles.append(cur.register_hook(misbehave(f"tensor_hook{step}", lambda g: g)))
                if rng.random() < 0.3 and cur.grad_fn is not None:
                    handles.append(cur.grad_fn.register_hook(misbehave(f"post_hook{step}", lambda gi, go: None)))
                if rng.random() < 0.3 and cur.grad_fn is not None:
                    handles.append(cur.grad_fn.register_prehook(misbehave(f"pre_hook{step}", lambda go: None)))
                if rng.random() < 0.2:
                    cur.retain_grad() if cur.requires_grad else None
        for leaf in leaves:
            if rng.random() < 0.3:
                handles.append(leaf.register_post_accumulate_grad_hook(misbehave("post_acc", lambda p: None)))
        if rng.random() < 0.3:
            mode = rng.choice(["all", "any"])
            handles.append(graph.register_multi_grad_hook(leaves, misbehave("multi", lambda *a: None), mode=mode))
        if rng.random() < 0.2:
            handles.append(leaves[0].register_hook(misbehave("leaf_hook", lambda g: g)))
        root = cur.sum() if cur.requires_grad else (leaves[0] * 1).sum()
        state["root"] = root
        how = rng.choice(["backward", "backward_retain", "grad", "grad_create", "edges", "edge_out", "callback"])
        steps.append(how)
        if how == "backward":
            root.backward()
        elif how == "backward_retain":
            root.backward(retain_graph=True)
            if rng.random() < 0.5:
                root.backward()
        elif how == "grad":
            lib.autograd.grad(root, leaves, allow_unused=rng.random() < 0.5)
        elif how == "grad_create":
            grads = lib.autograd.grad(root, leaves, create_graph=True, allow_unused=True)
            s = sum((g * g).sum() for g in grads if g is not None)
            if isinstance(s, lib.Tensor) and s.requires_grad:
                s.backward()
        elif how == "edges":
            edge = (
                values.gradient_edge()
                if rng.random() < 0.5
                else graph.GradientEdge(
                    cur.grad_fn if cur.grad_fn is not None else root.grad_fn, rng.choice([0, 1, -1, 99])
                )
            )
            lib.autograd.grad(root, [edge], allow_unused=True)
        elif how == "edge_out":
            edge = graph.get_gradient_edge(cur) if rng.random() < 0.5 else values.gradient_edge()
            lib.autograd.grad(
                [edge],
                leaves,
                grad_outputs=[junk() if rng.random() < 0.5 else lib.ones(2, 3, dtype=lib.float64)],
                allow_unused=True,
            )
        else:

            def queue() -> None:
                lib.autograd.Variable._execution_engine.queue_callback(misbehave("callback", lambda: None))

            handles.append(root.grad_fn.register_prehook(lambda go: queue()))
            root.backward()
        if rng.random() < 0.5:
            for h in handles:
                h.remove()

    return f"graph program {index}", program


class _Steps(list):  # type: ignore[type-arg]
    """The steps of a graph program, each also reported to the driver as it is
    chosen, so that a crash is named with the steps that led to it."""

    def append(self, step: str) -> None:
        super().append(step)
        sys.stdout.write(f"STEP {step}\n")
        sys.stdout.flush()


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _fuzzed_function(lib: Any, rng: random.Random, misbehave: Callable[..., Any]) -> Any:
    fwd = misbehave("Function.forward", lambda ctx, x: x * 2)
    bwd = misbehave("Function.backward", lambda ctx, g: g * 2)
    save = rng.choice(["none", "input", "output", "junk"])
    mark = rng.choice(["none", "dirty", "non_differentiable"])

    class Fuzzed(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            out = fwd(ctx, x)
            if save == "input":
                ctx.save_for_backward(x)
            elif save == "output":
                ctx.save_for_backward(out)
            elif save == "junk":
                ctx.save_for_backward(rng.choice([None, 3, "a", [x]]))
            if mark == "dirty":
                ctx.mark_dirty(out)
            elif mark == "non_differentiable":
                ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            ctx.saved_tensors  # noqa: B018 - unpacks (and may find a freed tensor)
            return bwd(ctx, g)

    return Fuzzed


def _segfault(*a: Any, **k: Any) -> None:
    import ctypes

    ctypes.string_at(0)  # reads address 0: SIGSEGV


def _hang(*a: Any, **k: Any) -> None:
    time.sleep(3600)


def _system_error(*a: Any, **k: Any) -> None:
    raise SystemError("planted")


_PLANTED = {"segfault": _segfault, "hang": _hang, "system_error": _system_error}


def engine_still_works(lib: Any) -> str | None:
    """None when a plain backward on a fresh graph gives the right gradient."""
    if not lib.is_grad_enabled():
        lib.set_grad_enabled(True)
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    got = x.grad.tolist() if x.grad is not None else None
    return None if got == [2.0, 4.0, 6.0] else f"plain backward after the program gave {got}"


# ---------------------------------------------------------------- the worker


def worker(mode: str, seed: int, start: int, count: int) -> None:
    """Runs calls start..start+count-1 in this process, reporting on stdout:
    ``START i desc`` before a call, ``END i`` after it, ``FAIL i reason`` for a
    SystemError or an engine left broken."""
    import warnings

    warnings.simplefilter("ignore")
    # Python's default recursion limit stays: it is what keeps the C stack
    # from overflowing (a pack hook that records ops recurses through npgrad's
    # frames, which are several times larger under ASan).
    _limit_memory()
    lib = importlib.import_module("npgrad")
    targets = discover(lib) if mode == "api" else []
    planted = os.environ.get("NPGRAD_FUZZ_PLANT")
    if planted:  # the fuzzer's own test: a target that fails as named
        targets = [Target("call", f"planted.{planted}", _PLANTED[planted])] * len(targets or [0])
    out = sys.stdout
    for index in range(start, start + count):
        try:
            desc, thunk = api_call(lib, targets, seed, index) if mode == "api" else graph_program(lib, seed, index)
        except Exception as e:  # generating the arguments itself failed: not a finding
            desc, thunk = f"(generation failed: {type(e).__name__})", lambda: None
        out.write(f"START {index} {desc}\n")
        out.flush()
        failure = None
        try:
            thunk()
        except SystemError as e:
            failure = f"SystemError: {e}"
        except BaseException as e:  # noqa: BLE001 - ordinary exceptions are fine
            if isinstance(e, (KeyboardInterrupt,)):
                raise
            cause = e.__cause__ or e.__context__
            if isinstance(cause, SystemError):
                failure = f"SystemError (as cause): {cause}"
        if mode == "graph" and failure is None:
            try:
                failure = engine_still_works(lib)
            except BaseException as e:  # noqa: BLE001
                failure = f"plain backward after the program raised {type(e).__name__}: {e}"
        if failure is not None:
            out.write(f"FAIL {index} {failure.splitlines()[0] if failure else ''}\n")
        out.write(f"END {index}\n")
        out.flush()
    out.write("DONE\n")
    out.flush()


# ---------------------------------------------------------------- the driver


@dataclass
class Finding:
    index: int
    what: str  # "crash (signal 11)", "hang", "SystemError: ..."
    call: str

    def __str__(self) -> str:
        call = self.call + ("]" if "[" in self.call and not self.call.endswith("]") else "")
        return f"#{self.index} {self.what}: {call}"


def number_of_targets() -> int:
    lib = importlib.import_module("npgrad")
    return len(discover(lib))


def run(
    mode: str,
    seed: int,
    count: int,
    start: int = 0,
    call_timeout: float = 30.0,
    max_findings: int = 50,
    env: dict[str, str] | None = None,
) -> list[Finding]:
    """Runs calls start..start+count-1 in child processes; a child that dies or
    stops answering is replaced, starting after the call it died on."""
    findings: list[Finding] = []
    env = dict(env if env is not None else os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "0")
    next_index = start
    end = start + count
    workdir = tempfile.mkdtemp(prefix="npgrad-fuzz-")  # files a call may write land here
    while next_index < end and len(findings) < max_findings:
        proc = subprocess.Popen(
            [
                sys.executable,
                os.path.abspath(__file__),
                "--worker",
                "--mode",
                mode,
                "--seed",
                str(seed),
                "--start",
                str(next_index),
                "--count",
                str(end - next_index),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            env=env,
        )
        current: tuple[int, str] | None = None
        done = False
        assert proc.stdout is not None
        for line in _lines(proc, call_timeout):
            if line is None:  # no progress within the timeout: a hang
                proc.kill()
                proc.wait()
                if current is not None:
                    findings.append(Finding(current[0], "hang", current[1]))
                    next_index = current[0] + 1
                else:  # the worker did not even start
                    findings.append(Finding(next_index, "hang at start-up", ""))
                    next_index = end
                break
            kind, _, rest = line.partition(" ")
            if kind == "START":
                i, _, desc = rest.partition(" ")
                current = (int(i), desc)
            elif kind == "STEP" and current is not None:
                current = (current[0], f"{current[1]}; {rest}" if "[" in current[1] else f"{current[1]} [{rest}")
            elif kind == "END":
                next_index = int(rest) + 1
                current = None
            elif kind == "FAIL":
                i, _, reason = rest.partition(" ")
                findings.append(Finding(int(i), reason, current[1] if current else ""))
            elif kind == "DONE":
                done = True
        else:
            code = proc.wait()
            if not done:
                what = f"crash (signal {-code})" if code < 0 else f"exit status {code}"
                if current is not None:
                    findings.append(Finding(current[0], what, current[1]))
                    next_index = current[0] + 1
                else:
                    findings.append(Finding(next_index, what + " outside any call", ""))
                    next_index = end
        proc.stdout.close()
    return findings


def _limit_memory() -> None:
    """A call that asks for huge arrays fails with MemoryError instead of taking
    the machine (not under AddressSanitizer, which reserves its shadow memory)."""
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        return
    try:
        import resource

        limit = 8 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


# A new worker imports the library and lists its targets before its first
# line: seconds on a loaded machine, which a short per-call timeout must not
# count as a hang.
STARTUP_TIMEOUT = 120.0


def _lines(proc: subprocess.Popen[bytes], timeout: float) -> Iterator[str | None]:
    """The child's stdout lines; None when none arrives within `timeout` (the
    first within `STARTUP_TIMEOUT`, if longer)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    first = True
    while True:
        deadline = time.monotonic() + (max(timeout, STARTUP_TIMEOUT) if first else timeout)
        first = False
        while b"\n" not in buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                yield None
                return
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        yield line.decode("utf-8", "replace")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["api", "graph"], default="api")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one call may take")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.mode, args.seed, args.start, args.count)
        return 0
    t0 = time.monotonic()
    findings = run(args.mode, args.seed, args.count, args.start, args.timeout)
    for f in findings:
        print(f)
    print(
        f"{args.mode} mode, seed {args.seed}: {args.count} calls in {time.monotonic() - t0:.0f} s, "
        f"{len(findings)} finding(s)"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
