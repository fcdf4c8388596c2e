"""The timed workloads (a)-(h) of ``bench_vs_torch.py``, for every library family.

A workload holds one implementation per *family*:

* ``torch``: npgrad and torch, literally the same code (``lib`` is the module);
* ``numpy``: the hand-written NumPy "floor": the same forward and backward math by
  hand (chain rule, saving the intermediates it needs), no graph, no framework;
* ``mygrad`` (PyPI ``mygrad``) and ``autograd`` (PyPI ``autograd``, HIPS): the
  pure-Python NumPy autograds, where the workload fits their API. A family
  without an implementation maps to the reason it is missing (printed as n/a).

``Impl.setup(module)`` builds the state once (data, leaf tensors); ``Impl.run(state)``
is one timed run and returns the gradients as a list (lib tensors or arrays), or
``(gradients, {phase: seconds})`` for workloads timed by phase (e). The harness
compares every library's gradients with the floor's before timing.

Constants handed to mygrad are ``np.float32``: mygrad turns a Python float into a
float64 array, which would silently run its chain in float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any

import numpy as np

FAMILIES = ("torch", "numpy", "mygrad", "autograd")


@dataclass(frozen=True)
class Impl:
    setup: Callable[[Any], Any]  # library module -> state
    run: Callable[[Any], Any]  # state -> grads, or (grads, {phase: seconds})


@dataclass(frozen=True)
class Workload:
    key: str  # "a".."h"; (e) runs at several sizes: "e25000", ...
    name: str
    impls: dict[str, Impl]  # family -> implementation
    missing: dict[str, str] = field(default_factory=dict)  # family -> why n/a
    phases: tuple[str, ...] = ()  # run() also returns these per-phase times
    max_repeat: int | None = None  # cap on timed runs (slow workloads)
    size: int = 0  # the size parameter (nodes for (e))


NO_HOOKS = "no saved_tensors_hooks API"
NO_MULTI_HOOK = "no register_multi_grad_hook API"


def _ag_numpy() -> Any:
    import autograd.numpy as anp

    return anp


# ---- (a), (b), (e), (f): a chain of pointwise ops ------------------------------------
#
# One cycle of 10 ops. sin/tanh keep values bounded; exp/sqrt/pow/log and the
# scale pairs roughly cancel, so the chain derivative stays O(1) over 2,000 ops
# instead of underflowing (the gradient check then means something).

CYCLE = 10
_M, _A, _D = np.float32(1.001), np.float32(0.5), np.float32(0.999)


def chain_forward(x: Any, n_ops: int) -> Any:
    """npgrad / torch: the chain as tensor methods."""
    y = x
    for i in range(n_ops):
        k = i % CYCLE
        if k == 0:
            y = y.sin()
        elif k == 1:
            y = y * 1.001
        elif k == 2:
            y = y + 0.5
        elif k == 3:
            y = y.exp()
        elif k == 4:
            y = y.sqrt()
        elif k == 5:
            y = y**2
        elif k == 6:
            y = y.log()
        elif k == 7:
            y = y - 0.5
        elif k == 8:
            y = y.tanh()
        else:
            y = y / 0.999
    return y


def chain_forward_ns(ns: Any, x: Any, n_ops: int) -> Any:
    """mygrad / HIPS autograd: the same chain through the namespace's functions."""
    y = x
    for i in range(n_ops):
        k = i % CYCLE
        if k == 0:
            y = ns.sin(y)
        elif k == 1:
            y = y * _M
        elif k == 2:
            y = y + _A
        elif k == 3:
            y = ns.exp(y)
        elif k == 4:
            y = ns.sqrt(y)
        elif k == 5:
            y = y**2
        elif k == 6:
            y = ns.log(y)
        elif k == 7:
            y = y - _A
        elif k == 8:
            y = ns.tanh(y)
        else:
            y = y / _D
    return y


def chain_lib(lib: Any, x: Any, n_ops: int) -> list[Any]:
    x.grad = None
    chain_forward(x, n_ops).sum().backward()
    return [x.grad]


