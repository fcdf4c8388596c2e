"""Custom ``autograd.Function``: forward/backward and setup_context styles, the ctx API
(save_for_backward, mark_dirty, mark_non_differentiable, needs_input_grad,
set_materialize_grads), non-tensor arguments and outputs, once_differentiable, the
backward node seen from Python, and the errors of a misbehaving backward.

Every Function class is built per library by ``fns(lib)`` so the same test body runs on
npgrad and on torch."""

from __future__ import annotations

import functools
import gc
import types
import warnings
from typing import Any

import numpy as np
import pytest

from oracle import (
    assert_close,
    assert_same_error,
    from_np,
    graph_desc,
    numerical_grad,
    run_both,
    to_np,
)

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
BACKWARD_TWICE = "Trying to backward through the graph a second time"
ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"
DATA = np.array([0.5, -1.5, 2.0])


@functools.cache
def fns(lib: Any) -> types.SimpleNamespace:
    """The custom Functions used below, subclassing ``lib.autograd.Function``."""
    Function = lib.autograd.Function
    once_differentiable = lib.autograd.function.once_differentiable

    class Cube(Function):
        """x ** 3, saving the input; the backward is made of library ops."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    class ExpOut(Function):
        """exp(x), saving the output."""

        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    class ExpInOut(Function):
        """exp(x), saving the input and the output."""

        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        def backward(ctx, g):
            return g * ctx.saved_tensors[1]

    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            _a, _b = ctx.saved_tensors
            a2, b2 = ctx.saved_tensors  # every access unpacks again
            return g * b2, g * a2

    class ScaleSC(Function):
        """setup_context style: forward has no ctx."""

        @staticmethod
        def forward(x, k=2.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.seen = (len(inputs), k, output.requires_grad, ctx.needs_input_grad)
            ctx.save_for_backward(x, output)

        @staticmethod
        def backward(ctx, g):
            _x, _out = ctx.saved_tensors
            return g * ctx.k, None

    class ScaleKw(Function):
        @staticmethod
        def forward(ctx, x, k=2.0):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class SaveMixed(Function):
        """Saves an input, None and the output."""

        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.save_for_backward(x, None, out)
            return out

        @staticmethod
        def backward(ctx, g):
            x, none, out = ctx.saved_tensors
            ctx.got = (to_np(x).tolist(), none, to_np(out).tolist())
            return g * 2

    class SaveInt(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class DoubleInPlace(Function):
        """Doubles its input in place and returns it."""

        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    class MarkDirtyOnly(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    class DirtyNotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class SignAndTriple(Function):
        """(3x, positive-mask); the mask is marked non-differentiable."""

        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            mask = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * 3, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            ctx.got = (g, g_mask)
            return g * 3, None

    class TwoOut(Function):
        """(2x, 3x) with optional materialization of unused output grads."""

        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1, g2)
            result = None
            if g1 is not None:
                result = 2 * g1
            if g2 is not None:
                result = 3 * g2 if result is None else result + 3 * g2
            return result, None

    class Mixed(Function):
        """Non-tensor arguments and outputs pass through."""

        @staticmethod
        def forward(ctx, a, k, b, s, n):
            ctx.needs = ctx.needs_input_grad
            ctx.k = k
            return a * k + b, k, s, n

        @staticmethod
        def backward(ctx, g, gk, gs, gn):
            ctx.got = (gk, gs, gn)
            return g * ctx.k, None, g, None, None

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class CubeOnce(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            ctx.grad_mode = lib.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    class GradMode(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.forward_grad_mode = lib.is_grad_enabled()
            return x * 2

        @staticmethod
        def backward(ctx, g):
            ctx.backward_grad_mode = lib.is_grad_enabled()
            return g * 2

    class InnerNode(Function):
        """Creates a node inside forward (under enable_grad) and records its seq nr."""

        @staticmethod
        def forward(ctx, x):
            with lib.enable_grad():
                z = x.sin()
                ctx.inner_seq = z.grad_fn._sequence_nr()
            return z.detach() * 2

        @staticmethod
        def backward(ctx, g):
            return g

    def returning(result_fn):
        class Returns(Function):
            @staticmethod
            def forward(ctx, x, *rest):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return result_fn(lib, g)

        return Returns

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    return types.SimpleNamespace(**locals())


def x64(lib, data=DATA, requires_grad=True):
    return from_np(lib, np.asarray(data, dtype=np.float64), requires_grad)


# ----------------------------------------------------------------------------------
# Basic use


def test_forward_backward_style(ng):
    x = x64(ng)
    y = fns(ng).Cube.apply(x)
    assert_close(y, DATA**3, rtol=1e-12)
    y.backward(x64(ng, [1.0, 2.0, 3.0], False))
    assert_close(x.grad, 3 * DATA**2 * [1.0, 2.0, 3.0], rtol=1e-12)


def test_saved_output_gives_the_gradient(ng):
    x = x64(ng)
    fns(ng).ExpOut.apply(x).sum().backward()
    assert_close(x.grad, np.exp(DATA), rtol=1e-12)


def test_setup_context_style(ng):
    x = x64(ng)
    y = fns(ng).ScaleSC.apply(x, 4.0)
    assert_close(y, DATA * 4, rtol=1e-12)
    # setup_context sees (inputs, output); the output of forward has no graph yet
    assert y.grad_fn.seen == (2, 4.0, False, (True, False))
    y.sum().backward()
    assert_close(x.grad, np.full(3, 4.0), rtol=1e-12)


def test_setup_context_style_binds_default_arguments(ng):
    x = x64(ng)
    y = fns(ng).ScaleSC.apply(x)
    assert y.grad_fn.seen[:2] == (2, 2.0)
    y = fns(ng).ScaleSC.apply(x, k=5.0)
    assert y.grad_fn.seen[:2] == (2, 5.0)
    y.sum().backward()
    assert_close(x.grad, np.full(3, 5.0), rtol=1e-12)


def test_apply_accepts_keyword_arguments(ng):
    # torch 2.13 binds keyword arguments of apply() to forward's positions in both styles
    x = x64(ng)
    y = fns(ng).ScaleKw.apply(x, k=3.0)
    assert_close(y, DATA * 3, rtol=1e-12)
    y.sum().backward()
    assert_close(x.grad, np.full(3, 3.0), rtol=1e-12)


def test_forward_runs_without_grad_and_backward_with_grad_only_for_create_graph(ng):
    x = x64(ng)
    y = fns(ng).GradMode.apply(x)
    assert y.grad_fn.forward_grad_mode is False
    ng.autograd.grad(y.sum(), x, retain_graph=True)
    assert y.grad_fn.backward_grad_mode is False
    ng.autograd.grad(y.sum(), x, create_graph=True)
    assert y.grad_fn.backward_grad_mode is True


def test_not_executable_without_grad(ng):
    x = x64(ng)
    with ng.no_grad():
        y = fns(ng).GradMode.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    y = fns(ng).GradMode.apply(x64(ng, requires_grad=False))
    assert y.grad_fn is None and not y.requires_grad


def test_tensor_repr_names_the_node(ng):
    y = fns(ng).Cube.apply(ng.tensor([1.0, 2.0], requires_grad=True))
    assert repr(y) == "tensor([1., 8.], grad_fn=<CubeBackward>)"


# ----------------------------------------------------------------------------------
# save_for_backward / saved_tensors


def test_saved_tensors_hold_inputs_none_and_outputs(ng):
    x = x64(ng)
    y = fns(ng).SaveMixed.apply(x)
    y.sum().backward()
    assert y.grad_fn.got == (DATA.tolist(), None, (DATA * 2).tolist())
    assert_close(x.grad, np.full(3, 2.0))


def test_save_for_backward_rejects_non_tensors(ng):
    def fail(lib):
        fns(lib).SaveInt.apply(x64(lib))

    err = assert_same_error(fail, "save_for_backward can only save variables, but argument 1 is of type int")
    assert type(err) is TypeError


def test_saved_input_modified_in_place_is_detected(ng):
    a = x64(ng)
    b = a.clone()
    y = fns(ng).Cube.apply(b)
    b.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    message = str(info.value)
    assert MODIFIED in message
    assert "is at version 1; expected version 0 instead." in message


@pytest.mark.usefixtures("torch_ref")
def test_saved_input_modified_in_place_matches_torch():
    def fail(lib):
        b = x64(lib).clone()
        y = fns(lib).Cube.apply(b)
        b.add_(1)
        y.sum().backward()

    assert_same_error(fail, length=200)


def test_saved_output_modified_in_place_is_detected(ng):
    y = fns(ng).ExpOut.apply(x64(ng))
    with ng.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_saved_tensors_after_backward_are_freed(ng):
    x = x64(ng)
    y = fns(ng).Cube.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        _ = y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        y.sum().backward()


def test_saved_tensors_survive_retain_graph(ng):
    x = x64(ng)
    y = fns(ng).Cube.apply(x)
    y.sum().backward(retain_graph=True)
    (saved,) = y.grad_fn.saved_tensors
    assert_close(saved, DATA)
    y.sum().backward()
    assert_close(x.grad, 6 * DATA**2, rtol=1e-12)


def _ctx_kept_after_its_output_is_gone(lib):
    ctxs = []

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctxs.append(ctx)
            ctx.save_for_backward(x, None, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, _, w = ctx.saved_tensors
            return g * w, g * x

    def saved(ctx):
        try:
            return [None if t is None else (t.tolist(), t.requires_grad) for t in ctx.saved_tensors]
        except RuntimeError as e:
            return ("raises", str(e)[:60])

    r = {}
    w = lib.tensor([3.0, 4.0])  # does not require grad
    for case in ("retain_graph", "no backward", "backward"):
        ctxs.clear()
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        out = Scale.apply(x, w)
        if case == "retain_graph":
            out.sum().backward(retain_graph=True)
        elif case == "backward":
            out.sum().backward()
        del out
        gc.collect()
        r[case] = saved(ctxs[0])
    return r


@pytest.mark.usefixtures("torch_ref")
def test_saved_tensors_of_a_kept_ctx_outlive_the_output(ng):
    # torch keeps save_for_backward's tensors on the ctx: a ctx kept by the
    # user still reads them once the output (and the node) are gone, unless a
    # backward without retain_graph freed them.
    got, expected = run_both(_ctx_kept_after_its_output_is_gone)
    assert got == expected
    assert got["retain_graph"] == [([1.0, 2.0], True), None, ([3.0, 4.0], False)]
    assert got["no backward"] == got["retain_graph"]
    assert got["backward"][0] == "raises" and got["backward"][1].startswith(BACKWARD_TWICE)


def _ctx_kept_alone(lib):
    """A ctx kept after its output (and every other reference to its node) is gone:
    what it still answers, as a node, and a backward through its saved output."""
    log = []
    x = lib.tensor([0.5, -1.0], requires_grad=True)
    out = fns(lib).ExpInOut.apply(x)
    ctx = out.grad_fn
    ctx.register_hook(lambda grad_inputs, grad_outputs: log.append("post-hook"))
    ctx.metadata["tag"] = "kept"
    out.sum().backward(retain_graph=True)
    del out
    gc.collect()
    x_saved, y_saved = ctx.saved_tensors
    facts = {
        "name": ctx.name(),
        "next": [(f.name(), i) for f, i in ctx.next_functions],
        "metadata": dict(ctx.metadata),
        "output grad_fn is ctx": y_saved.grad_fn is ctx,
        "output requires_grad": y_saved.requires_grad,
        "input grad_fn": x_saved.grad_fn,
    }
    x.grad = None
    (y_saved * 2).sum().backward()
    facts["grad"] = to_np(x.grad).tolist()
    facts["log"] = log
    return facts


@pytest.mark.usefixtures("torch_ref")
def test_a_kept_ctx_keeps_its_node(ng):
    # torch's ctx owns its node: with the output gone, the node still answers
    # (next_functions, metadata, hooks) and a saved output read through the ctx
    # has the ctx as its grad_fn, so a backward from it runs the Function.
    got, expected = run_both(_ctx_kept_alone)
    grad = got.pop("grad")
    assert_close(np.array(expected.pop("grad")), np.array(grad), rtol=1e-6)
    assert got == expected
    assert got["output grad_fn is ctx"] and got["next"] == [("torch::autograd::AccumulateGrad", 0)]
    assert got["log"] == ["post-hook", "post-hook"]
    assert_close(np.array(grad), 2 * np.exp([0.5, -1.0]), rtol=1e-6)


def _inner_ctx_of_a_chain_kept(lib):
    """y = ExpInOut(x), z = ExpInOut(y); only y's ctx is kept: z's node goes first, and y's
    node is torn down as its child (the iterative teardown), then used again."""
    exp = fns(lib).ExpInOut
    x = lib.tensor([0.5, -1.0, 0.25], requires_grad=True)
    y = exp.apply(x)
    z = exp.apply(y)
    ctx = y.grad_fn
    del y, z
    gc.collect()
    (_, y_saved) = ctx.saved_tensors
    (y_saved * 2).sum().backward()
    return {
        "next": [(f.name(), i) for f, i in ctx.next_functions],
        "metadata": dict(ctx.metadata),
        "grad": to_np(x.grad).tolist(),
    }


@pytest.mark.usefixtures("torch_ref")
def test_a_kept_ctx_of_a_torn_down_chain_keeps_its_node(ng):
    got, expected = run_both(_inner_ctx_of_a_chain_kept)
    assert_close(np.array(got.pop("grad")), np.array(expected.pop("grad")), rtol=1e-6)
    assert got == expected == {"next": [("torch::autograd::AccumulateGrad", 0)], "metadata": {}}


def _saved_hook_counts(lib, name):
    log = []

    def pack(t):
        log.append("pack")
        return t

    def unpack(t):
        log.append("unpack")
        return t

    a, b = x64(lib), x64(lib, [1.0, 2.0, 3.0])
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = fns(lib).Mul.apply(a, b) if name == "Mul" else getattr(fns(lib), name).apply(a)
    log.append("forward done")
    y.sum().backward()
    return log, to_np(a.grad).tolist()


@pytest.mark.parametrize("name", ["Mul", "ExpOut", "SaveMixed"])
def test_saved_tensor_hooks_apply_to_save_for_backward(ng, name):
    got, expected = run_both(lambda lib: _saved_hook_counts(lib, name))
    assert got == expected


def test_saved_tensor_hooks_counts(ng):
    log, _ = _saved_hook_counts(ng, "Mul")
    # packed once per saved tensor, unpacked on every ctx.saved_tensors access
    assert log == ["pack", "pack", "forward done"] + ["unpack"] * 4


# ----------------------------------------------------------------------------------
# mark_dirty


def test_mark_dirty_returns_the_input_object(ng):
    a = x64(ng)
    b = a.clone()
    version = b._version
    y = fns(ng).DoubleInPlace.apply(b)
    assert y is b
    # mul_ inside forward bumps once, mark_dirty bumps once more
    assert b._version == version + 2
    assert type(b.grad_fn).__name__ == "DoubleInPlaceBackward"
    assert y.output_nr == 0
    assert_close(b, DATA * 2)
    b.backward(x64(ng, [1.0, 2.0, 3.0], False))
    assert_close(a.grad, [2.0, 4.0, 6.0])


def test_mark_dirty_alone_bumps_the_version_once(ng):
    b = x64(ng).clone()
    version = b._version
    y = fns(ng).MarkDirtyOnly.apply(b)
    assert y is b and b._version == version + 1
    assert type(b.grad_fn).__name__ == "MarkDirtyOnlyBackward"


def _mark_dirty_graph(lib):
    a = x64(lib)
    b = a.clone()
    y = fns(lib).DoubleInPlace.apply(b)
    (y * y).sum().backward()
    return graph_desc(y.grad_fn), to_np(a.grad).tolist(), y._version


def test_mark_dirty_matches_torch(ng):
    got, expected = run_both(_mark_dirty_graph)
    assert got[0] == expected[0] == "DoubleInPlaceBackward(CloneBackward0(AccumulateGrad()))"
    assert got[2] == expected[2]
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


def test_mark_dirty_on_a_leaf_that_requires_grad(ng):
    def fail(lib):
        fns(lib).DoubleInPlace.apply(x64(lib))

    assert_same_error(
        fail,
        "a leaf Variable that requires grad has been used in an in-place operation.",
    )


def test_mark_dirty_tensor_must_be_returned(ng):
    def fail(lib):
        fns(lib).DirtyNotReturned.apply(x64(lib).clone())

    assert_same_error(
        fail,
        "Some elements marked as dirty during the forward method were not returned as output.",
    )


def _mark_dirty_on_view(lib):
    a = x64(lib, [1.0, 2.0, 3.0])
    b = a.clone()
    v = b[1:]
    y = fns(lib).DoubleInPlace.apply(v)
    facts = (
        y is v,
        y._base is b,
        type(b.grad_fn).__name__,
        type(v.grad_fn).__name__,
        to_np(b).tolist(),
    )
    (b * x64(lib, [1.0, 10.0, 100.0], False)).sum().backward()
    return facts, to_np(a.grad).tolist()


def test_mark_dirty_on_a_view_rebases_the_base(ng):
    got, expected = run_both(_mark_dirty_on_view)
    assert got == expected
    assert got[0][:4] == (True, True, "CopySlices", "AsStridedBackward0")
    assert got[1] == [1.0, 20.0, 200.0]


# ----------------------------------------------------------------------------------
# mark_non_differentiable, set_materialize_grads, needs_input_grad, non-tensors


@pytest.mark.parametrize("materialize", [True, False])
def test_mark_non_differentiable(ng, materialize):
    x = x64(ng)
    out, mask = fns(ng).SignAndTriple.apply(x, materialize)
    assert out.requires_grad and not mask.requires_grad
    assert mask.grad_fn is None and mask.is_leaf
    assert to_np(mask).tolist() == [1.0, 0.0, 1.0]
    out.sum().backward()
    g, g_mask = out.grad_fn.got
    assert to_np(g).tolist() == [1.0, 1.0, 1.0]
    if materialize:
        assert to_np(g_mask).tolist() == [0.0, 0.0, 0.0]
    else:
        assert g_mask is None
    assert_close(x.grad, np.full(3, 3.0))


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(ng, materialize):
    x = x64(ng)
    p, _q = fns(ng).TwoOut.apply(x, materialize)
    p.sum().backward()
    g1, g2 = p.grad_fn.got
    assert to_np(g1).tolist() == [1.0, 1.0, 1.0]
    if materialize:
        assert to_np(g2).tolist() == [0.0, 0.0, 0.0]
        assert g2.shape == p.shape
    else:
        assert g2 is None
    assert_close(x.grad, np.full(3, 2.0))


def test_multiple_outputs_share_the_node(ng):
    x = x64(ng)
    p, q = fns(ng).TwoOut.apply(x, True)
    assert p.grad_fn is q.grad_fn
    assert (p.output_nr, q.output_nr) == (0, 1)
    (p * 1 + q * 10).sum().backward()
    assert_close(x.grad, np.full(3, 32.0))


def test_needs_input_grad_and_non_tensor_arguments(ng):
    a = x64(ng)
    b = x64(ng, [1.0, 2.0, 3.0], requires_grad=False)
    out, k, s, n = fns(ng).Mixed.apply(a, 3, b, "hi", None)
    assert (k, s, n) == (3, "hi", None)
    node = out.grad_fn
    assert node.needs == (True, False, False, False, False)
    assert node.needs_input_grad == (True, False, False, False, False)
    # one edge per tensor argument; b does not require grad
    assert len(node.next_functions) == 2
    assert type(node.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert node.next_functions[1] == (None, 0)
    out.sum().backward()
    assert node.got == (None, None, None)  # non-tensor outputs get None grads
    assert_close(a.grad, np.full(3, 3.0))
    assert b.grad is None


def test_needs_input_grad_when_both_require_grad(ng):
    a, b = x64(ng), x64(ng, [1.0, 2.0, 3.0])
    out = fns(ng).Mixed.apply(a, 2, b, "s", None)[0]
    assert out.grad_fn.needs_input_grad == (True, False, True, False, False)
    out.sum().backward()
    assert_close(a.grad, np.full(3, 2.0))
    assert_close(b.grad, np.full(3, 1.0))


def _identity_facts(lib, leaf):
    x = x64(lib)
    inp = x if leaf else x.clone()
    y = fns(lib).Identity.apply(inp)
    facts = (
        y is inp,
        y._base is inp,
        y.is_leaf,
        type(y.grad_fn).__name__,
        y.data_ptr() == inp.data_ptr(),
        y._version,
    )
    y.sum().backward()
    return facts, to_np(x.grad).tolist()


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non_leaf"])
def test_input_returned_as_is(ng, leaf):
    got, expected = run_both(lambda lib: _identity_facts(lib, leaf))
    assert got == expected
    assert got[0][:4] == (False, True, False, "IdentityBackward")
    assert got[1] == [5.0, 5.0, 5.0]


def test_extra_none_gradients_are_allowed(ng):
    cls = fns(ng).returning(lambda lib, g: (g * 2, None, None))
    x = x64(ng)
    cls.apply(x).sum().backward()
    assert_close(x.grad, np.full(3, 2.0))


# ----------------------------------------------------------------------------------
# once_differentiable and create_graph


def test_once_differentiable_first_order(ng):
    x = x64(ng)
    y = fns(ng).CubeOnce.apply(x)
    (g,) = ng.autograd.grad((y * y).sum(), x)
    assert_close(g, 6 * DATA**5, rtol=1e-12)
    assert not g.requires_grad
    assert y.grad_fn.grad_mode is False


def test_once_differentiable_with_create_graph_but_constant_grad(ng):
    # the incoming grad does not require grad: the result is returned as is
    x = x64(ng)
    y = fns(ng).CubeOnce.apply(x)
    (g,) = ng.autograd.grad(y.sum(), x, create_graph=True)
    assert not g.requires_grad and g.grad_fn is None
    assert_close(g, 3 * DATA**2, rtol=1e-12)


def test_once_differentiable_double_backward_raises(ng):
    x = x64(ng)
    y = fns(ng).CubeOnce.apply(x)
    # y * y makes the grad entering CubeOnceBackward require grad
    (g,) = ng.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.requires_grad
    assert_close(g, 6 * DATA**5, rtol=1e-12)
    with pytest.raises(RuntimeError, match=ONCE):
        g.sum().backward()


def test_once_differentiable_error_node(ng):
    x = x64(ng)
    y = fns(ng).CubeOnce.apply(x)
    (g,) = ng.autograd.grad((y * y).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "Error"
    assert g.grad_fn.name() == "torch::autograd::Error"
    # its edge leads to a fake leaf, not to x
    (edge,) = g.grad_fn.next_functions
    assert type(edge[0]).__name__ == "AccumulateGrad" and edge[0].variable is not x


@pytest.mark.usefixtures("torch_ref")
def test_once_differentiable_error_matches_torch():
    def fail(lib):
        x = x64(lib)
        y = fns(lib).CubeOnce.apply(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()

    assert_same_error(fail, ONCE)


def test_custom_backward_supports_create_graph(ng):
    x = x64(ng)
    v = np.array([0.3, -0.7, 1.1])

    def first_grad(t):
        with ng.enable_grad():
            t = t.detach().requires_grad_()
            (g,) = ng.autograd.grad(fns(ng).Cube.apply(t).sum(), t)
        return g

    y = fns(ng).Cube.apply(x)
    (g,) = ng.autograd.grad(y.sum(), x, create_graph=True)
    assert g.requires_grad
    assert_close(g, 3 * DATA**2, rtol=1e-12)
    (gg,) = ng.autograd.grad((g * from_np(ng, v)).sum(), x)
    (expected,) = numerical_grad(first_grad, [x], v)
    assert_close(gg, expected, rtol=1e-6, atol=1e-8)
    assert_close(gg, 6 * DATA * v, rtol=1e-12)


# ----------------------------------------------------------------------------------
# The backward node


def test_node_type_and_name(ng):
    y = fns(ng).Cube.apply(x64(ng))
    node = y.grad_fn
    assert type(node).__name__ == "CubeBackward"
    assert node.name() == "CubeBackward"
    assert isinstance(node, ng.autograd.graph.Node)
    assert isinstance(node, ng.autograd.function.BackwardCFunction)
    assert node is y.grad_fn
    assert type(node) is fns(ng).Cube._backward_cls
    assert node._forward_cls is fns(ng).Cube


def _next_functions(lib):
    a, b = x64(lib), x64(lib, [1.0, 2.0, 3.0], False)
    c = a * 2
    out = fns(lib).Mixed.apply(c, 4, b, "x", None)[0]
    z = fns(lib).Mul.apply(out, a)
    return graph_desc(z.grad_fn), [n for _, n in z.grad_fn.next_functions]


def test_next_functions_match_torch(ng):
    got, expected = run_both(_next_functions)
    assert got == expected
    assert got[0] == ("MulBackward(MixedBackward(MulBackward0(AccumulateGrad(), None), None), AccumulateGrad())")


def test_sequence_nr_is_taken_before_forward(ng):
    x = x64(ng)
    before = (x * 1).grad_fn._sequence_nr()
    y = fns(ng).InnerNode.apply(x)
    after = (x * 1).grad_fn._sequence_nr()
    seq = y.grad_fn._sequence_nr()
    assert before < seq < y.grad_fn.inner_seq < after


def _hook_log(lib):
    log = []
    x = x64(lib)
    y = fns(lib).Cube.apply(x)
    node = y.grad_fn

    def tensor_hook(g):
        log.append(("tensor", to_np(g).tolist()))
        return g * 10

    def prehook(grad_outputs):
        log.append(("pre", [to_np(g).tolist() for g in grad_outputs]))

    def posthook(grad_inputs, grad_outputs):
        log.append(
            (
                "post",
                [to_np(g).tolist() for g in grad_inputs],
                [to_np(g).tolist() for g in grad_outputs],
            )
        )

    y.register_hook(tensor_hook)
    handles = [node.register_prehook(prehook), node.register_hook(posthook)]
    y.sum().backward(retain_graph=True)
    for handle in handles:
        handle.remove()
    y.sum().backward()
    return log, to_np(x.grad).tolist()


def test_node_and_tensor_hooks_match_torch(ng):
    got, expected = run_both(_hook_log)
    assert got == expected
    assert [entry[0] for entry in got[0]] == ["tensor", "pre", "post", "tensor"]


def test_node_hook_can_replace_grad_inputs(ng):
    x = x64(ng)
    y = fns(ng).Cube.apply(x)
    y.grad_fn.register_hook(lambda gin, gout: (gin[0] * 0 + 1,))
    y.sum().backward()
    assert_close(x.grad, np.ones(3))


def test_metadata_is_a_persistent_dict(ng):
    y = fns(ng).Cube.apply(x64(ng))
    node = y.grad_fn
    assert node.metadata == {}
    node.metadata["tag"] = 7
    assert y.grad_fn.metadata is node.metadata
    assert y.grad_fn.metadata == {"tag": 7}
    y.sum().backward()
    assert y.grad_fn.metadata == {"tag": 7}


def test_ctx_attributes_persist_on_the_node(ng):
    y = fns(ng).ScaleKw.apply(x64(ng), 6.0)
    assert y.grad_fn.k == 6.0


# ----------------------------------------------------------------------------------
# A misbehaving backward

BAD_BACKWARDS = [
    pytest.param(
        lambda lib, g: (g, g),
        (),
        "function ReturnsBackward returned an incorrect number of gradients (expected 1, got 2)",
        id="too_many",
    ),
    pytest.param(
        lambda lib, g: (g,),
        (2,),
        "function ReturnsBackward returned an incorrect number of gradients (expected 2, got 1)",
        id="too_few",
    ),
    pytest.param(
        lambda lib, g: (g, g),
        (2,),
        "function ReturnsBackward returned a gradient different than None at position 2, "
        "but the corresponding forward input was not a Variable",
        id="non_none_for_non_tensor",
    ),
    pytest.param(
        lambda lib, g: lib.ones(2, dtype=g.dtype),
        (),
        "Function ReturnsBackward returned an invalid gradient at index 0 - got [2] but "
        "expected shape compatible with [3]",
        id="wrong_shape",
    ),
    pytest.param(
        lambda lib, g: 3,
        (),
        "expected Variable or None (got int)",
        id="int",
    ),
    pytest.param(
        lambda lib, g: "grad",
        (),
        "expected Variable or None (got str)",
        id="str",
    ),
]


@pytest.mark.parametrize(("result", "extra", "message"), BAD_BACKWARDS)
def test_bad_backward_results(ng, result, extra, message):
    def fail(lib):
        x = x64(lib)
        fns(lib).returning(result).apply(x, *extra).sum().backward()

    with pytest.raises(RuntimeError) as info:
        fail(ng)
    assert message in str(info.value)
    assert_same_error(fail, message)


def test_exception_in_backward_propagates(ng):
    y = fns(ng).Boom.apply(x64(ng))
    with pytest.raises(ValueError, match="boom in backward"):
        y.sum().backward()


def test_function_cannot_be_instantiated_legacy_style(ng):
    def fail(lib):
        with warnings.catch_warnings():
            # torch warns (DeprecationWarning) on instantiation, then raises on call
            warnings.simplefilter("ignore", DeprecationWarning)
            fns(lib).Cube()(x64(lib))

    assert_same_error(
        fail,
        "Legacy autograd function with non-static forward method is deprecated.",
    )
