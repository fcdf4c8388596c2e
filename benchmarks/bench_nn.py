"""Model-sized layers, forward + backward: npgrad vs torch vs a hand-written NumPy floor.

    python benchmarks/bench_nn.py [--quick] [--only conv2d,layer_norm,...] [--repeat N] [--cpu-time]

Each workload is one layer of a CNN or a transformer at a size real models use
(``--quick``: a small size, a smoke run): ``lib.nn.functional.<op>(...)`` then
``backward`` of a fixed random output gradient. npgrad and torch run literally the
same code; the floor does the same forward and backward math by hand in NumPy (no
graph). Before timing, every library's gradients are checked against the floor's.
Runs alternate between the libraries and the table reports medians and the ratios
npgrad / torch and npgrad / floor. One thread each, set before the imports.
``--cpu-time`` times the CPU time of the calling thread instead of wall-clock time:
every library computes on that thread, and on a loaded shared machine it varies less.
Benchmarks are not tests: nothing here asserts on time.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

import npgrad  # noqa: E402

torch.set_num_threads(1)
F32 = np.float32


@dataclass(frozen=True)
class Layer:
    name: str
    shape: str  # the sizes, as printed
    data: Callable[[np.random.Generator], dict[str, np.ndarray]]  # inputs and the output gradient
    differentiable: tuple[str, ...]  # the inputs whose gradients are compared
    lib: Callable[[Any, dict[str, Any]], Any]  # lib, tensors -> output
    floor: Callable[[dict[str, np.ndarray]], list[np.ndarray]]  # arrays -> gradients (same order)


# ---------------------------------------------------------------- conv2d


def conv2d_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    """3x3 convolution, stride 1, padding 1: im2col windows and one matmul each way."""
    x, w, g = d["x"], d["weight"], d["grad"]
    n, c, h, wd = x.shape
    k = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # n c h w 3 3
    cols = cols.transpose(0, 2, 3, 1, 4, 5).reshape(n * h * wd, c * 9)
    wm = w.reshape(k, c * 9)
    out = (cols @ wm.T).reshape(n, h, wd, k).transpose(0, 3, 1, 2)  # noqa: F841 - the forward
    gm = g.transpose(0, 2, 3, 1).reshape(n * h * wd, k)
    grad_w = (gm.T @ cols).reshape(w.shape)
    grad_cols = (gm @ wm).reshape(n, h, wd, c, 3, 3)
    grad_xp = np.zeros_like(xp)
    for i in range(3):
        for j in range(3):
            grad_xp[:, :, i : i + h, j : j + wd] += grad_cols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return [grad_xp[:, :, 1:-1, 1:-1], grad_w]


def conv2d_layer(n: int, c: int, hw: int, k: int) -> Layer:
    return Layer(
        "conv2d",
        f"{n}x{c}x{hw}x{hw}, {k} filters 3x3, padding 1",
        lambda rng: {
            "x": rng.standard_normal((n, c, hw, hw), F32),
            "weight": rng.standard_normal((k, c, 3, 3), F32) * F32(0.1),
            "grad": rng.standard_normal((n, k, hw, hw), F32),
        },
        ("x", "weight"),
        lambda lib, t: lib.nn.functional.conv2d(t["x"], t["weight"], padding=1),
        conv2d_floor,
    )


# ---------------------------------------------------------------- layer_norm


def layer_norm_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    x, w, g = d["x"], d["weight"], d["grad"]
    mean = x.mean(-1, keepdims=True)
    xc = x - mean
    rstd = 1 / np.sqrt((xc * xc).mean(-1, keepdims=True) + F32(1e-5))
    xhat = xc * rstd
    out = xhat * w + d["bias"]  # noqa: F841 - the forward
    axes = tuple(range(x.ndim - 1))
    grad_w = (g * xhat).sum(axes)
    grad_b = g.sum(axes)
    gx = g * w
    grad_x = rstd * (gx - gx.mean(-1, keepdims=True) - xhat * (gx * xhat).mean(-1, keepdims=True))
    return [grad_x, grad_w, grad_b]


def layer_norm_layer(b: int, t: int, d: int) -> Layer:
    return Layer(
        "layer_norm",
        f"{b}x{t}x{d}",
        lambda rng: {
            "x": rng.standard_normal((b, t, d), F32),
            "weight": rng.standard_normal(d, F32),
            "bias": rng.standard_normal(d, F32),
            "grad": rng.standard_normal((b, t, d), F32),
        },
        ("x", "weight", "bias"),
        lambda lib, t_: lib.nn.functional.layer_norm(t_["x"], (d,), t_["weight"], t_["bias"]),
        layer_norm_floor,
    )


# ---------------------------------------------------------------- attention


def sdpa_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    q, k, v, g = d["q"], d["k"], d["v"], d["grad"]
    scale = F32(1 / np.sqrt(q.shape[-1]))
    s = (q @ k.swapaxes(-1, -2)) * scale
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(-1, keepdims=True)
    out = p @ v  # noqa: F841 - the forward
    grad_v = p.swapaxes(-1, -2) @ g
    dp = g @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return [ds @ k, ds.swapaxes(-1, -2) @ q, grad_v]


def sdpa_layer(b: int, h: int, t: int, e: int) -> Layer:
    return Layer(
        "scaled_dot_product_attention",
        f"{b}x{h} heads x{t} tokens x{e}",
        lambda rng: {name: rng.standard_normal((b, h, t, e), F32) for name in ("q", "k", "v", "grad")},
        ("q", "k", "v"),
        lambda lib, t_: lib.nn.functional.scaled_dot_product_attention(t_["q"], t_["k"], t_["v"]),
        sdpa_floor,
    )


# ---------------------------------------------------------------- cross_entropy


def cross_entropy_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    x, target = d["logits"], d["target"]
    n = x.shape[0]
    z = x - x.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    loss = -logp[np.arange(n), target].mean()  # noqa: F841 - the forward
    grad = np.exp(logp)
    grad[np.arange(n), target] -= 1
    return [grad * (d["grad"] / n)]


def cross_entropy_layer(n: int, classes: int) -> Layer:
    return Layer(
        "cross_entropy",
        f"{n}x{classes} logits",
        lambda rng: {
            "logits": rng.standard_normal((n, classes), F32),
            "target": rng.integers(0, classes, n),
            "grad": np.array(1.5, F32),
        },
        ("logits",),
        lambda lib, t: lib.nn.functional.cross_entropy(t["logits"], t["target"]),
        cross_entropy_floor,
    )


# ---------------------------------------------------------------- embedding


def embedding_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    w, idx, g = d["weight"], d["indices"], d["grad"]
    out = w[idx]  # noqa: F841 - the forward
    grad_w = np.zeros_like(w)
    np.add.at(grad_w, idx.reshape(-1), g.reshape(-1, w.shape[1]))
    return [grad_w]


def embedding_layer(vocab: int, dim: int, b: int, t: int) -> Layer:
    return Layer(
        "embedding",
        f"vocab {vocab}x{dim}, {b}x{t} indices",
        lambda rng: {
            "weight": rng.standard_normal((vocab, dim), F32),
            "indices": rng.integers(0, vocab, (b, t)),
            "grad": rng.standard_normal((b, t, dim), F32),
        },
        ("weight",),
        lambda lib, t_: lib.nn.functional.embedding(t_["indices"], t_["weight"]),
        embedding_floor,
    )


# ---------------------------------------------------------------- max_pool2d


def max_pool2d_floor(d: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Kernel 2, stride 2: the windows are a reshape; the gradient goes to each window's first maximum."""
    x, g = d["x"], d["grad"]
    n, c, h, w = x.shape
    win = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    arg = win.argmax(-1)
    out = np.take_along_axis(win, arg[..., None], -1)  # noqa: F841 - the forward
    grad_win = np.zeros_like(win)
    np.put_along_axis(grad_win, arg[..., None], g[..., None], -1)
    grad = grad_win.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h, w)
    return [grad]


