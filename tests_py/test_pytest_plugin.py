"""The pytest plugin shipped in npgrad (``npgrad.pytest_plugin``): its entry point, and
its fixtures ``executed_nodes``, ``saved_tensor_bytes`` and ``gradcheck`` exercised in
inner pytest runs through ``pytester`` (with ``-W error``, as the project's suite runs).

npgrad-only: skipped with ``NPGRAD_TESTS_AGAINST_TORCH=1``."""

from __future__ import annotations

import importlib.metadata
import pathlib
import sys

import pytest

import npgrad  # see below
from oracle import AGAINST_TORCH

# npgrad is imported here, before any inner run: pytester's in-process runs drop the
# modules they imported, and npgrad's native module cannot be initialised twice.

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own pytest plugin")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _plugin_args() -> list[str]:
    """``-p npgrad.pytest_plugin`` unless an installed npgrad already registers the
    plugin through its entry point (loading it twice is an error)."""
    registered = any(
        ep.name == "npgrad" and ep.value == "npgrad.pytest_plugin"
        for ep in importlib.metadata.entry_points(group="pytest11")
    )
    return [] if registered else ["-p", "npgrad.pytest_plugin"]


# The inner runs happen in this process: under pytest-xdist they would see its
# worker environment (and pytest-benchmark, where installed, warns about it).
_QUIET_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:benchmark")


def run_inner(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_inner=source)
    return pytester.runpytest(*_plugin_args(), "-W", "error", *_QUIET_PLUGINS, *args)


def test_entry_point_is_declared_in_pyproject():
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else pytest.importorskip("tomli")
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["entry-points"]["pytest11"] == {"npgrad": "npgrad.pytest_plugin"}


def test_fixtures_are_listed(pytester):
    result = pytester.runpytest(*_plugin_args(), "--fixtures", *_QUIET_PLUGINS)
    result.stdout.fnmatch_lines(["*executed_nodes*", "*saved_tensor_bytes*", "*gradcheck*"])


EXECUTED_NODES_TESTS = """
import threading
import npgrad

def test_order_of_one_pass(executed_nodes):
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sin().sum().backward()
    assert executed_nodes == ["SumBackward0", "SinBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    assert executed_nodes.passes == [list(executed_nodes)]

def test_grad_prunes_and_custom_functions_are_named(executed_nodes):
    class Cube(npgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    y = npgrad.tensor([3.0, 4.0], requires_grad=True)
    out = (Cube.apply(x) + y.exp()).sum()
    npgrad.autograd.grad(out, [x])   # y's branch is pruned; grad() accumulates nothing
    assert executed_nodes == ["SumBackward0", "AddBackward0", "CubeBackward"]

def test_passes_are_separated_and_reentrant_passes_recorded(executed_nodes):
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    def hook(g):
        z = x.detach().requires_grad_()
        with npgrad.enable_grad():
            z.exp().sum().backward()
        return g
    t = x.sin()
    t.register_hook(hook)
    t.sum().backward()
    assert executed_nodes.passes == [
        ["SumBackward0", "SinBackward0", "torch::autograd::AccumulateGrad"],
        ["SumBackward0", "ExpBackward0", "torch::autograd::AccumulateGrad"],
    ]
    # In time order, the nested pass runs inside the outer one (from t's hook).
    assert executed_nodes[:2] == ["SumBackward0", "SumBackward0"]
    executed_nodes.clear()
    assert executed_nodes == [] and executed_nodes.passes == []

def test_other_threads(executed_nodes):
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    th = threading.Thread(target=lambda: x.tanh().sum().backward())
    th.start(); th.join()
    assert executed_nodes == ["SumBackward0", "TanhBackward0", "torch::autograd::AccumulateGrad"]

def test_nothing_without_backward(executed_nodes):
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum()
    assert executed_nodes == []
"""


def test_executed_nodes(pytester):
    result = run_inner(pytester, EXECUTED_NODES_TESTS)
    result.assert_outcomes(passed=5)


