"""What the two training examples share: the memory policies of a training step
and how their cost is measured.

A *policy* decides what autograd keeps between the forward and the backward
pass of a step:

* ``baseline``: every saved tensor stays in memory, as usual;
* ``checkpoint``: each block runs under ``torch.utils.checkpoint.checkpoint``
  (non-reentrant, built on ``saved_tensors_hooks``), so a block keeps only its
  input and recomputes the rest during backward;
* ``offload``: every saved tensor goes to a ``.npy`` file through
  ``torch.autograd.graph.saved_tensors_hooks`` and comes back when backward
  needs it.

``measure_step`` runs one training step under a policy and reports the memory
NumPy holds between its forward and its backward pass (what the graph keeps for
backward, the cost a policy is about), the peak of that memory during the step,
and the wall time. ``tracemalloc`` sees NumPy's buffers, so this counts
npgrad's tensors (not the scratch buffers its C++ kernels use inside one call);
under ``EXAMPLE_USE_TORCH=1`` torch's own allocator is invisible to it and the
memory columns read ``n/a``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # type checkers check this file against npgrad's stubs
    import npgrad as torch
elif os.environ.get("EXAMPLE_USE_TORCH"):
    import torch
else:
    import npgrad as torch

POLICIES = ("baseline", "checkpoint", "offload")
USING_TORCH = bool(os.environ.get("EXAMPLE_USE_TORCH"))


class SavedOnDisk:
    """What ``pack`` hands autograd in place of a tensor: a ``.npy`` file,
    deleted when autograd drops the handle (after backward, or with the graph)."""

    def __init__(self, path: str) -> None:
        self.path = path
        weakref.finalize(self, os.remove, path)


class DiskOffload:
    """``saved_tensors_hooks`` that keep every saved tensor in a ``.npy`` file
    under one temporary directory, which lives as long as the process."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="npgrad-offload-")
        weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)
        self.count = 0

    def pack(self, tensor: torch.Tensor) -> SavedOnDisk:
        self.count += 1
        path = os.path.join(self.directory, f"{self.count}.npy")
        np.save(path, tensor.detach().numpy())
        return SavedOnDisk(path)

    def unpack(self, saved: SavedOnDisk) -> torch.Tensor:
        return torch.from_numpy(np.load(saved.path))


_DISK = DiskOffload()


@contextlib.contextmanager
def policy_scope(policy: str) -> Iterator[None]:
    """The context a training step's forward pass runs in under ``policy``
    (checkpointing is applied by the model itself, block by block)."""
    if policy == "offload":
        with torch.autograd.graph.saved_tensors_hooks(_DISK.pack, _DISK.unpack):
            yield
    else:
        yield


def run_block(block: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, checkpointed: bool) -> torch.Tensor:
    """``block(x)``, under ``utils.checkpoint`` when ``checkpointed``."""
    if checkpointed and torch.is_grad_enabled():
        out: torch.Tensor = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
        return out
    return block(x)


def measure_step(forward: Callable[[], torch.Tensor], repeats: int = 3) -> tuple[float | None, float | None, float]:
    """(MiB NumPy held after ``forward()``, peak MiB during it and the backward of
    the loss it returns, median seconds of both) over ``repeats`` runs."""
    times = []
    kept = peak = 0
    for _ in range(repeats):
        tracemalloc.start()
        start = time.perf_counter()
        loss = forward()
        kept = max(kept, tracemalloc.get_traced_memory()[0])
        loss.backward()
        times.append(time.perf_counter() - start)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        del loss
    if USING_TORCH:
        return None, None, sorted(times)[len(times) // 2]
    return kept / 2**20, peak / 2**20, sorted(times)[len(times) // 2]


def print_policy_table(rows: list[tuple[str, float | None, float | None, float]]) -> None:
    """One line per policy: the memory kept for backward, the step's peak, the
    step's time, each also relative to the baseline."""
    base = rows[0][1:]

    def ratio(value: float | None, base_value: float | None) -> str:
        return "n/a" if value is None or not base_value else f"{value / base_value:.2f}"

    print(f"{'policy':<11} {'kept MiB':>9} {'vs base':>8} {'peak MiB':>9} {'vs base':>8} {'step ms':>8} {'vs base':>8}")
    for name, kept, peak, seconds in rows:
        columns = [
            "n/a" if kept is None else f"{kept:.2f}",
            ratio(kept, base[0]),
            "n/a" if peak is None else f"{peak:.2f}",
            ratio(peak, base[1]),
        ]
        print(
            f"{name:<11} {columns[0]:>9} {columns[1]:>8} {columns[2]:>9} {columns[3]:>8}"
            f" {seconds * 1e3:>8.1f} {ratio(seconds, base[2]):>8}"
        )
