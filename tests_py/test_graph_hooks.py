"""Backward hooks: tensor hooks, retain_grad, node pre/post hooks, post-accumulate-grad
hooks, RemovableHandle, their call order and the errors that name a misbehaving hook."""

from __future__ import annotations

import collections
import pickle
import warnings

import numpy as np
import pytest

from oracle import assert_close, from_np, run_both, same_value, to_np

X = np.array([0.5, 1.0, 2.0], dtype=np.float32)
C = np.array([2.0, 3.0, 4.0], dtype=np.float32)


def named(name, fn):
    fn.__name__ = name
    return fn


MODULE_HOOK_CALLS = []


def _module_level_hook(grad):  # picklable, for the RemovableHandle pickle test
    MODULE_HOOK_CALLS.append(to_np(grad).tolist())


@pytest.fixture
def xy(ng):
    """x (leaf), c (no grad), y = x * c, out = y.sum(); d out / dx = c."""
    x = from_np(ng, X, requires_grad=True)
    c = from_np(ng, C)
    y = x * c
    return x, c, y, y.sum()


# ----------------------------------------------------------------------------------
# The order of all hook kinds on one backward


def _hook_order_program(lib):
    ev = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    t = x * 2
    node = t.grad_fn
    acc = node.next_functions[0][0]
    # registered in an order unrelated to the execution order on purpose
    acc.register_hook(lambda gi, go: ev.append(f"AccumulateGrad post-hook {len(gi)} {len(go)}"))
    node.register_hook(lambda gi, go: ev.append("node post-hook"))
    x.register_post_accumulate_grad_hook(
        lambda p: ev.append(f"post-accumulate hook (is x: {p is x}, grad: {to_np(p.grad).tolist()})")
    )
    node.register_prehook(lambda go: ev.append(f"node pre-hook (t.grad: {to_np(t.grad).tolist()})"))
    acc.register_prehook(lambda go: ev.append(f"AccumulateGrad pre-hook (x.grad: {x.grad})"))
    t.retain_grad()
    t.register_hook(lambda g: ev.append(f"tensor hook on t (t.grad: {t.grad})") or g * 10)
    x.register_hook(lambda g: ev.append(f"tensor hook on x (x.grad: {x.grad})"))
    (t * 3).sum().backward()
    ev.append(f"done x.grad={to_np(x.grad).tolist()} t.grad={to_np(t.grad).tolist()}")
    return ev


EXPECTED_ORDER = [
    "tensor hook on t (t.grad: None)",
    "node pre-hook (t.grad: [30.0, 30.0])",  # retain_grad ran in between, saw the hooked value
    "node post-hook",
    "tensor hook on x (x.grad: None)",
    "AccumulateGrad pre-hook (x.grad: None)",
    "post-accumulate hook (is x: True, grad: [60.0, 60.0])",
    "AccumulateGrad post-hook 0 1",
    "done x.grad=[60.0, 60.0] t.grad=[30.0, 30.0]",
]


@pytest.mark.usefixtures("torch_ref")
def test_order_of_every_hook_kind_matches_torch(ng):
    got, expected = run_both(_hook_order_program)
    assert got == expected
    assert got == EXPECTED_ORDER


# ----------------------------------------------------------------------------------
# Tensor.register_hook


def test_register_hook_requires_grad(ng):
    with pytest.raises(
        RuntimeError,
        match="cannot register a hook on a tensor that doesn't require gradient",
    ):
        ng.ones(2).register_hook(lambda g: None)


def test_non_leaf_hook_sees_and_replaces_gradient(ng, xy):
    x, _c, y, out = xy
    seen = []
    y.register_hook(lambda g: seen.append(to_np(g).tolist()) or g * 2)
    out.backward()
    assert seen == [[1.0, 1.0, 1.0]]
    assert_close(x.grad, 2 * C)


