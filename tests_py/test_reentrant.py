"""Reentrant backward: ``backward``/``autograd.grad`` called while a pass is running
(inside a tensor hook, a node hook, a post-accumulate-grad hook or a custom
Function's backward), and torch's depth limit.

torch's engine (engine.cpp) runs a nested pass on the calling thread and returns to
the outer one when it completes; nested work goes before outer work in the shared
ready queue. Its CPU depth limit: at most ``MAX_DEPTH = 60`` nested passes run on one
thread; the next one is handed to a pool thread (which again runs up to 60 nested
passes), and the caller blocks until it finishes. Observable effects: the
outermost pass and the first 60 nested ones run on the calling thread, the 62nd
level on another thread; a 10,000-deep recursion of reentrant backwards neither
overflows the native stack nor hits Python's per-thread recursion limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import oracle
from oracle import AGAINST_TORCH, LIB_NAME, to_np

MAX_DEPTH = 60  # torch::autograd::Engine's max_recursion_depth_ (CPU)
TIMEOUT = 300


@pytest.fixture(scope="module", autouse=True)
def _let_pool_threads_settle():
    yield
    if AGAINST_TORCH:
        # torch's reentrant pool threads can still be finishing when the
        # interpreter exits, which sometimes aborts the process ("terminate called
        # without an active exception"); give them a moment.
        time.sleep(0.5)


def leaf(ng, values):
    return ng.tensor(values, dtype=ng.float64, requires_grad=True)


# ----------------------------------------------------------------------------------
# Reentrant calls from each kind of hook


@pytest.mark.parametrize("entry", ["backward", "grad"])
def test_reentrant_call_inside_a_tensor_hook(ng, entry):
    x = leaf(ng, [0.5, 1.0, 1.5])
    z = leaf(ng, [2.0, 3.0])
    inner = {}

    def hook(g):
        with ng.enable_grad():
            q = (z * z * z).sum()
        if entry == "backward":
            q.backward()
            inner["grad"] = to_np(z.grad)
        else:
            (gz,) = ng.autograd.grad(q, z)
            inner["grad"] = to_np(gz)
        return g * 2

    h = x.sin()
    h.register_hook(hook)
    (h * x).sum().backward()
    np.testing.assert_allclose(inner["grad"], [12.0, 27.0])
    xs = np.array([0.5, 1.0, 1.5])
    np.testing.assert_allclose(to_np(x.grad), 2 * xs * np.cos(xs) + np.sin(xs))
    if entry == "grad":
        assert z.grad is None


@pytest.mark.parametrize("kind", ["prehook", "posthook"])
def test_reentrant_grad_inside_a_node_hook(ng, kind):
    x = leaf(ng, [0.5, 1.0])
    z = leaf(ng, [1.0, 2.0])
    inner = []

    def run_inner():
        with ng.enable_grad():
            q = (z.exp() * 2).sum()
        inner.append(to_np(ng.autograd.grad(q, z)[0]))

    h = x * x
    if kind == "prehook":
        h.grad_fn.register_prehook(lambda grad_outputs: run_inner())
    else:
        h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: run_inner())
    h.sum().backward()
    assert len(inner) == 1
    np.testing.assert_allclose(inner[0], 2 * np.exp([1.0, 2.0]))
    np.testing.assert_allclose(to_np(x.grad), [1.0, 2.0])


def test_reentrant_backward_inside_a_post_accumulate_grad_hook(ng):
    """A pattern from optimizers-in-backward: the hook runs a second pass."""
    x = leaf(ng, [1.0, 2.0])
    z = leaf(ng, [3.0])
    seen = []

    def hook(p):
        seen.append(to_np(p.grad))
        with ng.enable_grad():
            (z * z).sum().backward()

    x.register_post_accumulate_grad_hook(hook)
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    np.testing.assert_allclose(to_np(z.grad), [6.0])


def test_reentrant_backward_accumulates_into_a_leaf_of_the_outer_graph(ng):
    x = leaf(ng, [1.0, 2.0])

    def hook(g):
        with ng.enable_grad():
            (x * 10).sum().backward()
        return g

    h = x * x
    h.register_hook(hook)
    h.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [12.0, 14.0])


def test_reentrant_grad_on_the_same_retained_graph(ng):
    x = leaf(ng, [0.5, 1.0])
    inner = []
    h = x.exp()
    y = (h * h).sum()

    def hook(g):
        if not inner:  # the nested pass runs this hook too: recurse only once
            inner.append(None)
            inner[0] = to_np(ng.autograd.grad(y, x, retain_graph=True)[0])

    h.register_hook(hook)
    y.backward(retain_graph=True)
    expected = 2 * np.exp(2 * np.array([0.5, 1.0]))
    np.testing.assert_allclose(inner[0], expected)
    np.testing.assert_allclose(to_np(x.grad), expected)


def test_reentrant_pass_with_create_graph_inside_a_plain_pass(ng):
    """Grad mode inside each pass is its own: on in the nested create_graph pass,
    off again in the outer hook after it returns."""
    x = leaf(ng, [1.0, 2.0])
    z = leaf(ng, [0.5])
    modes = []

    def inner_hook(g):
        modes.append(("inner", ng.is_grad_enabled()))

    def outer_hook(g):
        modes.append(("outer before", ng.is_grad_enabled()))
        with ng.enable_grad():
            w = z.sin()
            w.register_hook(inner_hook)
            (gz,) = ng.autograd.grad(w.sum() * 3, z, create_graph=True)
        modes.append(("outer after", ng.is_grad_enabled()))
        modes.append(("gz has history", gz.requires_grad))
        return g

    h = x * 2
    h.register_hook(outer_hook)
    h.sum().backward()
    assert modes == [
        ("outer before", False),
        ("inner", True),
        ("outer after", False),
        ("gz has history", True),
    ]


# ----------------------------------------------------------------------------------
# Custom Function backward


def test_checkpoint_style_function_recomputes_and_differentiates_in_backward(ng):
    """forward runs without a graph; backward recomputes under enable_grad and calls
    autograd.grad (the pattern of torch.utils.checkpoint's reentrant variant)."""

    def f(t, w):
        return (t @ w).tanh() * t.sum(1, keepdim=True)

    class Checkpoint(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t, w):
            ctx.save_for_backward(t, w)
            with ng.no_grad():
                return f(t, w)

        @staticmethod
        def backward(ctx, g):
            t, w = ctx.saved_tensors
            t = t.detach().requires_grad_()
            w = w.detach().requires_grad_()
            with ng.enable_grad():
                out = f(t, w)
            return ng.autograd.grad(out, (t, w), g)

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, 4))
    b = rng.uniform(-1, 1, (4, 2))
    t1, w1 = leaf(ng, a.tolist()), leaf(ng, b.tolist())
    Checkpoint.apply(t1, w1).sin().sum().backward()
    t2, w2 = leaf(ng, a.tolist()), leaf(ng, b.tolist())
    f(t2, w2).sin().sum().backward()
    np.testing.assert_allclose(to_np(t1.grad), to_np(t2.grad), rtol=1e-12)
    np.testing.assert_allclose(to_np(w1.grad), to_np(w2.grad), rtol=1e-12)


