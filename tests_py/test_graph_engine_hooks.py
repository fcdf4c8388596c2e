"""Engine-level hooks: final callbacks (queue_callback), _current_autograd_node, the
debug logging of torch.autograd.graph, the docstring examples of graph.py and the
stack-trace preservation pattern of AOTAutograd."""

from __future__ import annotations

import collections
import logging
import re

import numpy as np
import pytest

from oracle import assert_close, graph_debug_log, run_both, same_value, to_np

CALLBACK_OUTSIDE = "Final callbacks can only be installed during backward pass."


def queue_callback(lib, cb):
    return lib.autograd.Variable._execution_engine.queue_callback(cb)


# ----------------------------------------------------------------------------------
# Final callbacks


def test_variable_engine_is_reachable(ng):
    assert ng.autograd.Variable is ng.autograd.variable.Variable
    assert callable(ng.autograd.Variable._execution_engine.queue_callback)


def test_queue_callback_outside_backward(ng):
    with pytest.raises(RuntimeError, match=re.escape(CALLBACK_OUTSIDE)):
        queue_callback(ng, lambda: None)


def _callback_order(lib):
    ev = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    z = y.exp()
    out = z.sum()
    task = []

    def callback():
        ev.append(
            (
                "callback",
                lib._C._current_graph_task_id() == task[0],
                lib._C._current_autograd_node(),
                lib.is_grad_enabled(),
                to_np(x.grad).tolist(),
            )
        )
        queue_callback(lib, lambda: ev.append("callback queued by a callback"))

    def pre_hook(grad_outputs):
        task.append(lib._C._current_graph_task_id())
        ev.append("pre-hook of ExpBackward0, queues the callback")
        queue_callback(lib, callback)

    z.grad_fn.register_prehook(pre_hook)
    for name, t in (("z", z), ("y", y), ("x", x)):
        t.register_hook(lambda g, name=name: ev.append(f"tensor hook of {name}"))
    y.grad_fn.register_hook(lambda gi, go: ev.append("post-hook of SinBackward0"))
    x.register_post_accumulate_grad_hook(lambda p: ev.append("post-accumulate hook of x"))
    out.backward()
    ev.append("backward returned")
    return ev


@pytest.mark.usefixtures("torch_ref")
def test_callback_runs_after_the_whole_graph_task(ng):
    got, expected = run_both(_callback_order)
    assert got == expected
    cos1, cos2 = np.cos([1.0, 2.0]) * np.exp(np.sin([1.0, 2.0]))
    assert got[:-3] == [
        "tensor hook of z",
        "pre-hook of ExpBackward0, queues the callback",
        "tensor hook of y",
        "post-hook of SinBackward0",
        "tensor hook of x",
        "post-accumulate hook of x",
    ]
    tag, same_task, node, grad_mode, x_grad = got[-3]
    assert (tag, same_task, node, grad_mode) == ("callback", True, None, False)
    np.testing.assert_allclose(x_grad, [cos1, cos2], rtol=1e-6)
    assert got[-2:] == ["callback queued by a callback", "backward returned"]


def test_callbacks_run_fifo_once_per_backward(ng):
    ev = []
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2

    def hook(g):
        for i in range(3):
            assert queue_callback(ng, lambda i=i: ev.append(i)) is None

    y.register_hook(hook)
    out = y.sum()
    out.backward(retain_graph=True)
    out.backward()
    assert ev == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("create_graph", [False, True])
def test_callback_grad_mode_is_create_graph(ng, create_graph):
    modes = []
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: queue_callback(ng, lambda: modes.append(ng.is_grad_enabled())))
    ng.autograd.grad(y.sum(), x, create_graph=create_graph)
    assert modes == [create_graph]


def test_callback_error_propagates(ng):
    class CallbackError(Exception):
        pass

    def fail():
        raise CallbackError("from the callback")

    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: queue_callback(ng, fail))
    with pytest.raises(CallbackError, match="from the callback"):
        y.sum().backward()
    assert_close(x.grad, [2.0, 2.0])  # the graph ran before the callback


def test_callbacks_do_not_run_when_the_backward_fails(ng):
    class HookError(Exception):
        pass

    ran = []

    def hook(g):
        queue_callback(ng, lambda: ran.append(1))
        raise HookError("hook failed")

    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(hook)
    with pytest.raises(HookError, match="hook failed"):
        y.sum().backward()
    assert ran == []
    assert x.grad is None


# ----------------------------------------------------------------------------------
# _current_autograd_node


