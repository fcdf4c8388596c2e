"""npgrad's own options of ``saved_tensors_hooks``: ``compose=True`` (a pair feeds the
enclosing pair) and ``prefetch=fn`` (called with each payload ahead of its unpack).

npgrad-only: torch has neither option, so these tests skip with
``NPGRAD_TESTS_AGAINST_TORCH=1``."""

from __future__ import annotations

import gc
import re
import weakref

import numpy as np
import pytest

from oracle import AGAINST_TORCH, run_in_threads

pytestmark = pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own saved_tensors_hooks options")

X = np.array([0.5, -1.0, 2.0], dtype=np.float64)
COMPOSE_NOT_TENSOR = re.escape(
    "saved_tensors_hooks(compose=True): the pack hook must return a Tensor "
    "(it is passed on to the enclosing pack hook) but got result of type"
)
NESTED_PREFETCH = re.escape("saved_tensors_hooks(compose=True, prefetch=...) inside another saved_tensors_hooks")


def _current_node():
    import npgrad

    return npgrad._C._current_autograd_node()


def leaf(ng, values=X):
    return ng.tensor(values, requires_grad=True)


def program(ng, x):
    """Saves tensors in several nodes (exp saves its result, mul both inputs)."""
    h = x.exp()
    return (h * x.sin()).tanh().sum()


def plain_grad(ng):
    x = leaf(ng)
    program(ng, x).backward()
    return x.grad.numpy().copy()


class Tagged:
    """A payload that names the saved tensor it holds."""

    def __init__(self, n, tensor):
        self.n = n
        self.tensor = tensor


def tagging_hooks(log, name="h", nodes=None):
    """Hooks that log ("pack" | "unpack" | "prefetch", name, payload number) and
    record in `nodes` the node that unpacks each payload (key n) and the node that
    ran when it was prefetched (key ("prefetched by", n))."""
    counter = iter(range(10**6))
    nodes = {} if nodes is None else nodes

    def pack(t):
        p = Tagged(next(counter), t.detach())
        log.append(("pack", name, p.n))
        return p

    def unpack(p):
        log.append(("unpack", name, p.n))
        nodes[p.n] = _current_node()
        return p.tensor

    def prefetch(p):
        log.append(("prefetch", name, p.n))
        nodes["prefetched by", p.n] = _current_node()

    return pack, unpack, prefetch


# ----------------------------------------------------------------------------------
# compose=True


def scaling_hooks(log, name, scale):
    """Tensor-to-tensor hooks that change the payload (so a wrong order shows)."""

    def pack(t):
        log.append(("pack", name))
        return t.detach() * scale

    def unpack(t):
        log.append(("unpack", name))
        return t / scale

    return pack, unpack


def test_compose_feeds_the_enclosing_pair_and_unpacks_in_reverse(ng):
    log = []
    seen_by_outer = []

    def outer_pack(t):
        log.append(("pack", "outer"))
        seen_by_outer.append(t)
        return t.numpy().copy()

    def outer_unpack(a):
        log.append(("unpack", "outer"))
        return ng.from_numpy(a)

    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(outer_pack, outer_unpack):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "inner", 4.0), compose=True):
            y = x.exp()
    assert log == [("pack", "inner"), ("pack", "outer")]
    np.testing.assert_allclose(seen_by_outer[0].numpy(), 4.0 * np.exp(X))  # inner's result
    log.clear()
    y.sum().backward()
    assert log == [("unpack", "outer"), ("unpack", "inner")]
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X))


def test_compose_values_and_counts_equal_the_plain_run(ng):
    log = []
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "a", 2.0), compose=True):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "b", 3.0), compose=True):
            with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "c", 5.0), compose=True):
                loss = program(ng, x)
    packs = [e for e in log if e[0] == "pack"]
    saved = len(packs) // 3
    assert saved >= 3 and packs == [("pack", "c"), ("pack", "b"), ("pack", "a")] * saved
    log.clear()
    loss.backward()
    assert log == [("unpack", "a"), ("unpack", "b"), ("unpack", "c")] * saved
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)


