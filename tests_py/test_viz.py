"""npgrad.utils.viz: the DOT text of a backward graph (structure, labels, saved
tensors, hook markers, determinism, a 100k-node chain) and rendering with Graphviz.

npgrad-only: torch has no ``torch.utils.viz.to_dot``."""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import oracle

pytestmark = pytest.mark.skipif(oracle.AGAINST_TORCH, reason="npgrad.utils.viz is npgrad's own API")

if not oracle.AGAINST_TORCH:
    import npgrad as torch
    from npgrad.utils.viz import render, to_dot

ROOT = pathlib.Path(__file__).resolve().parents[1]

_NODE = re.compile(r'^\t(\w+) \[label="((?:[^"\\]|\\.)*)"(?: (.*))?\]$')
_EDGE = re.compile(r"^\t(\w+) -> (\w+)(?: \[(.*)\])?$")


def parse(dot: str) -> tuple[dict[str, tuple[list[str], str]], list[tuple[str, str, str]]]:
    """DOT text -> ({id: (label lines, style)}, [(tail, head, style)]) in order."""
    lines = dot.splitlines()
    assert lines[0] == "digraph {" and lines[-1] == "}"
    nodes: dict[str, tuple[list[str], str]] = {}
    edges: list[tuple[str, str, str]] = []
    for line in lines[1:-1]:
        if line.startswith(("\tgraph [", "\tnode [")):
            continue
        m = _NODE.match(line)
        if m:
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            label = [part.replace('\\"', '"').replace("\\\\", "\\") for part in m.group(2).split("\\n")]
            nodes[m.group(1)] = (label, m.group(3) or "")
            continue
        m = _EDGE.match(line)
        assert m, f"unexpected DOT line: {line!r}"
        edges.append((m.group(1), m.group(2), m.group(3) or ""))
    for tail, head, _ in edges:
        assert tail in nodes and head in nodes
    return nodes, edges


def graph_edges(edges: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """The edges between outputs and autograd nodes (not the saved-tensor ones)."""
    return [(a, b) for a, b, _ in edges if not b.startswith("s")]


def first_lines(nodes: dict[str, tuple[list[str], str]]) -> dict[str, str]:
    return {k: label[0] for k, (label, _) in nodes.items()}


ACC = "torch::autograd::AccumulateGrad"  # AccumulateGrad's name(), as torch's


# ----------------------------------------------------------------------------------
# Structure


def test_exact_text_of_a_small_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    dot = to_dot((x * x).sum(), params={"x": x})
    assert dot == (
        "digraph {\n"
        "\tgraph [rankdir=TB]\n"
        "\tnode [align=left fontname=monospace fontsize=10 height=0.2 shape=box style=filled]\n"
        '\tt0 [label="output\\n()" fillcolor=darkolivegreen1]\n'
        "\tt0 -> n0\n"
        '\tn0 [label="SumBackward0"]\n'
        "\tn0 -> n1\n"
        '\tn1 [label="MulBackward0"]\n'
        "\tn1 -> n2\n"
        "\tn1 -> n2\n"
        f'\tn2 [label="{ACC}\\nx\\n(2,)" fillcolor=lightblue]\n'
        "}\n"
    )


def test_nodes_and_edges_follow_next_functions():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0, 6.0])  # needs no grad: its slot in next_functions is None
    loss = (a * b + a.sin() * c).sum()
    nodes, edges = parse(to_dot(loss))
    # breadth-first numbering from the output; a's AccumulateGrad is shared
    assert first_lines(nodes) == {
        "t0": "output",
        "n0": "SumBackward0",
        "n1": "AddBackward0",
        "n2": "MulBackward0",
        "n3": "MulBackward0",
        "n4": ACC,
        "n5": ACC,
        "n6": "SinBackward0",
    }
    assert graph_edges(edges) == [
        ("t0", "n0"),
        ("n0", "n1"),
        ("n1", "n2"),
        ("n1", "n3"),
        ("n2", "n4"),
        ("n2", "n5"),
        ("n3", "n6"),
        ("n6", "n4"),
    ]
    # the same facts, read back from the graph itself
    mul_ab, mul_c = (f for f, _ in loss.grad_fn.next_functions[0][0].next_functions)
    assert [f is None for f, _ in mul_c.next_functions] == [False, True]
    assert mul_c.next_functions[0][0].next_functions[0][0] is mul_ab.next_functions[0][0]


def test_every_node_label_starts_with_its_name():
    x = torch.randn(3, 4, requires_grad=True)
    y = (x.t() @ x).tanh().view(-1)[2:].exp().mean()
    nodes, _ = parse(to_dot(y))
    names, stack, seen, alive = [], [y.grad_fn], set(), []
    while stack:  # every node reachable from y, by identity
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        alive.append(node)  # so that no id() is reused by a later wrapper
        names.append(node.name())
        stack.extend(f for f, _ in node.next_functions if f is not None)
    drawn = sorted(label[0] for k, (label, _) in nodes.items() if k.startswith("n"))
    assert drawn == sorted(names)
    assert "TBackward0" in drawn and "MmBackward0" in drawn and "SliceBackward0" in drawn


