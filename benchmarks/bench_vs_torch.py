"""npgrad vs torch vs a hand-written NumPy floor vs MyGrad and HIPS autograd.

    python benchmarks/bench_vs_torch.py [--quick] [--json PATH] [--repeat N]
        [--libs npgrad,torch,numpy,mygrad,autograd] [--only a,b,...,i|none]
        [--plot PATH.png] [--callgrind-target KEY]

Workloads (a)-(h) are timed in this process (bench_workloads.py); (i), peak
memory, runs one child process per measurement (bench_memory.py). npgrad and torch
run literally the same code; the NumPy "floor" does the same forward and backward
math by hand; MyGrad and HIPS autograd run the same math through their own API
where it fits (else n/a). Runs alternate between libraries (npgrad, torch, numpy,
mygrad, autograd, npgrad, ...) and the tables report medians and their ratios, and
the issue's targets with met / not met. Each library's gradients are checked
against the floor's before timing.

BENCH_NPGRAD_IS_TORCH=1 makes the "npgrad" column run torch (to exercise the
script without npgrad). Benchmarks are not tests: nothing here asserts on time.
"""

from __future__ import annotations

import os

# Single-threaded BLAS/OpenMP for every library; must precede numpy/torch imports.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_memory  # noqa: E402
from bench_workloads import Workload, chain_workload, make_workloads  # noqa: E402

LIBS = ("npgrad", "torch", "numpy", "mygrad", "autograd")
FLOOR = "numpy"
FAMILY = {
    "npgrad": "torch",
    "torch": "torch",
    "numpy": "numpy",
    "mygrad": "mygrad",
    "autograd": "autograd",
}
TITLES = {
    "npgrad": "npgrad",
    "torch": "torch",
    "numpy": "numpy floor",
    "mygrad": "mygrad",
    "autograd": "autograd",
}
SHORT = {
    "npgrad": "npgrad",
    "torch": "torch",
    "numpy": "floor",
    "mygrad": "mygrad",
    "autograd": "autograd",
}
# Ratios reported for every workload: each library against torch and the floor,
# and the pure-Python peers against npgrad.
RATIO_PAIRS = [
    ("npgrad", "torch"),
    ("npgrad", "numpy"),
    ("torch", "numpy"),
    ("mygrad", "torch"),
    ("mygrad", "numpy"),
    ("autograd", "torch"),
    ("autograd", "numpy"),
    ("mygrad", "npgrad"),
    ("autograd", "npgrad"),
]
WORKLOAD_KEYS = "abcdefghi"


def pair_name(a: str, b: str) -> str:
    return f"{SHORT[a]}/{SHORT[b]}"


# ---- libraries -------------------------------------------------------------------------


def load_libs(wanted: list[str]) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """Import the requested libraries. Returns modules (None when missing), the
    reason each missing one is n/a, and notes to print."""
    mods: dict[str, Any] = {name: None for name in LIBS}
    why: dict[str, str] = {}
    notes: list[str] = []
    for name in LIBS:
        if name not in wanted:
            why[name] = "not selected (--libs)"
            continue
        if name == FLOOR:
            mods[name] = np
            continue
        target = name
        if name == "npgrad" and os.environ.get("BENCH_NPGRAD_IS_TORCH"):
            target = "torch"
            notes.append("note: BENCH_NPGRAD_IS_TORCH=1, the npgrad column runs torch")
        try:
            mods[name] = importlib.import_module(target)
        except Exception as exc:  # noqa: BLE001 (ImportError, or a peer failing on NumPy 2)
            why[name] = f"not importable: {exc!r}"
            notes.append(f"note: {name} not available ({exc!r}); its column says n/a")
    for mod in mods.values():
        if mod is not None and mod is not np and hasattr(mod, "set_num_threads"):
            mod.set_num_threads(1)
    return mods, why, notes


# ---- harness ---------------------------------------------------------------------------