def test_current_autograd_node(ng):
    assert ng._C._current_autograd_node() is None
    seen = []
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    z = y.exp()
    for node in (z.grad_fn, y.grad_fn):
        node.register_prehook(lambda go, node=node: seen.append(("pre", ng._C._current_autograd_node() is node)))
        node.register_hook(lambda gi, go, node=node: seen.append(("post", ng._C._current_autograd_node() is node)))
    y.register_hook(lambda g: seen.append(("y hook", ng._C._current_autograd_node() is y.grad_fn)))
    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: seen.append(("x hook", ng._C._current_autograd_node() is acc)))
    x.register_post_accumulate_grad_hook(lambda p: seen.append(("post-acc", ng._C._current_autograd_node() is acc)))
    z.sum().backward()
    assert seen == [
        ("pre", True),
        ("post", True),
        ("y hook", True),
        ("pre", True),
        ("post", True),
        ("x hook", True),
        ("post-acc", True),
    ]
    assert ng._C._current_autograd_node() is None


def _post_hook_registered_by_an_unpack_hook(lib):
    ev = []

    def unpack(t):
        node = lib._C._current_autograd_node()
        ev.append(("unpack", node.name()))
        node.register_hook(lambda gi, go: ev.append(("post-hook", gi, go)))
        return t

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x.sin()
        z = x.exp()
    # y's node has no post-hook when it starts: the new one sees no grad_outputs
    y.sum().backward(retain_graph=True)
    ev.append("second pass")
    # now it has one: both run, with the grad_outputs
    y.sum().backward()
    ev.append("node with a post-hook already")
    z.grad_fn.register_hook(lambda gi, go: ev.append(("first post-hook", len(gi), len(go))))
    z.sum().backward()
    return ev


@pytest.mark.usefixtures("torch_ref")
def test_post_hook_registered_while_the_node_runs_runs_in_that_pass(ng):
    got, expected = run_both(_post_hook_registered_by_an_unpack_hook)
    assert [e if isinstance(e, str) else e[0] for e in got] == [
        "unpack",
        "post-hook",
        "second pass",
        "unpack",
        "post-hook",
        "post-hook",
        "node with a post-hook already",
        "unpack",
        "first post-hook",
        "post-hook",
    ]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert same_value(g, e), (g, e)
    assert got[1][2] == ()
    assert len(got[4][2]) == 1


# ----------------------------------------------------------------------------------
# Debug logging


NODE_REPR = re.compile(r"<(?:[\w.]+\.)?(\w+) object at 0x[0-9a-fA-F]+>")
LOG_LINE = re.compile(r"^Executing: <(?:[\w.]+\.)?\w+ object at 0x[0-9a-fA-F]+> with grad_outputs: \[.*\]$")


