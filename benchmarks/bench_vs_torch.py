"""npgrad vs torch vs a hand-written NumPy floor, on the same workloads in one run.

    python benchmarks/bench_vs_torch.py [--quick] [--json PATH] [--repeat N]
                                        [--libs npgrad,torch,numpy]

Each workload is one function of the library module ``lib``, so npgrad and torch
run literally the same code; the NumPy "floor" does the same forward and backward
math by hand, with no graph. Runs alternate between libraries (npgrad, torch,
numpy, npgrad, ...) and the table reports the median seconds per run. Before timing,
each library's gradients are checked once against the floor's.

BENCH_NPGRAD_IS_TORCH=1 makes the "npgrad" column run torch (to exercise the
script without npgrad). Benchmarks are not tests: nothing here asserts on time.
"""

from __future__ import annotations

import os

# Single-threaded BLAS/OpenMP for every library; must precede numpy/torch imports.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

LIBS = ("npgrad", "torch", "numpy")
FLOOR = "numpy"


def load_libs(wanted: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Import the requested libraries; a missing one maps to None."""
    mods: dict[str, Any] = {name: None for name in LIBS}
    notes: list[str] = []
    for name in wanted:
        if name == FLOOR:
            mods[name] = np
            continue
        target = name
        if name == "npgrad" and os.environ.get("BENCH_NPGRAD_IS_TORCH"):
            target = "torch"
            notes.append("note: BENCH_NPGRAD_IS_TORCH=1, the npgrad column runs torch")
        try:
            mods[name] = importlib.import_module(target)
        except ImportError as exc:
            notes.append(f"note: {name} not available ({exc}); reported as n/a")
    for mod in mods.values():
        if mod is not None and hasattr(mod, "set_num_threads"):
            mod.set_num_threads(1)
    return mods, notes


@dataclass(frozen=True)
class Workload:
    name: str
    setup: Callable[[Any], Any]  # lib -> state
    run: Callable[[Any], list[Any]]  # state -> grads (lib tensors)
    setup_numpy: Callable[[], Any]
    run_numpy: Callable[[Any], list[np.ndarray]]


# ---- workloads (a), (b): a chain of pointwise ops -------------------------------
#
# One cycle of 10 ops. sin/tanh keep values bounded; exp/sqrt/pow/log and the
# scale pairs roughly cancel, so the chain derivative stays O(1) over 2,000 ops
# instead of underflowing (the gradient check then means something).

CYCLE = 10


def chain_lib(lib: Any, x: Any, n_ops: int) -> list[Any]:
    x.grad = None
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
    y.sum().backward()
    return [x.grad]


def chain_numpy(x: np.ndarray, n_ops: int) -> list[np.ndarray]:
    assert n_ops % CYCLE == 0
    saved = []
    y = x
    for _ in range(n_ops // CYCLE):
        s = y
        y = np.sin(y)
        y = y * 1.001
        y = y + 0.5
        e = np.exp(y)
        r = np.sqrt(e)
        p = r**2
        y = np.log(p)
        y = y - 0.5
        t = np.tanh(y)
        y = t / 0.999
        saved.append((s, e, r, p, t))
    g = np.ones_like(y)  # d sum / d y
    for s, e, r, p, t in reversed(saved):
        g = g / 0.999  # div
        g = g * (1 - t * t)  # tanh
        g = g / p  # log
        g = g * (2 * r)  # pow 2
        g = g / (2 * r)  # sqrt
        g = g * e  # exp
        g = g * 1.001  # mul
        g = g * np.cos(s)  # sin
    return [g]


def chain_data(numel: int) -> np.ndarray:
    if numel <= 64:
        return np.linspace(-1.0, 1.0, numel, dtype=np.float32)
    return np.random.default_rng(0).uniform(-1, 1, numel).astype(np.float32)


def chain_workload(n_ops: int, numel: int) -> Workload:
    x0 = chain_data(numel)
    return Workload(
        name=f"pointwise chain, {n_ops} ops x {numel:,} f32",
        setup=lambda lib: (lib, lib.from_numpy(x0.copy()).requires_grad_()),
        run=lambda st: chain_lib(st[0], st[1], n_ops),
        setup_numpy=lambda: x0.copy(),
        run_numpy=lambda x: chain_numpy(x, n_ops),
    )


# ---- workload (c): one MLP training step -----------------------------------------


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


def mlp_numpy(
    x: np.ndarray, y: np.ndarray, params: list[np.ndarray], lr: float
) -> list[np.ndarray]:
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
    dlogp = y * (-1.0 / x.shape[0])
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


def mlp_workload(batch: int, sizes: list[int]) -> Workload:
    d = mlp_data(batch, sizes)

    def setup(lib: Any) -> tuple[Any, ...]:
        params = [lib.from_numpy(p.copy()).requires_grad_() for p in d["params"]]
        return lib, lib.from_numpy(d["x"]), lib.from_numpy(d["y"]), params

    return Workload(
        name=f"MLP step {batch}x{'-'.join(map(str, sizes))} f32",
        setup=setup,
        run=lambda st: mlp_lib(*st, d["lr"]),
        setup_numpy=lambda: [p.copy() for p in d["params"]],
        run_numpy=lambda params: mlp_numpy(d["x"], d["y"], params, d["lr"]),
    )


# ---- harness ----------------------------------------------------------------------


def to_numpy(t: Any) -> np.ndarray:
    return t if isinstance(t, np.ndarray) else t.detach().numpy()


def grads_agree(got: list[Any], ref: list[np.ndarray]) -> tuple[bool, float]:
    """Loose float32 comparison; returns (ok, worst error relative to max|ref|)."""
    ok, worst = len(got) == len(ref), 0.0
    for g, r in zip(got, ref):
        if g is None:
            return False, math.inf
        g = to_numpy(g)
        scale = float(np.abs(r).max()) or 1.0
        ok &= g.shape == r.shape and np.allclose(g, r, rtol=1e-3, atol=1e-4 * scale)
        if g.shape == r.shape:
            worst = max(worst, float(np.abs(g - r).max()) / scale)
    return ok, worst


def bench(w: Workload, mods: dict[str, Any], warmup: int, repeat: int) -> dict:
    ref_grads = w.run_numpy(w.setup_numpy())
    runners: dict[str, Callable[[], list[Any]]] = {}
    checks: dict[str, str] = {}
    for name in LIBS:  # setup + first run, which is also the gradient check
        mod = mods[name]
        if mod is None:
            continue
        try:
            if name == FLOOR:
                st = w.setup_numpy()
                runners[name] = lambda st=st: w.run_numpy(st)
            else:
                st = w.setup(mod)
                runners[name] = lambda st=st: w.run(st)
            ok, err = grads_agree(runners[name](), ref_grads)
            checks[name] = "ok" if ok else f"MISMATCH (max rel err {err:.2e})"
            if not ok:
                print(
                    f"WARNING: {w.name}: {name} gradients differ from the NumPy "
                    f"floor (max rel err {err:.2e})"
                )
        except Exception as exc:
            print(f"WARNING: {w.name}: {name} failed ({exc!r}); traceback on stderr")
            traceback.print_exc()
            runners.pop(name, None)
            checks[name] = "error"
    times: dict[str, list[float]] = {name: [] for name in runners}
    for i in range(warmup + repeat):  # alternate libraries run by run
        for name, fn in runners.items():
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[name].append(dt)
    medians = {n: (statistics.median(times[n]) if n in times else None) for n in LIBS}
    return {"workload": w.name, "median_s": medians, "grad_check": checks,
            "ratios": ratios(medians)}


def ratios(m: dict[str, float | None]) -> dict[str, float | None]:
    def r(a: str, b: str) -> float | None:
        return m[a] / m[b] if m[a] is not None and m[b] else None

    return {"npgrad/torch": r("npgrad", "torch"), "npgrad/floor": r("npgrad", FLOOR),
            "torch/floor": r("torch", FLOOR)}


def fmt_ms(s: float | None) -> str:
    if s is None:
        return "n/a"
    ms = s * 1e3
    digits = 2 - math.floor(math.log10(ms)) if ms > 0 else 2
    return f"{round(ms, digits):.{max(digits, 0)}f}"


def fmt_ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}"


def machine_info(mods: dict[str, Any]) -> dict[str, Any]:
    def version(name: str) -> str:
        mod = mods.get(name)
        if mod is None:
            return "n/a"
        stand_in = name == "npgrad" and mod.__name__ != "npgrad"
        return f"(= {mod.__name__})" if stand_in else getattr(mod, "__version__", "?")

    cpu = platform.processor() or platform.machine()
    try:  # Linux: the model name says more than "x86_64"
        with open("/proc/cpuinfo") as f:
            cpu = next(ln for ln in f if ln.startswith("model name")).split(":")[1]
    except (OSError, StopIteration):
        pass
    return {"processor": cpu.strip(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "torch": version("torch"),
            "npgrad": version("npgrad")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 repeats, smaller sizes")
    ap.add_argument("--repeat", type=int, help="timed runs per library (default 15)")
    ap.add_argument("--json", metavar="PATH", help="write raw medians and ratios")
    ap.add_argument("--libs", default=",".join(LIBS), help="comma-separated subset")
    args = ap.parse_args()
    wanted = [s.strip() for s in args.libs.split(",") if s.strip()]
    unknown = set(wanted) - set(LIBS)
    if unknown:
        ap.error(f"unknown libs {sorted(unknown)}; choose from {','.join(LIBS)}")

    mods, notes = load_libs(wanted)
    repeat = args.repeat or (2 if args.quick else 15)
    warmup = 1 if args.quick else 3
    if args.quick:
        workloads = [chain_workload(500, 16), chain_workload(50, 100_000),
                     mlp_workload(16, [256, 512, 512, 10])]
    else:
        workloads = [chain_workload(2000, 16), chain_workload(50, 1_000_000),
                     mlp_workload(64, [256, 512, 512, 10])]

    info = machine_info(mods)
    results = [bench(w, mods, warmup, repeat) for w in workloads]

    print(f"machine: {info['processor']}, {info['cpu_count']} CPUs, "
          f"Python {info['python']}, numpy {info['numpy']}, torch {info['torch']}, "
          f"npgrad {info['npgrad']}; 1 thread")
    for note in notes:
        print(note)
    print(f"median ms per run over {repeat} runs ({warmup} warm-up), "
          "libraries alternated run by run; a/b > 1 means a is slower\n")
    print("| workload | npgrad | torch | numpy floor "
          "| npgrad/torch | npgrad/floor | torch/floor |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for res in results:
        m, r = res["median_s"], res["ratios"]
        cells = [
            "error" if res["grad_check"].get(n) == "error" else fmt_ms(m[n])
            for n in LIBS
        ] + [fmt_ratio(v) for v in r.values()]
        print(f"| {res['workload']} | " + " | ".join(cells) + " |")

    if args.json:
        payload = {"machine": info, "notes": notes, "repeat": repeat,
                   "warmup": warmup, "quick": args.quick, "results": results}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