def test_leaf_hook_replaces_what_is_accumulated(ng, xy):
    x, _c, _y, out = xy
    handle = x.register_hook(lambda g: g * 100)
    out.backward(retain_graph=True)
    assert_close(x.grad, 100 * C)
    handle.remove()
    x.grad = None
    out.backward()
    assert_close(x.grad, C)


def test_hooks_chain_in_registration_order(ng, xy):
    x, _c, y, out = xy
    seen = []
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: seen.append(to_np(g).tolist()))  # None: unchanged
    y.register_hook(lambda g: g * 3)
    out.backward()
    assert seen == [[2.0, 2.0, 2.0]]
    assert_close(x.grad, 6 * C)


def test_hook_returning_its_argument_or_none_changes_nothing(ng, xy):
    x, _c, y, out = xy
    y.register_hook(lambda g: g)
    x.register_hook(lambda g: None)
    out.backward()
    assert_close(x.grad, C)


def test_removed_hook_is_not_called(ng, xy):
    x, _c, y, out = xy
    calls = []
    handle = y.register_hook(lambda g: calls.append(1) or g * 5)
    handle.remove()
    out.backward()
    assert calls == []
    assert_close(x.grad, C)


def test_hook_that_removes_itself_during_the_call(ng, xy):
    x, _c, y, out = xy
    ev = []

    def once(g):
        ev.append("once")
        handle.remove()
        return g * 10

    handle = y.register_hook(once)
    y.register_hook(lambda g: ev.append(("next", to_np(g).tolist())))
    out.backward(retain_graph=True)
    out.backward()
    # the second hook still ran in the first pass (and saw the replacement)
    assert ev == ["once", ("next", [10.0] * 3), ("next", [1.0] * 3)]
    assert_close(x.grad, 11 * C)


def test_hook_on_output_of_in_place_op(ng, torch_ref):
    """Hooks registered before an in-place op stay on the old grad_fn."""

    def run(lib):
        x = from_np(lib, X, requires_grad=True)
        w = from_np(lib, C)
        seen = {}
        t = x.sin()
        t.register_hook(lambda g: seen.__setitem__("h1", to_np(g)))
        t.cos_()
        assert type(t.grad_fn).__name__ == "CosBackward0"
        t.register_hook(lambda g: seen.__setitem__("h2", to_np(g)))
        (t * w).sum().backward()
        return seen["h1"], seen["h2"], to_np(x.grad)

    (h1, h2, grad), (h1_ref, h2_ref, grad_ref) = run_both(run)
    np.testing.assert_allclose(h2, C)  # d/d(t after cos_)
    np.testing.assert_allclose(h1, -np.sin(np.sin(X)) * C, rtol=1e-5)  # d/d(sin output)
    np.testing.assert_allclose(h1, h1_ref, rtol=1e-6)
    np.testing.assert_allclose(h2, h2_ref, rtol=1e-6)
    np.testing.assert_allclose(grad, grad_ref, rtol=1e-6)


def test_register_hook_dict_on_nodes(ng, xy):
    _x, _c, y, out = xy
    assert callable(y.grad_fn._register_hook_dict)
    assert callable(y.grad_fn.next_functions[0][0]._register_hook_dict)
    calls = []
    y.register_hook(lambda g: calls.append(1))  # installs the dict on y.grad_fn
    y.grad_fn._register_hook_dict(y)  # installs the same dict a second time
    out.backward()
    assert calls == [1, 1]


# ----------------------------------------------------------------------------------
# retain_grad


def test_retain_grad_stores_the_hooked_gradient(ng, xy):
    x, _c, y, out = xy
    y.retain_grad()
    y.register_hook(lambda g: g * 2)  # tensor hooks run before the retain_grad hook
    assert y.retains_grad
    out.backward()
    assert_close(y.grad, [2.0, 2.0, 2.0])
    assert_close(x.grad, 2 * C)