def chain_numpy_forward(x: np.ndarray, n_ops: int) -> tuple[np.ndarray, list]:
    assert n_ops % CYCLE == 0, n_ops
    saved = []
    y = x
    for _ in range(n_ops // CYCLE):
        s = y
        y = np.sin(y)
        y = y * _M
        y = y + _A
        e = np.exp(y)
        r = np.sqrt(e)
        p = r**2
        y = np.log(p)
        y = y - _A
        t = np.tanh(y)
        y = t / _D
        saved.append((s, e, r, p, t))
    return y, saved


def chain_numpy_backward(g: np.ndarray, saved: list) -> np.ndarray:
    for s, e, r, p, t in reversed(saved):
        g = g / _D  # div
        g = g * (1 - t * t)  # tanh
        g = g / p  # log
        g = g * (2 * r)  # pow 2
        g = g / (2 * r)  # sqrt
        g = g * e  # exp
        g = g * _M  # mul
        g = g * np.cos(s)  # sin
    return g


def chain_numpy(x: np.ndarray, n_ops: int) -> list[np.ndarray]:
    y, saved = chain_numpy_forward(x, n_ops)
    return [chain_numpy_backward(np.ones_like(y), saved)]  # d sum / d y = 1


def chain_mygrad(mg: Any, x: Any, n_ops: int) -> list[Any]:
    x.null_grad()
    mg.sum(chain_forward_ns(mg, x, n_ops)).backward()
    return [x.grad]


def chain_data(numel: int, dtype: type = np.float32) -> np.ndarray:
    if numel <= 64:
        return np.linspace(-1.0, 1.0, numel, dtype=dtype)
    return np.random.default_rng(0).uniform(-1, 1, numel).astype(dtype)


def _chain_impls(n_ops: int, numel: int) -> dict[str, Impl]:
    x0 = chain_data(numel)

    def ag_setup(ag: Any) -> Any:
        anp = _ag_numpy()
        return ag.grad(lambda x: anp.sum(chain_forward_ns(anp, x, n_ops))), x0.copy()

    return {
        "torch": Impl(
            lambda lib: (lib, lib.from_numpy(x0.copy()).requires_grad_()),
            lambda st: chain_lib(st[0], st[1], n_ops),
        ),
        "numpy": Impl(lambda np_: x0.copy(), lambda x: chain_numpy(x, n_ops)),
        "mygrad": Impl(
            lambda mg: (mg, mg.tensor(x0.copy())),
            lambda st: chain_mygrad(st[0], st[1], n_ops),
        ),
        "autograd": Impl(ag_setup, lambda st: [st[0](st[1])]),
    }


def chain_workload(n_ops: int, numel: int, key: str) -> Workload:
    return Workload(
        key,
        f"({key}) pointwise chain, {n_ops:,} ops x {numel:,} f32, fwd+bwd",
        _chain_impls(n_ops, numel),
        size=n_ops,
    )


# ---- (f): (a) under identity saved_tensors_hooks --------------------------------------


def _identity(t: Any) -> Any:
    return t


def chain_hooks_lib(lib: Any, x: Any, n_ops: int) -> list[Any]:
    x.grad = None
    with lib.autograd.graph.saved_tensors_hooks(_identity, _identity):
        chain_forward(x, n_ops).sum().backward()
    return [x.grad]


def chain_hooks_workload(n_ops: int, numel: int) -> Workload:
    base = _chain_impls(n_ops, numel)
    impls = {
        "torch": Impl(base["torch"].setup, lambda st: chain_hooks_lib(*st, n_ops)),
        "numpy": base["numpy"],  # the floor of (a): hooks cost nothing by hand
    }
    return Workload(
        "f",
        f"(f) = (a) {n_ops:,} ops x {numel} f32 under identity saved_tensors_hooks",
        impls,
        {"mygrad": NO_HOOKS, "autograd": NO_HOOKS},
        size=n_ops,
    )


# ---- (e): a long chain, timed by phase: build, backward, teardown -----------------


def chain_phases_lib(lib: Any, x: Any, n_ops: int) -> tuple[list[Any], dict]:
    x.grad = None
    t0 = perf_counter()
    loss = chain_forward(x, n_ops).sum()
    t1 = perf_counter()
    loss.backward()
    t2 = perf_counter()
    del loss  # the last reference to the graph: frees every node
    t3 = perf_counter()
    return [x.grad], {"build": t1 - t0, "backward": t2 - t1, "teardown": t3 - t2}


def chain_phases_numpy(x: np.ndarray, n_ops: int) -> tuple[list[Any], dict]:
    t0 = perf_counter()
    y, saved = chain_numpy_forward(x, n_ops)
    t1 = perf_counter()
    g = chain_numpy_backward(np.ones_like(y), saved)
    t2 = perf_counter()
    del saved, y
    t3 = perf_counter()
    return [g], {"build": t1 - t0, "backward": t2 - t1, "teardown": t3 - t2}


def chain_phases_mygrad(mg: Any, x: Any, n_ops: int) -> tuple[list[Any], dict]:
    x.null_grad()
    t0 = perf_counter()
    loss = mg.sum(chain_forward_ns(mg, x, n_ops))
    t1 = perf_counter()
    loss.backward()  # mygrad clears the graph here (its default)
    t2 = perf_counter()
    del loss
    t3 = perf_counter()
    return [x.grad], {"build": t1 - t0, "backward": t2 - t1, "teardown": t3 - t2}


def chain_phases_autograd(ag: Any, x: np.ndarray, n_ops: int) -> tuple[list, dict]:
    anp = _ag_numpy()
    t0 = perf_counter()
    vjp, ans = ag.make_vjp(lambda v: anp.sum(chain_forward_ns(anp, v, n_ops)))(x)
    t1 = perf_counter()
    g = vjp(np.ones_like(ans))
    t2 = perf_counter()
    del vjp, ans  # the closure holds the traced graph
    t3 = perf_counter()
    return [g], {"build": t1 - t0, "backward": t2 - t1, "teardown": t3 - t2}


PHASES = ("build", "backward", "teardown")


def long_chain_workload(n_nodes: int, numel: int, max_repeat: int) -> Workload:
    # float64: over 100,000 float32 ops, torch's own sin/exp/log kernels (SLEEF)
    # drift from NumPy's by a few percent and the gradient check would fail;
    # the cost per node is what (e) measures, and it does not depend on the dtype.
    x0 = chain_data(numel, np.float64)
    impls = {
        "torch": Impl(
            lambda lib: (lib, lib.from_numpy(x0.copy()).requires_grad_()),
            lambda st: chain_phases_lib(st[0], st[1], n_nodes),
        ),
        "numpy": Impl(lambda np_: x0.copy(), lambda x: chain_phases_numpy(x, n_nodes)),
        "mygrad": Impl(
            lambda mg: (mg, mg.tensor(x0.copy())),
            lambda st: chain_phases_mygrad(st[0], st[1], n_nodes),
        ),
        "autograd": Impl(
            lambda ag: (ag, x0.copy()),
            lambda st: chain_phases_autograd(st[0], st[1], n_nodes),
        ),
    }
    return Workload(
        f"e{n_nodes}",
        f"(e) chain of {n_nodes:,} nodes x {numel} f64",
        impls,
        phases=PHASES,
        max_repeat=max_repeat,
        size=n_nodes,
    )


# ---- (d): fan-out: one input feeding many branches, summed ---------------------------
#
# acc = sin(c_0 x) + sin(c_1 x) + ... : x has one use per branch, so its gradient is
# the sum of n_branches contributions (gradient accumulation in the engine).


def fanout_consts(n: int) -> list[float]:
    return [0.5 + i / n for i in range(n)]


def fanout_lib(lib: Any, x: Any, cs: list[float]) -> list[Any]:
    x.grad = None
    acc = (x * cs[0]).sin()
    for c in cs[1:]:
        acc = acc + (x * c).sin()
    acc.sum().backward()
    return [x.grad]


def fanout_ns(ns: Any, x: Any, cs: list[np.float32]) -> Any:
    acc = ns.sin(x * cs[0])
    for c in cs[1:]:
        acc = acc + ns.sin(x * c)
    return ns.sum(acc)


def fanout_numpy(x: np.ndarray, cs: list[np.float32]) -> list[np.ndarray]:
    saved = []
    acc = np.sin(x * cs[0])
    saved.append(x * cs[0])
    for c in cs[1:]:
        s = x * c
        acc = acc + np.sin(s)
        saved.append(s)
    g = np.ones_like(acc)
    gx = np.zeros_like(x)
    for c, s in zip(reversed(cs), reversed(saved)):
        gx += g * np.cos(s) * c
    return [gx]


def fanout_workload(n_branches: int, numel: int) -> Workload:
    x0 = chain_data(numel)
    cs = fanout_consts(n_branches)
    cs32 = [np.float32(c) for c in cs]

    def mg_run(st: Any) -> list[Any]:
        mg, x = st
        x.null_grad()
        fanout_ns(mg, x, cs32).backward()
        return [x.grad]

    def ag_setup(ag: Any) -> Any:
        anp = _ag_numpy()
        return ag.grad(lambda x: fanout_ns(anp, x, cs32)), x0.copy()

    impls = {
        "torch": Impl(
            lambda lib: (lib, lib.from_numpy(x0.copy()).requires_grad_()),
            lambda st: fanout_lib(st[0], st[1], cs),
        ),
        "numpy": Impl(lambda np_: x0.copy(), lambda x: fanout_numpy(x, cs32)),
        "mygrad": Impl(lambda mg: (mg, mg.tensor(x0.copy())), mg_run),
        "autograd": Impl(ag_setup, lambda st: [st[0](st[1])]),
    }
    return Workload(
        "d",
        f"(d) fan-out: 1 input x {numel} f32 -> {n_branches:,} branches sin(c*x), summed, fwd+bwd",
        impls,
        size=n_branches,
    )


# ---- (g), (h): many inputs: loss = sum_i sum(sin(c_i * x_i)) --------------------------


def many_inputs_data(n: int, numel: int) -> tuple[list[np.ndarray], list[float]]:
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, numel).astype(np.float32) for _ in range(n)]
    return xs, fanout_consts(n)