def test_without_compose_the_innermost_pair_wins(ng):
    log = []
    x = leaf(ng)
    # A plain pair inside a composing one replaces it, as torch's nesting does.
    with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "outer", 2.0), compose=True):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "inner", 3.0)):
            loss = x.exp().sum()
    loss.backward()
    assert {name for _, name in log} == {"inner"}
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X))


def test_compose_stops_at_the_first_plain_pair(ng):
    log = []
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "outermost", 7.0)):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "plain", 2.0)):
            with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "composed", 3.0), compose=True):
                loss = x.exp().sum()
    loss.backward()
    assert log == [("pack", "composed"), ("pack", "plain"), ("unpack", "plain"), ("unpack", "composed")]


def test_compose_pack_returning_a_non_tensor_is_a_clear_error(ng):
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with ng.autograd.graph.saved_tensors_hooks(lambda t: "not a tensor", lambda p: p, compose=True):
            with pytest.raises(TypeError, match=COMPOSE_NOT_TENSOR + " str"):
                x.exp()
    # Alone (nothing encloses it) the rule is the same, so it does not depend on context.
    with ng.autograd.graph.saved_tensors_hooks(lambda t: 3, lambda p: p, compose=True):
        with pytest.raises(TypeError, match=COMPOSE_NOT_TENSOR + " int"):
            x.exp()
    # Nothing is left broken: the stack is back to empty and saving works.
    y = x.exp()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(X))


def test_compose_unpack_errors(ng):
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "oops"):
        with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t, compose=True):
            y = x.exp()
    with pytest.raises(
        TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result of type str"
    ):
        y.sum().backward()


def test_compose_with_save_on_cpu(ng):
    log = []
    x = leaf(ng)
    with ng.autograd.graph.save_on_cpu():
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "q", 2.0), compose=True):
            loss = program(ng, x)
    loss.backward()
    assert log and {name for _, name in log} == {"q"}
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)


def test_compose_inside_and_around_checkpoint(ng):
    from npgrad.utils.checkpoint import checkpoint

    log = []

    def body(x):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "q", 2.0), compose=True):
            return program(ng, x)

    x = leaf(ng)
    checkpoint(body, x, use_reentrant=False).backward()
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)
    assert ("unpack", "q") in log  # the recomputed forward composed with checkpoint's hooks

    log.clear()
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks(log, "q", 2.0), compose=True):
        loss = checkpoint(lambda t: program(ng, t), x, use_reentrant=False)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)


# ----------------------------------------------------------------------------------
# prefetch=fn


def test_prefetch_runs_one_node_ahead_in_unpack_order(ng):
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        y = x.exp().exp().exp()  # each ExpBackward0 saves its result: payloads 0, 1, 2
    log.clear()
    y.sum().backward()
    assert log == [
        ("prefetch", "h", 2),  # before the root (SumBackward0) runs
        ("prefetch", "h", 1),  # before the node ahead of it unpacks
        ("unpack", "h", 2),
        ("prefetch", "h", 0),
        ("unpack", "h", 1),
        ("unpack", "h", 0),
    ]


def check_prefetch_order(log, nodes):
    """Each unpacked payload was prefetched once, before its unpack, while an
    earlier node was about to run (the graphs here start at a node that saves
    nothing); nodes have their payloads prefetched in the order they unpack."""
    prefetches = [n for kind, _, n in log if kind == "prefetch"]
    unpacks = [n for kind, _, n in log if kind == "unpack"]
    assert len(prefetches) == len(set(prefetches))
    assert sorted(prefetches) == sorted(set(unpacks))
    order = []  # nodes by first unpack; compared by identity
    first_unpack_of_node = []
    for i, (kind, _, n) in enumerate(log):
        if kind == "unpack" and not any(nodes[n] is node for node in order):
            order.append(nodes[n])
            first_unpack_of_node.append(i)
    node_index = {n: next(k for k, node in enumerate(order) if node is nodes[n]) for n in unpacks}
    prefetched_nodes = [node_index[n] for n in prefetches]
    assert prefetched_nodes == sorted(prefetched_nodes)
    for i, (kind, _, n) in enumerate(log):
        if kind == "prefetch":
            assert i < first_unpack_of_node[node_index[n]]
            assert nodes["prefetched by", n] is not nodes[n]


