"""How graph build, backward and teardown scale with chain length.

Times a chain of ``y = y * 1.0001`` (one MulBackward0 per op) at 125k, 250k, 500k
and 1M nodes and prints the time per node for each phase. Linear growth shows as a
flat time per node down each column; the last column is the per-node cost at 1M
relative to 125k. This is a report, not a test: wall-clock numbers depend on the
machine and its load, so nothing is asserted.

    PYTHONPATH=python python scripts/scaling_report.py            # npgrad
    PYTHONPATH=python python scripts/scaling_report.py --lib torch
    PYTHONPATH=python python scripts/scaling_report.py --repeats 5 --op add
"""

from __future__ import annotations

import argparse
import gc
import importlib
import time

SIZES = (125_000, 250_000, 500_000, 1_000_000)


def chain(lib, n: int, op: str):
    x = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
    y = x
    if op == "mul":
        for _ in range(n):
            y = y * 1.0001
    elif op == "add":
        for _ in range(n):
            y = y + 1.0
    else:  # "sin": every node saves its input
        for _ in range(n):
            y = y.sin()
    return x, y


def measure(lib, n: int, op: str) -> tuple[float, float, float]:
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        x, y = chain(lib, n, op)
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        del y
        t3 = time.perf_counter()
    finally:
        gc.enable()
    assert x.grad is not None
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default="npgrad", choices=["npgrad", "torch"])
    parser.add_argument("--op", default="mul", choices=["mul", "add", "sin"])
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs per size")
    args = parser.parse_args()
    lib = importlib.import_module(args.lib)
    if hasattr(lib, "set_num_threads"):
        lib.set_num_threads(1)

    step = {"mul": "y * 1.0001", "add": "y + 1.0", "sin": "y.sin()"}[args.op]
    print(f"{args.lib}: chain of y = {step}, best of {args.repeats}, ns per node")
    header = f"{'nodes':>10} {'build':>9} {'backward':>9} {'teardown':>9} {'total':>9}"
    print(header)
    print("-" * len(header))
    per_node = {}
    for n in SIZES:
        best = None
        for _ in range(args.repeats):
            times = measure(lib, n, args.op)
            best = times if best is None else tuple(min(a, b) for a, b in zip(best, times))
        ns = [t / n * 1e9 for t in best]
        per_node[n] = ns + [sum(ns)]
        print(f"{n:>10,} {ns[0]:>9.1f} {ns[1]:>9.1f} {ns[2]:>9.1f} {sum(ns):>9.1f}")
    first, last = per_node[SIZES[0]], per_node[SIZES[-1]]
    ratios = " ".join(f"{b / a:>9.2f}" for a, b in zip(first, last))
    print(f"{'1M / 125k':>10} {ratios}   (1.00 = perfectly linear)")


if __name__ == "__main__":
    main()