def _logged_backward(lib, caplog):
    with graph_debug_log(lib, caplog) as records:

        class TwoOutputs(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 3

        x = lib.ones(2, 3, requires_grad=True)
        out = (x.sin() * 2).sum()
        out.backward(retain_graph=True)
        out.backward()  # the logging hooks of the first call were removed
        a = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        b = lib.ones(3, dtype=lib.float64, requires_grad=True)
        z = (a * b).sum(0)
        lib.autograd.grad(z, [b], grad_outputs=lib.ones(3, dtype=lib.float64))
        first, _ = TwoOutputs.apply(lib.ones(3, requires_grad=True))
        first.sum().backward()
        assert all(r.levelno == logging.DEBUG for r in records())
        return [r.getMessage() for r in records()]


EXPECTED_LOG = [
    "Executing: <SumBackward0> with grad_outputs: [f32[]]",
    "Executing: <MulBackward0> with grad_outputs: [f32[2, 3]]",
    "Executing: <SinBackward0> with grad_outputs: [f32[2, 3]]",
    "Executing: <AccumulateGrad> with grad_outputs: [f32[2, 3]]",
] * 2 + [
    # grad(): the captured AccumulateGrad of b and the pruned branch of a do not run
    "Executing: <SumBackward1> with grad_outputs: [f64[3]]",
    "Executing: <MulBackward0> with grad_outputs: [f64[2, 3]]",
    "Executing: <SumBackward0> with grad_outputs: [f32[]]",
    "Executing: <TwoOutputsBackward> with grad_outputs: [f32[3],None]",
    "Executing: <AccumulateGrad> with grad_outputs: [f32[3]]",
]


def test_debug_logging_of_executed_nodes(ng, caplog):
    messages = _logged_backward(ng, caplog)
    assert all(LOG_LINE.match(m) for m in messages), messages
    assert [NODE_REPR.sub(r"<\1>", m) for m in messages] == EXPECTED_LOG


def test_debug_logging_matches_torch(ng, torch_ref, caplog):
    got = [NODE_REPR.sub(r"<\1>", m) for m in _logged_backward(ng, caplog)]
    expected = [NODE_REPR.sub(r"<\1>", m) for m in _logged_backward(torch_ref, caplog)]
    assert got == expected


def test_no_logging_above_debug(ng, caplog):
    name = ng.__name__ + ".autograd.graph"
    logger = logging.getLogger(name)
    caplog.set_level(logging.INFO, logger=name)
    logger.addHandler(caplog.handler)
    try:
        caplog.clear()
        x = ng.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        assert [r for r in caplog.records if r.name == name] == []
    finally:
        logger.removeHandler(caplog.handler)


# ----------------------------------------------------------------------------------
# The docstring examples of torch/autograd/graph.py, run on the library under test


def example_node_name(lib):
    a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    assert isinstance(b.grad_fn, lib.autograd.graph.Node)
    print(b.grad_fn.name())


def example_node_register_hook(lib):
    a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    assert isinstance(b.grad_fn, lib.autograd.graph.Node)
    handle = b.grad_fn.register_hook(lambda gI, gO: (gO[0] * 2,))
    b.sum().backward(retain_graph=True)
    print(a.grad)
    handle.remove()  # Removes the hook
    a.grad = None
    b.sum().backward(retain_graph=True)
    print(a.grad)


def example_node_register_prehook(lib):
    a = lib.tensor([0.0, 0.0, 0.0], requires_grad=True)
    b = a.clone()
    assert isinstance(b.grad_fn, lib.autograd.graph.Node)
    handle = b.grad_fn.register_prehook(lambda gI: (gI[0] * 2,))
    b.sum().backward(retain_graph=True)
    print(a.grad)
    handle.remove()
    a.grad = None
    b.sum().backward(retain_graph=True)
    print(a.grad)


def example_saved_tensors_hooks(lib):
    def pack_hook(x):
        print("Packing", x)
        return x.detach()

    def unpack_hook(x):
        print("Unpacking", x)
        return x

    a = lib.ones(5, requires_grad=True)
    b = lib.ones(5, requires_grad=True) * 2
    with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = a * b
    y.sum().backward()


def example_save_on_cpu(lib):
    # the CUDA example of save_on_cpu, on CPU tensors with fixed values
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = lib.tensor([5.0, 6.0], requires_grad=True)

    def f(a, b, c):
        prod_1 = a * b  # a and b are saved on GPU
        with lib.autograd.graph.save_on_cpu():
            prod_2 = prod_1 * c  # prod_1 and c are saved on CPU
        y = prod_2 * a  # prod_2 and a are saved on GPU
        return y

    y = f(a, b, c)
    y.sum().backward()
    print(a.grad, b.grad, c.grad)


def example_disable_saved_tensors_hooks(lib):
    message = "saved tensors default hooks are disabled"
    with lib.autograd.graph.disable_saved_tensors_hooks(message):
        try:
            with lib.autograd.graph.save_on_cpu():
                pass
        except RuntimeError as e:
            print("RuntimeError:", e)


def example_register_multi_grad_hook(lib):
    a = lib.rand(2, 3, requires_grad=True)
    b = lib.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b

    def fn(grads):
        print([g is not None for g in grads])

    lib.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)


def example_allow_mutation_on_saved_tensors(lib):
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        # forward
        a = lib.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        print(b.sin_())
        # backward
        out.sum().backward()
    print(a.grad)


EXAMPLES = {
    example_node_name: "CloneBackward0\n",
    example_node_register_hook: "tensor([2., 2., 2.])\ntensor([1., 1., 1.])\n",
    example_node_register_prehook: "tensor([2., 2., 2.])\ntensor([1., 1., 1.])\n",
    # what torch 2.13 really prints (its docstring shows an older order and reprs)
    example_saved_tensors_hooks: (
        "Packing tensor([2., 2., 2., 2., 2.], grad_fn=<MulBackward0>)\n"
        "Packing tensor([1., 1., 1., 1., 1.], requires_grad=True)\n"
        "Unpacking tensor([2., 2., 2., 2., 2.])\n"
        "Unpacking tensor([1., 1., 1., 1., 1.])\n"
    ),
    example_save_on_cpu: "tensor([30., 96.]) tensor([ 5., 24.]) tensor([ 3., 16.])\n",
    example_disable_saved_tensors_hooks: ("RuntimeError: saved tensors default hooks are disabled\n"),
    example_register_multi_grad_hook: "[True, True, True, False]\n[True, False, True, False]\n",
    example_allow_mutation_on_saved_tensors: (
        "tensor([[0.8415, 0.8415, 0.8415],\n"
        "        [0.8415, 0.8415, 0.8415]], grad_fn=<SinBackward0>)\n"
        "tensor([[2., 2., 2.],\n"
        "        [2., 2., 2.]])\n"
    ),
}