def test_prefetch_on_a_branching_graph(ng):
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    x = leaf(ng)
    w = ng.tensor(np.linspace(-1, 1, 9).reshape(3, 3), requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        h = (x @ w).tanh()
        loss = (h * x.sigmoid() + (h @ w).exp()).sum()
    log.clear()
    loss.backward()
    check_prefetch_order(log, nodes)
    unpacked_nodes = {n for kind, _, n in log if kind == "unpack"}
    assert len(unpacked_nodes) >= 6


def test_prefetch_looks_past_accumulate_grad(ng):
    # After each MmBackward0 runs its weight's AccumulateGrad, which has no payload:
    # the TanhBackward0 after it is prefetched before MmBackward0 runs, not during
    # the AccumulateGrad's turn.
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    ws = [ng.tensor(np.eye(3) * (0.5 + i), requires_grad=True) for i in range(3)]
    h = ng.tensor(np.ones((2, 3)))
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        for w in ws:
            h = (h @ w).tanh()
        loss = h.sum()
    log.clear()
    loss.backward()
    check_prefetch_order(log, nodes)
    by = [nodes["prefetched by", n].name() for kind, _, n in log if kind == "prefetch"]
    assert by and not any("AccumulateGrad" in name for name in by)


def test_prefetch_once_per_payload_per_pass(ng):
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        loss = program(ng, x)
    saved = sum(1 for e in log if e[0] == "pack")
    for _ in range(2):
        log.clear()
        loss.backward(retain_graph=True)
        check_prefetch_order(log, nodes)
        assert sum(1 for e in log if e[0] == "prefetch") == saved
    log.clear()
    (gx,) = ng.autograd.grad(loss, x)
    check_prefetch_order(log, nodes)
    np.testing.assert_allclose(gx.numpy(), plain_grad(ng), rtol=1e-12)


def test_prefetch_skips_what_a_pruned_pass_does_not_run(ng):
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    a, b = leaf(ng), leaf(ng, X + 1)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        a_only = a.exp().sin()  # payloads only a's gradient needs
        loss = (a_only + b.cos().exp()).sum()
    log.clear()
    ng.autograd.grad(loss, a)
    check_prefetch_order(log, nodes)
    assert {n for kind, _, n in log if kind == "prefetch"} == {0, 1}


def test_prefetch_of_a_custom_function(ng):
    class Square(ng.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return 2 * t * g

    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, nodes=nodes)
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        y = Square.apply(x).exp()
    log.clear()
    y.sum().backward()
    check_prefetch_order(log, nodes)
    assert [kind for kind, _, _ in log].count("prefetch") == 2
    np.testing.assert_allclose(x.grad.numpy(), 2 * X * np.exp(X * X))


def test_prefetch_around_checkpoint(ng):
    from npgrad.utils.checkpoint import checkpoint

    log = []
    pack, unpack, prefetch = tagging_hooks(log)
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        h = x.exp()  # payload 0: exp's result
        s = h.sin()  # payload 1: sin's input
        loss = checkpoint(lambda t: program(ng, t), s, use_reentrant=False)  # payload 2: its input
    log.clear()
    loss.backward()
    # Payload 2 is held by the node that saves checkpoint's inputs, which is not part
    # of the pass: checkpoint's unpack hook unpacks it to recompute, so the engine
    # does not prefetch it. The pass's own payloads are prefetched before use.
    assert [e for e in log if e[0] == "prefetch"] == [("prefetch", "h", 1), ("prefetch", "h", 0)]
    assert log.index(("prefetch", "h", 0)) < log.index(("unpack", "h", 1))
    assert ("unpack", "h", 2) in log
    expected = leaf(ng)
    program(ng, expected.exp().sin()).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected.grad.numpy(), rtol=1e-12)


