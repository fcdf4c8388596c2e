"""Keep the activations saved for backward on disk instead of in memory.

    python examples/offload_to_disk.py [--layers 20] [--width 512] [--batch 4096]

During the forward pass autograd keeps some tensors ("saved tensors") that the
backward pass will need: here, the input of every matmul and the output of every
tanh. ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)`` lets us decide how
they are kept. ``pack`` runs when a tensor is saved, and autograd keeps whatever
it returns. ``unpack`` runs when backward needs the tensor back, and must return a
tensor. Here ``pack`` writes the tensor's data to a ``.npy`` file and returns a
small handle, and ``unpack`` loads the file again. So between forward and
backward, the activations are on disk, not in RAM.

The script trains nothing. It runs forward + backward of a hand-written MLP
twice, each time in a fresh subprocess so that the two peak-RSS readings do not
mix:

* ``baseline``: no hooks, so autograd keeps the saved tensors in memory;
* ``offload``: the same computation with the disk hooks;
* ``prefetch`` (npgrad only): the disk hooks plus ``prefetch=``, an option of
  npgrad's own ``saved_tensors_hooks`` (torch has none). During backward the
  engine calls it with each handle at least one node before ``unpack`` needs
  it, so the file is read on a background thread while the previous node
  computes.

For each run it prints the peak RSS of that process, how much the saved tensors
took on disk and in RAM, how far its gradients are from the baseline's, and the
time of forward + backward and of backward alone.
The gradients must match, because np.save/np.load give back exactly the bytes
that were written.

Offloading lowers the peak only when the saved activations are bigger than the
weight gradients. Per layer, that means batch x width floats against width x width,
so the batch must be larger than the width (the defaults use 4096 against 512).
Otherwise the peak comes at the end of backward, when all the gradients exist and
the activations are already freed, and both runs reach the same peak: try
``--width 1024 --batch 256``.

npgrad speaks torch.autograd's API, so the code below is written against the name
``torch``. Set EXAMPLE_USE_TORCH=1 to run the very same file on PyTorch.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import resource
import subprocess
import sys
import tempfile
import time
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # type checkers check this file against npgrad's stubs
    import npgrad as torch
elif os.environ.get("EXAMPLE_USE_TORCH"):
    import torch
else:
    import npgrad as torch

MiB = 1024 * 1024
# saved_tensors_hooks(..., prefetch=) is npgrad's own.
VARIANTS = ("baseline", "offload") + (("prefetch",) if torch.__name__ == "npgrad" else ())


# ----------------------------------------------------------------------------------
# The hooks


class SavedOnDisk:
    """What ``pack`` hands to autograd in place of a tensor: the path of a .npy file.

    Autograd drops this handle once backward no longer needs the tensor. The file
    is then deleted, so the disk holds only the tensors backward has not used yet.
    """

    def __init__(self, path: str, nbytes: int, stash: DiskStash) -> None:
        self.path = path
        self.nbytes = nbytes
        self._stash = stash
        self.loading: concurrent.futures.Future[Any] | None = None  # set by prefetch

    def __del__(self) -> None:
        self._stash.on_disk -= self.nbytes
        try:
            os.remove(self.path)
        except OSError:  # the temporary directory has already been removed
            pass


class DiskStash:
    """A ``pack`` / ``unpack`` pair that keeps saved tensors in ``directory``.

    It also counts bytes, so that we can see how much memory the saved tensors
    would take:

    * ``written``: all the bytes written to disk;
    * ``on_disk`` / ``peak_on_disk``: bytes in files that backward has not used
      and released yet, now and at the peak;
    * ``in_ram`` / ``peak_in_ram``: bytes that ``unpack`` loaded back and that are
      still alive, now and at the peak. They are freed soon after backward uses
      them.

    ``keep`` lists tensors (the weights) that are not written out. They stay in
    memory anyway, so a copy on disk would save nothing. ``pack`` returns them
    unchanged, which the hooks allow. We compare by identity (``is``). If the
    library gives ``pack`` a different object for the same weight, that weight is
    written to disk too. The result is still correct, only slower.
    """

    def __init__(self, directory: str, keep: list[Any] | tuple[Any, ...] = ()) -> None:
        self.directory = directory
        self.keep = list(keep)
        self.files = 0
        self.kept = 0
        self.shared = 0
        self._packed: dict[int, tuple[Any, Any]] = {}
        self.written = 0
        self.on_disk = 0
        self.peak_on_disk = 0
        self.in_ram = 0
        self.peak_in_ram = 0

    def pack(self, tensor: Any) -> Any:
        if any(tensor is t for t in self.keep):
            self.kept += 1
            return tensor
        # A tensor can be saved twice: tanh saves its output, and the next matmul
        # saves the same tensor as its input. Write it once, share the handle.
        tensor_ref, handle_ref = self._packed.get(id(tensor), (None, None))
        handle = handle_ref() if tensor_ref and tensor_ref() is tensor else None
        if handle is not None:
            self.shared += 1
            return handle
        array = tensor.detach().numpy()
        path = os.path.join(self.directory, f"saved_{self.files:05d}.npy")
        np.save(path, array)  # the .npy header records dtype and shape
        self.files += 1
        self.written += array.nbytes
        self.on_disk += array.nbytes
        self.peak_on_disk = max(self.peak_on_disk, self.on_disk)
        handle = SavedOnDisk(path, array.nbytes, self)
        # Weak references only: this table must keep neither the tensor nor its
        # file alive. The entry goes away with the tensor.
        key = id(tensor)

        def forget(_: object) -> None:
            self._packed.pop(key, None)

        self._packed[key] = (weakref.ref(tensor, forget), weakref.ref(handle))
        return handle

    def unpack(self, saved: Any) -> Any:
        if not isinstance(saved, SavedOnDisk):  # a weight that `pack` kept
            return saved
        if saved.loading is not None:  # prefetch started reading the file
            array = saved.loading.result()  # a shared handle's unpacks share it
        else:
            array = np.load(saved.path)
        # from_numpy shares the array's memory, so the array lives exactly as long
        # as the tensor's data. The finalizer tells us when those bytes are freed.
        self.in_ram += array.nbytes
        self.peak_in_ram = max(self.peak_in_ram, self.in_ram)
        weakref.finalize(array, self._freed, array.nbytes)
        return torch.from_numpy(array)

    def _freed(self, nbytes: int) -> None:
        self.in_ram -= nbytes


class PrefetchingDiskStash(DiskStash):
    """``DiskStash`` plus a ``prefetch`` hook that reads the file on a worker thread.

    npgrad's ``saved_tensors_hooks(pack, unpack, prefetch=...)`` calls ``prefetch``
    with each handle during backward, at least one node before ``unpack`` needs it
    and in the order of the unpacks. ``np.load`` reads the file without holding
    the GIL, so the read overlaps the backward of the previous node; ``unpack``
    then only waits for it to finish. Only one file is read ahead at a time.
    """

    def __init__(self, directory: str, keep: list[Any] | tuple[Any, ...] = ()) -> None:
        super().__init__(directory, keep)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self.prefetched = 0

    def prefetch(self, saved: Any) -> None:
        if isinstance(saved, SavedOnDisk) and saved.loading is None:
            self.prefetched += 1
            saved.loading = self.pool.submit(np.load, saved.path)


# ----------------------------------------------------------------------------------
# The model


def build_model(layers: int, width: int, batch: int) -> tuple[list[Any], Any]:
    """Weights (leaf tensors that require grad) and an input batch, seeded.

    Each weight is scaled by 1/sqrt(width), so the activations keep a sensible size
    through the layers.
    """
    torch.manual_seed(0)
    weights = []
    for _ in range(layers):
        with torch.no_grad():
            w = torch.randn(width, width) * (1.0 / width**0.5)
        w.requires_grad = True  # w is a leaf: it has no history
        weights.append(w)
    x = torch.randn(batch, width)
    return weights, x


def forward(weights: list[Any], x: Any) -> Any:
    h = x
    for w in weights:
        h = torch.tanh(h @ w)  # saves h (for w.grad) and tanh's output
    return h.sum()


# ----------------------------------------------------------------------------------
# One variant, in a process of its own


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux: KiB


def forward_backward(variant: str, weights: list[Any], x: Any) -> dict[str, Any]:
    """One forward + backward pass. Returns the disk stash's counts (offload only)."""
    if variant == "baseline":
        loss = forward(weights, x)
        start = time.perf_counter()
        loss.backward()
        return {"backward_seconds": time.perf_counter() - start}
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    with tempfile.TemporaryDirectory(prefix="offload-") as directory:
        stash: DiskStash
        if variant == "prefetch":
            stash = PrefetchingDiskStash(directory, keep=weights)
            hooks = torch.autograd.graph.saved_tensors_hooks(stash.pack, stash.unpack, prefetch=stash.prefetch)
        else:
            stash = DiskStash(directory, keep=weights)
            hooks = torch.autograd.graph.saved_tensors_hooks(stash.pack, stash.unpack)
        with hooks:
            loss = forward(weights, x)
        # The hooks are needed only while tensors are saved: each handle keeps the
        # `unpack` that was active when it was packed.
        start = time.perf_counter()
        loss.backward()
        backward_seconds = time.perf_counter() - start
        del loss  # drops the graph, and with it the handles and their files
        if isinstance(stash, PrefetchingDiskStash):
            stash.pool.shutdown()
        names = ("files", "shared", "kept", "written", "peak_on_disk", "peak_in_ram")
        stats = {name: getattr(stash, name) for name in names}
        stats["prefetched"] = getattr(stash, "prefetched", 0)
        return {**stats, "backward_seconds": backward_seconds}