# ----------------------------------------------------------------------------------
# Names, shapes, outputs


def test_params_name_leaves_and_outputs():
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    anon = torch.ones(3, requires_grad=True)
    out = w @ anon + b
    nodes, _ = parse(to_dot(out, params={"fc.weight": w, "fc.bias": b, "logits": out}))
    labels = {k: label for k, (label, _) in nodes.items()}
    leaves = sorted(label[1:] for label in labels.values() if label[0] == ACC)
    assert leaves == [["(3,)"], ["fc.bias", "(4,)"], ["fc.weight", "(4, 3)"]]
    assert labels["t0"] == ["logits", "(4,)"]
    for label, style in nodes.values():
        if label[0] == ACC:
            assert "fillcolor=lightblue" in style
    assert "fillcolor=darkolivegreen1" in nodes["t0"][1]


def test_several_outputs_leaf_outputs_and_constants():
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    z = x.cos()
    const = torch.zeros(5)
    nodes, edges = parse(to_dot([y, z, x, const]))
    assert [nodes[f"t{i}"][0] for i in range(4)] == [
        ["output 0", "(2,)"],
        ["output 1", "(2,)"],
        ["output 2", "(2,)"],
        ["output 3", "(5,)"],
    ]
    assert graph_edges(edges) == [("t0", "n0"), ("t1", "n1"), ("n0", "n2"), ("n1", "n2")]
    assert first_lines(nodes)["n2"] == ACC  # one AccumulateGrad for both paths
    assert to_dot((y, z)) == to_dot([y, z])  # tuples and lists alike


def test_bad_arguments():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="Tensor or a sequence of Tensors"):
        to_dot(x.grad_fn)
    with pytest.raises(TypeError, match="Tensor or a sequence of Tensors"):
        to_dot([x, 3])
    with pytest.raises(TypeError, match=re.escape("params['w'] must be a Tensor")):
        to_dot(x * 2, params={"w": 3})
    with pytest.raises(TypeError, match="params must be a dict"):
        to_dot(x * 2, params=[x])


def test_labels_are_escaped():
    x = torch.ones(2, requires_grad=True)
    nodes, _ = parse(to_dot(x * 2, params={'odd "name" \\ here': x}))
    assert nodes["n1"][0] == [ACC, 'odd "name" \\ here', "(2,)"]


# ----------------------------------------------------------------------------------
# Saved tensors


def test_saved_tensors_hidden_by_default():
    x = torch.randn(2, 3, requires_grad=True)
    nodes, _ = parse(to_dot((x @ x.t()).sum(dim=0)))
    assert not any(k.startswith("s") for k in nodes)
    inner = [label for k, (label, _) in nodes.items() if k.startswith("n") and label[0] != ACC]
    assert inner and all(len(label) == 1 for label in inner)  # no saved values in labels


def test_saved_tensors_with_shape_dtype_and_names():
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    y = (x * x).sum(dim=1, keepdim=True)  # MulBackward0 saves x twice; SumBackward1 a dim
    z = torch.randn(5, 3) @ w  # MmBackward0 saves a non-leaf self, mat2 None
    nodes, edges = parse(to_dot([y, z], params={"x": x, "w": w}, show_saved=True))
    labels = {k: label for k, (label, _) in nodes.items()}
    by_name = {label[0]: k for k, label in labels.items() if k.startswith("n")}
    assert labels[by_name["SumBackward1"]][1:] == ["dim: (1,)", "keepdim: True", "self_sym_sizes: (2, 3)"]
    mul = by_name["MulBackward0"]
    saved_of_mul = [labels[head] for tail, head, style in edges if tail == mul and head.startswith("s")]
    assert saved_of_mul == [["other", "x", "(2, 3)", "float64"], ["self", "x", "(2, 3)", "float64"]]
    mm = by_name["MmBackward0"]
    assert "self: (5, 3)" not in labels[mm]
    saved_of_mm = [labels[head] for tail, head, _ in edges if tail == mm and head.startswith("s")]
    assert saved_of_mm == [["self", "(5, 3)", "float32"]]
    assert "mat2: None" in labels[mm]  # w's gradient needs self only
    for _tail, head, style in edges:
        if head.startswith("s"):
            assert style == "style=dashed arrowhead=none"
            assert "fillcolor=orange" in nodes[head][1]


def test_saved_tensors_after_backward_are_shown_freed():
    x = torch.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    nodes, _ = parse(to_dot(y, show_saved=True))
    mul = next(label for label, _ in nodes.values() if label[0] == "MulBackward0")
    assert mul[1:] == ["other: <freed>", "self: <freed>"]
    assert not any(k.startswith("s") for k in nodes)


def test_saved_tensors_of_a_custom_function():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    x = torch.ones(2, 2, requires_grad=True)
    nodes, edges = parse(to_dot(Square.apply(x), params={"x": x}, show_saved=True))
    assert nodes["n0"][0] == ["SquareBackward"]
    assert [nodes[h][0] for t, h, _ in edges if h.startswith("s")] == [["saved_tensors[0]", "x", "(2, 2)", "float32"]]


