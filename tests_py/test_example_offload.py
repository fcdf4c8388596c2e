"""examples/offload_to_disk.py on a tiny MLP: the disk hooks run, and the gradients
of the offloaded run equal the baseline's."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

import oracle

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "offload_to_disk.py"


def _load_example(monkeypatch):
    # The example picks its library at import time from EXAMPLE_USE_TORCH, and its
    # worker subprocesses inherit the variable. Keep both on the library under test.
    if oracle.AGAINST_TORCH:
        monkeypatch.setenv("EXAMPLE_USE_TORCH", "1")
    else:
        monkeypatch.delenv("EXAMPLE_USE_TORCH", raising=False)
    spec = importlib.util.spec_from_file_location("offload_to_disk", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.torch.__name__ == oracle.LIB_NAME
    return module


def test_offloaded_gradients_match_baseline(monkeypatch, capsys):
    example = _load_example(monkeypatch)
    results = example.main(["--layers", "3", "--width", "16", "--batch", "32"])
    out = capsys.readouterr().out

    base, off = results["baseline"], results["offload"]
    assert off["files"] > 0 and off["written"] > 0  # the pack hook did write files
    assert off["peak_on_disk"] > 0 and off["peak_in_ram"] > 0  # and unpack read them
    assert len(off["grads"]) == len(base["grads"]) == 3
    for got, expected in zip(off["grads"], base["grads"]):
        assert got.shape == expected.shape == (16, 16)
        assert np.allclose(got, expected)
    assert off["grads_match"] and base["grads_match"]
    assert off["max_grad_diff"] == 0.0  # np.save/np.load round-trip the exact bytes
    assert "match the baseline (np.allclose): yes" in out
    if not oracle.AGAINST_TORCH:  # saved_tensors_hooks(prefetch=) is npgrad's own
        pre = results["prefetch"]
        assert pre["files"] == off["files"] and pre["prefetched"] > 0  # files were read ahead
        assert pre["max_grad_diff"] == 0.0
        assert "files read ahead" in out