def test_retain_grad_on_leaf_is_a_no_op(ng):
    x = ng.ones(2, requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad


def test_retain_grad_requires_grad(ng):
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        ng.ones(2).retain_grad()


# ----------------------------------------------------------------------------------
# Node hooks


def test_node_prehook_replaces_grad_outputs(ng, xy):
    x, _c, y, out = xy
    seen = []
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.grad_fn.register_prehook(lambda go: seen.append((type(go).__name__, to_np(go[0]).tolist())))
    out.backward()
    assert seen == [("tuple", [2.0, 2.0, 2.0])]
    assert_close(x.grad, 2 * C)


def test_node_post_hook_sees_inputs_and_outputs_and_replaces(ng, xy):
    x, _c, y, out = xy
    seen = []

    def post(grad_inputs, grad_outputs):
        seen.append((len(grad_inputs), grad_inputs[1], len(grad_outputs)))
        assert_close(grad_inputs[0], C)
        assert_close(grad_outputs[0], [1.0, 1.0, 1.0])
        return (grad_inputs[0] * 3, None)

    y.grad_fn.register_hook(post)
    out.backward()
    assert seen == [(2, None, 1)]  # the slot of c (no grad) is None
    assert_close(x.grad, 3 * C)


def test_node_post_hook_can_drop_a_gradient(ng, xy):
    x, _c, y, out = xy
    y.grad_fn.register_hook(lambda gi, go: (None, None))
    out.backward()
    assert x.grad is None


def test_accumulate_grad_node_hooks_arguments(ng, xy):
    _x, _c, y, out = xy
    acc = y.grad_fn.next_functions[0][0]
    seen = []
    acc.register_prehook(lambda go: seen.append(("pre", len(go))))
    acc.register_hook(lambda gi, go: seen.append(("post", gi, to_np(go[0]).tolist())))
    out.backward()
    assert seen == [("pre", 1), ("post", (), C.tolist())]


def test_node_hooks_do_not_fire_when_node_is_not_executed(ng, xy):
    x, _c, y, out = xy
    calls = []
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: calls.append("pre"))
    acc.register_hook(lambda gi, go: calls.append("post"))
    x.register_hook(lambda g: calls.append("tensor"))
    (gx,) = ng.autograd.grad(out, x)
    # grad() captures x's gradient: its tensor hook runs, its AccumulateGrad does not
    assert calls == ["tensor"]
    assert_close(gx, C)
    assert x.grad is None


def _hook_grad_modes(lib, create_graph):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    modes = []
    y.register_hook(lambda g: modes.append(("tensor", lib.is_grad_enabled())))
    y.grad_fn.register_prehook(lambda go: modes.append(("pre", lib.is_grad_enabled())))
    y.grad_fn.register_hook(lambda gi, go: modes.append(("post", lib.is_grad_enabled(), gi[0].requires_grad)))
    lib.autograd.grad(y.sum(), x, create_graph=create_graph)
    return modes


@pytest.mark.parametrize("create_graph", [False, True])
def test_hooks_run_under_the_backward_grad_mode(ng, create_graph):
    modes = _hook_grad_modes(ng, create_graph)
    cg = create_graph
    assert modes == [("tensor", cg), ("pre", cg), ("post", cg, cg)]
    assert ng.is_grad_enabled()