def max_pool2d_layer(n: int, c: int, hw: int) -> Layer:
    return Layer(
        "max_pool2d",
        f"{n}x{c}x{hw}x{hw}, kernel 2, stride 2",
        lambda rng: {
            "x": rng.standard_normal((n, c, hw, hw), F32),
            "grad": rng.standard_normal((n, c, hw // 2, hw // 2), F32),
        },
        ("x",),
        lambda lib, t: lib.nn.functional.max_pool2d(t["x"], 2),
        max_pool2d_floor,
    )


def layers(quick: bool) -> list[Layer]:
    if quick:
        return [
            conv2d_layer(2, 4, 8, 8),
            layer_norm_layer(2, 8, 32),
            sdpa_layer(1, 2, 16, 8),
            cross_entropy_layer(16, 10),
            embedding_layer(100, 16, 2, 8),
            max_pool2d_layer(2, 4, 8),
        ]
    return [
        conv2d_layer(64, 32, 32, 64),
        layer_norm_layer(64, 128, 512),
        sdpa_layer(4, 8, 128, 64),
        cross_entropy_layer(512, 1000),
        embedding_layer(32000, 512, 64, 128),
        max_pool2d_layer(64, 64, 32),
    ]


# ---------------------------------------------------------------- harness


def lib_run(lib: Any, layer: Layer, arrays: dict[str, np.ndarray]) -> Callable[[], list[Any]]:
    """One timed run of ``layer`` in ``lib``: forward, backward, the gradients."""
    tensors = {}
    for name, a in arrays.items():
        if name == "grad":
            continue
        t = lib.from_numpy(a.copy())
        if name in layer.differentiable:
            t.requires_grad_()
        tensors[name] = t
    grad = lib.from_numpy(arrays["grad"].copy())
    leaves = [tensors[name] for name in layer.differentiable]

    def run() -> list[Any]:
        for t in leaves:
            t.grad = None
        layer.lib(lib, tensors).backward(grad)
        return [t.grad for t in leaves]

    return run


def bench(layer: Layer, repeat: int, clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    arrays = layer.data(np.random.default_rng(0))
    floor_grads = layer.floor(arrays)
    runs: dict[str, Callable[[], Any]] = {"numpy": lambda: layer.floor(arrays)}
    for name, lib in (("npgrad", npgrad), ("torch", torch)):
        try:
            run = lib_run(lib, layer, arrays)
            got = run()
        except Exception as e:  # noqa: BLE001 - reported as n/a
            print(f"  {name}: n/a ({type(e).__name__}: {e})")
            continue
        for g, ref in zip(got, floor_grads):
            np.testing.assert_allclose(g.numpy(), ref, rtol=2e-3, atol=2e-3 * float(np.abs(ref).max()))
        runs[name] = run
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = clock()
            run()
            times[name].append(clock() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def _ms(m: dict[str, float], name: str) -> str:
    return f"{m[name] * 1e3:.2f}" if name in m else "n/a"


def _ratio(m: dict[str, float], a: str, b: str) -> str:
    return f"{m[a] / m[b]:.2f}" if a in m and b in m else "n/a"


def blas_note() -> str:
    """Which kernels NumPy's OpenBLAS runs: a dynamic-arch build detects the CPU at load
    time unless ``OPENBLAS_CORETYPE`` names a core (conv2d's GEMMs run about twice as
    fast with the AVX-512 ``SkylakeX`` kernels as with the AVX2 ``Haswell`` ones)."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        arch = "unknown (no threadpoolctl)"
    else:
        arch = next((i.get("architecture", "?") for i in threadpool_info() if i["internal_api"] == "openblas"), "none")
    return f"NumPy's OpenBLAS kernels: {arch}" + (f" (OPENBLAS_CORETYPE={forced} is set)" if forced else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 runs: a smoke run")
    parser.add_argument("--only", help="comma-separated layer names")
    parser.add_argument("--repeat", type=int, help="timed runs per library (default 7, quick 3)")
    parser.add_argument("--cpu-time", action="store_true", help="CPU time of this thread, not wall-clock time")
    args = parser.parse_args()
    repeat = args.repeat or (3 if args.quick else 7)
    wanted = set(args.only.split(",")) if args.only else None
    clock = time.thread_time if args.cpu_time else time.perf_counter
    kind = "thread CPU time" if args.cpu_time else "wall clock"
    print(f"median of {repeat} alternating runs ({kind}), forward + backward, float32, one thread")
    print(f"{blas_note()}\n")
    print("| layer | sizes | npgrad ms | torch ms | NumPy floor ms | npgrad/torch | npgrad/floor |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for layer in layers(args.quick):
        if wanted and layer.name not in wanted:
            continue
        m = bench(layer, repeat, clock)
        print(
            f"| {layer.name} | {layer.shape} | {_ms(m, 'npgrad')} | {_ms(m, 'torch')} | {_ms(m, 'numpy')} "
            f"| {_ratio(m, 'npgrad', 'torch')} | {_ratio(m, 'npgrad', 'numpy')} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
