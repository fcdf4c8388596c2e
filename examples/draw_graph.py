"""Draw the backward graph of a small MLP with npgrad.utils.viz.

    python examples/draw_graph.py [--out-dir docs] [--show-saved]

A three-layer MLP (batch 64, 256 -> 512 -> 128 -> 10, ReLU between layers)
with a mean-squared-error loss. Its parameters are passed by name, so every
AccumulateGrad box says which weight it fills; a post-accumulate-grad hook on
``fc3.weight`` shows how hooks are marked (red border). Writes
``mlp_graph.svg`` and ``mlp_graph.png`` (needs ``pip install graphviz`` and
Graphviz's ``dot``, e.g. ``apt-get install graphviz``), and prints the DOT text.
"""

from __future__ import annotations

import argparse
import pathlib

import npgrad as torch
from npgrad.utils.viz import render, to_dot


def linear_params(name: str, fan_in: int, fan_out: int) -> dict[str, torch.Tensor]:
    """A weight (fan_out x fan_in) and bias, scaled like torch.nn.Linear's init."""
    bound = fan_in**-0.5
    weight = ((torch.rand(fan_out, fan_in) * 2 - 1) * bound).requires_grad_()
    bias = ((torch.rand(fan_out) * 2 - 1) * bound).requires_grad_()
    return {f"{name}.weight": weight, f"{name}.bias": bias}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=str(pathlib.Path(__file__).resolve().parent.parent / "docs"))
    parser.add_argument("--show-saved", action="store_true", help="also draw the saved tensors")
    args = parser.parse_args()

    torch.manual_seed(0)
    params = {**linear_params("fc1", 256, 512), **linear_params("fc2", 512, 128), **linear_params("fc3", 128, 10)}
    params["fc3.weight"].register_post_accumulate_grad_hook(lambda p: None)

    x = torch.randn(64, 256)
    target = torch.randn(64, 10)
    h = (x @ params["fc1.weight"].t() + params["fc1.bias"]).relu()
    h = (h @ params["fc2.weight"].t() + params["fc2.bias"]).relu()
    out = h @ params["fc3.weight"].t() + params["fc3.bias"]
    loss = ((out - target) ** 2).mean()

    print(to_dot(loss, params=params, show_saved=args.show_saved))
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for suffix in (".svg", ".png"):
        path = render(loss, out_dir / f"mlp_graph{suffix}", params=params, show_saved=args.show_saved)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