def test_post_accumulate_hook_grad_mode(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    modes = []
    x.register_post_accumulate_grad_hook(lambda p: modes.append(ng.is_grad_enabled()))
    (x * x).sum().backward()
    with warnings.catch_warnings():
        # torch warns about the .grad reference cycle only once per process
        warnings.simplefilter("ignore", UserWarning)
        (x * x).sum().backward(create_graph=True)
    x.grad = None
    assert modes == [False, True]


# ----------------------------------------------------------------------------------
# Errors naming the hook; the graph stays usable afterwards


def _size_tensor_hook(lib, x, y):
    return y.register_hook(named("bad_size", lambda g: lib.ones(4)))


ERROR_CASES = {
    "tensor hook changes size": (
        _size_tensor_hook,
        RuntimeError,
        "hook 'bad_size' has changed the size of value",
    ),
    "leaf tensor hook changes size": (
        lambda lib, x, y: x.register_hook(named("leaf_bad_size", lambda g: lib.ones(2, 2))),
        RuntimeError,
        "hook 'leaf_bad_size' has changed the size of value",
    ),
    "tensor hook changes dtype": (
        lambda lib, x, y: y.register_hook(lambda g: g.to(lib.float64)),
        RuntimeError,
        ("hook '<lambda>' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
    ),
    "tensor hook returns int": (
        lambda lib, x, y: y.register_hook(lambda g: 1),
        TypeError,
        "expected Variable, but hook returned 'int'",
    ),
    "leaf tensor hook returns str": (
        lambda lib, x, y: x.register_hook(lambda g: "grad"),
        TypeError,
        "expected Variable, but hook returned 'str'",
    ),
    "node pre-hook returns a tensor": (
        lambda lib, x, y: y.grad_fn.register_prehook(lambda go: go[0]),
        TypeError,
        "expected tuple, but hook returned 'Tensor'",
    ),
    "node post-hook returns a list": (
        lambda lib, x, y: y.grad_fn.register_hook(lambda gi, go: list(gi)),
        TypeError,
        "expected tuple, but hook returned 'list'",
    ),
    "node pre-hook returns two values": (
        lambda lib, x, y: y.grad_fn.register_prehook(named("two_values", lambda go: (go[0], go[0]))),
        RuntimeError,
        "hook 'two_values' has returned an incorrect number of values (got 2, but expected 1)",
    ),
    "node post-hook returns one value": (
        lambda lib, x, y: y.grad_fn.register_hook(named("one_value", lambda gi, go: gi[:1])),
        RuntimeError,
        "hook 'one_value' has returned an incorrect number of values (got 1, but expected 2)",
    ),
    "node post-hook replaces a None gradient": (
        lambda lib, x, y: y.grad_fn.register_hook(lambda gi, go: (gi[0], lib.ones(3))),
        RuntimeError,
        "can't replace a None gradient with a non-None value",
    ),
    "node pre-hook tuple item changes size": (
        lambda lib, x, y: y.grad_fn.register_prehook(named("tuple_item", lambda go: (lib.ones(5),))),
        RuntimeError,
        "hook 'tuple_item' has changed the size of value",
    ),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_hook_errors_and_graph_survives(ng, xy, case):
    install, exc_type, message = ERROR_CASES[case]
    x, _c, y, out = xy
    handle = install(ng, x, y)
    with pytest.raises(exc_type) as info:
        out.backward(retain_graph=True)
    assert type(info.value) is exc_type
    assert message in str(info.value)
    assert x.grad is None
    # the graph (retained) and the tensors are still usable
    handle.remove()
    out.backward()
    assert_close(x.grad, C)


# ----------------------------------------------------------------------------------
# Post-accumulate-grad hooks


def test_post_accumulate_hook_gets_the_leaf_after_grad_is_written(ng, xy):
    x, _c, _y, out = xy
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append((p is x, to_np(p.grad).tolist())))
    out.backward(retain_graph=True)
    out.backward()
    assert seen == [(True, C.tolist()), (True, (2 * C).tolist())]


def test_post_accumulate_hook_sgd_example_may_return_the_tensor_itself(ng):
    # torch's docstring example: the hook returns p.add_(...), i.e. p itself
    v = ng.tensor([0.0, 0.0, 0.0], requires_grad=True)
    lr = 0.01
    h = v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-lr))
    v.backward(ng.tensor([1.0, 2.0, 3.0]))
    assert_close(v, [-0.01, -0.02, -0.03])
    assert_close(v.grad, [1.0, 2.0, 3.0])
    h.remove()
    v.backward(ng.tensor([1.0, 2.0, 3.0]))
    assert_close(v, [-0.01, -0.02, -0.03])


