"""Concurrency beyond test_threads.py: 8 Python threads running backward at once on
independent graphs and on one shared graph, checked against the single-threaded
values; hooks of every kind seeing their own graph task; thread-local grad mode and
saved-tensors hooks while other threads work; an error in one thread's pass leaving
the others alone.

Threads start together behind a barrier and repeat their work, so passes overlap
(NumPy and the engine release the GIL).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from collections import defaultdict

import numpy as np
import pytest

import oracle
from oracle import AGAINST_TORCH, LIB_NAME, from_np, to_np

N_THREADS = 8
REPS = 4
TIMEOUT = 60  # seconds: a barrier that times out reports a hang instead of blocking


def run_threads(target, n=N_THREADS):
    """Run ``target(i, barrier)`` in ``n`` threads; re-raise the first error."""
    barrier = threading.Barrier(n, timeout=TIMEOUT)
    errors = []

    def wrapped(i):
        try:
            target(i, barrier)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "a thread hung"
    if errors:
        raise errors[0]


def program(ng, seed):
    """A graph with a matmul, a softmax, views, an in-place write through a view, a
    custom Function, a tensor hook and saved-tensors hooks; returns the leaves'
    gradients (float64) as NumPy arrays."""
    rng = np.random.default_rng(seed)
    w = from_np(ng, rng.uniform(-1, 1, (16, 8)), requires_grad=True)
    x = from_np(ng, rng.uniform(-1, 1, (4, 16)), requires_grad=True)
    b = from_np(ng, rng.uniform(-1, 1, (8,)), requires_grad=True)

    class Cube(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3 * t * t

    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        h = (x @ w + b).tanh()
    h.register_hook(lambda g: g * 0.5)
    s = h.softmax(dim=1)
    c = s.clone()
    c[:, 1:3].mul_(2.0)  # in place through a view of a non-leaf
    y = Cube.apply(c.t().reshape(-1)).sum() + (h[1] * b).sum()
    y.backward()
    return [to_np(t.grad) for t in (w, x, b)]


def assert_grads_equal(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-15)


# ----------------------------------------------------------------------------------
# Gradients


def test_independent_graphs_match_the_single_threaded_values(ng):
    expected = {i: program(ng, i) for i in range(N_THREADS)}
    results = defaultdict(list)

    def work(i, barrier):
        barrier.wait()
        for _ in range(REPS):
            results[i].append(program(ng, i))

    run_threads(work)
    for i in range(N_THREADS):
        assert len(results[i]) == REPS
        for got in results[i]:
            assert_grads_equal(got, expected[i])


def test_shared_graph_grad_from_threads_matches_single_threaded(ng):
    rng = np.random.default_rng(7)
    a = from_np(ng, rng.uniform(-1, 1, (64, 32)), requires_grad=True)
    b = from_np(ng, rng.uniform(-1, 1, (32, 16)), requires_grad=True)
    out = ((a @ b).sigmoid() * (a.sum(1, keepdim=True))).log_softmax(1).sum()
    expected = [to_np(g) for g in ng.autograd.grad(out, (a, b), retain_graph=True)]
    results = defaultdict(list)

    def work(i, barrier):
        barrier.wait()
        for _ in range(REPS):
            results[i].append([to_np(g) for g in ng.autograd.grad(out, (a, b), retain_graph=True)])

    run_threads(work)
    for i in range(N_THREADS):
        for got in results[i]:
            assert_grads_equal(got, expected)
    assert a.grad is None and b.grad is None  # grad() never touches .grad


def test_shared_graph_backward_accumulates_into_every_shared_leaf(ng):
    rng = np.random.default_rng(8)
    a = from_np(ng, rng.uniform(-1, 1, (50, 40)), requires_grad=True)
    b = from_np(ng, rng.uniform(-1, 1, (40,)), requires_grad=True)
    c = from_np(ng, rng.uniform(0.5, 1, (50, 1)), requires_grad=True)
    out = ((a * b).exp() / c + a.t().sum(1) * b).sum()
    single = [to_np(g) for g in ng.autograd.grad(out, (a, b, c), retain_graph=True)]
    post_acc_calls = []
    lock = threading.Lock()

    def count(p):
        with lock:
            post_acc_calls.append(p is b)

    b.register_post_accumulate_grad_hook(count)

    def work(i, barrier):
        barrier.wait()
        for _ in range(REPS):
            out.backward(retain_graph=True)

    run_threads(work)
    for leaf, g in zip((a, b, c), single):
        np.testing.assert_allclose(to_np(leaf.grad), N_THREADS * REPS * g, rtol=1e-10)
    assert post_acc_calls == [True] * (N_THREADS * REPS)


SHARED_LEAVES_SCRIPT = textwrap.dedent(
    """
    import json, os, threading
    import numpy as np
    import {lib} as ng

    w = ng.full((300, 100), 0.5, dtype=ng.float64, requires_grad=True)
    v = ng.full((100,), -0.25, dtype=ng.float64, requires_grad=True)
    barrier = threading.Barrier({n})
    errors = []

    def work(i):
        try:
            k = float(i + 1)
            barrier.wait()
            for _ in range({reps}):
                (((w * k) + v).sin().sum() + (v * k).sum()).backward()
        except BaseException as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range({n})]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps([errors, w.grad.detach().numpy().tolist(), v.grad.detach().numpy().tolist()]), flush=True)
    os._exit(0)
    """
)


def test_independent_graphs_on_shared_leaves_sum_every_contribution(ng):
    """Each thread builds its own graph over the same two leaves (forward ops on a
    shared leaf while other threads accumulate into its .grad) with its own
    coefficient; the leaves' grads are the sum. Run in a child process with a
    timeout, so a deadlock (the GIL held while waiting for a lock) fails the test
    instead of hanging the session."""
    reps = 50
    env = oracle.child_env()
    script = SHARED_LEAVES_SCRIPT.format(lib=LIB_NAME, n=N_THREADS, reps=reps)
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"deadlock: {N_THREADS} threads did not finish within {TIMEOUT} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    errors, w_grad, v_grad = json.loads(proc.stdout.strip().splitlines()[-1])
    assert errors == []
    ks = np.arange(1, N_THREADS + 1, dtype=np.float64)
    arg = 0.5 * ks - 0.25
    expected_w = reps * sum(k * np.cos(x) for k, x in zip(ks, arg))
    expected_v = reps * sum(300 * np.cos(x) + k for k, x in zip(ks, arg))
    np.testing.assert_allclose(np.array(w_grad), np.full((300, 100), expected_w), rtol=1e-10)
    np.testing.assert_allclose(np.array(v_grad), np.full((100,), expected_v), rtol=1e-10)


def test_error_in_one_threads_pass_leaves_the_others_alone(ng):
    class Boom(Exception):
        pass

    x = ng.full((1000,), 2.0, dtype=ng.float64, requires_grad=True)
    h = x * x
    h.register_hook(lambda g: g)  # a hook on the shared graph every pass runs
    out = h.sum()
    outcomes = {}

    def raising_hook(g):
        raise Boom("thread 0")

    def work(i, barrier):
        own = ng.full((1000,), 3.0, dtype=ng.float64, requires_grad=True)
        m = own * own
        if i == 0:
            m.register_hook(raising_hook)
            root = m.sum()  # the failing pass does not reach the shared graph
        else:
            root = m.sum() + out
        barrier.wait()
        try:
            root.backward(retain_graph=True)
            outcomes[i] = to_np(own.grad)
        except Boom as e:
            outcomes[i] = (e, own.grad)

    run_threads(work)
    error, grad = outcomes[0]
    assert isinstance(error, Boom) and str(error) == "thread 0"
    assert grad is None
    for i in range(1, N_THREADS):
        np.testing.assert_array_equal(outcomes[i], np.full(1000, 6.0))
    np.testing.assert_array_equal(to_np(x.grad), np.full(1000, 4.0 * (N_THREADS - 1)))
    out.backward()  # the shared graph still works after the failure elsewhere
    np.testing.assert_array_equal(to_np(x.grad), np.full(1000, 4.0 * N_THREADS))


# ----------------------------------------------------------------------------------
# Hooks see their own graph task


def test_every_hook_kind_sees_its_own_graph_task(ng):
    """In a shared graph run by 8 threads, the tensor hook, node pre- and post-hooks,
    the post-accumulate-grad hook and a final callback of one pass all see that
    pass's id (``_C._current_graph_task_id()``, which torch has too) on the thread
    that called backward; different passes have different ids."""
    x = ng.full((2000,), 0.5, dtype=ng.float64, requires_grad=True)
    h = x.exp()
    out = (h * h).sum()
    records = []
    lock = threading.Lock()

    def record(kind):
        with lock:
            records.append((kind, threading.get_ident(), ng._C._current_graph_task_id()))

    def tensor_hook(g):
        record("tensor")
        ng.autograd.Variable._execution_engine.queue_callback(lambda: record("callback"))

    h.register_hook(tensor_hook)
    h.grad_fn.register_prehook(lambda grad_outputs: record("prehook"))
    h.grad_fn.register_hook(lambda grad_inputs, grad_outputs: record("posthook"))
    x.register_post_accumulate_grad_hook(lambda p: record("post_accumulate"))

    passes = defaultdict(list)

    def work(i, barrier):
        barrier.wait()
        for _ in range(REPS):
            out.backward(retain_graph=True)
            with lock:
                passes[threading.get_ident()].append(ng._C._current_graph_task_id())

    run_threads(work)
    assert ng._C._current_graph_task_id() == -1
    for ids in passes.values():
        assert ids == [-1] * REPS  # outside a pass
    by_task = defaultdict(list)
    for kind, thread, task in records:
        by_task[task].append((kind, thread))
    assert len(by_task) == N_THREADS * REPS
    assert -1 not in by_task
    kinds = ["tensor", "prehook", "posthook", "post_accumulate", "callback"]
    for entries in by_task.values():
        assert sorted(k for k, _ in entries) == sorted(kinds)
        assert len({t for _, t in entries}) == 1  # all on the thread that called backward
    threads_seen = {t for entries in by_task.values() for _, t in entries}
    assert threads_seen == set(passes)


def test_multi_grad_hook_any_fires_once_per_pass_in_each_thread(ng):
    a = ng.full((5000,), 1.0, dtype=ng.float64, requires_grad=True)
    b = ng.full((5000,), 2.0, dtype=ng.float64, requires_grad=True)
    calls = []
    lock = threading.Lock()

    def fn(grad):
        with lock:
            calls.append((threading.get_ident(), ng._C._current_graph_task_id(), float(grad[0])))

    handle = ng.autograd.graph.register_multi_grad_hook((a, b), fn, mode="any")
    out = (a * 3 + b * 5).sum()

    def work(i, barrier):
        barrier.wait()
        for _ in range(REPS):
            out.backward(retain_graph=True)

    run_threads(work)
    handle.remove()
    assert len(calls) == N_THREADS * REPS
    assert len({task for _, task, _ in calls}) == N_THREADS * REPS
    assert len({thread for thread, _, _ in calls}) == N_THREADS
    assert all(g in (3.0, 5.0) for _, _, g in calls)


@pytest.mark.skipif(
    AGAINST_TORCH,
    reason="torch bug: register_multi_grad_hook(mode='all') keeps one nb_calls for all "
    "graph tasks (torch/autograd/graph.py), so concurrent passes reaching different "
    "subsets miscount; npgrad counts per graph task",
)
def test_multi_grad_hook_all_counts_each_pass_separately(ng):
    """Threads run passes over graphs that reach different subsets of the hooked
    tensors at the same time; each call of ``fn`` reports exactly its own pass's
    subset (None for a tensor the pass does not reach)."""
    a = ng.full((5000,), 1.0, dtype=ng.float64, requires_grad=True)
    b = ng.full((5000,), 2.0, dtype=ng.float64, requires_grad=True)
    c = ng.full((5000,), 3.0, dtype=ng.float64, requires_grad=True)
    calls = defaultdict(list)
    lock = threading.Lock()

    def fn(grads):
        with lock:
            calls[threading.get_ident()].append(tuple(None if g is None else float(g[0]) for g in grads))

    handle = ng.autograd.graph.register_multi_grad_hook((a, b, c), fn)
    outs = [
        (a * 2).sum(),
        (a * 2 + b * 3).sum(),
        (b * 3 + c * 4).sum(),
        (a * 2 + b * 3 + c * 4).sum(),
    ]
    expected_for = {
        0: (2.0, None, None),
        1: (2.0, 3.0, None),
        2: (None, 3.0, 4.0),
        3: (2.0, 3.0, 4.0),
    }
    owner = {}

    def work(i, barrier):
        owner[threading.get_ident()] = i
        barrier.wait()
        for _ in range(REPS):
            outs[i % 4].backward(retain_graph=True)

    run_threads(work)
    handle.remove()
    assert len(calls) == N_THREADS
    for thread, got in calls.items():
        assert got == [expected_for[owner[thread] % 4]] * REPS


# ----------------------------------------------------------------------------------
# Thread-local state


def test_grad_mode_of_one_thread_does_not_leak_into_another_while_both_run(ng):
    seen = {}

    def work(i, barrier):
        x = ng.ones(3, requires_grad=True)
        if i % 2 == 0:
            with ng.no_grad():
                barrier.wait()  # every thread is inside its mode at the same time
                y = x * 2
                barrier.wait()
                seen[i] = (ng.is_grad_enabled(), y.requires_grad)
        else:
            ng.set_grad_enabled(i % 4 == 1)
            barrier.wait()
            y = x * 2
            barrier.wait()
            seen[i] = (ng.is_grad_enabled(), y.requires_grad)
            ng.set_grad_enabled(True)

    run_threads(work)
    for i in range(N_THREADS):
        expected = False if i % 2 == 0 else (i % 4 == 1)
        assert seen[i] == (expected, expected)
    assert ng.is_grad_enabled()


def test_no_grad_in_main_thread_does_not_reach_a_thread_started_inside_it(ng):
    seen = []
    with ng.no_grad():

        def work(i, barrier):
            x = ng.ones(2, requires_grad=True)
            seen.append((x * 2).requires_grad)

        run_threads(work, n=4)
        assert not (ng.ones(2, requires_grad=True) * 2).requires_grad
    assert seen == [True] * 4


def test_grad_mode_inside_hooks_follows_each_pass_create_graph(ng):
    """Two passes run at once, one with create_graph=True: hooks of each pass see
    their own grad mode (on for create_graph, off otherwise), and the gradient of
    the create_graph pass has history."""
    modes = {}
    results = {}

    def work(i, barrier):
        x = ng.full((100,), 1.5, dtype=ng.float64, requires_grad=True)
        h = x.sin()

        def hook(g):
            barrier.wait()  # both passes are inside a hook at the same time
            modes[i] = ng.is_grad_enabled()

        h.register_hook(hook)
        barrier.wait()
        (g,) = ng.autograd.grad(h.sum(), x, create_graph=(i == 0))
        results[i] = g.requires_grad

    run_threads(work, n=2)
    assert modes == {0: True, 1: False}
    assert results == {0: True, 1: False}
    assert ng.is_grad_enabled()


def test_saved_tensors_hooks_are_thread_local(ng):
    packed = defaultdict(int)
    lock = threading.Lock()

    def make_pack(i):
        def pack(t):
            with lock:
                packed[i] += 1
            return t

        return pack

    grads = {}

    def work(i, barrier):
        x = ng.full((10,), 0.5, dtype=ng.float64, requires_grad=True)
        if i % 2 == 0:
            with ng.autograd.graph.saved_tensors_hooks(make_pack(i), lambda t: t):
                barrier.wait()  # even threads hold hooks while odd threads record
                y = (x.sin() * x).sum()  # SinBackward0 saves x; MulBackward0 saves both
                barrier.wait()
        else:
            barrier.wait()
            y = (x.sin() * x).sum()
            barrier.wait()
        y.backward()
        grads[i] = to_np(x.grad)

    run_threads(work)
    assert dict(packed) == {i: 3 for i in range(0, N_THREADS, 2)}
    for g in grads.values():
        np.testing.assert_allclose(g, np.full(10, np.cos(0.5) * 0.5 + np.sin(0.5)))


def test_disable_saved_tensors_hooks_is_thread_local(ng):
    outcomes = {}

    def work(i, barrier):
        x = ng.ones(3, requires_grad=True)
        if i == 0:
            with ng.autograd.graph.disable_saved_tensors_hooks("disabled in thread 0"):
                barrier.wait()
                barrier.wait()
                try:
                    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                        pass
                    outcomes[i] = "entered"
                except RuntimeError as e:
                    outcomes[i] = str(e)
        else:
            barrier.wait()
            with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                y = (x * x).sum()
            barrier.wait()
            y.backward()
            outcomes[i] = to_np(x.grad).tolist()

    run_threads(work, n=4)
    assert outcomes[0] == "disabled in thread 0"
    for i in range(1, 4):
        assert outcomes[i] == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("entry", ["backward", "grad"])
def test_current_graph_task_id_is_minus_one_in_other_threads_during_a_pass(ng, entry):
    """While one thread is inside a hook, a second thread that is not running a pass
    sees no current graph task and no current node."""
    x = ng.ones(3, requires_grad=True)
    h = x * 2
    inside = threading.Event()
    release = threading.Event()
    seen = {}

    def hook(g):
        seen["hook"] = (ng._C._current_graph_task_id(), ng._C._current_autograd_node() is not None)
        inside.set()
        assert release.wait(TIMEOUT)

    h.register_hook(hook)

    def observer():
        assert inside.wait(TIMEOUT)
        seen["other"] = (ng._C._current_graph_task_id(), ng._C._current_autograd_node())
        release.set()

    t = threading.Thread(target=observer)
    t.start()
    if entry == "backward":
        h.sum().backward()
    else:
        ng.autograd.grad(h.sum(), x)
    t.join(TIMEOUT)
    assert seen["hook"][0] >= 0 and seen["hook"][1]
    assert seen["other"] == (-1, None)
