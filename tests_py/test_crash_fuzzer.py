"""No input crashes npgrad: the crash fuzzer (crash_fuzzer.py) in a bounded run.

Every public callable of npgrad, discovered by walking the package (so modules
added later are fuzzed without being listed here), is called with generated
arguments in child processes; the test fails on any call that kills the
interpreter, hangs or raises SystemError, and names it. The graph mode builds
random graphs with misbehaving callbacks and checks the engine still works after
each. The size of the run: NPGRAD_FUZZ_CALLS_PER_TARGET (default 20) calls per
entry point and NPGRAD_FUZZ_GRAPHS (default 1500) programs, for each seed in
NPGRAD_FUZZ_SEEDS (default "1 2"). Long local runs: see crash_fuzzer.py.
"""

from __future__ import annotations

import os

import pytest

import crash_fuzzer
import oracle

pytestmark = pytest.mark.skipif(
    oracle.AGAINST_TORCH, reason="fuzzes npgrad's own surface (torch 2.13 has crashes of its own)"
)

SEEDS = [int(s) for s in os.environ.get("NPGRAD_FUZZ_SEEDS", "1 2").split()]
CALLS_PER_TARGET = int(os.environ.get("NPGRAD_FUZZ_CALLS_PER_TARGET", "20"))
GRAPHS = int(os.environ.get("NPGRAD_FUZZ_GRAPHS", "1500"))


def _report(findings: list[crash_fuzzer.Finding]) -> str:
    return "\n".join(str(f) for f in findings)


@pytest.mark.parametrize("seed", SEEDS)
def test_no_call_of_the_public_surface_crashes_hangs_or_raises_system_error(seed):
    count = CALLS_PER_TARGET * crash_fuzzer.number_of_targets()
    findings = crash_fuzzer.run("api", seed, count, env=oracle.child_env())
    assert not findings, _report(findings)


@pytest.mark.parametrize("seed", SEEDS)
def test_no_graph_with_misbehaving_callbacks_crashes_or_breaks_the_engine(seed):
    findings = crash_fuzzer.run("graph", seed, GRAPHS, env=oracle.child_env())
    assert not findings, _report(findings)


def test_discovery_covers_every_public_module_and_tensor_method():
    import npgrad
    import npgrad.autograd.graph as graph

    names = {t.name for t in crash_fuzzer.discover(npgrad)}
    for name in graph.__all__:
        if callable(getattr(graph, name)):
            assert f"npgrad.autograd.graph.{name}" in names or any(n.endswith(f".{name}") for n in names), name
    for name in (
        "npgrad.sin",
        "npgrad.autograd.grad",
        "npgrad.autograd.backward",
        "npgrad.utils.viz.to_dot",
        "npgrad.testing.assert_close",
    ):
        assert name in names
    for method in ("copy_", "expand_as", "view_as", "matmul", "backward", "register_hook", "__add__", "__setitem__"):
        assert f"Tensor.{method}" in names
    assert "Tensor.grad" in names and "Tensor.data" in names  # properties are set too
    assert "Node.register_hook" in names
    modules = {m.__name__ for m in crash_fuzzer.public_modules(npgrad)}
    assert {"npgrad", "npgrad.autograd", "npgrad.autograd.graph", "npgrad.utils"} <= modules


@pytest.mark.parametrize(
    "planted,what",
    [
        ("segfault", ("crash (signal ", "exit status ")),  # ASan reports it and exits with 1
        ("hang", ("hang",)),
        ("system_error", ("SystemError: planted",)),
    ],
)
def test_the_fuzzer_names_a_crash_a_hang_and_a_system_error(planted, what):
    """The harness itself: a planted target that segfaults, hangs or raises
    SystemError is reported with its call, and the run goes on after it."""
    env = dict(oracle.child_env(), NPGRAD_FUZZ_PLANT=planted)
    findings = crash_fuzzer.run("api", 0, 3, call_timeout=5.0 if planted == "hang" else 30.0, env=env)
    assert [f.index for f in findings] == [0, 1, 2]
    assert all(f.what.startswith(what) for f in findings), _report(findings)  # a tuple of prefixes
    assert all(f.call.startswith(f"planted.{planted}(") for f in findings), _report(findings)