def test_post_accumulate_hook_not_called_when_accumulate_grad_does_not_run(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 4.0], requires_grad=True)
    calls = []
    x.register_post_accumulate_grad_hook(lambda p: calls.append("x"))
    w.register_post_accumulate_grad_hook(lambda p: calls.append("w"))
    out = (x * w).sum()
    ng.autograd.grad(out, [x, w], retain_graph=True)
    assert calls == []
    out.backward(inputs=[w], retain_graph=True)
    assert calls == ["w"]
    out.backward()
    assert sorted(calls[1:]) == ["w", "x"]


def _hooks_when_nothing_is_accumulated(lib):
    class NoGrad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    ev = []
    for case in ("undefined gradient", "leaf no longer requires grad"):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        acc = lib.autograd.graph.get_gradient_edge(x).node
        x.register_hook(lambda g, case=case: ev.append((case, "tensor hook", g)))
        acc.register_prehook(lambda go, case=case: ev.append((case, "pre-hook", go)))
        x.register_post_accumulate_grad_hook(lambda p, case=case: ev.append((case, "post-accumulate", p.grad)))
        acc.register_hook(lambda gi, go, case=case: ev.append((case, "post-hook", gi, go)))
        if case == "undefined gradient":
            NoGrad.apply(x * 2).sum().backward()
        else:
            out = (x * 2).sum()
            x.requires_grad_(False)
            out.backward()
        ev.append((case, "x.grad", x.grad))
    return ev


@pytest.mark.usefixtures("torch_ref")
def test_post_accumulate_hook_runs_when_nothing_is_accumulated(ng):
    # torch runs a leaf's post-accumulate-grad hooks whenever its
    # AccumulateGrad runs, even when there is nothing to accumulate.
    got, expected = run_both(_hooks_when_nothing_is_accumulated)
    assert same_value(got, expected)
    assert [e[:2] for e in got] == [
        (case, kind)
        for case in ("undefined gradient", "leaf no longer requires grad")
        for kind in ("tensor hook", "pre-hook", "post-accumulate", "post-hook", "x.grad")
    ]
    assert got[2] == ("undefined gradient", "post-accumulate", None)


def test_post_accumulate_hook_on_non_leaf(ng, xy):
    _x, _c, y, _out = xy
    with pytest.raises(
        RuntimeError,
        match="post accumulate grad hooks cannot be registered on non-leaf tensors",
    ):
        y.register_post_accumulate_grad_hook(lambda p: None)


def test_post_accumulate_hook_requires_grad(ng):
    with pytest.raises(
        RuntimeError,
        match="cannot register a hook on a tensor that doesn't require gradient",
    ):
        ng.ones(2).register_post_accumulate_grad_hook(lambda p: None)


@pytest.mark.parametrize(
    "returned, exc_type, message",
    [
        (
            "clone",
            RuntimeError,
            "Tensor post accumulate grad hooks should return None.",
        ),
        ("grad", RuntimeError, "Tensor post accumulate grad hooks should return None."),
        ("int", TypeError, "expected Variable, but hook returned 'int'"),
        ("wrong size", RuntimeError, "hook 'acc_hook' has changed the size of value"),
    ],
)
def test_post_accumulate_hook_returning_a_value(ng, xy, returned, exc_type, message):
    x, _c, _y, out = xy
    results = {
        "clone": lambda p: p.detach().clone(),
        "grad": lambda p: p.grad,
        "int": lambda p: 5,
        "wrong size": lambda p: ng.zeros(7),
    }
    x.register_post_accumulate_grad_hook(named("acc_hook", results[returned]))
    with pytest.raises(exc_type) as info:
        out.backward()
    assert type(info.value) is exc_type
    assert message in str(info.value)
    assert_close(x.grad, C)  # .grad was written before the hook ran


# ----------------------------------------------------------------------------------
# RemovableHandle