def many_loss_lib(xs: list[Any], cs: list[float]) -> Any:
    loss = (xs[0] * cs[0]).sin().sum()
    for x, c in zip(xs[1:], cs[1:]):
        loss = loss + (x * c).sin().sum()
    return loss


def many_loss_ns(ns: Any, xs: list[Any], cs: list[np.float32]) -> Any:
    loss = ns.sum(ns.sin(xs[0] * cs[0]))
    for x, c in zip(xs[1:], cs[1:]):
        loss = loss + ns.sum(ns.sin(x * c))
    return loss


def many_grads_numpy(xs: list[np.ndarray], cs: list[np.float32]) -> list[np.ndarray]:
    saved = []
    loss = np.float32(0)
    for x, c in zip(xs, cs):
        s = x * c
        loss = loss + np.sin(s).sum()
        saved.append(s)
    g = np.float32(1)  # d loss / d loss; every term's gradient is g
    return [g * np.cos(s) * c for s, c in zip(saved, cs)]


def _leaves(lib: Any, arrays: list[np.ndarray]) -> list[Any]:
    return [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]


def multi_hook_lib(lib: Any, xs: list[Any], cs: list[float]) -> list[Any]:
    """Register a multi-grad hook on all inputs, forward, backward, remove it."""
    got: list[Any] = []
    handle = lib.autograd.graph.register_multi_grad_hook(xs, got.append)
    many_loss_lib(xs, cs).backward()
    handle.remove()
    for x in xs:
        x.grad = None
    assert len(got) == 1, f"multi-grad hook called {len(got)} times"
    return list(got[0])  # the gradients the hook saw


