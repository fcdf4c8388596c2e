"""Engine entry points: Tensor.backward, autograd.backward, autograd.grad."""

from __future__ import annotations

import re

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, dtype_name, from_np, run_both, to_np

X = np.array([1.0, 2.0, 3.0])
W = np.array([0.5, -1.0, 2.0])
BACKWARD_TWICE = "Trying to backward through the graph a second time"
NOT_REQUIRING = "element 0 of tensors does not require grad and does not have a grad_fn"


@pytest.fixture
def xw(ng):
    return from_np(ng, X, requires_grad=True), from_np(ng, W, requires_grad=True)


# ----------------------------------------------------------------------------------
# Tensor.backward and autograd.backward


def test_backward_of_scalar(ng, xw):
    x, w = xw
    assert (x * w).sum().backward() is None
    assert_close(x.grad, W)
    assert_close(w.grad, X)
    assert dtype_name(x.grad.dtype) == "float64"


def test_backward_with_gradient(ng, xw):
    x, w = xw
    (x * w).backward(gradient=from_np(ng, np.array([1.0, 10.0, 100.0])))
    assert_close(x.grad, W * [1, 10, 100])


def test_autograd_backward_variants(ng, xw):
    x, w = xw
    ng.autograd.backward((x * w).sum())
    assert_close(x.grad, W)
    ng.autograd.backward([x * w], grad_tensors=[from_np(ng, np.full(3, 2.0))])
    assert_close(x.grad, 3 * W)
    ng.autograd.backward(x * w, from_np(ng, np.ones(3)))
    assert_close(x.grad, 4 * W)
    ng.autograd.backward([(x * w).sum(), (x * x).sum()], grad_tensors=[None, from_np(ng, np.array(0.5))])
    assert_close(x.grad, 5 * W + X)


def test_gradients_accumulate_across_backward_calls(ng, xw):
    x, w = xw
    y = (x * w).sum()
    y.backward(retain_graph=True)
    first = x.grad
    y.backward()
    assert_close(x.grad, 2 * W)
    assert x.grad is first  # accumulated in place outside create_graph
    assert_close(first, 2 * W)


def test_fresh_grad_does_not_alias_the_given_gradient(ng):
    x = ng.zeros(3, requires_grad=True)
    gradient = ng.ones(3)
    (x * 1).backward(gradient)
    assert x.grad is not gradient
    gradient.add_(1)
    assert to_np(x.grad).tolist() == [1.0, 1.0, 1.0]


def test_second_backward_without_retain_graph_is_an_error(ng, xw):
    x, w = xw
    y = (x * w).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        y.backward()

    def twice(lib):
        a = lib.ones(3, requires_grad=True)
        b = (a * a).sum()
        b.backward()
        b.backward()

    assert_same_error(twice, length=300)


def test_graph_without_saved_tensors_can_be_run_twice(ng, xw):
    x, w = xw
    y = (x + w).sum()
    y.backward()
    y.backward()
    assert_close(x.grad, [2.0, 2.0, 2.0])


def test_implicit_gradient_needs_a_scalar(ng, xw):
    x, _ = xw
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        ng.autograd.grad(x * 2, x)
    assert_same_error(lambda lib: (lib.ones(2, requires_grad=True) * 2).backward())


def test_output_that_does_not_require_grad_is_an_error(ng, xw):
    with pytest.raises(RuntimeError, match=NOT_REQUIRING):
        ng.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match=NOT_REQUIRING):
        ng.autograd.grad(ng.ones(2).sum(), xw[0])
    x, w = xw
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        ng.autograd.backward([(x * w).sum(), ng.ones(1).sum()])
    assert_same_error(lambda lib: lib.ones(2).sum().backward())


