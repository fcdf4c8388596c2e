"""Activation checkpointing (``utils.checkpoint``): both modes against the
plain run, recomputation counts and early stop, nesting, ``autograd.grad``,
the RNG state, arguments and outputs that are not tensors,
``checkpoint_sequential``, the determinism check, warnings, misuse errors, and
that nothing outlives backward."""

from __future__ import annotations

import contextlib
import gc
import importlib
import re
import weakref

import numpy as np
import pytest

from oracle import assert_close, from_np

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
BOTH = pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])

REENTRANT_GRAD_ERROR = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False, "
    "or call .backward() without passing the `inputs` argument."
)
USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
    "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
    "is recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants."
)
SEQUENTIAL_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
    "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
    "two variants."
)
BACKWARD_TWICE = "Trying to backward through the graph a second time"


@pytest.fixture
def cp(ng):
    return importlib.import_module(ng.__name__ + ".utils.checkpoint")


def leaf(ng, arr=X):
    return from_np(ng, np.array(arr), requires_grad=True)


def mlp(ng):
    ng.manual_seed(3)
    return ng.nn.Sequential(ng.nn.Linear(3, 8).double(), ng.nn.Tanh(), ng.nn.Dropout(0.5), ng.nn.Linear(8, 2).double())


def grads(model, x):
    return [x.grad.clone()] + [p.grad.clone() for p in model.parameters()]


def zero(model, x):
    x.grad = None
    for p in model.parameters():
        p.grad = None


# ----------------------------------------------------------------------------------
# Gradients equal the plain run's; the function runs once more in backward


@BOTH
def test_mlp_with_dropout_gradients_equal_the_plain_run(ng, cp, use_reentrant):
    model, x = mlp(ng), leaf(ng)
    ng.manual_seed(0)
    plain_out = model(x)
    (plain_out * plain_out).sum().backward()
    expected = grads(model, x)
    zero(model, x)
    ng.manual_seed(0)
    out = cp.checkpoint(model, x, use_reentrant=use_reentrant)
    assert out.tolist() == plain_out.tolist()
    (out * out).sum().backward()
    for got, want in zip(grads(model, x), expected):
        assert_close(got, want, rtol=1e-12, atol=1e-12)