def test_every_register_returns_a_removable_handle(ng, xy):
    x, _c, y, _out = xy
    RH = ng.utils.hooks.RemovableHandle
    handles = [
        y.register_hook(lambda g: None),
        x.register_hook(lambda g: None),
        x.register_post_accumulate_grad_hook(lambda p: None),
        y.grad_fn.register_hook(lambda gi, go: None),
        y.grad_fn.register_prehook(lambda go: None),
    ]
    assert all(isinstance(h, RH) for h in handles)
    ids = [h.id for h in handles]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert RH.next_id > ids[-1]


@pytest.mark.parametrize("kind", ["tensor", "leaf", "pre", "post", "post_acc"])
def test_handle_remove_is_idempotent(ng, xy, kind):
    x, _c, y, out = xy
    calls = []
    register = {
        "tensor": lambda: y.register_hook(lambda g: calls.append(kind)),
        "leaf": lambda: x.register_hook(lambda g: calls.append(kind)),
        "pre": lambda: y.grad_fn.register_prehook(lambda go: calls.append(kind)),
        "post": lambda: y.grad_fn.register_hook(lambda gi, go: calls.append(kind)),
        "post_acc": lambda: x.register_post_accumulate_grad_hook(lambda p: calls.append(kind)),
    }[kind]
    handle = register()
    out.backward(retain_graph=True)
    assert calls == [kind]
    assert handle.remove() is None
    handle.remove()
    out.backward()
    assert calls == [kind]


def test_handle_as_context_manager(ng, xy):
    x, _c, y, out = xy
    calls = []
    handle = y.register_hook(lambda g: calls.append("in") or g * 2)
    with handle as h:
        assert h is handle
        out.backward(retain_graph=True)
    out.backward()
    assert calls == ["in"]
    assert_close(x.grad, 3 * C)


def test_handle_pickle_round_trip_keeps_id(ng, xy):
    x, _c, y, out = xy
    RH = ng.utils.hooks.RemovableHandle
    MODULE_HOOK_CALLS.clear()
    handle = x.register_hook(_module_level_hook)
    loaded = pickle.loads(pickle.dumps(handle))
    assert type(loaded) is RH
    assert loaded.id == handle.id
    loaded.remove()  # its dict is an unpickled copy: removing does not touch x's hook
    calls = []
    handle2 = y.register_hook(lambda g: calls.append(1))
    assert handle2.id > loaded.id
    out.backward(retain_graph=True)
    assert calls == [1]
    assert MODULE_HOOK_CALLS == [C.tolist()]  # x's hook is still registered
    handle.remove()
    out.backward()
    assert MODULE_HOOK_CALLS == [C.tolist()]

    # a standalone handle over an OrderedDict, with an extra dict
    hooks, extra = collections.OrderedDict(), collections.OrderedDict()
    h = RH(hooks, extra_dict=extra)
    hooks[h.id] = "hook"
    extra[h.id] = "extra"
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id
    h2.remove()  # dead references: nothing happens
    assert hooks == {h.id: "hook"}
    h.remove()
    assert hooks == {} and extra == {}
    h.remove()


def test_handle_ids_survive_unpickling_a_future_id(ng):
    RH = ng.utils.hooks.RemovableHandle
    d = collections.OrderedDict()
    h = RH(d)
    state = h.__getstate__()
    future = RH.__new__(RH)
    future.__setstate__((state[0], h.id + 1000) + tuple(state[2:]))
    assert future.id == h.id + 1000
    assert RH(d).id > future.id  # next_id was bumped past the unpickled id


def test_values_match_torch_for_a_small_hooked_graph(ng, torch_ref):
    """Hooks of every kind returning replacements: same gradients as torch."""

    def run(lib):
        x = from_np(lib, X, requires_grad=True)
        w = from_np(lib, C, requires_grad=True)
        h = x * w
        y = h.sin()
        h.register_hook(lambda g: g * 2)
        y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
        h.grad_fn.register_hook(lambda gi, go: (gi[0], gi[1] * -1))
        w.register_hook(lambda g: g + 0.5)
        y.sum().backward()
        return x.grad, w.grad

    got, expected = run_both(run)
    assert same_value(got, expected)