def test_gradient_shape_mismatch(ng, xw):
    x, w = xw
    key = "Mismatch in shape: grad_output[0] has a shape of "
    with pytest.raises(RuntimeError, match=re.escape(key)):
        (x * w).backward(ng.ones(2, dtype=ng.float64))
    with pytest.raises(RuntimeError, match=re.escape(key)):
        ng.autograd.grad(x * w, x, grad_outputs=ng.ones(1, 3, dtype=ng.float64))
    assert_same_error(lambda lib: (lib.ones(3, requires_grad=True) * 2).backward(lib.ones(2)), key=key)


def test_gradient_of_wrong_type(ng, xw):
    x, _ = xw
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got int"):
        ng.autograd.backward([(x * 2).sum()], grad_tensors=[3])


def test_tensor_and_gradient_counts_must_agree(ng, xw):
    x, _ = xw
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        ng.autograd.backward(
            [(x * 2).sum(), (x * 3).sum()],
            grad_tensors=[ng.tensor(1.0, dtype=ng.float64)],
        )


@pytest.mark.parametrize("as_list", [True, False], ids=["list", "tensor"])
def test_backward_inputs_prunes_other_leaves(ng, xw, as_list):
    x, w = xw
    (x * w).sum().backward(inputs=[x] if as_list else x)
    assert_close(x.grad, W)
    assert w.grad is None
    ng.autograd.backward((x * w).sum(), inputs=[w])
    assert_close(x.grad, W)
    assert_close(w.grad, X)


def test_backward_inputs_on_non_leaf_fills_its_grad(ng, xw):
    x, w = xw
    h = x * w
    (h * h).sum().backward(inputs=[h])
    assert h.retains_grad
    assert_close(h.grad, 2 * X * W)
    assert x.grad is None and w.grad is None


def test_empty_inputs_are_errors(ng, xw):
    x, _ = xw
    with pytest.raises(
        RuntimeError,
        match=re.escape("`inputs` argument to `backward()` cannot be empty."),
    ):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match=re.escape("`inputs` argument to `grad()` cannot be empty.")):
        ng.autograd.grad((x * 2).sum(), [])


def test_create_graph_backward_records_the_gradient(ng):
    x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x**3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    assert_close(g, [3.0, 12.0])
    x.grad = None
    g.sum().backward()
    assert_close(x.grad, [6.0, 12.0])


# ----------------------------------------------------------------------------------
# autograd.grad


def test_grad_values_and_leaf_grad_untouched(ng, xw):
    x, w = xw
    gx, gw = ng.autograd.grad((x * w).sum(), [x, w])
    assert_close(gx, W)
    assert_close(gw, X)
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad


def test_grad_returns_a_tuple(ng, xw):
    x, _ = xw
    result = ng.autograd.grad((x * x).sum(), x)
    assert isinstance(result, tuple) and len(result) == 1
    assert_close(result[0], 2 * X)


def test_grad_with_grad_outputs_and_several_outputs(ng, xw):
    x, w = xw
    (gx,) = ng.autograd.grad(
        [x * w, x * x],
        [x],
        grad_outputs=[from_np(ng, np.ones(3)), from_np(ng, np.full(3, 0.5))],
    )
    assert_close(gx, W + X)


def test_grad_of_non_leaf_input(ng, xw):
    x, w = xw
    h = x * w
    out = (h * h).sum()
    gh, gx = ng.autograd.grad(out, [h, x])
    assert_close(gh, 2 * X * W)
    assert_close(gx, 2 * X * W * W)


def test_same_tensor_twice_in_inputs(ng, xw):
    x, w = xw
    a, b, c = ng.autograd.grad((x * w).sum(), [x, w, x])
    assert_close(a, W)
    assert_close(c, W)
    assert_close(b, X)


