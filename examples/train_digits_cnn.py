"""Train a small CNN on scikit-learn's digits and compare memory policies.

    python examples/train_digits_cnn.py [--epochs 30] [--checkpoint | --offload]

The data set is scikit-learn's bundled ``digits`` (1,797 8x8 grey images of the
digits 0-9; it ships inside the package, so nothing is downloaded). A fixed
seed splits it into 1,437 training and 360 test images.

The network is two blocks of Conv2d-BatchNorm2d-ReLU-MaxPool2d, then dropout and
a Linear layer, trained with Adam and a cosine learning-rate schedule through a
``DataLoader``. With the defaults it reaches about 98% test accuracy (at least
97%) in well under a minute on one core.

``--checkpoint`` runs each block under ``torch.utils.checkpoint`` during
training; ``--offload`` keeps every saved tensor on disk through
``saved_tensors_hooks``. Either way the gradients are the same, so the
training loss is too. (Checkpointing recomputes each block in training mode
during backward, so BatchNorm updates its running statistics twice per step,
as in torch: the eval-mode accuracy can differ a little.) After training, the script measures one training step under
each policy and prints the memory kept for backward, the peak memory and the
step time; it writes the loss and
accuracy curves to ``digits_cnn.png`` (``--plot``).

npgrad speaks torch's API, so the code below is written against the name
``torch``. Set EXAMPLE_USE_TORCH=1 to run the very same file on PyTorch.
"""

from __future__ import annotations

import argparse
import os
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


class DigitsCNN(nn.Module):
    """Two conv blocks (8x8 -> 4x4 -> 2x2), dropout, one Linear layer."""

    def __init__(self, checkpointed: bool = False) -> None:
        super().__init__()
        self.checkpointed = checkpointed
        self.block1 = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.block2 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 2 * 2, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = run_block(self.block1, x, self.checkpointed)
        x = run_block(self.block2, x, self.checkpointed)
        out: torch.Tensor = self.head(x)
        return out


def load_digits(seed: int, train_size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(train images, train labels, test images, test labels), images scaled to
    [0, 1]; at most ``train_size`` training images (0: all 1,437)."""
    from sklearn.datasets import load_digits as sklearn_digits

    digits = sklearn_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # N x 1 x 8 x 8
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    test, train = order[:360], order[360:]
    if train_size:
        train = train[:train_size]
    return (
        torch.from_numpy(images[train]),
        torch.from_numpy(labels[train]),
        torch.from_numpy(images[test]),
        torch.from_numpy(labels[test]),
    )


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        predicted = model(images).argmax(dim=1)
    model.train()
    return float((predicted == labels).float().mean().item())


def train(args: argparse.Namespace) -> dict[str, Any]:
    from tqdm import tqdm

    torch.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed, args.train_size)
    policy = "checkpoint" if args.checkpoint else "offload" if args.offload else "baseline"
    model = DigitsCNN(checkpointed=policy == "checkpoint")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x_train, y_train),
        batch_size=args.batch_size,
        shuffle=True,
        generator=torch.Generator().manual_seed(args.seed),
    )
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(loader))
    history: dict[str, list[float]] = {"loss": [], "test_accuracy": []}
    bar = tqdm(range(args.epochs), desc=f"digits ({policy})", disable=args.quiet)
    for _ in bar:
        total = 0.0
        for images, labels in loader:
            optimizer.zero_grad()
            with policy_scope(policy):
                loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(labels)
        history["loss"].append(total / len(y_train))
        history["test_accuracy"].append(accuracy(model, x_test, y_test))
        bar.set_postfix(loss=f"{history['loss'][-1]:.3f}", test_acc=f"{history['test_accuracy'][-1]:.3f}")
    return {"model": model, "history": history, "data": (x_train, y_train), "policy": policy}


def compare_policies(
    x: torch.Tensor, y: torch.Tensor, seed: int
) -> list[tuple[str, float | None, float | None, float]]:
    """Memory kept for backward, peak memory and time of one training step on
    ``x`` under each policy."""
    rows = []
    for policy in POLICIES:
        torch.manual_seed(seed)
        model = DigitsCNN(checkpointed=policy == "checkpoint")

        def forward(model: DigitsCNN = model, policy: str = policy) -> torch.Tensor:
            model.zero_grad()
            with policy_scope(policy):
                loss: torch.Tensor = F.cross_entropy(model(x), y)
            return loss

        forward().backward()  # warm-up
        rows.append((policy, *measure_step(forward)))
    return rows


def plot(history: dict[str, list[float]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    epochs = range(1, len(history["loss"]) + 1)
    left.plot(epochs, history["loss"])
    left.set(xlabel="epoch", ylabel="training loss", yscale="log", title="loss")
    right.plot(epochs, history["test_accuracy"])
    right.set(xlabel="epoch", ylabel="test accuracy", title="accuracy")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-size", type=int, default=0, help="use only this many training images")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--checkpoint", action="store_true", help="train with every block checkpointed")
    group.add_argument("--offload", action="store_true", help="train with saved tensors on disk")
    parser.add_argument("--plot", default="digits_cnn.png", help="where to write the curves ('' for none)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    result = train(args)
    history = result["history"]
    print(f"final: training loss {history['loss'][-1]:.4f}, test accuracy {history['test_accuracy'][-1]:.4f}")
    x, y = result["data"]
    print(f"\none training step on {args.batch_size * 4} images, per memory policy:")
    print_policy_table(compare_policies(x[: args.batch_size * 4], y[: args.batch_size * 4], args.seed))
    if args.plot:
        plot(history, args.plot)
        print(f"\ncurves written to {args.plot}")
    return result


if __name__ == "__main__":
    main()
