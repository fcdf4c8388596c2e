"""The benchmark suite measures correct programs.

Each workload of ``benchmarks/bench_vs_torch.py`` runs once, at its smallest size
("tiny"), on the library under test (npgrad, or torch with
``NPGRAD_TESTS_AGAINST_TORCH=1``) and on the hand-written NumPy floor; the
gradients must agree. Nothing here looks at time.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

BENCH_DIR = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH_DIR))

import bench_memory  # noqa: E402
import bench_vs_torch  # noqa: E402
import bench_workloads  # noqa: E402

TINY = bench_workloads.make_workloads("tiny")


def _as_arrays(grads):
    return [np.array(bench_vs_torch.to_numpy(g), copy=True) for g in grads]


def _assert_grads_match(got, ref, what):
    assert len(got) == len(ref), what
    for i, (g, r) in enumerate(zip(got, ref)):
        assert g.shape == r.shape, (what, i)
        assert g.dtype == r.dtype, (what, i, g.dtype, r.dtype)
        scale = float(np.abs(r).max()) or 1.0
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5 * scale, err_msg=f"{what}: gradient {i}")


def test_every_workload_is_covered():
    keys = {w.key[0] for w in TINY}
    assert keys == set("abcdefgh")  # (i) is tested below, in this process
    assert {w.key for w in TINY if w.key.startswith("e")} == {"e100", "e200", "e400"}


@pytest.mark.parametrize("w", TINY, ids=[w.key for w in TINY])
def test_workload_matches_numpy_floor(ng, w):
    floor = w.impls["numpy"]
    ref_grads, ref_phases = bench_vs_torch.split_result(floor.run(floor.setup(np)))
    ref = _as_arrays(ref_grads)
    impl = w.impls["torch"]  # the code npgrad and torch share
    state = impl.setup(ng)
    for run in range(2):  # a second run on the same state (MLP: after the SGD step)
        grads, phases = bench_vs_torch.split_result(impl.run(state))
        assert set(phases) == set(ref_phases) == set(w.phases)
        assert all(s >= 0 for s in phases.values())
        if run == 0:
            _assert_grads_match(_as_arrays(grads), ref, w.name)


@pytest.mark.parametrize("variant", bench_memory.VARIANTS)
def test_memory_workload_matches_numpy_floor(ng, variant):
    ws, x = bench_memory.model_data(*bench_memory.MEM_SIZES["tiny"])
    ref = bench_memory.forward_backward_numpy(ws, x)
    got = bench_memory.run_one("npgrad", variant, ws, x, lib=ng)
    _assert_grads_match([np.array(g) for g in got], ref, f"(i) {variant}")


def test_targets_and_ratios_are_computed_from_medians():
    m = {"npgrad": 1.0, "torch": 4.0, "numpy": 0.5, "mygrad": 20.0, "autograd": None}
    r = bench_vs_torch.ratios(m)
    assert r["npgrad/torch"] == 0.25 and r["npgrad/floor"] == 2.0
    assert r["mygrad/npgrad"] == 20.0 and r["autograd/npgrad"] is None
    targets = bench_vs_torch.evaluate_targets({"a": {"ratios": r}}, None, None)
    met = {t["target"]: t["met"] for t in targets}
    assert met["(a) npgrad/torch"] is True
    assert met["(a) npgrad/floor"] is False
    assert met["(a) mygrad/npgrad (pure-Python peer)"] is True
    assert met["(a) autograd/npgrad (pure-Python peer)"] is None