def run_variant(variant: str, layers: int, width: int, batch: int, out: str) -> None:
    """Forward + backward once, then write the gradients and the counts to `out`."""
    # Warm up on a tiny model first, so that the libraries' one-time costs (lazy
    # imports, kernels, thread pools) are in "RSS before" and not in the growth.
    forward_backward(variant, *build_model(2, 8, 8))
    weights, x = build_model(layers, width, batch)
    rss_before = peak_rss_bytes()
    start = time.perf_counter()
    stats = forward_backward(variant, weights, x)
    seconds = time.perf_counter() - start
    rss_peak = peak_rss_bytes()  # read before the gradients are copied out
    grads: dict[str, Any] = {f"grad_{i}": np.array(w.grad.detach().numpy()) for i, w in enumerate(weights)}
    defaults = {"files": 0, "shared": 0, "kept": 0, "written": 0, "prefetched": 0}
    untracked = {"peak_on_disk": -1, "peak_in_ram": -1}  # no hooks, nothing counted
    np.savez(
        out,
        rss_before=rss_before,
        rss_peak=rss_peak,
        seconds=seconds,
        **{**defaults, **untracked, **stats},
        **grads,
    )


# ----------------------------------------------------------------------------------
# The driver: both variants, then the table


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=20)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=4096)
    # Used internally to run a single variant in a child process.
    parser.add_argument("--worker", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def run_in_subprocess(variant: str, args: argparse.Namespace, out: str) -> dict[str, Any]:
    """Run one variant in a new Python process and read back what it wrote."""
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker", variant,
        "--out", out,
        "--layers", str(args.layers),
        "--width", str(args.width),
        "--batch", str(args.batch),
    ]  # fmt: skip
    # The child inherits EXAMPLE_USE_TORCH. glibc's malloc may keep freed memory
    # resident (it raises its mmap threshold as it goes), so the peak RSS would
    # also count memory that was already freed, and it would vary from run to run.
    # With a fixed threshold, every large block is mmap'ed and given back to the
    # OS when it is freed, so the peak RSS follows the memory actually in use.
    # Other C libraries ignore the variable.
    env = dict(os.environ)
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(128 * 1024))
    subprocess.run(cmd, check=True, env=env)
    with np.load(out) as saved:
        result = {k: saved[k].item() for k in saved.files if not k.startswith("grad_")}
        result["grads"] = [saved[f"grad_{i}"] for i in range(args.layers)]
    return result


