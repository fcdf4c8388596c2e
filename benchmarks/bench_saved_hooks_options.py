"""The cost of npgrad's own ``saved_tensors_hooks`` options on workload (f).

    python benchmarks/bench_saved_hooks_options.py [--ops 2000] [--repeat 30]

Workload (f) of bench_vs_torch.py: a chain of 2,000 pointwise ops on 16 float32
elements, forward and backward, under identity ``saved_tensors_hooks``. Timed here
with a plain pair, with ``compose=True`` (nothing encloses it, so only the pack
result's type check is added) and with ``prefetch=`` a function that does nothing (so
the engine's lookahead and one Python call per saved tensor are added), and with
``dedup=True`` (each saved tensor's buffer is looked up, and each result of the chain
is a buffer of its own, so this is dedup's cost where it saves nothing). Runs of the
variants alternate; the medians and minima, and their ratios to the plain pair,
are printed. The time is this process's CPU time, so that other processes sharing the
cores do not count (on a busy machine the minima are the steadier figure).
npgrad only: torch has none of these options.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_workloads import SMALL_NUMEL, chain_data, chain_forward  # noqa: E402

import npgrad as torch  # noqa: E402


def _identity(t: Any) -> Any:
    return t


def _nothing(payload: Any) -> None:
    return None


VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "compose": {"compose": True},
    "prefetch": {"prefetch": _nothing},
    "dedup": {"dedup": True},
}


def run(x: Any, n_ops: int, options: dict[str, Any]) -> float:
    x.grad = None
    start = time.process_time()
    with torch.autograd.graph.saved_tensors_hooks(_identity, _identity, **options):
        chain_forward(x, n_ops).sum().backward()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> dict[str, list[float]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args(argv)
    x = torch.from_numpy(chain_data(SMALL_NUMEL)).requires_grad_()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(3):  # warm-up
        for options in VARIANTS.values():
            run(x, args.ops, options)
    for _ in range(args.repeat):
        for name, options in VARIANTS.items():
            times[name].append(run(x, args.ops, options))
    med = {name: statistics.median(t) for name, t in times.items()}
    low = {name: min(t) for name, t in times.items()}
    print(f"(f): {args.ops:,} ops x {SMALL_NUMEL} f32 under identity saved_tensors_hooks, fwd+bwd, {args.repeat} runs")
    for name in VARIANTS:
        print(
            f"{name:>9}: median {med[name] * 1e3:7.2f} ms x{med[name] / med['plain']:.3f}"
            f" | min {low[name] * 1e3:7.2f} ms x{low[name] / low['plain']:.3f}"
        )
    return times


if __name__ == "__main__":
    main()
