"""What ``saved_tensors_hooks(dedup=True)`` saves on a transformer block.

    python benchmarks/bench_saved_dedup.py [--batch 8] [--seq 128] [--dim 256] [--heads 4] [--repeat 10]

A pre-norm transformer block written as models write it: ``q, k, v =
proj(layer_norm(x)).chunk(3, -1)``, heads split by ``view``/``transpose``,
``scaled_dot_product_attention``, an output projection, a residual, then
``layer_norm`` and a GELU MLP with its residual. Its forward runs under
offloading hooks (pack copies the tensor to a NumPy array, unpack wraps it again)
without and with ``dedup=True``, and without hooks; the script prints the pack
calls, the bytes packed, the unpack calls of one backward, and the median forward
and backward times of each (this process's CPU time) and their ratios. The
gradients of the three runs are checked to agree. q, k and v partition their
buffer, so dedup saves their pack calls but no bytes; bytes are saved where one
tensor is saved by several nodes. Plain offloading hands the backward contiguous
copies, dedup the saved tensors' own (strided) views, as without hooks, so the
backward times differ by that too. npgrad only: torch has no ``dedup``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import npgrad as torch
import npgrad.nn.functional as F


class Offload:
    def __init__(self) -> None:
        self.packs = 0
        self.nbytes = 0
        self.unpacks = 0

    def pack(self, t: Any) -> np.ndarray:
        self.packs += 1
        a = t.detach().numpy().copy()
        self.nbytes += a.nbytes
        return a

    def unpack(self, a: np.ndarray) -> Any:
        self.unpacks += 1
        return torch.from_numpy(a)


def make_params(dim: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def p(*shape: int) -> Any:
        return torch.from_numpy((rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)).requires_grad_()

    return {
        "ln1_w": torch.ones(dim, requires_grad=True),
        "ln1_b": torch.zeros(dim, requires_grad=True),
        "qkv_w": p(3 * dim, dim),
        "qkv_b": torch.zeros(3 * dim, requires_grad=True),
        "out_w": p(dim, dim),
        "out_b": torch.zeros(dim, requires_grad=True),
        "ln2_w": torch.ones(dim, requires_grad=True),
        "ln2_b": torch.zeros(dim, requires_grad=True),
        "fc1_w": p(4 * dim, dim),
        "fc1_b": torch.zeros(4 * dim, requires_grad=True),
        "fc2_w": p(dim, 4 * dim),
        "fc2_b": torch.zeros(dim, requires_grad=True),
    }


def block(x: Any, prm: dict[str, Any], heads: int) -> Any:
    b, s, d = x.shape
    h = F.layer_norm(x, (d,), prm["ln1_w"], prm["ln1_b"])
    q, k, v = F.linear(h, prm["qkv_w"], prm["qkv_b"]).chunk(3, dim=-1)

    def split(t: Any) -> Any:
        return t.view(b, s, heads, d // heads).transpose(1, 2)

    a = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    x = x + F.linear(a.transpose(1, 2).reshape(b, s, d), prm["out_w"], prm["out_b"])
    h = F.layer_norm(x, (d,), prm["ln2_w"], prm["ln2_b"])
    return x + F.linear(F.gelu(F.linear(h, prm["fc1_w"], prm["fc1_b"])), prm["fc2_w"], prm["fc2_b"])


def step(
    x: Any, prm: dict[str, Any], heads: int, dedup: bool | None
) -> tuple[Offload, tuple[float, float], list[np.ndarray]]:
    """dedup None: no hooks at all."""
    for t in prm.values():
        t.grad = None
    hooks = Offload()
    start = time.process_time()
    if dedup is None:
        loss = block(x, prm, heads).square().mean()
    else:
        with torch.autograd.graph.saved_tensors_hooks(hooks.pack, hooks.unpack, dedup=dedup):
            loss = block(x, prm, heads).square().mean()
    middle = time.process_time()
    loss.backward()
    end = time.process_time()
    return hooks, (middle - start, end - middle), [t.grad.numpy().copy() for t in prm.values()]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    x = torch.from_numpy(rng.standard_normal((args.batch, args.seq, args.dim)).astype(np.float32))
    prm = make_params(args.dim)
    results: dict[str, Any] = {}
    variants = (None, False, True)
    times: dict[bool | None, list[tuple[float, float]]] = {v: [] for v in variants}
    grads: dict[bool | None, list[np.ndarray]] = {}
    for i in range(args.repeat + 1):
        for dedup in variants:
            hooks, elapsed, grads[dedup] = step(x, prm, args.heads, dedup)
            if i > 0:  # the first round warms up
                times[dedup].append(elapsed)
            results[f"dedup={dedup}"] = hooks
    for g0, g1, g2 in zip(grads[None], grads[False], grads[True]):
        np.testing.assert_allclose(g1, g0, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g2, g0, rtol=1e-5, atol=1e-6)
    print(
        f"transformer block: batch {args.batch}, seq {args.seq}, dim {args.dim}, {args.heads} heads, float32;"
        f" offloading hooks; {args.repeat} runs"
    )
    fwd = {d: statistics.median(f for f, _ in t) for d, t in times.items()}
    bwd = {d: statistics.median(b for _, b in t) for d, t in times.items()}
    print(f" no hooks: median forward {fwd[None] * 1e3:7.1f} ms, backward {bwd[None] * 1e3:7.1f} ms")
    for dedup in (False, True):
        h = results[f"dedup={dedup}"]
        print(
            f"dedup={dedup!s:>5}: {h.packs:3d} pack calls, {h.nbytes / 2**20:7.2f} MiB packed,"
            f" {h.unpacks:3d} unpack calls; median forward {fwd[dedup] * 1e3:7.1f} ms,"
            f" backward {bwd[dedup] * 1e3:7.1f} ms"
        )
    plain, dedup_ = results["dedup=False"], results["dedup=True"]
    print(
        f"dedup / plain: pack calls x{dedup_.packs / plain.packs:.2f}, packed bytes x{dedup_.nbytes / plain.nbytes:.2f},"
        f" forward time x{fwd[True] / fwd[False]:.3f}, backward time x{bwd[True] / bwd[False]:.3f}"
    )
    return {"results": results, "times": times}


if __name__ == "__main__":
    main()