def test_executed_nodes_restores_the_logger(pytester):
    source = """
import logging
import pytest

@pytest.fixture
def before():
    logger = logging.getLogger("npgrad.autograd.graph")
    return logger.level, logger.propagate, list(logger.handlers)

def test_a(before, executed_nodes):
    assert logging.getLogger("npgrad.autograd.graph").level == logging.DEBUG

def test_b(before):
    logger = logging.getLogger("npgrad.autograd.graph")
    assert (logger.level, logger.propagate, list(logger.handlers)) == (logging.NOTSET, True, [])
"""
    run_inner(pytester, source).assert_outcomes(passed=2)


SAVED_BYTES_TESTS = """
import npgrad

class Cube(npgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g

def test_counts_and_attribution_before_backward(saved_tensor_bytes):
    x = npgrad.randn(100, requires_grad=True)                 # float32: 400 bytes
    w = npgrad.randn(100, dtype=npgrad.float64, requires_grad=True)   # 800 bytes
    with saved_tensor_bytes:
        y = (x.exp() * x).sum()                               # exp saves its result; mul both
        c = Cube.apply(w).sum()
    outside = (x * x).sum()                                   # not recorded
    assert saved_tensor_bytes.count == 4
    assert saved_tensor_bytes.total == 400 + 2 * 400 + 800
    assert saved_tensor_bytes.by_node == {}                   # nothing unpacked yet
    assert saved_tensor_bytes.attribute(y, c) == {"ExpBackward0": 400, "MulBackward0": 800, "CubeBackward": 800}
    assert [r.shape for r in saved_tensor_bytes.records] == [(100,)] * 4

def test_attribution_during_backward(saved_tensor_bytes):
    x = npgrad.randn(10, 10, dtype=npgrad.float64, requires_grad=True)
    with saved_tensor_bytes:
        y = (x @ x).tanh().sum()
    y.backward()
    assert saved_tensor_bytes.by_node == {"MmBackward0": 1600, "TanhBackward0": 800}
    assert saved_tensor_bytes.attribute(y) == saved_tensor_bytes.by_node   # freed: skipped
    saved_tensor_bytes.clear()
    assert saved_tensor_bytes.total == 0

def test_blocks_add_up_and_gradients_are_unchanged(saved_tensor_bytes):
    x = npgrad.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensor_bytes:
        a = x.sin()
    with saved_tensor_bytes:
        b = x.cos()
    (a + b).sum().backward()
    assert saved_tensor_bytes.count == 2
    assert saved_tensor_bytes.by_node == {"SinBackward0": 8, "CosBackward0": 8}
    assert x.grad.tolist() == (x.detach().cos() - x.detach().sin()).tolist()
"""


def test_saved_tensor_bytes(pytester):
    run_inner(pytester, SAVED_BYTES_TESTS).assert_outcomes(passed=3)


def test_saved_tensor_bytes_does_not_keep_tensors_alive():
    import gc
    import weakref

    from npgrad.pytest_plugin import SavedTensorBytes

    recorder = SavedTensorBytes()
    x = npgrad.randn(1000, requires_grad=True)
    with recorder:
        y = x.exp()
    ref = weakref.ref(y.grad_fn)
    y.sum().backward()
    del y
    gc.collect()
    assert ref() is None and recorder.total == 4000


GRADCHECK_TESTS = """
import npgrad

class Square(npgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

class WrongSquare(Square):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * g

def x():
    return npgrad.tensor([0.5, -1.0], dtype=npgrad.float64, requires_grad=True)

def test_right(gradcheck):
    assert gradcheck(Square.apply, (x(),), gradgrad=True)
    assert gradcheck(Square.apply, (x(),), fast_mode=True)

def test_wrong(gradcheck):
    gradcheck(WrongSquare.apply, (x(),))
"""


def test_gradcheck_fixture_fails_with_the_report(pytester):
    result = run_inner(pytester, GRADCHECK_TESTS)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*gradcheck failed:",
            "Jacobian mismatch for output 0 with respect to input 0,",
            "numerical:tensor([[ 1.0000,  0.0000],",
            "analytical:tensor([[ 1.5000,  0.0000],",
        ]
    )
    # pytrace=False: the report, not a traceback into the plugin.
    assert "pytest_plugin.py" not in result.stdout.str()