def to_numpy(t: Any) -> np.ndarray:
    if isinstance(t, np.ndarray):
        return t
    if hasattr(t, "detach"):  # npgrad / torch
        return t.detach().numpy()
    return np.asarray(getattr(t, "data", t))  # mygrad tensors, NumPy scalars


def split_result(out: Any) -> tuple[list[Any], dict[str, float]]:
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
        return out[0], out[1]
    return out, {}


def grads_agree(got: list[Any], ref: list[np.ndarray]) -> tuple[bool, float]:
    """Loose float32 comparison; returns (ok, worst error relative to max|ref|)."""
    ok, worst = len(got) == len(ref), 0.0
    for g, r in zip(got, ref):
        if g is None:
            return False, math.inf
        g, r = to_numpy(g), to_numpy(r)
        scale = float(np.abs(r).max()) or 1.0
        ok &= g.shape == r.shape and np.allclose(g, r, rtol=1e-3, atol=1e-4 * scale)
        if g.shape == r.shape:
            worst = max(worst, float(np.abs(g - r).max()) / scale)
    return ok, worst


def reference_grads(w: Workload) -> list[np.ndarray]:
    impl = w.impls["numpy"]
    grads, _ = split_result(impl.run(impl.setup(np)))
    return [np.array(to_numpy(g)) for g in grads]


def prepare(w: Workload, name: str, mod: Any, ref: list[np.ndarray]) -> tuple[Callable[[], Any] | None, str]:
    """Set up one library on one workload and run it once (the gradient check).
    Returns the runner (None if unavailable) and the status string."""
    impl = w.impls.get(FAMILY[name])
    if impl is None:
        return None, "n/a: " + w.missing.get(FAMILY[name], "not implemented")
    try:
        st = impl.setup(mod)
        runner = lambda: impl.run(st)  # noqa: E731
        ok, err = grads_agree(split_result(runner())[0], ref)
    except Exception as exc:  # noqa: BLE001 (reported as "error", the run goes on)
        print(f"WARNING: {w.name}: {name} failed ({exc!r}); traceback on stderr")
        traceback.print_exc()
        return None, f"error: {exc!r}"
    if not ok:
        print(f"WARNING: {w.name}: {name} gradients differ from the NumPy floor (max rel err {err:.2e})")
        return runner, f"MISMATCH (max rel err {err:.2e})"
    return runner, "ok"


def bench(
    w: Workload,
    mods: dict[str, Any],
    why: dict[str, str],
    warmup: int,
    repeat: int,
    libs: tuple[str, ...] = LIBS,
) -> dict:
    """Time one workload on every library, alternating run by run."""
    if w.max_repeat:
        repeat, warmup = min(repeat, w.max_repeat), min(warmup, 1)
    ref = reference_grads(w)
    runners: dict[str, Callable[[], Any]] = {}
    status: dict[str, str] = {}
    for name in libs:
        if mods[name] is None:
            status[name] = "n/a: " + why.get(name, "not loaded")
            continue
        runner, status[name] = prepare(w, name, mods[name], ref)
        if runner is not None:
            runners[name] = runner
    gc.collect()
    gc.freeze()  # setup objects (and imports) are not traversed by timed collections
    times: dict[str, list[float]] = {name: [] for name in runners}
    phase_times: dict[str, dict[str, list[float]]] = {name: {p: [] for p in w.phases} for name in runners}
    for i in range(warmup + repeat):
        for name, fn in runners.items():
            gc.collect()  # garbage of the previous run is not charged to this one
            t0 = time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t0
            if i >= warmup:
                times[name].append(dt)
                for p, s in split_result(out)[1].items():
                    phase_times[name][p].append(s)
            del out
    gc.unfreeze()
    medians = {n: (statistics.median(times[n]) if n in times else None) for n in LIBS}
    phase_medians = {
        p: {n: (statistics.median(phase_times[n][p]) if n in times else None) for n in LIBS} for p in w.phases
    }
    return {
        "key": w.key,
        "workload": w.name,
        "size": w.size,
        "repeat": repeat,
        "warmup": warmup,
        "median_s": medians,
        "status": status,
        "ratios": ratios(medians),
        "phase_median_s": phase_medians,
        "phase_ratios": {p: ratios(m) for p, m in phase_medians.items()},
    }