def test_function_backward_calls_backward_on_a_separate_graph(ng):
    side = leaf(ng, [1.0, 2.0, 3.0])

    class Side(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def backward(ctx, g):
            with ng.enable_grad():
                (side * side).sum().backward()
            return g * 2

    x = leaf(ng, [1.0, 1.0])
    Side.apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0])
    np.testing.assert_allclose(to_np(side.grad), [2.0, 4.0, 6.0])


# ----------------------------------------------------------------------------------
# Graph tasks, current node, callbacks and priority


def test_nested_pass_has_its_own_graph_task_and_restores_the_outer_one(ng):
    x = leaf(ng, [1.0])
    z = leaf(ng, [2.0])
    seen = {}

    def inner_hook(g):
        seen["inner"] = (ng._C._current_graph_task_id(), ng._C._current_autograd_node())

    def outer_hook(g):
        seen["outer before"] = (ng._C._current_graph_task_id(), ng._C._current_autograd_node())
        with ng.enable_grad():
            w = z * 3
            w.register_hook(inner_hook)
            inner_node = w.grad_fn
            w.sum().backward()
        seen["inner node"] = inner_node
        seen["outer after"] = (ng._C._current_graph_task_id(), ng._C._current_autograd_node())

    h = x * 2
    h.register_hook(outer_hook)
    outer_node = h.grad_fn
    h.sum().backward()
    outer_id, node_before = seen["outer before"]
    inner_id, inner_node = seen["inner"]
    assert outer_id >= 0 and inner_id >= 0 and inner_id != outer_id
    assert node_before is outer_node
    assert inner_node is seen["inner node"]
    assert seen["outer after"] == (outer_id, outer_node)
    assert ng._C._current_graph_task_id() == -1
    assert ng._C._current_autograd_node() is None