@pytest.mark.parametrize("example", list(EXAMPLES), ids=lambda f: f.__name__[len("example_") :])
def test_docstring_example(ng, torch_ref, capsys, example):
    example(ng)
    got = capsys.readouterr().out
    assert got == EXAMPLES[example]
    example(torch_ref)
    assert capsys.readouterr().out == got


# ----------------------------------------------------------------------------------
# AOTAutograd's stack-trace preservation hooks
# (torch/_functorch/_aot_autograd/logging_utils.py: setup_stacktrace_preservation_hooks)

GRADIENT_ACC_SPECIAL_STACK = "== Gradient Accumulation =="


def _stacktrace_preservation(lib):
    events = []
    state = {"stack": ["<eager>"], "seq_nr": None, "callback_set": False}
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    h = x * w
    out = (h.sin() + h * w).sum()

    def iter_graph(roots):
        if not roots:
            return
        seen = set()
        q = collections.deque()
        for node in roots:
            if node is not None and node not in seen:
                seen.add(node)
                q.append(node)
        while q:
            node = q.popleft()
            for fn, _idx in node.next_functions:
                if fn in seen or fn is None:
                    continue
                seen.add(fn)
                q.append(fn)
            yield node

    nodes = list(iter_graph([out.grad_fn]))
    bfs = [n.name() for n in nodes]
    # forward tracebacks, as anomaly mode would have recorded them
    for n in nodes:
        n.metadata["traceback_"] = [f"forward of {n.name()}"]
    rank = {n: i for i, n in enumerate(sorted(nodes, key=lambda n: n._sequence_nr()))}

    def get_callback(saved_stack_):
        def callback():
            events.append(("callback", list(state["stack"]), "->", saved_stack_))
            state["stack"] = saved_stack_
            state["callback_set"] = False

        return callback

    def get_prehook(stack_, seq_nr):
        def prehook(grad_output):
            if not state["callback_set"]:
                lib.autograd.variable.Variable._execution_engine.queue_callback(get_callback(list(state["stack"])))
                state["callback_set"] = True
            state["stack"] = stack_
            state["seq_nr"] = seq_nr
            node = lib._C._current_autograd_node()
            events.append(("pre", node.name(), list(stack_), rank[node], len(grad_output)))

        return prehook

    def get_posthook(special_stack_, seq_nr):
        def posthook(grad_input, grad_output):
            state["stack"] = special_stack_
            state["seq_nr"] = None
            node = lib._C._current_autograd_node()
            events.append(("post", node.name(), list(special_stack_), len(grad_input)))

        return posthook

    for node in iter_graph([out.grad_fn]):
        forward_node_stack = node.metadata.get("traceback_", [])
        node.register_prehook(get_prehook(forward_node_stack, node._sequence_nr()))
        special_stack = forward_node_stack.copy()
        special_stack.append(GRADIENT_ACC_SPECIAL_STACK)
        node.register_hook(get_posthook(special_stack, node._sequence_nr()))

    out.backward()
    events.append(("after", state["stack"], state["callback_set"], state["seq_nr"]))
    metadata_kept = all(n.metadata["traceback_"] == [f"forward of {n.name()}"] for n in nodes)
    return bfs, events, metadata_kept, to_np(x.grad).tolist(), to_np(w.grad).tolist()


@pytest.mark.usefixtures("torch_ref")
def test_stacktrace_preservation_pattern_matches_torch(ng):
    got, expected = run_both(_stacktrace_preservation)
    bfs, events, metadata_kept, _, _ = got
    assert bfs == expected[0]
    assert events == expected[1]
    assert got[2:] == expected[2:]
    assert metadata_kept
    acc = "torch::autograd::AccumulateGrad"
    assert bfs == [
        "SumBackward0",
        "AddBackward0",
        "SinBackward0",
        "MulBackward0",
        "MulBackward0",
        acc,
        acc,
    ]
    # every node got exactly one pre-hook and one post-hook call, pre before post
    kinds = [e[0] for e in events]
    assert kinds.count("pre") == kinds.count("post") == len(bfs)
    assert [e[1] for e in events if e[0] == "pre"] == [e[1] for e in events if e[0] == "post"]
    assert all(events[i][0] == "pre" and events[i + 1][0] == "post" for i in range(0, 14, 2))
    # the callback was queued once, ran after every node and restored the outer stack
    assert events[-2] == (
        "callback",
        ["forward of " + acc, GRADIENT_ACC_SPECIAL_STACK],
        "->",
        ["<eager>"],
    )
    assert events[-1] == ("after", ["<eager>"], False, None)
