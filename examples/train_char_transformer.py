"""Train a small decoder-only transformer on characters and compare memory policies.

    python examples/train_char_transformer.py [--steps 1000] [--checkpoint | --offload]

The corpus is the docstrings of Python's standard library (the modules listed in
``CORPUS_MODULES``, read with ``inspect``): English prose that every Python
installation carries, so nothing is downloaded. The same Python version gives
the same text. A fixed seed makes the run repeatable.

The model is GPT-shaped: token and position embeddings, ``--layers`` blocks of
pre-norm causal self-attention (``scaled_dot_product_attention`` with
``is_causal=True``) and a GELU MLP, a final LayerNorm and a linear head; trained
with cross-entropy, AdamW and a linear-warmup-then-cosine learning-rate schedule.
The loss falls from ln(vocabulary) (about 4.5) towards 2 within a few hundred
steps; the script then samples a continuation of a prompt.

``--checkpoint`` runs each block under ``torch.utils.checkpoint`` during
training; ``--offload`` keeps every saved tensor on disk through
``saved_tensors_hooks``. After training the script measures one training step
under each policy and prints the memory kept for backward, the peak memory and
the step time, and writes the loss curve to ``char_transformer.png``
(``--plot``).

npgrad speaks torch's API, so the code below is written against the name
``torch``. Set EXAMPLE_USE_TORCH=1 to run the very same file on PyTorch.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import math
import os
import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from _memory_policies import POLICIES, measure_step, policy_scope, print_policy_table, run_block

if TYPE_CHECKING:  # type checkers check this file against npgrad's stubs
    import npgrad as torch
elif os.environ.get("EXAMPLE_USE_TORCH"):
    import torch
else:
    import npgrad as torch

nn = torch.nn
F = torch.nn.functional

CORPUS_MODULES = (
    "argparse", "collections", "contextlib", "csv", "dataclasses", "datetime", "decimal",
    "difflib", "email.message", "fractions", "functools", "heapq", "inspect", "itertools",
    "json", "logging", "os", "pathlib", "pickle", "random", "re", "shutil", "statistics",
    "string", "subprocess", "tempfile", "textwrap", "threading", "typing", "unittest",
)  # fmt: skip


def load_corpus() -> str:
    """The docstrings of ``CORPUS_MODULES`` and of their public members, in a fixed order."""
    parts = []
    with warnings.catch_warnings():  # reading a deprecated alias's docstring warns
        warnings.simplefilter("ignore", DeprecationWarning)
        parts += _docstrings()
    text = "".join(c for c in "\n\n".join(p for p in parts if p) if c.isascii())
    # Code examples in docstrings are indented; runs of spaces are not prose.
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+", " ", text))


def _docstrings() -> list[str]:
    parts = []
    for name in CORPUS_MODULES:
        module = importlib.import_module(name)
        parts.append(inspect.getdoc(module) or "")
        for attr in sorted(vars(module)):
            member = getattr(module, attr)
            if attr.startswith("_") or getattr(member, "__module__", None) != name:
                continue
            parts.append(inspect.getdoc(member) or "")
    return parts


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        batch, time, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, time, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(batch, time, width))
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        out: torch.Tensor = x + self.mlp(self.ln2(x))
        return out


class CharTransformer(nn.Module):
    def __init__(self, vocab: int, context: int, width: int, heads: int, layers: int) -> None:
        super().__init__()
        self.context = context
        self.checkpointed = False
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.token(idx) + self.position(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = run_block(block, x, self.checkpointed)
        logits: torch.Tensor = self.head(self.ln(x))
        return logits

    def loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    @torch.no_grad()
    def sample(self, idx: torch.Tensor, length: int, generator: torch.Generator, temperature: float) -> torch.Tensor:
        for _ in range(length):
            logits = self(idx[:, -self.context :])[:, -1] / temperature
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


def batches(data: np.ndarray, context: int, batch: int, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A random batch of (input, next-character target) windows."""
    starts = rng.integers(0, len(data) - context - 1, size=batch)
    windows = np.stack([data[s : s + context + 1] for s in starts])
    return torch.from_numpy(windows[:, :-1].copy()), torch.from_numpy(windows[:, 1:].copy())


def train(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    text = load_corpus()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = np.array([lookup[c] for c in text], dtype=np.int64)
    model = CharTransformer(len(chars), args.context, args.width, args.heads, args.layers)
    policy = "checkpoint" if args.checkpoint else "offload" if args.offload else "baseline"
    model.checkpointed = policy == "checkpoint"
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 10)
    scheduler = torch.optim.lr_scheduler.SequentialLR(
        optimizer,
        [
            torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup),
            torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps - warmup),
        ],
        milestones=[warmup],
    )
    rng = np.random.default_rng(args.seed)
    losses = []
    bar = tqdm(range(args.steps), desc=f"char transformer ({policy})", disable=args.quiet)
    for _ in bar:
        x, y = batches(data, args.context, args.batch_size, rng)
        optimizer.zero_grad()
        with policy_scope(policy):
            loss = model.loss(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
    model.eval()
    prompt = torch.tensor([[lookup[c] for c in args.prompt]])
    generated = model.sample(prompt, args.sample_length, torch.Generator().manual_seed(args.seed), 0.8)
    sample = "".join(chars[i] for i in generated[0].tolist())
    model.train()
    return {
        "model": model,
        "losses": losses,
        "sample": sample,
        "corpus_chars": len(text),
        "vocab": len(chars),
        "batch": batches(data, args.context, args.batch_size, rng),
        "policy": policy,
    }


def compare_policies(
    model: CharTransformer, x: torch.Tensor, y: torch.Tensor
) -> list[tuple[str, float | None, float | None, float]]:
    """Memory kept for backward, peak memory and time of one training step on
    ``(x, y)`` under each policy."""
    rows = []
    for policy in POLICIES:
        model.checkpointed = policy == "checkpoint"

        def forward(policy: str = policy) -> torch.Tensor:
            model.zero_grad()
            with policy_scope(policy):
                loss: torch.Tensor = model.loss(x, y)
            return loss

        forward().backward()  # warm-up
        rows.append((policy, *measure_step(forward)))
    model.checkpointed = False
    return rows


def plot(losses: list[float], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses, alpha=0.3, label="per step")
    window = 20
    if len(losses) >= window:
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(range(window - 1, len(losses)), smooth, label=f"mean of {window}")
    ax.set(xlabel="step", ylabel="cross-entropy (nats)", title="character transformer")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--prompt", default="Return the ")
    parser.add_argument("--sample-length", type=int, default=200)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--checkpoint", action="store_true", help="train with every block checkpointed")
    group.add_argument("--offload", action="store_true", help="train with saved tensors on disk")
    parser.add_argument("--plot", default="char_transformer.png", help="where to write the curve ('' for none)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    result = train(args)
    losses = result["losses"]
    print(f"corpus: {result['corpus_chars']:,} characters, vocabulary {result['vocab']}")
    first, last = np.mean(losses[:20]), np.mean(losses[-20:])
    print(f"loss: {first:.3f} (first 20 steps) -> {last:.3f} (last 20); ln(vocab) = {math.log(result['vocab']):.3f}")
    print(f"sample:\n{result['sample']}\n")
    x, y = result["batch"]
    print(f"one training step on {x.shape[0]}x{x.shape[1]} tokens, per memory policy:")
    print_policy_table(compare_policies(result["model"], x, y))
    if args.plot:
        plot(losses, args.plot)
        print(f"\ncurve written to {args.plot}")
    return result


if __name__ == "__main__":
    main()