def test_prefetch_exception_reaches_the_caller_and_the_engine_stays_usable(ng):
    class Boom(Exception):
        pass

    fail = [True]

    def prefetch(p):
        if fail[0]:
            raise Boom("prefetch failed")

    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t, prefetch=prefetch):
        loss = program(ng, x)
    with pytest.raises(Boom, match="prefetch failed"):
        loss.backward(retain_graph=True)
    fail[0] = False
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)
    y = leaf(ng)
    y.exp().sum().backward()  # an unrelated pass
    np.testing.assert_allclose(y.grad.numpy(), np.exp(X))


def test_prefetch_with_compose(ng):
    log = []
    nodes = {}
    pack, unpack, prefetch = tagging_hooks(log, "outer", nodes)
    x = leaf(ng)
    with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
        with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks([], "q", 2.0), compose=True):
            loss = program(ng, x)
    log.clear()
    loss.backward()
    check_prefetch_order(log, nodes)
    np.testing.assert_allclose(x.grad.numpy(), plain_grad(ng), rtol=1e-12)
    # The payload of a composed pair nested in another belongs to the enclosing pair.
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        hooks = ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t, compose=True, prefetch=print)
        with pytest.raises(RuntimeError, match=NESTED_PREFETCH):
            hooks.__enter__()
    assert ng._C._autograd._saved_tensors_hooks_is_enabled()
    y = leaf(ng)
    y.exp().sum().backward()  # the stack is empty again: nothing packs
    np.testing.assert_allclose(y.grad.numpy(), np.exp(X))


def test_bad_arguments_and_disabled_hooks(ng):
    with pytest.raises(TypeError, match="prefetch must be callable or None, not int"):
        ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t, prefetch=3)
    with ng.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        for kwargs in ({"compose": True}, {"prefetch": print}):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t, **kwargs):
                    pass


# ----------------------------------------------------------------------------------
# Threads, leaks


def test_threads_each_with_their_own_hooks(ng):
    results = {}

    def work(i):
        log = []
        nodes = {}
        pack, unpack, prefetch = tagging_hooks(log, f"t{i}", nodes)
        x = leaf(ng, X + i)
        with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=prefetch):
            with ng.autograd.graph.saved_tensors_hooks(*scaling_hooks([], "q", 2.0), compose=True):
                loss = x.exp().tanh().exp().sum()
        for _ in range(20):
            log.clear()
            loss.backward(retain_graph=True)
            check_prefetch_order(log, nodes)
        results[i] = (x.grad.numpy().copy() / 20, {name for _, name, _ in log})

    run_in_threads(work, 8)
    for i, (grad, names) in results.items():
        x = leaf(ng, X + i)
        x.exp().tanh().exp().sum().backward()
        np.testing.assert_allclose(grad, x.grad.numpy(), rtol=1e-12)
        assert names == {f"t{i}"}


def test_no_leaks(ng):
    class Payload:
        def __init__(self, t):
            self.t = t

    payloads = []

    def pack(t):
        p = Payload(t.detach())
        payloads.append(weakref.ref(p))
        return p

    def unpack(p):
        return p.t

    def run():
        x = leaf(ng)
        with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=lambda p: None):
            with ng.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 2, lambda t: t / 2, compose=True):
                loss = program(ng, x)
        loss.backward(retain_graph=True)
        loss.backward()
        # A cycle through a hook: the graph holds the payload, the payload the output.
        with ng.autograd.graph.saved_tensors_hooks(pack, unpack, prefetch=lambda p: None):
            y = x.exp()
        payloads[-1]().cycle = y
        return weakref.ref(loss), weakref.ref(y)

    refs = run()
    gc.collect()
    assert payloads and all(r() is None for r in payloads)
    assert all(r() is None for r in refs)
