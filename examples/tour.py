"""A tour of npgrad: build a graph, look inside it, differentiate it.

    python examples/tour.py

npgrad speaks torch.autograd's API, so the code below is written against the name
``torch``. Set TOUR_USE_TORCH=1 to run the very same file on PyTorch.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers check this file against npgrad's stubs
    import npgrad as torch
elif os.environ.get("TOUR_USE_TORCH"):
    import torch
else:
    import npgrad as torch


def section(title: str) -> None:
    print(f"\n== {title} ==")


def describe(node: Any) -> str:
    """One line for a graph node: its name, plus the leaf it feeds if any."""
    if node is None:  # an input that needs no gradient
        return "None"
    label: str = node.name()
    if hasattr(node, "variable"):  # AccumulateGrad writes into a leaf's .grad
        v = node.variable
        label += f"  -> leaf of shape {tuple(v.shape)}, requires_grad={v.requires_grad}"
    return label


def print_graph(root: Any) -> None:
    """Depth-first walk over next_functions, printed as an indented tree.

    An explicit stack (no recursion), and a node reached twice is printed once.
    `seen` holds the node objects themselves, not their id(): a node's Python
    wrapper may be dropped and re-created, so an id can be reused.
    """
    seen: set[Any] = set()
    stack = [(root, 0, "")]
    while stack:
        node, depth, slot = stack.pop()
        print("    " * depth + slot + describe(node))
        if node is None or node in seen:
            continue
        seen.add(node)
        # One (next node, input_nr) pair per input of this node, in input order.
        for i, (child, _input_nr) in reversed(list(enumerate(node.next_functions))):
            stack.append((child, depth + 1, f"{i}: "))


def main() -> None:
    torch.manual_seed(0)

    section("1. Leaves: tensors that require grad")
    x = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    print("x =", x)
    print("w =", w)
    print("x.is_leaf:", x.is_leaf, " x.grad_fn:", x.grad_fn)

    section("2. The forward pass records a graph")
    h = x @ w
    y = h.tanh().sum()
    print("h = x @ w          :", h)
    print("y = h.tanh().sum() :", y)
    print("graph behind y, from y.grad_fn along next_functions (i: input i):")
    print_graph(y.grad_fn)
    assert y.grad_fn is not None  # for type checkers: y is not a leaf
    y.grad_fn.metadata["note"] = "the loss"  # a per-node dict, free for annotations
    print("y.grad_fn.metadata:", y.grad_fn.metadata)

    section("3. backward() fills .grad on the leaves")
    y.backward()
    assert x.grad is not None and w.grad is not None  # for type checkers
    print("x.grad =", x.grad)
    print("w.grad =", w.grad)
    with torch.no_grad():  # the same gradients by hand: dy/dh = 1 - tanh(h)^2
        dh = 1 - (x @ w).tanh() ** 2
        err_x = (x.grad - w @ dh).abs().max().item()
        err_w = (w.grad - x.unsqueeze(1) * dh.unsqueeze(0)).abs().max().item()
    print(f"agrees with the chain rule by hand: {max(err_x, err_w) < 1e-6}")

    section("4. Higher order: autograd.grad(..., create_graph=True)")
    u = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (du,) = torch.autograd.grad((u**3).sum(), u, create_graph=True)
    print("d/du sum(u**3)   = 3u^2 =", du)
    (ddu,) = torch.autograd.grad(du.sum(), u)
    print("d2/du2 sum(u**3) = 6u   =", ddu)

    section("5. no_grad: no graph is recorded")
    with torch.no_grad():
        z = x * 2
        w -= 0.1 * w.grad  # an SGD step on a leaf, allowed because nothing records
    print("z =", z, " requires_grad:", z.requires_grad, " grad_fn:", z.grad_fn)
    print("w after one SGD step =", w)
    print("w is still a leaf:", w.is_leaf, " requires_grad:", w.requires_grad)


if __name__ == "__main__":
    main()
