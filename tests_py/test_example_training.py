"""The training examples on tiny settings: they run, and their memory policies
(``--checkpoint``: blocks under ``utils.checkpoint``; ``--offload``: saved
tensors on disk) change no gradient: the loss curves equal the baseline's, bit
for bit. ``module_hooks.py`` reports a gradient norm per layer and the saved
activations per node.

The digits example needs scikit-learn, tqdm and matplotlib, and the character
transformer tqdm and matplotlib (the ``examples`` extra); the tests skip
without them."""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys

import pytest

import oracle

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def _require_sklearn():
    # The sanitizer run blocks torch with sys.modules["torch"] = None, and
    # scikit-learn's array-API checks then read None.Tensor.
    if "torch" in sys.modules and sys.modules["torch"] is None:
        pytest.skip("scikit-learn fails while torch is blocked in sys.modules (the sanitizer run)")
    pytest.importorskip("sklearn")


def _load_example(name, monkeypatch):
    # The examples pick their library at import time from EXAMPLE_USE_TORCH.
    if oracle.AGAINST_TORCH:
        monkeypatch.setenv("EXAMPLE_USE_TORCH", "1")
    else:
        monkeypatch.delenv("EXAMPLE_USE_TORCH", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    monkeypatch.delitem(sys.modules, "_memory_policies", raising=False)
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.torch.__name__ == oracle.LIB_NAME
    return module


def test_module_hooks_reports_every_layer_and_node(monkeypatch, capsys):
    example = _load_example("module_hooks", monkeypatch)
    result = example.main(["--batch", "4"])
    out = capsys.readouterr().out
    # Backward reaches the layers last to first; every layer has both norms.
    layers = [row[0] for row in result["grads"]]
    assert layers == ["5: Linear", "4: Dropout", "3: Tanh", "2: Linear", "1: ReLU", "0: Linear"]
    assert all(float(g_out) > 0 and float(g_in) > 0 for _, g_out, g_in in result["grads"])
    nodes = {name: (nbytes, attrs) for name, nbytes, attrs in result["nodes"]}
    # The saved activations: tanh's result (4 x 128 float32) and relu's.
    assert nodes["TanhBackward0"] == (4 * 128 * 4, ["result"])
    assert nodes["ReluBackward0"] == (4 * 128 * 4, ["result"])
    assert nodes["AccumulateGrad"] == (0, [])
    assert "AddmmBackward0" in out and "total" in out


def _digits_history(example, policy, tmp_path):
    flags = {"baseline": [], "checkpoint": ["--checkpoint"], "offload": ["--offload"]}[policy]
    result = example.train(
        example.parse_args(
            ["--epochs", "2", "--train-size", "480", "--quiet", "--plot", str(tmp_path / "d.png"), *flags]
        )
    )
    return result["history"]


def test_digits_cnn_policies_train_identically(monkeypatch, tmp_path):
    _require_sklearn()
    pytest.importorskip("tqdm")
    example = _load_example("train_digits_cnn", monkeypatch)
    histories = {p: _digits_history(example, p, tmp_path) for p in ("baseline", "checkpoint", "offload")}
    base = histories["baseline"]
    # Two epochs on 480 images already learn: the loss falls well below
    # ln(10) = 2.3 (chance) and the test accuracy above 50% (chance: 10%).
    assert base["loss"][-1] < 1.5 and base["test_accuracy"][-1] > 0.5
    assert histories["offload"] == base
    # Checkpointing recomputes each block in training mode during backward, so
    # BatchNorm updates its running statistics twice per step (torch's known
    # caveat): the losses are the same, the eval-mode accuracy may differ.
    assert histories["checkpoint"]["loss"] == base["loss"]


def test_digits_cnn_main_prints_the_policy_table_and_plot(monkeypatch, tmp_path, capsys):
    _require_sklearn()
    pytest.importorskip("tqdm")
    pytest.importorskip("matplotlib")
    example = _load_example("train_digits_cnn", monkeypatch)
    plot = tmp_path / "curves.png"
    example.main(["--epochs", "1", "--train-size", "64", "--quiet", "--batch-size", "16", "--plot", str(plot)])
    out = capsys.readouterr().out
    assert plot.stat().st_size > 0
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    for policy in ("baseline", "checkpoint", "offload"):
        assert policy in lines
    if not oracle.AGAINST_TORCH:
        # Checkpointing keeps less of the step's activations alive than the baseline.
        assert float(lines["checkpoint"][1]) < float(lines["baseline"][1])


TINY_TRANSFORMER = [
    "--steps", "4", "--layers", "2", "--width", "16", "--heads", "2", "--context", "8",
    "--batch-size", "4", "--sample-length", "5", "--quiet", "--plot", "",
]  # fmt: skip


def test_char_transformer_policies_train_identically(monkeypatch):
    pytest.importorskip("tqdm")
    example = _load_example("train_char_transformer", monkeypatch)
    runs = {
        flag: example.train(example.parse_args([*TINY_TRANSFORMER, *([flag] if flag else [])]))
        for flag in ("", "--checkpoint", "--offload")
    }
    base = runs[""]
    assert len(base["losses"]) == 4
    # An untrained model predicts about uniformly: the first loss is near ln(vocab).
    assert abs(base["losses"][0] - math.log(base["vocab"])) < 0.5
    assert base["sample"].startswith("Return the ") and len(base["sample"]) == len("Return the ") + 5
    assert runs["--checkpoint"]["losses"] == base["losses"]
    assert runs["--offload"]["losses"] == base["losses"]