@BOTH
def test_the_function_runs_once_in_forward_and_once_in_backward(ng, cp, use_reentrant):
    calls = []

    def f(a):
        calls.append(ng.is_grad_enabled())
        return a.sin().exp()

    x = leaf(ng)
    y = cp.checkpoint(f, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2
    # The reentrant forward runs under no_grad; every recomputation with grad.
    assert calls == [not use_reentrant, True]
    assert_close(x.grad, x.detach().sin().exp() * x.detach().cos())


def test_non_reentrant_records_the_function_graph_and_its_saved_values(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: a.exp() * 2, x, use_reentrant=False)
    assert y.grad_fn.name() == "MulBackward0"
    exp_node = y.grad_fn.next_functions[0][0]
    assert exp_node.name() == "ExpBackward0"
    # Reading a saved value outside backward recomputes it.
    assert_close(exp_node._saved_result, x.detach().exp())


def test_retain_graph_recomputes_for_each_backward(ng, cp):
    calls = []

    def f(a):
        calls.append(1)
        return a.sin()

    x = leaf(ng)
    y = cp.checkpoint(f, x, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert len(calls) == 3
    assert_close(x.grad, 2 * x.detach().cos())
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        y.sum().backward()


@pytest.mark.parametrize("how", ["default", "context", "argument"])
def test_early_stop_ends_the_recomputation_after_the_last_saved_tensor(ng, cp, how):
    steps = []

    def f(a):
        b = a.sin()
        steps.append("after sin")
        return b * 2

    x = leaf(ng)
    if how == "context":
        with cp.set_checkpoint_early_stop(False):
            y = cp.checkpoint(f, x, use_reentrant=False)
    else:
        y = cp.checkpoint(f, x, use_reentrant=False, early_stop=how == "default")
    y.sum().backward()
    assert steps == ["after sin"] if how == "default" else ["after sin", "after sin"]
    assert_close(x.grad, 2 * x.detach().cos())


# ----------------------------------------------------------------------------------
# Nesting, autograd.grad, backward(inputs=...)


def test_nested_checkpoints_give_the_plain_gradients(ng, cp):
    calls = {"inner": 0, "outer": 0}

    def inner(a):
        calls["inner"] += 1
        return a.sin().cos()

    def outer(a, nested):
        calls["outer"] += 1
        b = a.exp()
        c = cp.checkpoint(inner, b, use_reentrant=False) if nested else inner(b)
        return c.tanh() * a

    x = leaf(ng)
    (expected,) = ng.autograd.grad(outer(x, False).sum(), x)
    calls.update(inner=0, outer=0)
    y = cp.checkpoint(outer, x, True, use_reentrant=False)
    (got,) = ng.autograd.grad(y.sum(), x)
    assert_close(got, expected, rtol=1e-12, atol=1e-12)
    # inner: forward, the outer recomputation, its own recomputation.
    assert calls == {"inner": 3, "outer": 2}


@BOTH
def test_nested_second_order_gradient(ng, cp, use_reentrant):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: (a**3).sum(), x, use_reentrant=False)
    (g,) = ng.autograd.grad(y, x, create_graph=True)
    (gg,) = ng.autograd.grad(g.sum(), x)
    assert_close(gg, 6 * x.detach())


def test_non_reentrant_works_with_grad_and_backward_inputs(ng, cp):
    w = leaf(ng, [[2.0, 3.0, 4.0]])
    x = leaf(ng)
    y = cp.checkpoint(lambda a, b: (a * b).sin(), x, w, use_reentrant=False)
    (gx,) = ng.autograd.grad(y.sum(), x, retain_graph=True)
    assert_close(gx, (x * w).detach().cos() * w.detach())
    y.sum().backward(inputs=[w])
    assert x.grad is None
    assert_close(w.grad, ((x * w).detach().cos() * x.detach()).sum(0, keepdim=True))


@pytest.mark.parametrize("how", ["grad", "backward_inputs"])
def test_reentrant_refuses_grad_and_backward_inputs(ng, cp, how):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: a.sin(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match=re.escape(REENTRANT_GRAD_ERROR)):
        if how == "grad":
            ng.autograd.grad(y.sum(), x)
        else:
            y.sum().backward(inputs=[x])


def test_is_checkpoint_valid_is_false_in_the_nodes_of_a_pass_given_inputs(ng):
    seen = []
    x = leaf(ng)
    x.register_hook(lambda g: seen.append(("x", ng.autograd._is_checkpoint_valid())))

    def run(backward):
        y = x * 2
        y.register_hook(lambda g: seen.append(("y", ng.autograd._is_checkpoint_valid())))
        backward(y.sum())

    assert ng.autograd._is_checkpoint_valid()
    run(lambda loss: loss.backward())
    run(lambda loss: ng.autograd.grad(loss, x))
    run(lambda loss: loss.backward(inputs=[x]))
    # The hook of a leaf that grad() captures runs outside any node.
    assert seen == [("y", True), ("x", True), ("y", False), ("x", True), ("y", False), ("x", False)]
    assert ng.autograd._is_checkpoint_valid()


@pytest.mark.parametrize("grouped", [False, True])
def test_graph_exec_group_shares_one_recomputation(ng, cp, grouped):
    calls = []

    def f(a):
        calls.append(1)
        return a.sin(), a.exp()

    x = leaf(ng)
    y1, y2 = cp.checkpoint(f, x, use_reentrant=False)
    with cp.GraphExecGroup() if grouped else contextlib.nullcontext():
        (g1,) = ng.autograd.grad(y1.sum(), x)
        (g2,) = ng.autograd.grad(y2.sum(), x)
    assert len(calls) == (2 if grouped else 3)
    assert_close(g1, x.detach().cos())
    assert_close(g2, x.detach().exp())


def test_graph_exec_group_errors(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: a.sin(), x, use_reentrant=False)
    with cp.GraphExecGroup() as group:
        assert cp.GraphExecGroup._get_current_group() is group
        with pytest.raises(
            RuntimeError,
            match=f"^GraphExecGroup contexts cannot be nested. Already inside group {re.escape(repr(group))}$",
        ):
            cp.GraphExecGroup().__enter__()
        ng.autograd.grad(y.sum(), x, retain_graph=True)
        with pytest.raises(cp.CheckpointError, match="Performing two backward calls that overlap"):
            ng.autograd.grad(y.sum(), x)
    assert cp.GraphExecGroup._get_current_group() is None


# ----------------------------------------------------------------------------------
# RNG state


@BOTH
@pytest.mark.parametrize("preserve", [True, False])
def test_dropout_mask_is_recomputed_only_with_the_rng_state_preserved(ng, cp, use_reentrant, preserve):
    x = from_np(ng, np.ones(64), requires_grad=True)
    ng.manual_seed(7)
    y = cp.checkpoint(
        lambda a: ng.nn.functional.dropout(a, 0.5), x, use_reentrant=use_reentrant, preserve_rng_state=preserve
    )
    state = ng.get_rng_state()
    y.sum().backward()
    # A preserved state is restored after the recomputation; otherwise the
    # recomputation draws from the caller's generator.
    assert (ng.get_rng_state().tolist() == state.tolist()) is preserve
    same_mask = (x.grad != 0).tolist() == (y != 0).tolist()
    assert same_mask is preserve


# ----------------------------------------------------------------------------------
# Arguments and outputs


@BOTH
def test_non_tensor_arguments_and_outputs(ng, cp, use_reentrant):
    def f(a, scale, name, none):
        return a * scale, name.upper(), none, 5

    x = leaf(ng)
    y, name, none, five = cp.checkpoint(f, x, 3.0, "out", None, use_reentrant=use_reentrant)
    assert (name, none, five) == ("OUT", None, 5)
    y.sum().backward()
    assert x.grad.tolist() == np.full(X.shape, 3.0).tolist()


def test_non_reentrant_passes_keyword_arguments(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a, *, power: a**power, x, power=3, use_reentrant=False)
    y.sum().backward()
    assert_close(x.grad, 3 * x.detach() ** 2)


def test_reentrant_rejects_keyword_arguments(ng, cp):
    with pytest.raises(ValueError, match=r"^Unexpected keyword arguments: power,other$"):
        cp.checkpoint(lambda a, **kw: a, leaf(ng), power=3, other=1, use_reentrant=True)


def test_reentrant_node_and_inputs_without_grad(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a, b: a * b, x, from_np(ng, X), use_reentrant=True)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        z = cp.checkpoint(lambda a: a * 2, from_np(ng, X), use_reentrant=True)
    assert not z.requires_grad


def test_reentrant_backward_needs_a_recomputed_output_that_requires_grad(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: a.detach() * 2, x, use_reentrant=True)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"  # every output of the Function
    with pytest.raises(
        RuntimeError, match="^none of output has requires_grad=True, this checkpoint\\(\\) is not necessary$"
    ):
        y.sum().backward()
    y2, z = cp.checkpoint(lambda a: (a.detach() * 3, a * 2), x, use_reentrant=True)
    (y2.sum() + z.sum()).backward()
    assert x.grad.tolist() == np.full(X.shape, 2.0).tolist()


def test_no_grad_forward_records_nothing(ng, cp):
    calls = []
    with ng.no_grad():
        y = cp.checkpoint(lambda a: calls.append(1) or a.sin(), leaf(ng), use_reentrant=False)
    assert y.grad_fn is None and calls == [1]


# ----------------------------------------------------------------------------------
# checkpoint_sequential


@BOTH
@pytest.mark.parametrize("segments", [1, 2, 4])
@pytest.mark.parametrize("as_list", [False, True])
def test_checkpoint_sequential_gradients(ng, cp, use_reentrant, segments, as_list):
    model, x = mlp(ng), leaf(ng)
    model.eval()
    (model(x) ** 2).sum().backward()
    expected = grads(model, x)
    zero(model, x)
    functions = list(model) if as_list else model
    out = cp.checkpoint_sequential(functions, segments, x, use_reentrant=use_reentrant)
    (out**2).sum().backward()
    for got, want in zip(grads(model, x), expected):
        assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_checkpoint_sequential_checkpoints_all_but_the_last_segment(ng, cp):
    calls = []

    def layer(i):
        return lambda a: calls.append(i) or a.sin()

    x = leaf(ng)
    out = cp.checkpoint_sequential([layer(i) for i in range(4)], 2, x, use_reentrant=False)
    out.sum().backward()
    assert calls == [0, 1, 2, 3, 0, 1]


def test_checkpoint_sequential_rejects_other_keyword_arguments(ng, cp):
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        cp.checkpoint_sequential([ng.nn.ReLU()], 1, leaf(ng), use_reentrant=False, foo=1)


# ----------------------------------------------------------------------------------
# Determinism check


def changing(first, later):
    runs = []

    def f(a):
        runs.append(1)
        return first(a) if len(runs) == 1 else later(a)

    return f


@pytest.mark.parametrize(
    "first,later,message",
    [
        (
            lambda a: a.exp().sin(),
            lambda a: a.sin(),
            "A different number of tensors was saved during the original forward and recomputation.\n"
            "Number of tensors saved during forward: 2\nNumber of tensors saved during recomputation: 1.\n",
        ),
        (
            lambda a: a.sin(),
            lambda a: a.exp().sin(),
            "trying to save more tensors during recomputation than during the original forward pass.\n",
        ),
    ],
    ids=["fewer", "more"],
)
def test_recomputation_saving_another_number_of_tensors(ng, cp, first, later, message):
    x = leaf(ng)
    # Early stop would end the rerun at the forward's count: extra saves would go unseen.
    y = cp.checkpoint(changing(first, later), x, use_reentrant=False, early_stop=False)
    message = f"torch.utils.checkpoint: {message}\nTip: To see a more detailed error message"
    with pytest.raises(cp.CheckpointError, match=re.escape(message)):
        y.sum().backward()


def test_recomputation_saving_more_tensors_with_early_stop_is_not_checked(ng, cp):
    # Early stop ends the rerun at the forward's count: extra saves never happen.
    x = leaf(ng)
    y = cp.checkpoint(changing(lambda a: a.sin(), lambda a: a.sin().exp()), x, use_reentrant=False)
    y.sum().backward()
    assert_close(x.grad, x.detach().cos())


# debug=True: torch's message layout; npgrad logs backward nodes where torch logs
# ATen operators, so only the headings and this file's frames are compared.
_DEBUG_HEADINGS = re.compile(r"^(\+[~-]+\+|\|.*\||Operations executed during .*| ERROR: .*|.*<--- You are here)$")


def _debug_error(ng, cp, debug, enabled=None):
    x = leaf(ng)
    f = changing(lambda a: a.exp().sin(), lambda a: a.sin())
    with cp.set_checkpoint_debug_enabled(enabled):
        y = cp.checkpoint(f, x, use_reentrant=False, debug=debug)
        with pytest.raises(cp.CheckpointError) as e:
            y.sum().backward()
    return str(e.value)


def test_debug_enabled_globally_reports_both_runs_in_torchs_layout(ng, cp):
    # torch's own message captures C++ stacks too: slow, so torch runs this once.
    message = _debug_error(ng, cp, False, True)
    assert message.startswith(
        " An error happened while unpacking tensors; dumping logs of latest computation\n"
        "because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`."
    )
    frame = "+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+"
    rule = "+------------------------------------------------------------------------------+"
    assert [line for line in message.splitlines() if _DEBUG_HEADINGS.match(line)] == [
        frame,
        "|        1. Stack traces of the operators that ran in the original forward     |",
        rule,
        frame,
        "|        2. Stack traces of the operators that ran during recomputation        |",
        rule,
        frame,
        "|       3. Log of operators in the original forward and recomputation          |",
        rule,
        "Operations executed during the original forward:",
        "Operations executed during recomputation:",
        rule,
        " ERROR: Detected non-determinism while running activation checkpointing",
        " 4. Error message                                             <--- You are here",
    ]
    assert message.rstrip().endswith("-" * 80)
    # Each run's entries are numbered and traced back to the function's lines here.
    assert re.search(r"   \(1 of \d+ in original\)\n", message)
    assert re.search(r"   \(1 of \d+ in recompute\)\n", message)
    assert re.search(r"test_checkpoint\.py:\d+:<lambda>\n", message)


def test_debug_logs_the_nodes_of_each_run(ng, cp):
    if ng.__name__ != "npgrad":
        pytest.skip("torch logs ATen operators (and captures C++ stacks: slow)")
    message = _debug_error(ng, cp, True)
    forward = message.split("Operations executed during the original forward:\n\n")[1].split("\n\n")[0]
    recompute = message.split("Operations executed during recomputation:\n\n")[1].split("\n\n")[0]
    assert forward.splitlines() == ["ExpBackward0", "SinBackward0"]
    assert recompute.splitlines() == ["SinBackward0"]
    assert "ExpBackward0   (1 of 2 in original)\n\n" in message


def test_debug_disabled_globally_gives_the_short_error(ng, cp):
    message = _debug_error(ng, cp, True, False)
    assert message.startswith("torch.utils.checkpoint: A different number of tensors was saved")


def test_debug_with_a_deterministic_function_gives_the_plain_gradients(ng, cp):
    x = leaf(ng)
    y = cp.checkpoint(lambda a: a.exp().sin(), x, use_reentrant=False, debug=True)
    y.sum().backward()
    assert_close(x.grad, (x.detach().exp().cos() * x.detach().exp()))


@pytest.mark.parametrize("check", ["default", "none"])
def test_recomputation_with_other_metadata(ng, cp, check):
    x = leaf(ng)
    f = changing(lambda a: a.sin(), lambda a: a[:1].sin())
    y = cp.checkpoint(f, x, use_reentrant=False, determinism_check=check)
    if check == "none":  # unchecked: SinBackward0 broadcasts cos(x[:1]) against the gradient
        y.sum().backward()
        assert_close(x.grad, x.detach()[:1].cos().expand(2, 3))
        return
    message = (
        "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
        "than during the forward pass.\ntensor at position 0:\n"
        f"saved metadata: {{'shape': {ng.Size([2, 3])}, 'dtype': {ng.float64}, 'device': {ng.device('cpu')!r}}}\n"
        f"recomputed metadata: {{'shape': {ng.Size([1, 3])}, 'dtype': {ng.float64}, 'device': {ng.device('cpu')!r}}}\n"
    )
    with pytest.raises(cp.CheckpointError, match=re.escape(message)):
        y.sum().backward()


def test_unpacking_a_recomputed_tensor_twice(ng, cp):
    y = cp.checkpoint(lambda a: a.sin(), leaf(ng), use_reentrant=False)
    node = y.grad_fn

    def read_saved_input(grad_outputs):
        _ = node._saved_self  # the node unpacks it once more in the same pass

    node.register_prehook(read_saved_input)
    with pytest.raises(
        cp.CheckpointError, match="Unpack is being triggered for a tensor that was already unpacked once"
    ):
        y.sum().backward()


# ----------------------------------------------------------------------------------
# context_fn, warnings, misuse


def test_context_fn_wraps_the_forward_and_the_recomputation(ng, cp):
    log = []

    @contextlib.contextmanager
    def ctx(name):
        log.append(f"enter {name}")
        yield
        log.append(f"exit {name}")

    def f(a):
        log.append("run")
        return a.sin()

    y = cp.checkpoint(f, leaf(ng), use_reentrant=False, context_fn=lambda: (ctx("fwd"), ctx("recompute")))
    y.sum().backward()
    # Early stop leaves the recomputation (and its context) by an exception.
    assert log == ["enter fwd", "run", "exit fwd", "enter recompute", "run"]


def test_a_forward_context_may_not_suppress_the_function_error(ng, cp):
    def f(a):
        raise ValueError("boom")

    message = (
        "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
        "during the checkpointed forward. This is not supported because checkpoint cannot return a value for "
        "a failed forward."
    )
    context_fn = lambda: (contextlib.suppress(ValueError), contextlib.nullcontext())  # noqa: E731
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        cp.checkpoint(f, leaf(ng), use_reentrant=False, context_fn=context_fn)


def test_warnings_when_use_reentrant_is_not_passed(ng, cp):
    x = leaf(ng)
    with pytest.warns(UserWarning, match=f"^{re.escape(USE_REENTRANT_WARNING)}$"):
        y = cp.checkpoint(lambda a: a.sin(), x)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"  # the reentrant default
    with pytest.warns(UserWarning, match=f"^{re.escape(SEQUENTIAL_WARNING)}$"):
        cp.checkpoint_sequential([ng.nn.ReLU()], 1, x)


@pytest.mark.parametrize(
    "kwargs,error,message",
    [
        ({"use_reentrant": True, "context_fn": lambda: (None, None)}, ValueError, "Passing `context_fn` or `debug`"),
        ({"use_reentrant": True, "debug": True}, ValueError, "Passing `context_fn` or `debug`"),
        (
            {"use_reentrant": False, "determinism_check": "shape"},
            ValueError,
            "determinism_check should be one of ['default', 'none'], but got shape",
        ),
    ],
    ids=["context_fn", "debug", "determinism_check"],
)
def test_misuse_errors(ng, cp, kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        cp.checkpoint(lambda a: a, leaf(ng), **kwargs)


def test_detach_variable(ng, cp):
    x = leaf(ng) * 2
    d, n = cp.detach_variable((x, 1))
    assert (d.grad_fn, d.requires_grad, n) == (None, True, 1)
    with pytest.raises(RuntimeError, match="^Only tuple of tensors is supported. Got Unsupported input type: list$"):
        cp.detach_variable([x])


@BOTH
def test_an_error_in_the_function_leaves_no_hooks_behind(ng, cp, use_reentrant):
    def f(a):
        a.sin()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        cp.checkpoint(f, leaf(ng), use_reentrant=use_reentrant)
    x = leaf(ng)
    y = x.exp()
    assert y.grad_fn._saved_result is not None
    y.sum().backward()
    assert_close(x.grad, x.detach().exp())


# ----------------------------------------------------------------------------------
# Nothing outlives backward


@BOTH
def test_saved_and_recomputed_tensors_are_freed_after_backward(ng, cp, use_reentrant):
    made = []

    def f(a):
        b = a.exp()
        made.append(weakref.ref(b))
        return b.sin()

    x = leaf(ng)
    y = cp.checkpoint(f, x, use_reentrant=use_reentrant)
    y.sum().backward()
    del y
    gc.collect()
    assert len(made) == 2
    assert [r() for r in made] == [None, None]


class Layer:
    def __call__(self, a):
        return a.exp().sin()


@BOTH
@pytest.mark.parametrize("backward", [False, True])
def test_the_checkpoint_state_is_freed_with_the_graph(ng, cp, use_reentrant, backward):
    x = leaf(ng)
    layer = Layer()
    y = cp.checkpoint(layer, x, use_reentrant=use_reentrant)
    if backward:
        y.sum().backward()
    ref = weakref.ref(layer)
    del layer, y
    gc.collect()
    assert ref() is None


def test_saved_tensors_hooks_see_only_the_checkpoint_inputs(ng, cp):
    log = []
    x = leaf(ng)
    hooks = ng.autograd.graph.saved_tensors_hooks(
        lambda t: log.append("pack") or t, lambda t: log.append("unpack") or t
    )
    with hooks:
        y = cp.checkpoint(lambda a: a.exp().sin().cos(), x, use_reentrant=False)
    assert log == ["pack"]  # the input, saved for the recomputation
    y.sum().backward()
    assert log == ["pack", "unpack"]