def ratios(m: dict[str, float | None]) -> dict[str, float | None]:
    def r(a: str, b: str) -> float | None:
        return m.get(a) / m[b] if m.get(a) is not None and m.get(b) else None

    return {pair_name(a, b): r(a, b) for a, b in RATIO_PAIRS}


# ---- formatting --------------------------------------------------------------------------


def fmt_ms(s: float | None) -> str:
    if s is None:
        return "n/a"
    ms = s * 1e3
    digits = 2 - math.floor(math.log10(ms)) if ms > 0 else 2
    return f"{round(ms, digits):.{max(digits, 0)}f}"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return "n/a"
    return f"{r:.3f}" if r < 0.1 else f"{r:.2f}" if r < 100 else f"{r:.0f}"


def fmt_us(s: float | None) -> str:
    return "n/a" if s is None else f"{s * 1e6:.3g}"


def cell(res: dict, name: str, value: float | None) -> str:
    st = res["status"].get(name, "n/a")
    if st.startswith("error"):
        return "error"
    return fmt_ms(value)


def print_table(header: list[str], rows: list[list[str]], right_from: int = 1) -> None:
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" if i < right_from else "---:" for i in range(len(header))) + " |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


def machine_info(mods: dict[str, Any]) -> dict[str, Any]:
    def version(name: str) -> str:
        mod = mods.get(name)
        if mod is None:
            return "n/a"
        stand_in = name == "npgrad" and mod.__name__ != "npgrad"
        if stand_in:
            return f"(= {mod.__name__})"
        if name == "autograd":
            from importlib.metadata import version as dist_version

            return dist_version("autograd")
        return getattr(mod, "__version__", "?")

    cpu = platform.processor() or platform.machine()
    try:  # Linux: the model name says more than "x86_64"
        with open("/proc/cpuinfo") as f:
            cpu = next(ln for ln in f if ln.startswith("model name")).split(":")[1]
    except (OSError, StopIteration):
        pass
    return {
        "processor": cpu.strip(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        **{name: version(name) for name in LIBS if name != FLOOR},
    }


# ---- (e) scaling, (i) memory, targets ----------------------------------------------------


def scaling_table(e_results: list[dict]) -> dict:
    """Time per node of (e) at each size; linearity = us/node at max / at min."""
    per_node = {
        r["size"]: {n: (r["median_s"][n] / r["size"] if r["median_s"][n] else None) for n in LIBS} for r in e_results
    }
    per_node_phase = {
        r["size"]: {
            p: {n: (v / r["size"] if v else None) for n, v in r["phase_median_s"][p].items()}
            for p in r["phase_median_s"]
        }
        for r in e_results
    }
    sizes = sorted(per_node)
    growth = {}
    for n in LIBS:
        lo, hi = per_node[sizes[0]][n], per_node[sizes[-1]][n]
        growth[n] = hi / lo if lo and hi else None
    return {
        "sizes": sizes,
        "per_node_s": per_node,
        "per_node_phase_s": per_node_phase,
        "per_node_growth": growth,
    }


MEM_LIBS = ("npgrad", "torch", "numpy")


def bench_memory_all(mods: dict[str, Any], why: dict[str, str], level: str) -> dict:
    """Workload (i): one child process per (library, variant)."""
    layers, width, batch = bench_memory.MEM_SIZES[level]
    ws, x = bench_memory.model_data(layers, width, batch)
    ref = bench_memory.forward_backward_numpy(ws, x)
    del ws, x
    out: dict[str, Any] = {
        "layers": layers,
        "width": width,
        "batch": batch,
        "growth_bytes": {},
        "peak_bytes": {},
        "vm_hwm_bytes": {},
        "seconds": {},
        "status": {},
    }
    with tempfile.TemporaryDirectory(prefix="bench-mem-") as d:
        for variant in bench_memory.VARIANTS:
            for name in MEM_LIBS:
                key = f"{name}/{variant}"
                if mods[name] is None:
                    out["status"][key] = "n/a: " + why.get(name, "not loaded")
                    continue
                if name == FLOOR and variant != "baseline":
                    out["status"][key] = "n/a: the floor has no hooks"
                    continue
                try:
                    m = bench_memory.measure(name, variant, level, d)
                except Exception as exc:  # noqa: BLE001 (reported as "error")
                    print(f"WARNING: (i) {key} failed: {exc}")
                    out["status"][key] = f"error: {exc!r}"[:300]
                    continue
                ok, err = grads_agree(m["grads"], ref)
                if not ok:
                    print(f"WARNING: (i) {key}: gradients differ from the floor (max rel err {err:.2e})")
                out["status"][key] = "ok" if ok else f"MISMATCH ({err:.2e})"
                out["growth_bytes"][key] = m["growth"]
                out["peak_bytes"][key] = m["rss_peak"]
                out["vm_hwm_bytes"][key] = m["vm_hwm"]
                out["seconds"][key] = m["seconds"]
    return out


def evaluate_targets(by_key: dict[str, dict], scaling: dict | None, memory: dict | None) -> list[dict]:
    """The issue's targets, each with the measured value and met / not met."""
    targets: list[dict] = []

    def add(label: str, value: float | None, op: str, limit: float) -> None:
        met = None if value is None else (value <= limit if op == "<=" else value >= limit)
        targets.append({"target": label, "measured": value, "op": op, "limit": limit, "met": met})

    def ratio(key: str, pair: str) -> float | None:
        return by_key[key]["ratios"][pair] if key in by_key else None

    if "a" in by_key:
        add("(a) npgrad/torch", ratio("a", "npgrad/torch"), "<=", 0.4)
        add("(a) npgrad/floor", ratio("a", "npgrad/floor"), "<=", 1.5)
        add(
            "(a) mygrad/npgrad (pure-Python peer)",
            ratio("a", "mygrad/npgrad"),
            ">=",
            10,
        )
        add(
            "(a) autograd/npgrad (pure-Python peer)",
            ratio("a", "autograd/npgrad"),
            ">=",
            10,
        )
    if "b" in by_key:
        add("(b) npgrad/floor", ratio("b", "npgrad/floor"), "<=", 1.05)
        add("(b) npgrad/torch", ratio("b", "npgrad/torch"), "<=", 1.0)
    if "c" in by_key:
        add("(c) npgrad/torch", ratio("c", "npgrad/torch"), "<=", 1.1)
    if "d" in by_key:
        add("(d) npgrad/torch", ratio("d", "npgrad/torch"), "<=", 0.5)
    if scaling is not None:
        big = by_key[f"e{scaling['sizes'][-1]}"]
        add(
            f"(e) npgrad/torch at {scaling['sizes'][-1]:,} nodes (total)",
            big["ratios"]["npgrad/torch"],
            "<=",
            0.5,
        )
        add(
            f"(e) linear: npgrad us/node at {scaling['sizes'][-1]:,} / at {scaling['sizes'][0]:,}",
            scaling["per_node_growth"]["npgrad"],
            "<=",
            1.25,
        )
    for k in "fgh":
        if k in by_key:
            add(f"({k}) npgrad/torch", ratio(k, "npgrad/torch"), "<=", 0.5)
    if memory is not None:
        g = memory["growth_bytes"]

        def div(a: str, b: str) -> float | None:
            return g[a] / g[b] if a in g and g.get(b) else None

        add(
            "(i) npgrad/torch peak memory",
            div("npgrad/baseline", "torch/baseline"),
            "<=",
            1.0,
        )
        add(
            "(i) npgrad offload / npgrad baseline peak memory",
            div("npgrad/offload", "npgrad/baseline"),
            "<=",
            0.5,
        )
    return targets


# ---- the overhead-vs-size sweep (--plot) -------------------------------------------------

SWEEP_LIBS = ("npgrad", "torch", "numpy")
SWEEP_OPS = 50


def keep_freed_memory() -> bool:
    """glibc only: serve every block from the heap and keep freed memory.

    By default glibc mmap()s each block above 32 MiB (a 10^7-element float32 array
    is 40 MB) and munmap()s it on free, so every such array is faulted in page by
    page again: at 10^7 elements that costs more than the math and depends on the
    order of the runs (measured: npgrad 22-25, torch 90-94, floor 79-88 ms/op by
    default; 12.7, 15.0, 12.8 with this setting). Returns False where unavailable.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 2**30) and libc.mallopt(m_trim_threshold, 2**31))
    except (OSError, AttributeError):
        return False


def sweep(mods: dict[str, Any], why: dict[str, str], quick: bool, repeat: int) -> dict:
    """A 50-op chain fwd+bwd at 16 .. 10^7 elements: time per op. Runs last: it
    switches glibc to keeping freed memory (keep_freed_memory) for the process."""
    kept = keep_freed_memory()
    if not kept:
        print("  note: could not set glibc's mmap threshold; the largest sizes then also time page faults")
    sizes = [16, 1_000, 100_000] if quick else [16, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
    rows = []
    for n in sizes:
        w = chain_workload(SWEEP_OPS, n, "sweep")
        rep = repeat if n <= 100_000 else max(1, min(repeat, 7 if n <= 1_000_000 else 3))
        res = bench(w, mods, why, 1 if n > 100_000 else 2, rep, SWEEP_LIBS)
        per_op = {name: (s / SWEEP_OPS if s else None) for name, s in res["median_s"].items() if name in SWEEP_LIBS}
        rows.append({"numel": n, "per_op_s": per_op, "status": res["status"], "repeat": rep})
        print(
            f"  sweep {n:>10,} elements: " + ", ".join(f"{name} {fmt_us(v)} us/op" for name, v in per_op.items()),
            flush=True,
        )
    return {"ops": SWEEP_OPS, "rows": rows, "glibc_keeps_freed_memory": kept}


def draw_plot(data: dict, path: str, info: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.5, 8.0), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    style = {"npgrad": ("C0", "o"), "torch": ("C3", "s"), "numpy": ("C2", "^")}
    xs = [r["numel"] for r in data["rows"]]
    for name in SWEEP_LIBS:
        ys = [r["per_op_s"].get(name) for r in data["rows"]]
        pts = [(x, y * 1e6) for x, y in zip(xs, ys) if y]
        if pts:
            color, marker = style[name]
            ax.plot(*zip(*pts), marker=marker, color=color, label=TITLES[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("time per op, fwd + bwd (µs)")
    ax.set_title(
        f"{data['ops']}-op pointwise chain, float32, 1 thread\n"
        f"{info['processor']}; npgrad {info['npgrad']}, torch {info['torch']}, "
        f"numpy {info['numpy']}",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    for (a, b), color in ((("npgrad", "torch"), "C3"), (("npgrad", "numpy"), "C2")):
        pts = [
            (r["numel"], r["per_op_s"][a] / r["per_op_s"][b])
            for r in data["rows"]
            if r["per_op_s"].get(a) and r["per_op_s"].get(b)
        ]
        if pts:
            ax2.plot(*zip(*pts), marker="o", color=color, label=f"npgrad / {TITLES[b]}")
    ax2.axhline(1.0, color="grey", lw=0.8)
    ax2.set_yscale("log")
    ax2.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax2.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax2.set_xlabel("elements per tensor")
    ax2.set_ylabel("ratio of times (< 1: npgrad faster)")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend()
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---- callgrind: one workload, one library, nothing else --------------------------------


def callgrind_run(key: str, lib_name: str, repeat: int, quick: bool) -> int:
    """Run workload KEY on one library `repeat` times: no other import, no warm-up,
    no check, no output beyond one line. Under valgrind the instruction count is
    repeatable (set PYTHONHASHSEED=0)."""
    mods, why, _ = load_libs([lib_name])
    if mods[lib_name] is None:
        print(f"{lib_name}: {why[lib_name]}", file=sys.stderr)
        return 2
    ws = [
        w for w in make_workloads("quick" if quick else "full", key[:1]) if w.key == key or key == "e"
    ]  # "e": its largest size, last in the list
    ws = ws[-1:]
    if not ws:
        print(f"unknown workload {key!r} for --callgrind-target", file=sys.stderr)
        return 2
    impl = ws[0].impls[FAMILY[lib_name]]
    st = impl.setup(mods[lib_name])
    for _ in range(repeat):
        impl.run(st)
    print(f"callgrind target: {ws[0].name} on {lib_name}, {repeat} run(s)")
    return 0


# ---- main ----------------------------------------------------------------------------------


def parse_keys(spec: str | None) -> list[str]:
    if spec is None:
        return list(WORKLOAD_KEYS)
    if spec.strip() == "none":
        return []
    keys = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [k for k in keys if k not in WORKLOAD_KEYS]
    if bad:
        raise SystemExit(f"--only: unknown workloads {bad}; choose from {','.join(WORKLOAD_KEYS)} or 'none'")
    return keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes, 1 warm-up + 2 runs: a smoke test",
    )
    ap.add_argument("--repeat", type=int, help="timed runs per library (default 15)")
    ap.add_argument("--warmup", type=int, help="warm-up runs (default 3, quick 1)")
    ap.add_argument("--json", metavar="PATH", help="write raw medians and ratios")
    ap.add_argument(
        "--libs",
        "--lib",
        default=",".join(LIBS),
        help="comma-separated subset of " + ",".join(LIBS),
    )
    ap.add_argument("--only", metavar="KEYS", help="comma-separated workloads among a..i, or 'none'")
    ap.add_argument(
        "--plot",
        metavar="PATH.png",
        help="also sweep 16..1e7 elements and plot time per op",
    )
    ap.add_argument(
        "--callgrind-target",
        metavar="KEY",
        help="run only workload KEY on the first --libs library, "
        "--repeat times (default 1), for valgrind --tool=callgrind",
    )
    args = ap.parse_args()
    wanted = [s.strip() for s in args.libs.split(",") if s.strip()]
    unknown = set(wanted) - set(LIBS)
    if unknown:
        ap.error(f"unknown libs {sorted(unknown)}; choose from {','.join(LIBS)}")
    if args.callgrind_target:
        lib = wanted[0] if args.libs != ",".join(LIBS) else "npgrad"
        return callgrind_run(args.callgrind_target, lib, args.repeat or 1, args.quick)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(
                "--plot needs matplotlib, which is not installed: pip install matplotlib (or drop --plot)",
                file=sys.stderr,
            )
            return 2
    keys = parse_keys(args.only)

    mods, why, notes = load_libs(wanted)
    level = "quick" if args.quick else "full"
    repeat = args.repeat or (2 if args.quick else 15)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    info = machine_info(mods)
    print(
        f"machine: {info['processor']}, {info['cpu_count']} CPUs, "
        f"Python {info['python']}, numpy {info['numpy']}, "
        + ", ".join(f"{n} {info[n]}" for n in LIBS if n != FLOOR)
        + "; 1 thread",
        flush=True,
    )
    for note in notes:
        print(note)

    t_start = time.perf_counter()
    results = []
    for w in make_workloads(level, "".join(keys)):
        print(f"running {w.name} ...", flush=True)
        results.append(bench(w, mods, why, warmup, repeat))
    by_key = {r["key"]: r for r in results}
    e_results = [r for r in results if r["key"].startswith("e")]
    scaling = scaling_table(e_results) if e_results else None
    if scaling:
        by_key["e"] = by_key[f"e{scaling['sizes'][-1]}"]
    memory = None
    if "i" in keys:
        print("running (i) peak memory, one child process per measurement ...", flush=True)
        memory = bench_memory_all(mods, why, level)
    sweep_data = None
    if args.plot:
        print("running the overhead-vs-size sweep ...", flush=True)
        sweep_data = sweep(mods, why, args.quick, repeat)
        draw_plot(sweep_data, args.plot, info)
    targets = evaluate_targets(by_key, scaling, memory)
    elapsed = time.perf_counter() - t_start

    if results:
        print_time_tables(results, by_key, e_results, repeat, warmup)
    if scaling:
        print_scaling_tables(scaling)
    if memory:
        print_memory_table(memory)

    unavailable = []
    for res in results:
        for n, st in res["status"].items():
            if st.startswith("n/a") and not st.startswith("n/a: not selected"):
                unavailable.append(f"({res['key'][0]}) {n}: {st[5:]}")
    if unavailable:
        print("\nn/a: " + "; ".join(dict.fromkeys(unavailable)))
    bad = [
        f"{res['workload']}: {n}: {st}"
        for res in results
        for n, st in res["status"].items()
        if not (st == "ok" or st.startswith("n/a"))
    ]
    if memory:
        bad += [f"(i) {k}: {st}" for k, st in memory["status"].items() if not (st == "ok" or st.startswith("n/a"))]
    print("\ngradient checks vs the NumPy floor: " + ("all ok" if not bad else "PROBLEMS: " + "; ".join(bad)))

    if targets:
        print("\ntargets (issue 6)\n")
        print_table(
            ["target", "measured", "goal", "met"],
            [
                [
                    t["target"],
                    fmt_ratio(t["measured"]),
                    f"{t['op']} {t['limit']}",
                    "n/a" if t["met"] is None else ("met" if t["met"] else "NOT met"),
                ]
                for t in targets
            ],
        )
    if sweep_data:
        print(f"\n{SWEEP_OPS}-op chain fwd+bwd, µs per op, by elements per tensor (plot: {args.plot})\n")
        print_table(
            ["elements"] + [TITLES[n] for n in SWEEP_LIBS] + ["npgrad/torch", "npgrad/floor"],
            [
                [f"{r['numel']:,}"]
                + [fmt_us(r["per_op_s"][n]) for n in SWEEP_LIBS]
                + [
                    fmt_ratio(
                        r["per_op_s"]["npgrad"] / r["per_op_s"][b]
                        if r["per_op_s"]["npgrad"] and r["per_op_s"][b]
                        else None
                    )
                    for b in ("torch", "numpy")
                ]
                for r in sweep_data["rows"]
            ],
        )
    print(f"\n(total wall time {elapsed:.0f} s)")

    if args.json:
        payload = {
            "machine": info,
            "notes": notes,
            "repeat": repeat,
            "warmup": warmup,
            "quick": args.quick,
            "results": results,
            "e_scaling": scaling,
            "memory": memory,
            "targets": targets,
            "overhead_vs_size": sweep_data,
        }
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2, default=str)
    return 0


def print_time_tables(results: list[dict], by_key: dict, e_results: list[dict], repeat: int, warmup: int) -> None:
    e_note = f"; (e): {e_results[0]['repeat']} runs, {e_results[0]['warmup']} warm-up" if e_results else ""
    print(
        f"\nmedian ms per run over {repeat} runs ({warmup} warm-up{e_note}), "
        "libraries alternated run by run; a/b > 1 means a is slower\n"
    )
    rows = []
    for res in results:
        if res["key"].startswith("e") and res is not by_key.get("e"):
            continue
        label = res["workload"] + (": total" if res["phase_median_s"] else "")
        rows.append([label] + [cell(res, n, res["median_s"][n]) for n in LIBS])
        for p, m in res["phase_median_s"].items():
            rows.append([f"(e) {res['size']:,} nodes: {p}"] + [cell(res, n, m[n]) for n in LIBS])
    print_table(["workload"] + [TITLES[n] for n in LIBS], rows)

    print("\nratios of the medians\n")
    rows = []
    for res in results:
        if res["key"].startswith("e") and res is not by_key.get("e"):
            continue
        label = res["workload"] + (": total" if res["phase_ratios"] else "")
        rows.append([label] + [fmt_ratio(v) for v in res["ratios"].values()])
        for p, r in res["phase_ratios"].items():
            rows.append([f"(e) {res['size']:,} nodes: {p}"] + [fmt_ratio(v) for v in r.values()])
    print_table(["workload"] + [pair_name(a, b) for a, b in RATIO_PAIRS], rows)


def print_scaling_tables(scaling: dict) -> None:
    if scaling:
        print("\n(e) time per node (µs, build + backward + teardown) by chain length\n")
        rows = [[f"{n:,}"] + [fmt_us(scaling["per_node_s"][n][lib]) for lib in LIBS] for n in scaling["sizes"]]
        rows.append(
            [f"growth {scaling['sizes'][-1]:,} / {scaling['sizes'][0]:,}"]
            + [fmt_ratio(scaling["per_node_growth"][lib]) for lib in LIBS]
        )
        print_table(["nodes"] + [TITLES[n] for n in LIBS], rows)
        print("\n(e) time per node by phase (µs): build / backward / teardown\n")
        rows = [
            [f"{n:,}"]
            + [
                " / ".join(fmt_us(scaling["per_node_phase_s"][n][p][lib]) for p in scaling["per_node_phase_s"][n])
                for lib in LIBS
            ]
            for n in scaling["sizes"]
        ]
        print_table(["nodes"] + [TITLES[n] for n in LIBS], rows)


def print_memory_table(memory: dict) -> None:
    if memory:
        print(
            f"\n(i) peak RSS growth (MiB) over the post-import baseline, "
            f"{memory['layers']} layers of tanh(h @ w), width {memory['width']}, "
            f"batch {memory['batch']}; one process each\n"
        )
        g = memory["growth_bytes"]

        def div(a: str, b: str) -> str:
            return fmt_ratio(g[a] / g[b] if a in g and g.get(b) else None)

        rows = []
        for variant in bench_memory.VARIANTS:
            row = [variant]
            for name in MEM_LIBS:
                k = f"{name}/{variant}"
                v = g.get(k)
                st = memory["status"].get(k, "n/a")
                row.append(f"{v / 2**20:.1f}" if v is not None else ("error" if st.startswith("error") else "n/a"))
            row.append(div(f"npgrad/{variant}", f"torch/{variant}"))
            row += [div(f"{n}/{variant}", f"{n}/baseline") for n in ("npgrad", "torch")]
            row.append(
                ", ".join(
                    f"{n} {memory['status'].get(f'{n}/{variant}', 'n/a')[:40]}"
                    for n in MEM_LIBS
                    if f"{n}/{variant}" in g or n != FLOOR
                )
            )
            rows.append(row)
        print_table(
            ["variant"]
            + [TITLES[n] for n in MEM_LIBS]
            + [
                "npgrad/torch",
                "npgrad: /baseline",
                "torch: /baseline",
                "gradients vs floor",
            ],
            rows,
        )


if __name__ == "__main__":
    sys.exit(main())
