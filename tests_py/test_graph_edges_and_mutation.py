"""GradientEdge / get_gradient_edge, increment_version and
allow_mutation_on_saved_tensors."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from oracle import assert_close, from_np, run_both, same_value, to_np

X = np.array([0.5, 1.0, 2.0], dtype=np.float32)
OUTSIDE = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded."
)


def two_outputs_function(lib):
    class TwoOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    return TwoOutputs


# ----------------------------------------------------------------------------------
# GradientEdge and get_gradient_edge


def test_gradient_edge_is_a_namedtuple(ng):
    GradientEdge = ng.autograd.graph.GradientEdge
    assert issubclass(GradientEdge, tuple)
    assert GradientEdge._fields[:2] == ("node", "output_nr")
    x = ng.ones(2, requires_grad=True)
    node = (x * 2).grad_fn
    edge = GradientEdge(node, 1)
    assert edge.node is node and edge.output_nr == 1
    assert edge[0] is node and edge[1] == 1
    node_, nr = edge[:2]
    assert node_ is node and nr == 1


def test_get_gradient_edge_of_non_leaf(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.sin()
    edge = ng.autograd.graph.get_gradient_edge(y)
    assert isinstance(edge, ng.autograd.graph.GradientEdge)
    assert edge.node is y.grad_fn and edge.output_nr == 0


def test_get_gradient_edge_output_nr(ng):
    x = from_np(ng, X, requires_grad=True)
    a, b = two_outputs_function(ng).apply(x)
    ea = ng.autograd.graph.get_gradient_edge(a)
    eb = ng.autograd.graph.get_gradient_edge(b)
    assert (ea.node, ea.output_nr) == (a.grad_fn, 0)
    assert (eb.node, eb.output_nr) == (a.grad_fn, 1)
    (ga, gb) = ng.autograd.grad((a * b).sum(), [ea, eb])
    assert_close(ga, 3 * X)
    assert_close(gb, 2 * X)


def test_get_gradient_edge_of_leaf_is_its_accumulator(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x * 2
    edge = ng.autograd.graph.get_gradient_edge(x)
    assert type(edge.node).__name__ == "AccumulateGrad"
    assert edge.node is y.grad_fn.next_functions[0][0]
    assert edge.node.variable is x
    assert edge.output_nr == 0
    # the same accumulator every time
    assert ng.autograd.graph.get_gradient_edge(x).node is edge.node


def _edge_outlives_function_output(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = from_np(lib, X, requires_grad=True)
    out = Double.apply(x)
    edge = lib.autograd.graph.get_gradient_edge(out)
    lib.autograd.backward(edge, grad_tensors=lib.ones(3))
    r = {"first": x.grad.clone()}
    del out
    gc.collect()
    # the edge alone keeps the custom Function's node and its graph alive
    r["name"] = edge.node.name()
    r["next"] = [type(n).__name__ for n, _ in edge.node.next_functions]
    r["token"] = type(edge.ownership_token).__name__
    lib.autograd.backward(edge, grad_tensors=lib.ones(3))
    r["second"] = x.grad
    (r["grad wrt edge"],) = lib.autograd.grad(edge, x, grad_outputs=lib.ones(3))
    return r


@pytest.mark.usefixtures("torch_ref")
def test_gradient_edge_keeps_a_function_node_alive(ng):
    got, expected = run_both(_edge_outlives_function_output)
    assert list(got) == list(expected)
    for key in expected:
        assert same_value(got[key], expected[key]), key
    assert got["name"] == "DoubleBackward"
    assert_close(got["second"], 4 * np.ones(3))


def test_gradient_edge_of_builtin_node_has_no_ownership_token(ng):
    x = from_np(ng, X, requires_grad=True)
    assert ng.autograd.graph.get_gradient_edge(x.sin()).ownership_token is None
    assert ng.autograd.graph.get_gradient_edge(x).ownership_token is None


def test_get_gradient_edge_requires_grad(ng):
    with pytest.raises(
        RuntimeError,
        match="It is not possible to get the gradient edge for a Tensor that does not require gradients",
    ):
        ng.autograd.graph.get_gradient_edge(ng.ones(2))


def _edges_as_inputs_and_outputs(lib):
    gge = lib.autograd.graph.get_gradient_edge
    x = from_np(lib, X, requires_grad=True)
    y = x.sin()
    z = (y * 2).sum()
    r = {}
    r["grad wrt non-leaf edge"] = lib.autograd.grad(z, gge(y), retain_graph=True)
    r["grad wrt edges"] = lib.autograd.grad(z, [gge(y), gge(x)], retain_graph=True)
    r["grad wrt built edge"] = lib.autograd.grad(z, lib.autograd.graph.GradientEdge(y.grad_fn, 0), retain_graph=True)
    r["output edge with grad_outputs"] = lib.autograd.grad([gge(y)], [x], grad_outputs=[lib.ones(3)], retain_graph=True)
    r["scalar output edge"] = lib.autograd.grad(gge(z), [gge(x)], retain_graph=True)
    z.backward(inputs=[gge(x)], retain_graph=True)
    r["backward inputs=leaf edge"] = x.grad
    z.backward(inputs=[gge(y)], retain_graph=True)
    r["backward inputs=non-leaf edge leaves x.grad"] = x.grad
    x.grad = None
    z.backward(inputs=[x, gge(y)], retain_graph=True)
    r["backward inputs=mixed"] = x.grad
    return r


@pytest.mark.usefixtures("torch_ref")
def test_edges_as_inputs_and_outputs_match_torch(ng):
    got, expected = run_both(_edges_as_inputs_and_outputs)
    assert list(got) == list(expected)
    for key in expected:
        assert same_value(got[key], expected[key]), key
    np.testing.assert_allclose(to_np(got["grad wrt edges"][1]), 2 * np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(to_np(got["backward inputs=leaf edge"]), 2 * np.cos(X), rtol=1e-6)


def test_bad_input_type_message(ng):
    x = from_np(ng, X, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="all inputs have to be Tensors or GradientEdges, but got int",
    ):
        ng.autograd.grad((x * 2).sum(), [x, 3])


def test_grad_with_edge_output_needs_scalar_or_grad_outputs(ng):
    x = from_np(ng, X, requires_grad=True)
    y = x.sin()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        ng.autograd.grad(ng.autograd.graph.get_gradient_edge(y), x)


# ----------------------------------------------------------------------------------
# increment_version


def test_increment_version(ng):
    inc = ng.autograd.graph.increment_version
    t = ng.ones(3)
    v = t[0:2]
    assert t._version == 0
    assert inc(t) is None
    assert t._version == 1
    inc([t])
    assert t._version == 2
    inc((t, v))  # a view shares its base's counter
    assert t._version == v._version == 4
    inc([t, t])  # once per list item
    assert t._version == 6
    w = ng.ones(2, requires_grad=True)
    inc(w)
    assert w._version == 1


def test_increment_version_makes_backward_detect_modification(ng):
    x = from_np(ng, X, requires_grad=True)
    a = x.clone()
    y = a.pow(2)
    ng.autograd.graph.increment_version(a)
    with pytest.raises(
        RuntimeError,
        match="one of the variables needed for gradient computation has been modified by an inplace operation",
    ):
        y.sum().backward()


# ----------------------------------------------------------------------------------
# allow_mutation_on_saved_tensors


MUTATIONS = {
    # name: (program returning the loss, expected x.grad)
    "clone, sin, mul_": (
        lambda lib, x: _then(x.clone(), lambda a: (a.sin().sum(), a.mul_(2))),
        np.cos(X),
    ),
    "leaf mutated under no_grad": (
        lambda lib, x: _then(x, lambda a: (a.pow(2).sum(), _no_grad(lib, lambda: a.mul_(2)))),
        2 * X,
    ),
    "no-grad tensor mutated": (
        lambda lib, x: _then(
            from_np(lib, np.array([1.0, 2.0, 3.0], dtype=np.float32)),
            lambda c: ((x * c).sum(), c.mul_(10)),
        ),
        np.array([1.0, 2.0, 3.0]),
    ),
    "saved twice, mutated": (
        lambda lib, x: _then(x.clone(), lambda a: ((a * a).sum(), a.add_(1))),
        2 * X,
    ),
    "output saved by two nodes, mutated": (
        lambda lib, x: _then(x.exp(), lambda a: (a.sin().sum(), a.mul_(3))),
        np.cos(np.exp(X)) * np.exp(X),
    ),
    "mutated through a view": (
        lambda lib, x: _then(x.clone(), lambda a: (a.sin().sum(), a[0:2].mul_(2))),
        np.cos(X),
    ),
    "setitem on the saved tensor": (
        lambda lib, x: _then(x.clone(), lambda a: (a.sin().sum(), a.__setitem__(slice(0, 2), 9.0))),
        np.cos(X),
    ),
    "saved view, base mutated": (
        lambda lib, x: _then(x.clone(), lambda a: (a[0:2].sin().sum(), a.mul_(2))),
        np.array([np.cos(0.5), np.cos(1.0), 0.0]),
    ),
    "zero_ then add_": (
        lambda lib, x: _then(x.clone(), lambda a: (a.sin().sum(), a.zero_(), a.add_(1))),
        np.cos(X),
    ),
}


def _then(value, fn):
    return fn(value)[0]


def _no_grad(lib, fn):
    with lib.no_grad():
        return fn()


def _mutation_grads(lib, name):
    x = from_np(lib, X, requires_grad=True)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        loss = MUTATIONS[name][0](lib, x)
        loss.backward()
    return to_np(x.grad)


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_of_saved_tensors_uses_original_values(ng, name):
    got, expected = run_both(lambda lib: _mutation_grads(lib, name))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_allclose(got, MUTATIONS[name][1], rtol=1e-5, atol=1e-7)


def test_without_the_context_the_mutation_is_an_error(ng):
    x = from_np(ng, X, requires_grad=True)
    a = x.clone()
    loss = a.sin().sum()
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_context_object(ng):
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        assert ctx is not None
        for attr in ("cloned", "original", "tid_to_weakhandle", "sid_to_tid"):
            assert hasattr(ctx, attr)
        a = x.clone()
        loss = a.sin().sum()
        assert (len(ctx.original), len(ctx.cloned)) == (1, 0)
        a.mul_(2)
        assert (len(ctx.original), len(ctx.cloned)) == (0, 1)
        clone = next(iter(ctx.cloned.values()))
        assert_close(clone, X)
        loss.backward()
    assert len(ctx.cloned) == len(ctx.original) == len(ctx.tid_to_weakhandle) == 0
    assert len(ctx.sid_to_tid) == 0
    assert_close(x.grad, np.cos(X), rtol=1e-6)


def test_docstring_example(ng):
    with ng.autograd.graph.allow_mutation_on_saved_tensors():
        a = ng.ones(2, 3, requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        mutated = b.sin_()
        out.sum().backward()
    assert mutated is b
    assert_close(b, np.full((2, 3), np.sin(1.0)), rtol=1e-6)
    assert_close(a.grad, np.full((2, 3), 2.0))


def test_contexts_cannot_be_nested(ng):
    allow = ng.autograd.graph.allow_mutation_on_saved_tensors
    with (
        pytest.raises(
            RuntimeError,
            match="allow_mutation_on_saved_tensors contexts cannot be nested",
        ),
        allow(),
        allow(),
    ):
        pass


@pytest.mark.parametrize("mutate", [True, False])
def test_backward_outside_the_context(ng, mutate):
    x = from_np(ng, X, requires_grad=True)
    with ng.autograd.graph.allow_mutation_on_saved_tensors():
        a = x.clone()
        loss = a.sin().sum()
        if mutate:
            a.mul_(2)
    with pytest.raises(AssertionError) as info:
        loss.backward()
    assert str(info.value) == OUTSIDE
    assert x.grad is None
