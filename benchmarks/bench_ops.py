"""Per-op overhead: forward + backward of every differentiable op on tiny inputs, npgrad vs torch.

    python benchmarks/bench_ops.py [--quick] [--only SUBSTRING] [--json PATH] [--cpu-time]

The ops and their inputs are the rows of ``tests_py/op_specs.py`` (the specs the
tests check against torch): each row's call, on its own small float32 inputs
(2x3-sized: the cost measured is the framework's, not the math's), then
``backward()`` of the sum. npgrad and torch run the same code, alternating
rounds; each cell is the best round's time per call, and the table reports the
ratio npgrad / torch per op, with the median and the worst. One thread each
(set before the imports). ``--cpu-time`` times the CPU time of the calling thread
instead of wall-clock time: both libraries compute on that thread, and on a loaded
shared machine it varies less. Benchmarks are not tests: nothing here asserts on time.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests_py"))

import torch  # noqa: E402

import npgrad  # noqa: E402
from op_specs import ALL, Op  # noqa: E402

torch.set_num_threads(1)


def step(lib: Any, op: Op, inputs: list[Any]) -> Callable[[], None]:
    """One forward + backward of ``op`` (gradients reset so nothing accumulates)."""

    def run() -> None:
        for t in inputs:
            t.grad = None
        out = op.fn(lib, *inputs)
        if isinstance(out, (tuple, list)):
            out = out[0]
        out.sum().backward()

    return run


def time_op(op: Op, rounds: int, number: int, clock: Callable[[], float]) -> dict[str, float] | None:
    """Best seconds per call for each library, rounds alternating; None when the
    op does not run in float32 on both (a spec that needs float64)."""
    runs = {}
    for name, lib in (("npgrad", npgrad), ("torch", torch)):
        try:
            inputs = op.tensors(lib, np.float32, list(op.grad_mask))
            fn = step(lib, op, inputs)
            fn()
        except Exception:  # noqa: BLE001 - reported as n/a
            return None
        runs[name] = fn
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, fn in runs.items():
            best[name] = min(best[name], timeit.Timer(fn, timer=clock).timeit(number=number) / number)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--only", help="ops whose id contains this")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--cpu-time", action="store_true", help="CPU time of this thread, not wall-clock time")
    args = parser.parse_args()
    clock = time.thread_time if args.cpu_time else time.perf_counter
    rounds, number = (2, 20) if args.quick else (5, 200)
    rows = []
    for op in ALL:
        if args.only and args.only not in op.id:
            continue
        best = time_op(op, rounds, number, clock)
        if best is None:
            print(f"{op.id:40s} n/a (does not run in float32 on both)")
            continue
        ratio = best["npgrad"] / best["torch"]
        rows.append({"op": op.id, "node": op.node, **best, "ratio": ratio})
        print(f"{op.id:40s} npgrad {best['npgrad'] * 1e6:8.1f} us  torch {best['torch'] * 1e6:8.1f} us  {ratio:5.2f}x")
    if not rows:
        return 1
    ratios = sorted(r["ratio"] for r in rows)
    worst = max(rows, key=lambda r: r["ratio"])
    print(
        f"\n{len(rows)} ops: median npgrad/torch {statistics.median(ratios):.2f}x, "
        f"worst {worst['ratio']:.2f}x ({worst['op']}), best {ratios[0]:.2f}x"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
