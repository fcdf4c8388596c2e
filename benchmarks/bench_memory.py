"""Workload (i): peak memory of a deep forward + backward, one process per measurement.

The model: ``layers`` x (``h = tanh(h @ w)``) on a ``batch x width`` float32 input,
loss ``h.sum()``, weights ``width x width`` (seeded NumPy, the same for everyone).
Each measurement runs in a fresh child process (``python bench_memory.py --worker
LIB --variant V``), which

1. imports NumPy and the library and runs the same code once on a tiny model
   (lazy imports, kernel registration, allocator pools are then in the baseline);
2. reads the baseline ``resource.getrusage(RUSAGE_SELF).ru_maxrss``;
3. builds the model, runs forward + backward, reads ``ru_maxrss`` again;
4. writes the two readings and the weight gradients to an ``.npz``.

The parent reports ``peak - baseline`` (what the workload added) and checks the
gradients against the NumPy floor's.

Variants: ``baseline`` (autograd keeps the saved tensors in memory) and ``offload``
(npgrad and torch only): under ``saved_tensors_hooks(pack, unpack)``, ``pack``
writes every saved tensor to a temporary ``.npy`` file with ``np.save`` and returns
its path; ``unpack`` loads it with ``np.load``.

The child is started through a small launcher process (``python -c ...``) that
starts it in turn. On Linux a process inherits its parent's peak RSS across
``fork`` + ``exec`` (``ru_maxrss`` then starts at the parent's peak, and the
benchmark parent, with torch imported and the timed workloads run, is larger than
the whole measurement); the grandchild of a small launcher inherits only the
launcher's ~15 MB, below any baseline. The child also records ``VmHWM`` from
``/proc/self/status`` (the same peak, not inherited) as a cross-check.

Children run with ``MALLOC_MMAP_THRESHOLD_=131072`` (unless set): glibc then
``mmap``s every large block and returns it to the OS on free, so the peak RSS
follows the memory in use instead of what malloc kept cached.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

MiB = 1024 * 1024
VARIANTS = ("baseline", "offload")
MEM_SIZES = {  # layers, width, batch
    "full": (20, 512, 4096),  # activations 8 MiB/layer: ~200 MiB in flight
    "quick": (4, 256, 2048),  # ~2 MiB per activation
    "tiny": (2, 16, 32),
}


def model_data(layers: int, width: int, batch: int) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    scale = np.float32(1.0 / width**0.5)
    ws = [rng.standard_normal((width, width), dtype=np.float32) * scale for _ in range(layers)]
    x = rng.standard_normal((batch, width), dtype=np.float32)
    return ws, x


def forward_backward_lib(
    lib: Any, ws: list[np.ndarray], x: np.ndarray, offload_dir: str | None = None
) -> list[np.ndarray]:
    """npgrad / torch: forward + backward; returns the weight gradients (arrays)."""
    weights = [lib.from_numpy(w).requires_grad_() for w in ws]
    h = lib.from_numpy(x)
    if offload_dir is None:
        for w in weights:
            h = (h @ w).tanh()
        loss = h.sum()
    else:
        counter = [0]

        def pack(t: Any) -> str:
            path = os.path.join(offload_dir, f"{counter[0]}.npy")
            counter[0] += 1
            np.save(path, t.detach().numpy())
            return path

        def unpack(path: str) -> Any:
            return lib.from_numpy(np.load(path))

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            for w in weights:
                h = (h @ w).tanh()
            loss = h.sum()
    del h
    loss.backward()
    del loss
    return [w.grad.numpy() for w in weights]


def forward_backward_numpy(ws: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """The floor: the same math by hand, keeping each layer's input and output."""
    inputs, outputs = [], []
    h = x
    for w in ws:
        inputs.append(h)
        h = np.tanh(h @ w)
        outputs.append(h)
    del h
    g = np.ones_like(outputs[-1])
    grads: list[np.ndarray] = []
    for w in reversed(ws):
        t = outputs.pop()
        g = g * (1 - t * t)
        del t
        a = inputs.pop()
        grads.append(a.T @ g)
        del a
        g = g @ w.T
    return grads[::-1]


def run_one(lib_name: str, variant: str, ws: list[np.ndarray], x: np.ndarray, lib: Any = None) -> list[np.ndarray]:
    if lib_name == "numpy":
        if variant != "baseline":
            raise ValueError("the floor has no offload variant")
        return forward_backward_numpy(ws, x)
    if variant == "baseline":
        return forward_backward_lib(lib, ws, x)
    with tempfile.TemporaryDirectory(prefix="bench-offload-") as d:
        return forward_backward_lib(lib, ws, x, offload_dir=d)


def peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux: KiB


def vm_hwm_bytes() -> int:
    """Linux only: this program image's peak RSS (VmHWM); -1 elsewhere."""
    try:
        with open("/proc/self/status") as f:
            line = next(ln for ln in f if ln.startswith("VmHWM:"))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError):
        return -1


# Runs argv[1:] as a child and exits with its status: the measured process is then
# a grandchild of the (large) benchmark process and does not inherit its peak RSS.
LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def worker(lib_name: str, variant: str, layers: int, width: int, batch: int, out: str) -> None:
    lib = None
    if lib_name != "numpy":
        target = lib_name
        if lib_name == "npgrad" and os.environ.get("BENCH_NPGRAD_IS_TORCH"):
            target = "torch"
        lib = __import__(target)
        if hasattr(lib, "set_num_threads"):
            lib.set_num_threads(1)
    run_one(lib_name, variant, *model_data(2, 8, 8), lib=lib)  # warm-up
    before = peak_rss_bytes()
    t0 = time.perf_counter()
    ws, x = model_data(layers, width, batch)
    grads = run_one(lib_name, variant, ws, x, lib=lib)
    seconds = time.perf_counter() - t0
    peak = peak_rss_bytes()
    np.savez(
        out,
        rss_before=before,
        rss_peak=peak,
        seconds=seconds,
        vm_hwm=vm_hwm_bytes(),
        **{f"grad_{i}": g for i, g in enumerate(grads)},
    )


def measure(lib_name: str, variant: str, level: str, directory: str) -> dict:
    """Run one measurement in a child process; returns its readings and gradients."""
    layers, width, batch = MEM_SIZES[level]
    out = os.path.join(directory, f"{lib_name}-{variant}.npz")
    cmd = [
        sys.executable,
        "-c",
        LAUNCHER,
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        lib_name,
        "--variant",
        variant,
        "--layers",
        str(layers),
        "--width",
        str(width),
        "--batch",
        str(batch),
        "--out",
        out,
    ]
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with np.load(out) as saved:
        grads = [saved[f"grad_{i}"] for i in range(layers)]
        return {
            "rss_before": int(saved["rss_before"]),
            "rss_peak": int(saved["rss_peak"]),
            "growth": int(saved["rss_peak"]) - int(saved["rss_before"]),
            "vm_hwm": int(saved["vm_hwm"]),
            "seconds": float(saved["seconds"]),
            "grads": grads,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description="child process of workload (i)")
    ap.add_argument("--worker", required=True)
    ap.add_argument("--variant", choices=VARIANTS, required=True)
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--width", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    worker(a.worker, a.variant, a.layers, a.width, a.batch, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