def test_unused_input(ng, xw):
    x, w = xw
    message = "The differentiated Tensor at index 1 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
    with pytest.raises(RuntimeError, match=re.escape(message)):
        ng.autograd.grad((x * 2).sum(), [x, w])
    gx, gw = ng.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)
    assert_close(gx, [2.0, 2.0, 2.0])
    assert gw is None

    def unused(lib):
        a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        lib.autograd.grad((a * 2).sum(), [b, a])

    assert_same_error(unused, length=200)


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialize_grads_gives_zeros(ng, xw, create_graph):
    x, w = xw
    gx, gw = ng.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True, create_graph=create_graph)
    assert_close(gx, [2.0, 2.0, 2.0])
    assert_close(gw, [0.0, 0.0, 0.0])
    assert dtype_name(gw.dtype) == "float64"
    assert gw.requires_grad is create_graph


def test_materialize_grads_with_allow_unused_false_is_value_error(ng, xw):
    x, w = xw
    with pytest.raises(
        ValueError,
        match="Expected allow_unused to be True or not passed when materialize_grads=True",
    ):
        ng.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True, allow_unused=False)


def test_materialize_grads_with_an_unreached_gradient_edge(ng, xw):
    """An edge the outputs do not reach has no shape to make zeros of: torch's error.
    A reached edge gets its gradient as usual."""
    x, w = xw
    y = x * 2
    out = y.sum()
    (g,) = ng.autograd.grad(out, [ng.autograd.graph.get_gradient_edge(y)], materialize_grads=True, retain_graph=True)
    assert_close(g, [1.0, 1.0, 1.0])
    unreached = ng.autograd.graph.get_gradient_edge(w * 2)
    with pytest.raises(RuntimeError, match="^materialize_grads cannot be used when the given input is a GradientEdge$"):
        ng.autograd.grad(out, [unreached], materialize_grads=True)


def test_input_that_does_not_require_grad(ng, xw):
    x, _ = xw
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        ng.autograd.grad((x * 2).sum(), [ng.ones(3)])


def test_second_derivative_with_create_graph(ng):
    x = ng.tensor([1.0, -2.0, 0.5], dtype=ng.float64, requires_grad=True)
    (g1,) = ng.autograd.grad((x**3).sum(), x, create_graph=True)
    assert g1.requires_grad and g1.grad_fn is not None
    assert_close(g1, [3.0, 12.0, 0.75])
    (g2,) = ng.autograd.grad(g1.sum(), x, create_graph=True)
    assert_close(g2, [6.0, -12.0, 3.0])
    (g3,) = ng.autograd.grad(g2.sum(), x)
    assert_close(g3, [6.0, 6.0, 6.0])
    assert x.grad is None


@pytest.mark.usefixtures("torch_ref")
def test_second_derivative_of_composite_matches_torch():
    def second(lib):
        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        y = (x.sin() * x.exp() + x.tanh() ** 2).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return to_np(g), to_np(h)

    (g, h), (g_ref, h_ref) = run_both(second)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10)
    np.testing.assert_allclose(h, h_ref, rtol=1e-10)


def test_create_graph_retains_graph_by_default(ng, xw):
    x, w = xw
    y = (x * w * x).sum()
    ng.autograd.grad(y, x, create_graph=True)
    (again,) = ng.autograd.grad(y, x)
    assert_close(again, 2 * X * W)


# ----------------------------------------------------------------------------------
# Saved tensors after backward


def test_saved_tensors_are_freed_after_backward(ng, xw):
    x, w = xw
    y = x * w
    assert_close(y.grad_fn._saved_self, X)
    y.sum().backward()
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        _ = y.grad_fn._saved_self

    def access(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * a
        b.sum().backward()
        return b.grad_fn._saved_other

    assert_same_error(access, length=300)


def test_saved_tensors_survive_with_retain_graph(ng, xw):
    x, w = xw
    y = x * w
    y.sum().backward(retain_graph=True)
    assert_close(y.grad_fn._saved_self, X)
    assert_close(y.grad_fn._saved_other, W)


def test_grad_also_frees_saved_tensors(ng, xw):
    x, w = xw
    y = x.exp()
    ng.autograd.grad(y.sum(), x)
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        _ = y.grad_fn._saved_result
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        ng.autograd.grad(y.sum(), x)
