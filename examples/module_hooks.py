"""Per-layer gradient norms from module backward hooks, and what each graph node saves.

    python examples/module_hooks.py [--batch 32]

Two tables about one forward + backward pass of a small MLP classifier:

1. **Gradient norms per layer.** ``register_full_backward_hook`` calls
   ``hook(module, grad_input, grad_output)`` when the gradients with respect to a
   module's inputs are ready. The hook records the norm of the gradient flowing
   out of each layer and into it: where a ReLU zeroes half of it, where a
   Linear layer shrinks or grows it.
2. **Saved bytes per node.** Walking ``loss.grad_fn`` through ``next_functions``
   visits every node of the graph; its ``_saved_*`` attributes are the tensors
   (and scalars) backward will read. The table sums the bytes of the saved
   activations per node (a saved weight, or ``mat2``, a view of one, costs no
   extra memory): what the graph holds between forward and backward, node by
   node. It is printed before ``backward()`` frees them.

npgrad speaks torch's API, so the code below is written against the name
``torch``. Set EXAMPLE_USE_TORCH=1 to run the very same file on PyTorch.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type checkers check this file against npgrad's stubs
    import npgrad as torch
elif os.environ.get("EXAMPLE_USE_TORCH"):
    import torch
else:
    import npgrad as torch

nn = torch.nn


def build_model() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.Tanh(), nn.Dropout(0.1), nn.Linear(128, 10)
    )


def norm(t: Any) -> str:
    return "-" if t is None else f"{float(t.norm()):.4f}"


def gradient_norms(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor) -> list[tuple[str, str, str]]:
    """(layer, |grad_output|, |grad_input|) per layer, in the order backward reaches them."""
    rows: list[tuple[str, str, str]] = []
    handles = []
    for name, layer in model.named_children():

        def hook(module: nn.Module, grad_input: Any, grad_output: Any, name: str = name) -> None:
            rows.append((f"{name}: {type(module).__name__}", norm(grad_output[0]), norm(grad_input[0])))

        handles.append(layer.register_full_backward_hook(hook))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    for handle in handles:
        handle.remove()
    return rows


def is_parameter_memory(t: torch.Tensor) -> bool:
    """A leaf that requires grad (a weight), or a view of one (``mat2`` is ``weight.t()``)."""
    base = t if t._base is None else t._base
    return base.is_leaf and base.requires_grad


def saved_bytes(node: Any) -> tuple[int, list[str]]:
    """Bytes of the activations ``node`` saved for backward (weights and views
    of weights cost nothing extra), and the names of all its saved tensors."""
    total, names = 0, []
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        value = getattr(node, attr)
        values = value if isinstance(value, tuple) else (value,)
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        if tensors:
            total += sum(t.numel() * t.element_size() for t in tensors if not is_parameter_memory(t))
            names.append(attr[len("_saved_") :])
    return total, names


def saved_per_node(loss: torch.Tensor) -> list[tuple[str, int, list[str]]]:
    """(node name, saved bytes, saved attributes) for every node reachable from ``loss``."""
    rows, seen, stack = [], set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        rows.append((node.name().replace("torch::autograd::", ""), *saved_bytes(node)))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args(argv)
    model = build_model()
    # x requires grad so that the first layer's grad_input exists too.
    x = torch.randn(args.batch, 64, requires_grad=True)
    y = torch.randint(0, 10, (args.batch,))

    grads = gradient_norms(model, x, y)
    print(f"{'layer':<16} {'|grad_output|':>14} {'|grad_input|':>13}")
    for layer, out_norm, in_norm in grads:
        print(f"{layer:<16} {out_norm:>14} {in_norm:>13}")

    model.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    nodes = saved_per_node(loss)
    print(f"\n{'node':<20} {'activation bytes':>16}  saved tensors")
    for name, nbytes, attrs in nodes:
        print(f"{name:<20} {nbytes:>16,}  {', '.join(attrs)}")
    print(f"{'total':<20} {sum(n for _, n, _ in nodes):>16,}")
    loss.backward()
    return {"grads": grads, "nodes": nodes}


if __name__ == "__main__":
    main()