@pytest.mark.parametrize("depths", [(0,), (1,), (0, 1)], ids=["outer", "inner", "both"])
def test_callbacks_queued_in_a_nested_pass_belong_to_it(ng, depths):
    """queue_callback targets the pass that is running: a callback queued inside the
    nested pass runs when the nested pass ends (before the outer backward call
    returns to the outer Function), one queued in the outer pass when it ends."""
    order = []

    class Inner(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            if 1 in depths:
                ng.autograd.Variable._execution_engine.queue_callback(lambda: order.append("inner callback"))
            return g

    class Outer(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            if 0 in depths:
                ng.autograd.Variable._execution_engine.queue_callback(lambda: order.append("outer callback"))
            tmp = g.detach().requires_grad_()
            with ng.enable_grad():
                out = Inner.apply(tmp).sum()
            out.backward()
            order.append("nested backward returned")
            return g

    t = ng.rand(3, 3, requires_grad=True)
    Outer.apply(t).sum().backward()
    expected = []
    if 1 in depths:
        expected.append("inner callback")
    expected.append("nested backward returned")
    if 0 in depths:
        expected.append("outer callback")
    assert order == expected


def test_nested_work_runs_before_outer_work(ng):
    """torch's test_reentrant_priority: the ready queue orders by reentrant depth
    before sequence number, so every nested Reentrant backward runs before the outer
    pass's MyFunction node, although both are ready at the same time."""
    order = []

    class MyFunction(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            order.append("MyFunction")
            return g

    class Reentrant(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with ng.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            order.append("Reentrant")
            if ctx.x < 0:
                return g
            with ng.enable_grad():
                Reentrant.apply(ctx.x).backward()
            return g

    a = MyFunction.apply(ng.tensor(6.0, requires_grad=True))
    b = Reentrant.apply(ng.tensor(9.0, requires_grad=True))
    (a * b).backward()
    assert order == ["Reentrant"] * 10 + ["MyFunction"]


def test_exception_in_a_nested_pass_reaches_the_outer_caller(ng):
    class Boom(Exception):
        pass

    raised = Boom("from the nested pass")
    z = leaf(ng, [1.0])

    def inner_hook(g):
        raise raised

    def outer_hook(g):
        with ng.enable_grad():
            w = z * 2
            w.register_hook(inner_hook)
            w.sum().backward()
        return g

    x = leaf(ng, [1.0])
    h = x * 2
    h.register_hook(outer_hook)
    with pytest.raises(Boom) as info:
        h.sum().backward()
    assert info.value is raised
    assert x.grad is None and z.grad is None
    assert ng._C._current_graph_task_id() == -1
    assert ng.is_grad_enabled()
    del info
    (x * 5).sum().backward()  # the engine still works
    assert to_np(x.grad).tolist() == [5.0]


def test_outer_hook_may_catch_a_nested_failure_and_continue(ng):
    z = leaf(ng, [1.0])
    caught = []

    def inner_hook(g):
        raise ValueError("nested failure")

    def outer_hook(g):
        with ng.enable_grad():
            w = z * 2
            w.register_hook(inner_hook)
            q = w.sum()
        try:
            q.backward()
        except ValueError as e:
            caught.append(str(e))
        return g * 3

    x = leaf(ng, [1.0, 2.0])
    h = x * x
    h.register_hook(outer_hook)
    h.sum().backward()
    assert caught == ["nested failure"]
    np.testing.assert_allclose(to_np(x.grad), [6.0, 12.0])


# ----------------------------------------------------------------------------------
# Depth limit


def deep_reentrant_class(ng, record):
    """torch's DeepReentrant: each backward runs a new pass one level deeper until
    the counter goes negative."""

    class DeepReentrant(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with ng.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            record.append((threading.get_ident(), ng._C._current_graph_task_id()))
            if ctx.x < 0:
                return g
            with ng.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return g

    return DeepReentrant


def runs(values):
    """Lengths of the runs of equal consecutive values."""
    out = []
    for i, v in enumerate(values):
        if i and v == values[i - 1]:
            out[-1] += 1
        else:
            out.append(1)
    return out


def test_nested_passes_beyond_max_depth_move_to_another_thread(ng):
    depth = 2 * (MAX_DEPTH + 1) + 8  # 130 nested passes
    record = []
    DeepReentrant = deep_reentrant_class(ng, record)
    v = ng.tensor(float(depth), requires_grad=True)
    DeepReentrant.apply(v).sum().backward()
    assert v.grad.item() == 1.0
    assert len(record) == depth + 1
    threads = [t for t, _ in record]
    # The outer pass and 60 nested passes on the caller, then 61 levels per thread.
    assert threads[0] == threading.get_ident()
    assert runs(threads) == [MAX_DEPTH + 1, MAX_DEPTH + 1, depth + 1 - 2 * (MAX_DEPTH + 1)]
    assert len(set(threads)) == 3
    ids = [task for _, task in record]
    assert len(set(ids)) == depth + 1  # every level is its own graph task


def test_depth_limit_applies_again_on_a_second_deep_call(ng):
    """Pool threads are reused or replaced transparently: a second deep call
    behaves like the first."""
    for _ in range(2):
        record = []
        DeepReentrant = deep_reentrant_class(ng, record)
        v = ng.tensor(float(MAX_DEPTH + 5), requires_grad=True)
        DeepReentrant.apply(v).sum().backward()
        assert v.grad.item() == 1.0
        threads = [t for t, _ in record]
        assert runs(threads) == [MAX_DEPTH + 1, 5]


def test_exactly_max_depth_nested_passes_stay_on_the_calling_thread(ng):
    record = []
    DeepReentrant = deep_reentrant_class(ng, record)
    v = ng.tensor(float(MAX_DEPTH), requires_grad=True)  # levels 0..60
    DeepReentrant.apply(v).sum().backward()
    assert len(record) == MAX_DEPTH + 1
    assert {t for t, _ in record} == {threading.get_ident()}


def test_exception_beyond_max_depth_reaches_the_caller(ng):
    class Boom(Exception):
        pass

    raised = Boom("deep")

    class Deep(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with ng.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.x < 0:
                raise raised  # raised on a pool thread, 100 levels down
            with ng.enable_grad():
                Deep.apply(ctx.x).sum().backward()
            return g

    v = ng.tensor(100.0, requires_grad=True)
    with pytest.raises(Boom) as info:
        Deep.apply(v).sum().backward()
    assert info.value is raised
    assert v.grad is None
    del info
    (v * 2).backward()
    assert v.grad.item() == 2.0


def test_deep_reentrant_passes_from_several_threads(ng):
    depth = MAX_DEPTH + 20
    results = {}
    errors = []

    def work(i):
        try:
            record = []
            DeepReentrant = deep_reentrant_class(ng, record)
            v = ng.tensor(float(depth), requires_grad=True)
            DeepReentrant.apply(v).sum().backward()
            results[i] = (v.grad.item(), runs([t for t, _ in record]))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not errors, errors
    assert results == {i: (1.0, [MAX_DEPTH + 1, depth - MAX_DEPTH]) for i in range(4)}


DEEP_SCRIPT = textwrap.dedent(
    """
    import json, os, sys, threading
    import {lib} as ng

    record = []

    class DeepReentrant(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with ng.enable_grad():
                ctx.x = x.detach().requires_grad_() - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            record.append(threading.get_ident())
            if ctx.x < 0:
                return g
            with ng.enable_grad():
                DeepReentrant.apply(ctx.x).sum().backward()
            return g

    out = {{}}
    for depth in {depths}:
        record.clear()
        v = ng.tensor(float(depth), requires_grad=True)
        try:
            DeepReentrant.apply(v).sum().backward()
            out[depth] = [v.grad.item(), len(record), len(set(record))]
        except RecursionError:
            out[depth] = "RecursionError"
    print(json.dumps(out), flush=True)
    if {against_torch}:
        os._exit(0)  # torch's pool threads can abort a normal interpreter exit
    """
)


def run_deep_script(depths):
    """Run the deep recursion in a child process: a native stack overflow is then a
    failed test instead of a crashed test session."""
    env = oracle.child_env()
    script = DEEP_SCRIPT.format(lib=LIB_NAME, depths=list(depths), against_torch=AGAINST_TORCH)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    return {int(k): v for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def test_deep_reentrant_does_not_overflow_any_stack(ng):
    """torch's test_deep_reentrant: 10,000 nested reentrant backwards (and 2,000
    and 200 more afterwards, reusing the pool) complete: no native stack overflow
    and no RecursionError, because no thread runs more than 61 levels."""
    out = run_deep_script([10_000, 2_000, 200])
    for depth, result in out.items():
        assert result != "RecursionError", f"RecursionError at depth {depth}"
        grad, levels, n_threads = result
        assert grad == 1.0
        assert levels == depth + 1
        assert n_threads == -(-(depth + 1) // (MAX_DEPTH + 1))  # ceil((depth+1)/61)