def test_saved_tensor_lists():
    a = torch.ones(2, requires_grad=True)
    b = torch.ones(3, requires_grad=True)
    nodes, _ = parse(to_dot(torch.stack([a, a]).sum() + torch.cat([a, b]).sum(), show_saved=True))
    names = [label[0] for label, _ in nodes.values()]
    assert "CatBackward0" in names and "StackBackward0" in names
    cat = next(label for label, _ in nodes.values() if label[0] == "CatBackward0")
    assert "dim: 0" in cat


# ----------------------------------------------------------------------------------
# Hook markers


def test_hooks_are_marked():
    w = torch.ones(2, requires_grad=True)
    b = torch.ones(2, requires_grad=True)
    h1 = w.register_hook(lambda g: g)
    w.register_hook(lambda g: g)
    w.register_post_accumulate_grad_hook(lambda p: None)
    y = w * b
    y.register_hook(lambda g: g)
    nodes, _ = parse(to_dot(y, params={"w": w, "b": b}))
    assert nodes["t0"][0] == ["output", "(2,)", "hooks: tensor x1"]
    assert "color=red penwidth=2" in nodes["t0"][1]
    assert nodes["n1"][0] == [ACC, "w", "(2,)", "hooks: tensor x2, post-accumulate x1"]
    assert "color=red penwidth=2" in nodes["n1"][1]
    assert nodes["n2"][0] == [ACC, "b", "(2,)"]  # no hooks: no marker
    assert "red" not in nodes["n2"][1] and "red" not in nodes["n0"][1]

    h1.remove()  # the marker counts live hooks
    nodes, _ = parse(to_dot(y, params={"w": w, "b": b}))
    assert nodes["n1"][0][-1] == "hooks: tensor x1, post-accumulate x1"


# ----------------------------------------------------------------------------------
# Determinism and size


def _model_loss():
    torch.manual_seed(3)
    w1 = torch.randn(4, 8, requires_grad=True)
    w2 = torch.randn(8, 2, requires_grad=True)
    x = torch.randn(5, 4)
    return ((x @ w1).relu() @ w2).sum(), {"w1": w1, "w2": w2}


def test_output_is_deterministic():
    loss, params = _model_loss()
    first = to_dot(loss, params=params, show_saved=True)
    assert to_dot(loss, params=params, show_saved=True) == first
    other_loss, other_params = _model_loss()  # a new graph, new objects and addresses
    assert to_dot(other_loss, params=other_params, show_saved=True) == first
    assert "0x" not in first  # no memory addresses leak into the text


def test_chain_of_100k_nodes_without_recursion():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.5
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # a recursive walk would fail far earlier than 100k
    try:
        dot = to_dot(y)
    finally:
        sys.setrecursionlimit(limit)
    lines = dot.splitlines()
    assert sum(" -> " in line for line in lines) == 100_001  # t0 -> n0, then the chain
    assert lines[-2] == f'\tn100000 [label="{ACC}\\n(1,)" fillcolor=lightblue]'
    assert lines[-3] == "\tn99999 -> n100000"


# ----------------------------------------------------------------------------------
# render


def _needs_graphviz():
    pytest.importorskip("graphviz", reason="the graphviz Python package is not installed (pip install graphviz)")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")


def test_render_svg_and_png(tmp_path):
    _needs_graphviz()
    loss, params = _model_loss()
    svg = render(loss, tmp_path / "g.svg", params=params)
    assert svg == tmp_path / "g.svg"
    text = svg.read_text()
    assert "<svg" in text and "MmBackward0" in text and "w1" in text
    png = render(loss, str(tmp_path / "g.PNG"), params=params, show_saved=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_rejects_other_suffixes(tmp_path):
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"\.svg or \.png"):
        render(x * 2, tmp_path / "g.pdf")
    assert not (tmp_path / "g.pdf").exists()


def test_render_without_graphviz_package(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(ImportError, match="pip install graphviz") as info:
        render(x * 2, tmp_path / "g.svg")
    assert "apt-get install graphviz" in str(info.value)
    assert not (tmp_path / "g.svg").exists()


def test_render_without_dot_program(tmp_path, monkeypatch):
    pytest.importorskip("graphviz", reason="the graphviz Python package is not installed (pip install graphviz)")
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` to be found
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="could not run Graphviz's 'dot' program") as info:
        render(x * 2, tmp_path / "g.png")
    assert "apt-get install graphviz" in str(info.value)
    assert not (tmp_path / "g.png").exists()


def test_draw_graph_example(tmp_path):
    _needs_graphviz()
    env = oracle.child_env()
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "draw_graph.py"), "--out-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    nodes, _ = parse(result.stdout[: result.stdout.index("}\n") + 2])
    leaves = sorted(label[1] for label, _ in nodes.values() if label[0] == ACC)
    assert leaves == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "fc3.bias", "fc3.weight"]
    assert (tmp_path / "mlp_graph.svg").read_text().count("AccumulateGrad") == 6
    assert (tmp_path / "mlp_graph.png").read_bytes()[:4] == b"\x89PNG"