def multi_hook_numpy(xs: list[np.ndarray], cs: list[np.float32]) -> list[np.ndarray]:
    got: list[Any] = []
    got.append(many_grads_numpy(xs, cs))  # "the hook": one call with every gradient
    return list(got[0])


def multi_hook_workload(n_tensors: int, numel: int) -> Workload:
    arrays, cs = many_inputs_data(n_tensors, numel)
    cs32 = [np.float32(c) for c in cs]
    impls = {
        "torch": Impl(
            lambda lib: (lib, _leaves(lib, arrays)),
            lambda st: multi_hook_lib(st[0], st[1], cs),
        ),
        "numpy": Impl(lambda np_: arrays, lambda xs: multi_hook_numpy(xs, cs32)),
    }
    return Workload(
        "g",
        f"(g) register_multi_grad_hook on {n_tensors} tensors x {numel} f32 + fwd + bwd + remove",
        impls,
        {"mygrad": NO_MULTI_HOOK, "autograd": NO_MULTI_HOOK},
        size=n_tensors,
    )


def grad_many_lib(lib: Any, xs: list[Any], cs: list[float]) -> list[Any]:
    return list(lib.autograd.grad(many_loss_lib(xs, cs), xs))


def grad_many_workload(n_inputs: int, numel: int) -> Workload:
    arrays, cs = many_inputs_data(n_inputs, numel)
    cs32 = [np.float32(c) for c in cs]

    def mg_run(st: Any) -> list[Any]:  # mygrad has no grad(): backward, read .grad
        mg, xs = st
        many_loss_ns(mg, xs, cs32).backward()
        return [x.grad for x in xs]

    def ag_setup(ag: Any) -> Any:
        anp = _ag_numpy()
        return ag.grad(lambda xs: many_loss_ns(anp, xs, cs32)), [a.copy() for a in arrays]

    impls = {
        "torch": Impl(
            lambda lib: (lib, _leaves(lib, arrays)),
            lambda st: grad_many_lib(st[0], st[1], cs),
        ),
        "numpy": Impl(lambda np_: arrays, lambda xs: many_grads_numpy(xs, cs32)),
        "mygrad": Impl(lambda mg: (mg, [mg.tensor(a.copy()) for a in arrays]), mg_run),
        "autograd": Impl(ag_setup, lambda st: list(st[0](st[1]))),
    }
    return Workload(
        "h",
        f"(h) autograd.grad of a scalar w.r.t. {n_inputs} inputs x {numel} f32 (mygrad: backward + .grad)",
        impls,
        size=n_inputs,
    )