def mib(nbytes: float) -> str:
    return "-" if nbytes < 0 else f"{nbytes / MiB:.1f}"


def print_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print(" | ".join(cell.rjust(w) for cell, w in zip(row, widths)))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run both variants, print the table, and return the results by variant.

    Each result also holds `max_grad_diff` and `grads_match` (both against the
    baseline's gradients).
    """
    args = parse_args(argv)
    if args.worker:
        run_variant(args.worker, args.layers, args.width, args.batch, args.out)
        return {}

    print(
        f"{torch.__name__} {getattr(torch, '__version__', '')}".rstrip()
        + f" | MLP: {args.layers} layers, width {args.width}, batch {args.batch}, tanh"
    )
    results = {}
    with tempfile.TemporaryDirectory(prefix="offload-results-") as directory:
        for variant in VARIANTS:
            out = os.path.join(directory, f"{variant}.npz")
            results[variant] = run_in_subprocess(variant, args, out)

    reference = results["baseline"]["grads"]
    for result in results.values():
        pairs = list(zip(result["grads"], reference))
        result["max_grad_diff"] = max(float(np.max(np.abs(g - r))) for g, r in pairs)
        result["grads_match"] = all(np.allclose(g, r) for g, r in pairs)
        result["growth"] = result["rss_peak"] - result["rss_before"]

    print_table(
        (
            "variant", "peak RSS MiB", "of it fwd+bwd MiB", "written to disk MiB",
            "saved peak disk MiB", "saved peak RAM MiB", "max |grad diff|", "time s",
            "backward s",
        ),
        [
            (
                variant,
                mib(r["rss_peak"]),
                mib(r["growth"]),
                mib(r["written"]),
                mib(r["peak_on_disk"]),
                mib(r["peak_in_ram"]),
                f"{r['max_grad_diff']:.3g}",
                f"{r['seconds']:.2f}",
                f"{r['backward_seconds']:.2f}",
            )
            for variant, r in results.items()
        ],
    )  # fmt: skip

    base, off = results["baseline"], results["offload"]
    print(
        "'of it fwd+bwd': peak RSS minus the peak before the forward pass; "
        "'saved peak': bytes of saved tensors held at once (not tracked without hooks)"
    )
    print(
        f"offload: {off['files']} tensors written to disk, {off['shared']} saves "
        f"reused a file, {off['kept']} saves of weights kept in memory"
    )
    less = base["rss_peak"] - off["rss_peak"]
    print(
        f"peak RSS, offload vs baseline: {abs(less) / MiB:.1f} MiB "
        + ("lower" if less >= 0 else "HIGHER")
        + f" ({100 * less / base['rss_peak']:.0f}% of the baseline's peak, "
        f"{100 * less / max(base['growth'], 1):.0f}% of its fwd+bwd growth)"
    )
    if "prefetch" in results:
        pre = results["prefetch"]
        print(
            f"prefetch: {pre['prefetched']} files read ahead; backward "
            f"{pre['backward_seconds']:.2f} s against {off['backward_seconds']:.2f} s "
            f"without prefetch and {base['backward_seconds']:.2f} s without offload"
        )
    verdict = "yes" if all(r["grads_match"] for r in results.values()) else "NO"
    print(f"offloaded gradients match the baseline (np.allclose): {verdict}")
    return results


if __name__ == "__main__":
    outcome = main()
    sys.exit(0 if not outcome or all(r["grads_match"] for r in outcome.values()) else 1)