# ---- (c): one MLP training step -------------------------------------------------------


def mlp_data(batch: int, sizes: list[int]) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((fan_in, fan_out)) * math.sqrt(2.0 / fan_in)
        b = rng.uniform(-0.1, 0.1, fan_out)
        params += [w.astype(np.float32), b.astype(np.float32)]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    onehot = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    return {"x": x, "y": onehot, "params": params, "lr": 0.01}


def mlp_lib(lib: Any, x: Any, y: Any, params: list[Any], lr: float) -> list[Any]:
    w1, b1, w2, b2, w3, b3 = params
    h = (x @ w1 + b1).relu()
    h = (h @ w2 + b2).relu()
    logp = (h @ w3 + b3).log_softmax(dim=1)
    loss = -(logp * y).sum() / x.shape[0]  # NLL with one-hot targets
    loss.backward()
    grads = [p.grad for p in params]
    with lib.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return grads


def mlp_numpy(x: np.ndarray, y: np.ndarray, params: list[np.ndarray], lr: float) -> list[np.ndarray]:
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    out = h2 @ w3 + b3
    shifted = out - out.max(axis=1, keepdims=True)
    ex = np.exp(shifted)
    sumex = ex.sum(axis=1, keepdims=True)
    # logp = shifted - log(sumex); loss = -(logp * y).sum() / n
    dlogp = y * np.float32(-1.0 / x.shape[0])
    dout = dlogp - (ex / sumex) * dlogp.sum(axis=1, keepdims=True)
    gw3, gb3 = h2.T @ dout, dout.sum(axis=0)
    dz2 = (dout @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ dz2, dz2.sum(axis=0)
    dz1 = (dz2 @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ dz1, dz1.sum(axis=0)
    grads = [gw1, gb1, gw2, gb2, gw3, gb3]
    for p, g in zip(params, grads):
        p -= lr * g
    return grads


def mlp_mygrad(mg: Any, x: Any, y: Any, params: list[Any], lr: float) -> list[Any]:
    w1, b1, w2, b2, w3, b3 = params
    h = mg.nnet.relu(x @ w1 + b1)
    h = mg.nnet.relu(h @ w2 + b2)
    logp = mg.nnet.logsoftmax(h @ w3 + b3, axis=1)
    loss = -(logp * y).sum() / np.float32(x.shape[0])
    loss.backward()
    grads = [p.grad for p in params]
    for p in params:
        p.data -= lr * p.grad  # plain NumPy update of the leaf's array
        p.null_grad()
    return grads


def mlp_autograd_loss(params: list[Any], x: np.ndarray, y: np.ndarray) -> Any:
    anp = _ag_numpy()
    w1, b1, w2, b2, w3, b3 = params
    h = anp.maximum(x @ w1 + b1, np.float32(0))
    h = anp.maximum(h @ w2 + b2, np.float32(0))
    out = h @ w3 + b3
    shifted = out - anp.max(out, axis=1, keepdims=True)
    logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
    return -anp.sum(logp * y) / np.float32(x.shape[0])


def mlp_workload(batch: int, sizes: list[int]) -> Workload:
    d = mlp_data(batch, sizes)
    lr = d["lr"]

    def setup(lib: Any) -> tuple[Any, ...]:
        params = [lib.from_numpy(p.copy()).requires_grad_() for p in d["params"]]
        return lib, lib.from_numpy(d["x"]), lib.from_numpy(d["y"]), params

    def mg_setup(mg: Any) -> tuple[Any, ...]:
        params = [mg.tensor(p.copy()) for p in d["params"]]
        return mg, mg.tensor(d["x"], constant=True), d["y"], params

    def ag_run(st: Any) -> list[np.ndarray]:
        grad_fn, params = st
        grads = list(grad_fn(params, d["x"], d["y"]))
        for p, g in zip(params, grads):
            p -= lr * g
        return grads

    impls = {
        "torch": Impl(setup, lambda st: mlp_lib(*st, lr)),
        "numpy": Impl(
            lambda np_: [p.copy() for p in d["params"]],
            lambda params: mlp_numpy(d["x"], d["y"], params, lr),
        ),
        "mygrad": Impl(mg_setup, lambda st: mlp_mygrad(*st, lr)),
        "autograd": Impl(
            lambda ag: (ag.grad(mlp_autograd_loss), [p.copy() for p in d["params"]]),
            ag_run,
        ),
    }
    return Workload(
        "c",
        f"(c) MLP step {batch}x{'-'.join(map(str, sizes))} f32, relu, log_softmax+NLL, SGD",
        impls,
        size=batch,
    )


# ---- the sets of workloads ------------------------------------------------------------

# Per level: (a) ops, (b) numel, (c) batch, (d) branches, (e) node counts,
# (f) ops, (g) tensors, (h) inputs. "tiny" is for the pytest check.
SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "a": 2000,
        "b": 1_000_000,
        "c": 64,
        "d": 1000,
        "e": (25_000, 50_000, 100_000),
        "f": 2000,
        "g": 100,
        "h": 100,
    },
    "quick": {
        "a": 500,
        "b": 100_000,
        "c": 16,
        "d": 100,
        "e": (1_000, 2_000, 4_000),
        "f": 500,
        "g": 100,
        "h": 100,
    },
    "tiny": {
        "a": 20,
        "b": 1_000,
        "c": 4,
        "d": 10,
        "e": (100, 200, 400),
        "f": 20,
        "g": 5,
        "h": 5,
    },
}
MLP_SIZES = [256, 512, 512, 10]
SMALL_NUMEL = 16  # elements per tensor in the overhead-bound workloads
E_MAX_REPEAT = 5  # (e) is slow for the pure-Python peers: at most 5 timed runs


def make_workloads(level: str = "full", keys: str = "abcdefgh") -> list[Workload]:
    """The workloads of `level` whose key letter is in `keys` (only those are built:
    the data of (b) and (c) take a moment to generate)."""
    s = SIZES[level]
    mlp = MLP_SIZES if level != "tiny" else [8, 16, 16, 4]
    makers: list[tuple[str, Callable[[], list[Workload]]]] = [
        ("a", lambda: [chain_workload(s["a"], SMALL_NUMEL, "a")]),
        ("b", lambda: [chain_workload(50, s["b"], "b")]),
        ("c", lambda: [mlp_workload(s["c"], mlp)]),
        ("d", lambda: [fanout_workload(s["d"], SMALL_NUMEL)]),
        (
            "e",
            lambda: [long_chain_workload(n, SMALL_NUMEL, E_MAX_REPEAT) for n in s["e"]],
        ),
        ("f", lambda: [chain_hooks_workload(s["f"], SMALL_NUMEL)]),
        ("g", lambda: [multi_hook_workload(s["g"], SMALL_NUMEL)]),
        ("h", lambda: [grad_many_workload(s["h"], SMALL_NUMEL)]),
    ]
    return [w for key, make in makers if key in keys for w in make()]
