"""Errors: user code that raises during a pass, and bad input to the public API.

1. A tensor hook, node pre/post hook, hook on an AccumulateGrad, pack and unpack
   hook, custom Function backward, post-accumulate-grad hook, multi-grad hook and
   final callback that raise: the very exception object reaches the caller (torch
   neither wraps nor chains a Python exception raised in backward); afterwards grad
   mode and the current graph task are restored, ``.grad`` holds what torch leaves
   there, the retained graph runs again once the hook is gone, a new pass works,
   and nothing leaks (weakrefs to the tensors die; npgrad only: the live node count
   returns to its start).
2. Bad input to every public function: torch's exception type, and torch's message
   (``match=``, verified by running this file against torch), never a crash.
"""

from __future__ import annotations

import gc
import re
import weakref
from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH, to_np

A = [1.0, 2.0]
B = [3.0, 4.0]
C = [5.0, 6.0]


class Boom(Exception):
    """Raised by the hooks under test."""


def live_nodes(ng):
    if AGAINST_TORCH:
        return None
    gc.collect()
    return ng._C._live_node_count()


# ----------------------------------------------------------------------------------
# 1. Raising hooks


# What torch leaves in (a.grad, b.grad, c.grad) after the failed pass of
# y = (a * b + c).sum(). AccumulateGrad runs first among ready nodes, so c's gradient
# is written before a * b's node runs; a's AccumulateGrad runs before b's.
RAISED_GRADS = {
    "tensor_hook": (None, None, [1.0, 1.0]),
    "node_prehook": (None, None, [1.0, 1.0]),
    "node_posthook": (None, None, [1.0, 1.0]),
    "unpack_hook": (None, None, [1.0, 1.0]),
    "function_backward": (None, None, [1.0, 1.0]),
    "leaf_tensor_hook": (None, None, [1.0, 1.0]),
    "accumulate_grad_prehook": (None, None, [1.0, 1.0]),
    "post_accumulate_grad_hook": (B, None, [1.0, 1.0]),
    "multi_grad_hook": (B, None, [1.0, 1.0]),
    "final_callback": (B, A, [1.0, 1.0]),
}
KINDS = list(RAISED_GRADS)


def failing_pass(ng, kind, entry="backward", exc_type=Boom):
    """Build y = (a * b + c).sum() with a hook of ``kind`` that raises once, run the
    pass, then remove/disarm the hook and run the retained graph again.

    Returns a summary (no exception, traceback or tensor escapes, so the caller can
    check that everything was freed) and weakrefs to the tensors."""
    a = ng.tensor(A, dtype=ng.float64, requires_grad=True)
    b = ng.tensor(B, dtype=ng.float64, requires_grad=True)
    c = ng.tensor(C, dtype=ng.float64, requires_grad=True)
    armed = [True]
    raised = []

    def raiser(*args):
        if armed[0]:
            e = exc_type(f"boom {kind}")
            raised.append(e)
            raise e
        return None

    handle = None
    if kind == "unpack_hook":
        with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: raiser() or t):
            m = a * b
    elif kind == "function_backward":

        class Mul(ng.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x * w

            @staticmethod
            def backward(ctx, g):
                raiser()
                x, w = ctx.saved_tensors
                return g * w, g * x

        m = Mul.apply(a, b)
    else:
        m = a * b
    y = (m + c).sum()

    if kind == "tensor_hook":
        handle = m.register_hook(raiser)
    elif kind == "node_prehook":
        handle = m.grad_fn.register_prehook(raiser)
    elif kind == "node_posthook":
        handle = m.grad_fn.register_hook(raiser)
    elif kind == "leaf_tensor_hook":
        handle = a.register_hook(raiser)
    elif kind == "accumulate_grad_prehook":
        handle = m.grad_fn.next_functions[0][0].register_prehook(raiser)
    elif kind == "post_accumulate_grad_hook":
        handle = a.register_post_accumulate_grad_hook(raiser)
    elif kind == "multi_grad_hook":
        handle = ng.autograd.graph.register_multi_grad_hook((a, b), raiser)
    elif kind == "final_callback":
        queue = ng.autograd.Variable._execution_engine.queue_callback
        handle = m.register_hook(lambda g: queue(raiser))

    summary = {}
    try:
        if entry == "backward":
            y.backward(retain_graph=True)
        else:
            ng.autograd.grad(y, (a, b, c), retain_graph=True)
        summary["raised"] = None
    except BaseException as e:  # noqa: BLE001 - examined below
        summary["raised"] = (type(e), str(e), len(raised) == 1 and e is raised[0])
        summary["cause"] = (e.__cause__, e.__suppress_context__)
    raised.clear()
    summary["grad mode"] = ng.is_grad_enabled()
    summary["task id"] = ng._C._current_graph_task_id()
    summary["current node"] = ng._C._current_autograd_node()
    summary["grads after failure"] = [None if t.grad is None else to_np(t.grad).tolist() for t in (a, b, c)]

    # The hook is gone: the retained graph runs again.
    if handle is not None:
        handle.remove()
    armed[0] = False
    y.backward()
    summary["grads after rerun"] = [to_np(t.grad).tolist() for t in (a, b, c)]

    # A new pass on new tensors works.
    z = ng.tensor([2.0], dtype=ng.float64, requires_grad=True)
    (z * z).sum().backward()
    summary["new pass"] = to_np(z.grad).tolist()
    refs = [weakref.ref(t) for t in (a, b, c, m)]
    return summary, refs


def add_lists(x, y):
    return [p + q for p, q in zip(x, y)]


@pytest.mark.parametrize("kind", KINDS)
def test_raising_hook_reaches_the_caller_and_the_engine_recovers(ng, kind):
    start = live_nodes(ng)
    summary, refs = failing_pass(ng, kind)
    assert summary["raised"] == (Boom, f"boom {kind}", True)
    assert summary["cause"] == (None, False)
    assert summary["grad mode"] is True
    assert summary["task id"] == -1
    assert summary["current node"] is None
    expected = RAISED_GRADS[kind]
    assert summary["grads after failure"] == [None if g is None else list(g) for g in expected]
    full = (B, A, [1.0, 1.0])
    assert summary["grads after rerun"] == [list(f) if g is None else add_lists(g, f) for g, f in zip(expected, full)]
    assert summary["new pass"] == [4.0]
    gc.collect()
    assert [r() for r in refs] == [None] * 4
    if start is not None:
        assert live_nodes(ng) == start


@pytest.mark.parametrize(
    "kind", ["tensor_hook", "node_prehook", "node_posthook", "unpack_hook", "function_backward", "final_callback"]
)
def test_raising_hook_under_autograd_grad(ng, kind):
    start = live_nodes(ng)
    summary, refs = failing_pass(ng, kind, entry="grad")
    assert summary["raised"] == (Boom, f"boom {kind}", True)
    assert summary["grad mode"] is True
    assert summary["task id"] == -1
    assert summary["grads after failure"] == [None, None, None]  # grad() writes no .grad
    assert summary["grads after rerun"] == [B, A, [1.0, 1.0]]
    gc.collect()
    assert [r() for r in refs] == [None] * 4
    if start is not None:
        assert live_nodes(ng) == start


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit, ValueError, RuntimeError, TypeError])
def test_any_exception_type_from_a_hook_keeps_its_type(ng, exc_type):
    summary, refs = failing_pass(ng, "tensor_hook", exc_type=exc_type)
    assert summary["raised"] == (exc_type, "boom tensor_hook", True)
    gc.collect()
    assert [r() for r in refs] == [None] * 4


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_mode_is_restored_after_a_failed_pass_under_no_grad(ng, create_graph):
    a = ng.tensor(A, requires_grad=True)
    m = a * 2
    modes = []

    def hook(g):
        modes.append(ng.is_grad_enabled())
        raise Boom("x")

    m.register_hook(hook)
    y = m.sum()
    with ng.no_grad():
        with pytest.raises(Boom):
            ng.autograd.grad(y, a, create_graph=create_graph)
        assert not ng.is_grad_enabled()
    assert modes == [create_graph]
    assert ng.is_grad_enabled()


def test_raising_pack_hook_reaches_the_caller_of_the_forward_op(ng):
    start = live_nodes(ng)

    def run():
        a = ng.tensor(A, requires_grad=True)
        b = ng.tensor(B, requires_grad=True)
        packed = []
        raised = Boom("pack")

        def pack(t):
            raise raised

        def counting_pack(t):
            packed.append(1)
            return t

        outcome = None
        try:
            with ng.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                a * b
        except Boom as e:
            outcome = e is raised
        # The failed op left the hooks stack as it was: new saves are not packed
        # by the raising hook, and a new hooks context works.
        with ng.autograd.graph.saved_tensors_hooks(counting_pack, lambda t: t):
            y = (a * b).sum()
        y.backward()
        (a * b).sum().backward()
        return outcome, len(packed), to_np(a.grad).tolist(), [weakref.ref(a), weakref.ref(b)]

    outcome, n_packed, grad, refs = run()
    assert outcome is True
    assert n_packed == 2
    assert grad == [6.0, 8.0]
    gc.collect()
    assert [r() for r in refs] == [None, None]
    if start is not None:
        assert live_nodes(ng) == start


def test_raising_unpack_hook_on_a_single_saved_tensor(ng):
    """Hooks set with ``grad_fn._raw_saved_self.register_hooks`` raise from the pass."""
    a = ng.tensor(A, requires_grad=True)
    y = a.sin()
    raised = Boom("unpack")

    def unpack(t):
        raise raised

    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, unpack)
    with pytest.raises(Boom) as info:
        y.sum().backward()
    assert info.value is raised
    assert a.grad is None


def failing_engine_pass(ng, kind):
    """Errors raised by the engine itself (not by user code) during a pass."""
    a = ng.tensor(A, dtype=ng.float64, requires_grad=True)
    if kind == "backward twice":
        y = (a * a).sum()
        y.backward()
        fn = y.backward
    elif kind == "modified saved tensor":
        h = a * 1
        y = h.sin().sum()
        h.add_(1)
        fn = y.backward
    elif kind == "hook changed the size":
        h = a * 2
        h.register_hook(lambda g: ng.ones(5, dtype=ng.float64))
        fn = h.sum().backward
    elif kind == "function returned too many gradients":

        class F(ng.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g, g

        fn = F.apply(a).sum().backward
    else:  # "unpack hook returned a non-tensor"
        with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "x"):
            y = (a * a).sum()
        fn = y.backward
    try:
        fn()
        outcome = None
    except (RuntimeError, TypeError) as e:
        outcome = type(e)
    state = (ng.is_grad_enabled(), ng._C._current_graph_task_id())
    z = ng.tensor([3.0], dtype=ng.float64, requires_grad=True)
    (z * z).sum().backward()
    return outcome, state, to_np(z.grad).tolist(), weakref.ref(a)


@pytest.mark.parametrize(
    "kind, exc_type",
    [
        ("backward twice", RuntimeError),
        ("modified saved tensor", RuntimeError),
        ("hook changed the size", RuntimeError),
        ("function returned too many gradients", RuntimeError),
        ("unpack hook returned a non-tensor", TypeError),
    ],
)
def test_engine_errors_leave_the_engine_working_and_free_the_graph(ng, kind, exc_type):
    start = live_nodes(ng)
    outcome, state, grad, ref = failing_engine_pass(ng, kind)
    assert outcome is exc_type
    assert state == (True, -1)
    assert grad == [6.0]
    gc.collect()
    assert ref() is None
    if start is not None:
        assert live_nodes(ng) == start


# ----------------------------------------------------------------------------------
# 2. Bad input to the public API


def E(text):
    """A ``match=`` pattern for torch's literal text."""
    return re.escape(text)


def mk(lib):
    return lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)


def nonleaf(lib):
    return mk(lib) * 2


def set_grad(value):
    def run(lib):
        a = mk(lib)
        a.grad = value(lib)

    return run


def backward_twice(lib):
    a = mk(lib)
    y = (a * a).sum()
    y.backward()
    y.backward()


def saved_after_free(lib):
    a = mk(lib)
    y = a * a
    y.sum().backward()
    return y.grad_fn._saved_self


def allow_mutation_nested(lib):
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        with lib.autograd.graph.allow_mutation_on_saved_tensors():
            pass


def allow_mutation_outside(lib):
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        y = mk(lib).clone().sin().sum()
    y.backward()


def hooks_inside_disabled(lib):
    with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass


def disabled_nested_restores_outer(lib):
    with lib.autograd.graph.disable_saved_tensors_hooks("outer"):
        with lib.autograd.graph.disable_saved_tensors_hooks("inner"):
            pass
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            pass


def enter_saved_tensors_hooks(pack, unpack):
    def run(lib):
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            pass

    return run


def saved_tensors_hooks_exit_twice(lib):
    cm = lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x)
    cm.__enter__()
    cm.__exit__(None, None, None)
    cm.__exit__(None, None, None)


def hook_run(register):
    def run(lib):
        y = mk(lib) * 2
        register(lib, y)
        y.sum().backward()

    return run


def raw_saved_register(first, second=None):
    def run(lib):
        y = mk(lib) * mk(lib)
        y.grad_fn._raw_saved_self.register_hooks(*first)
        if second is not None:
            y.grad_fn._raw_saved_self.register_hooks(*second)

    return run


def queue_non_callable(lib):
    y = mk(lib) * 2
    y.register_hook(lambda g: lib.autograd.Variable._execution_engine.queue_callback(3))
    y.sum().backward()


def will_execute_non_node(lib):
    y = mk(lib) * 2
    y.register_hook(lambda g: lib._C._will_engine_execute_node(3))
    y.sum().backward()


def function(lib, backward=None, forward=None, name="F"):
    def default_forward(ctx, x):
        return x.clone()

    def default_backward(ctx, g):
        return g

    attrs = {"forward": staticmethod(forward or default_forward)}
    if backward is not False:
        attrs["backward"] = staticmethod(backward or default_backward)
    return type(name, (lib.autograd.Function,), attrs)


def fn_wrong_count(lib):
    F = function(lib, forward=lambda ctx, x, w: x * w, backward=lambda ctx, g: g, name="WrongCount")
    F.apply(mk(lib), mk(lib)).sum().backward()


def fn_wrong_shape(lib):
    F = function(lib, backward=lambda ctx, g: lib.ones(5), name="WrongShape")
    F.apply(mk(lib)).sum().backward()


def fn_forward_only(forward):
    def run(lib):
        function(lib, forward=forward).apply(mk(lib))

    return run


def fn_dirty_not_returned(lib):
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x.clone()

    function(lib, forward=forward).apply(mk(lib).clone())


def fn_no_forward(lib):
    type("NoForward", (lib.autograd.Function,), {}).apply(mk(lib))


def fn_legacy_call(lib):
    F = function(lib)
    F()(mk(lib))


def fn_saved_tensors_after_backward(lib):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    y = function(lib, forward=forward).apply(mk(lib))
    y.sum().backward()
    return y.grad_fn.saved_tensors


def unpack_returns_str(lib):
    a = mk(lib)
    with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: "s"):
        y = (a * a).sum()
    y.backward()


def gradient_edge_none(lib):
    y = (mk(lib) * 2).sum()
    lib.autograd.grad(y, lib.autograd.graph.GradientEdge(None, 0))


def multi_grad_hook(tensors, fn=lambda grads: None, **kwargs):
    def run(lib):
        lib.autograd.graph.register_multi_grad_hook(tensors(lib), fn, **kwargs)

    return run


def multi_not_callable(lib):
    a = mk(lib)
    lib.autograd.graph.register_multi_grad_hook((a,), 3)
    (a * 2).sum().backward()


ERRORS = [
    # --- factories
    ("tensor_str", lambda lib: lib.tensor("abc"), TypeError, E("new(): invalid data type 'str'")),
    (
        "tensor_ragged",
        lambda lib: lib.tensor([[1.0], [1.0, 2.0]]),
        ValueError,
        E("expected sequence of length 1 at dim 1 (got 2)"),
    ),
    (
        "tensor_int_requires_grad",
        lambda lib: lib.tensor([1, 2], requires_grad=True),
        RuntimeError,
        E("Only Tensors of floating point and complex dtype can require gradients"),
    ),
    (
        "tensor_bool_requires_grad",
        lambda lib: lib.tensor([True], requires_grad=True),
        RuntimeError,
        E("Only Tensors of floating point and complex dtype can require gradients"),
    ),
    (
        "tensor_dtype_str",
        lambda lib: lib.tensor([1.0], dtype="float32"),
        TypeError,
        E("tensor(): argument 'dtype' must be torch.dtype, not str"),
    ),
    (
        "ones_negative",
        lambda lib: lib.ones(-1),
        RuntimeError,
        E("Trying to create tensor with negative dimension -1: [-1]"),
    ),
    (
        "empty_negative",
        lambda lib: lib.empty(-2),
        RuntimeError,
        E("Trying to create tensor with negative dimension -2: [-2]"),
    ),
    (
        "rand_negative",
        lambda lib: lib.rand(-1),
        RuntimeError,
        E("Trying to create tensor with negative dimension -1: [-1]"),
    ),
    ("zeros_negative_2d", lambda lib: lib.zeros(2, -3), RuntimeError, E("zeros: Dimension size must be non-negative.")),
    (
        "ones_str_size",
        lambda lib: lib.ones("a"),
        TypeError,
        E("ones(): argument 'size' (position 1) must be tuple of ints, not str"),
    ),
    (
        "zeros_numpy_dtype",
        lambda lib: lib.zeros(2, dtype=np.float32),
        TypeError,
        E("zeros(): argument 'dtype' must be torch.dtype, not type"),
    ),
    (
        "full_str_value",
        lambda lib: lib.full((2,), "x"),
        TypeError,
        E("full(): argument 'fill_value' (position 2) must be Number, not str"),
    ),
    (
        "full_int_size",
        lambda lib: lib.full(2, 1.0),
        TypeError,
        E("full(): argument 'size' (position 1) must be tuple of ints, not int"),
    ),
    ("arange_zero_step", lambda lib: lib.arange(0, 10, 0), RuntimeError, E("step must be nonzero")),
    (
        "arange_wrong_sign",
        lambda lib: lib.arange(10, 0),
        RuntimeError,
        E("upper bound and lower bound inconsistent with step sign"),
    ),
    (
        "arange_int_requires_grad",
        lambda lib: lib.arange(3, requires_grad=True),
        RuntimeError,
        E("Only Tensors of floating point and complex dtype can require gradients"),
    ),
    (
        "rand_int64",
        lambda lib: lib.rand(2, dtype=lib.int64),
        NotImplementedError,
        E("\"check_uniform_bounds\" not implemented for 'Long'"),
    ),
    (
        "randn_int64",
        lambda lib: lib.randn(2, dtype=lib.int64),
        NotImplementedError,
        E("\"normal_kernel_cpu\" not implemented for 'Long'"),
    ),
    (
        "ones_int_requires_grad",
        lambda lib: lib.ones(2, dtype=lib.int64, requires_grad=True),
        RuntimeError,
        E("Only Tensors of floating point and complex dtype can require gradients"),
    ),
    (
        "zeros_like_int_requires_grad",
        lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.int64), requires_grad=True),
        RuntimeError,
        E("Only Tensors of floating point and complex dtype can require gradients"),
    ),
    (
        "ones_like_list",
        lambda lib: lib.ones_like([1.0]),
        TypeError,
        E("ones_like(): argument 'input' (position 1) must be Tensor, not list"),
    ),
    ("from_numpy_list", lambda lib: lib.from_numpy([1.0, 2.0]), TypeError, E("expected np.ndarray (got list)")),
    (
        "from_numpy_str_array",
        lambda lib: lib.from_numpy(np.array(["a"])),
        TypeError,
        E("can't convert np.ndarray of type numpy.str_."),
    ),
    (
        "from_numpy_object_array",
        lambda lib: lib.from_numpy(np.array([object()])),
        TypeError,
        E("can't convert np.ndarray of type numpy.object_."),
    ),
    ("manual_seed_str", lambda lib: lib.manual_seed("x"), ValueError, E("invalid literal for int() with base 10: 'x'")),
    ("device_bogus", lambda lib: lib.device("bogus"), RuntimeError, E("device type at start of device string: bogus")),
    # --- shapes, views, indexing
    ("view_bad_numel", lambda lib: mk(lib).view(4), RuntimeError, E("shape '[4]' is invalid for input of size 6")),
    ("view_two_inferred", lambda lib: mk(lib).view(-1, -1), RuntimeError, E("only one dimension can be inferred")),
    (
        "view_non_contiguous",
        lambda lib: mk(lib).t().view(6),
        RuntimeError,
        E(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ),
    ),
    (
        "view_str",
        lambda lib: mk(lib).view("a"),
        TypeError,
        E("view() received an invalid combination of arguments - got (str)"),
    ),
    (
        "reshape_bad_numel",
        lambda lib: mk(lib).reshape(5),
        RuntimeError,
        E("shape '[5]' is invalid for input of size 6"),
    ),
    (
        "view_as_bad",
        lambda lib: mk(lib).view_as(lib.ones(4)),
        RuntimeError,
        E("shape '[4]' is invalid for input of size 6"),
    ),
    (
        "expand_bad",
        lambda lib: mk(lib).expand(3, 4),
        RuntimeError,
        E(
            "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [3, 4].  Tensor sizes: [2, 3]"
        ),
    ),
    (
        "expand_fewer_dims",
        lambda lib: mk(lib).expand(3),
        RuntimeError,
        E("the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)"),
    ),
    (
        "expand_as_bad",
        lambda lib: mk(lib).expand_as(lib.ones(3, 2)),
        RuntimeError,
        E("The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 1."),
    ),
    (
        "t_3d",
        lambda lib: lib.ones(2, 2, 2).t(),
        RuntimeError,
        E("t() expects a tensor with <= 2 dimensions, but self is 3D"),
    ),
    (
        "transpose_out_of_range",
        lambda lib: mk(lib).transpose(0, 5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ),
    (
        "permute_duplicate",
        lambda lib: mk(lib).permute(0, 0),
        RuntimeError,
        E("permute(): duplicate dims are not allowed."),
    ),
    (
        "permute_wrong_length",
        lambda lib: mk(lib).permute(0),
        RuntimeError,
        E(
            "number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1"
        ),
    ),
    (
        "squeeze_out_of_range",
        lambda lib: mk(lib).squeeze(5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ),
    (
        "unsqueeze_out_of_range",
        lambda lib: mk(lib).unsqueeze(5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-3, 2], but got 5)"),
    ),
    (
        "getitem_out_of_bounds",
        lambda lib: mk(lib)[5],
        IndexError,
        E("index 5 is out of bounds for dimension 0 with size 2"),
    ),
    ("getitem_too_many", lambda lib: mk(lib)[0, 0, 0], IndexError, E("too many indices for tensor of dimension 2")),
    (
        "getitem_float",
        lambda lib: mk(lib)[1.5],
        IndexError,
        E(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)"
        ),
    ),
    (
        "getitem_tensor_out_of_bounds",
        lambda lib: mk(lib)[lib.tensor([5])],
        IndexError,
        E("index 5 is out of bounds for dimension 0 with size 2"),
    ),
    (
        "getitem_list_out_of_bounds",
        lambda lib: mk(lib)[[0, 7]],
        IndexError,
        E("index 7 is out of bounds for dimension 0 with size 2"),
    ),
    (
        "size_out_of_range",
        lambda lib: mk(lib).size(5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ),
    (
        "size_str",
        lambda lib: mk(lib).size("a"),
        TypeError,
        E("size(): argument 'dim' (position 1) must be int, not str"),
    ),
    ("len_0d", lambda lib: len(lib.tensor(1.0)), TypeError, E("len() of a 0-d tensor")),
    (
        "item_of_many",
        lambda lib: mk(lib).item(),
        RuntimeError,
        E("a Tensor with 6 elements cannot be converted to Scalar"),
    ),
    (
        "numpy_requires_grad",
        lambda lib: mk(lib).numpy(),
        RuntimeError,
        E("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    ),
    (
        "to_bogus_device",
        lambda lib: mk(lib).to("bogus"),
        RuntimeError,
        E("device type at start of device string: bogus"),
    ),
    (
        "to_cuda_on_a_cpu_build",
        lambda lib: mk(lib).to("cuda"),
        AssertionError,
        E("Torch not compiled with CUDA enabled"),
    ),
    # --- reductions
    (
        "sum_bad_dim",
        lambda lib: mk(lib).sum(dim=3),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    ),
    (
        "sum_str_dim",
        lambda lib: mk(lib).sum(dim="a"),
        TypeError,
        E("sum() received an invalid combination of arguments - got (dim=str, )"),
    ),
    (
        "mean_int",
        lambda lib: lib.ones(2, dtype=lib.int64).mean(),
        RuntimeError,
        E(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"
        ),
    ),
    (
        "max_bad_dim",
        lambda lib: mk(lib).max(dim=5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ),
    (
        "min_bad_dim",
        lambda lib: mk(lib).min(dim=-4),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got -4)"),
    ),
    (
        "max_of_empty",
        lambda lib: lib.ones(0).max(),
        RuntimeError,
        E("max(): Expected reduction dim to be specified for input.numel() == 0."),
    ),
    (
        "softmax_bad_dim",
        lambda lib: mk(lib).softmax(5),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
    ),
    (
        "log_softmax_bad_dim",
        lambda lib: mk(lib).log_softmax(-3),
        IndexError,
        E("Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    ),
    # --- arithmetic and other ops
    (
        "add_shapes",
        lambda lib: mk(lib) + lib.ones(2),
        RuntimeError,
        E("The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    ),
    (
        "div_shapes",
        lambda lib: mk(lib) / lib.ones(4),
        RuntimeError,
        E("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ),
    ("add_str", lambda lib: mk(lib) + "x", TypeError, r"unsupported operand type\(s\) for \+: '.*Tensor' and 'str'"),
    (
        "mul_none",
        lambda lib: mk(lib) * None,
        TypeError,
        r"unsupported operand type\(s\) for \*: '.*Tensor' and 'NoneType'",
    ),
    (
        "pow_str",
        lambda lib: mk(lib) ** "x",
        TypeError,
        r"unsupported operand type\(s\) for \*\* or pow\(\): '.*Tensor' and 'str'",
    ),
    (
        "add_function_str",
        lambda lib: lib.add(mk(lib), "x"),
        TypeError,
        E("add(): argument 'other' (position 2) must be Tensor, not str"),
    ),
    (
        "mul_function_list",
        lambda lib: lib.mul(mk(lib), [1, 2]),
        TypeError,
        E("mul(): argument 'other' (position 2) must be Tensor, not list"),
    ),
    (
        "matmul_shapes",
        lambda lib: mk(lib) @ mk(lib),
        RuntimeError,
        E("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ),
    (
        "matmul_0d",
        lambda lib: lib.tensor(1.0) @ lib.ones(2),
        RuntimeError,
        E("both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    ),
    ("mm_1d", lambda lib: lib.mm(lib.ones(2), lib.ones(2)), RuntimeError, E("self must be a matrix")),
    (
        "mm_shapes",
        lambda lib: lib.mm(lib.ones(2, 3), lib.ones(2, 3)),
        RuntimeError,
        E("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ),
    (
        "mm_dtypes",
        lambda lib: lib.mm(lib.ones(2, 2), lib.ones(2, 2, dtype=lib.float64)),
        RuntimeError,
        E("expected m1 and m2 to have the same dtype, but got: float != double"),
    ),
    ("cat_empty", lambda lib: lib.cat([]), ValueError, E("torch.cat(): expected a non-empty list of Tensors")),
    (
        "cat_shapes",
        lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 2)]),
        RuntimeError,
        E(
            "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the list."
        ),
    ),
    (
        "cat_bad_dim",
        lambda lib: lib.cat([lib.ones(2), lib.ones(2)], dim=3),
        IndexError,
        E("Dimension out of range (expected to be in range of [-1, 0], but got 3)"),
    ),
    (
        "cat_of_ints",
        lambda lib: lib.cat([1, 2]),
        TypeError,
        E("expected Tensor as element 0 in argument 0, but got int"),
    ),
    (
        "stack_shapes",
        lambda lib: lib.stack([lib.ones(2, 3), lib.ones(2, 2)]),
        RuntimeError,
        E("stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 2] at entry 1"),
    ),
    ("stack_empty", lambda lib: lib.stack([]), RuntimeError, E("stack expects a non-empty TensorList")),
    (
        "where_float_condition",
        lambda lib: lib.where(lib.ones(2), lib.ones(2), lib.ones(2)),
        RuntimeError,
        E("where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    ),
    (
        "where_shapes",
        lambda lib: lib.where(lib.tensor([True, False]), lib.ones(3), lib.ones(3)),
        RuntimeError,
        E("The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    ),
    (
        "clamp_without_bounds",
        lambda lib: mk(lib).clamp(),
        RuntimeError,
        E("torch.clamp: At least one of 'min' or 'max' must not be None"),
    ),
    # --- in-place
    (
        "inplace_on_leaf",
        lambda lib: mk(lib).add_(1),
        RuntimeError,
        E("a leaf Variable that requires grad is being used in an in-place operation."),
    ),
    (
        "augmented_on_leaf",
        lambda lib: mk(lib).__iadd__(1),
        RuntimeError,
        E("a leaf Variable that requires grad is being used in an in-place operation."),
    ),
    (
        "inplace_on_view_of_leaf",
        lambda lib: mk(lib)[0].mul_(2),
        RuntimeError,
        E("a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ),
    (
        "setitem_on_leaf",
        lambda lib: mk(lib).__setitem__(0, 1.0),
        RuntimeError,
        E("a view of a leaf Variable that requires grad is being used in an in-place operation."),
    ),
    (
        "inplace_float_into_int",
        lambda lib: lib.ones(2, dtype=lib.int64).add_(1.5),
        RuntimeError,
        E("result type Float can't be cast to the desired output type Long"),
    ),
    (
        "inplace_broadcasts_self",
        lambda lib: lib.ones(3).add_(lib.ones(2, 3)),
        RuntimeError,
        E("output with shape [3] doesn't match the broadcast shape [2, 3]"),
    ),
    (
        "inplace_on_expanded",
        lambda lib: lib.ones(1, 3).expand(3, 3).add_(1),
        RuntimeError,
        E(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "inplace_partial_overlap",
        lambda lib: (lambda x: x[1:].add_(x[:-1]))(lib.arange(6.0)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "inplace_overlap_with_alpha",
        lambda lib: (lambda x: x[1:].sub_(x[:-1], alpha=2))(lib.arange(6.0)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "inplace_reads_own_element",
        lambda lib: (lambda x: x.mul_(x[0]))(lib.arange(6.0)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "inplace_reads_own_row",
        lambda lib: (lambda x: x.div_(x[0]))(lib.arange(1.0, 7.0).reshape(2, 3)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "inplace_reads_own_transpose",
        lambda lib: (lambda x: x.add_(x.t()))(lib.arange(4.0).reshape(2, 2)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "copy_partial_overlap",
        lambda lib: (lambda x: x[:3].copy_(x[1:4]))(lib.arange(6.0)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "copy_from_own_transpose",
        lambda lib: (lambda x: x.copy_(x.t()))(lib.arange(4.0).reshape(2, 2)),
        RuntimeError,
        E(
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
        ),
    ),
    (
        "copy_shapes",
        lambda lib: lib.ones(3).copy_(lib.ones(2)),
        RuntimeError,
        E("The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ),
    (
        "setitem_shapes",
        lambda lib: lib.ones(2, 3).__setitem__(0, lib.ones(2)),
        RuntimeError,
        E(
            "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [2]"
        ),
    ),
    (
        "fill_with_1d_tensor",
        lambda lib: lib.ones(3).fill_(lib.ones(2)),
        RuntimeError,
        E("fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."),
    ),
    (
        "clamp__without_bounds",
        lambda lib: lib.ones(3).clamp_(),
        RuntimeError,
        E("torch.clamp: At least one of 'min' or 'max' must not be None"),
    ),
    (
        "detach__of_view",
        lambda lib: nonleaf(lib)[0].detach_(),
        RuntimeError,
        E("Can't detach views in-place. Use detach() instead."),
    ),
    # --- autograd attributes of tensors
    (
        "requires_grad__int",
        lambda lib: lib.ones(2, dtype=lib.int64).requires_grad_(),
        RuntimeError,
        E("only Tensors of floating point dtype can require gradients"),
    ),
    (
        "requires_grad_of_non_leaf",
        lambda lib: setattr(nonleaf(lib), "requires_grad", False),
        RuntimeError,
        E(
            "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
        ),
    ),
    (
        "requires_grad_str",
        lambda lib: setattr(mk(lib), "requires_grad", "yes"),
        RuntimeError,
        E("requires_grad must be a bool"),
    ),
    (
        "grad_wrong_shape",
        set_grad(lambda lib: lib.ones(3)),
        RuntimeError,
        E(
            "attempting to assign a gradient of size '[3]' to a tensor of size '[2, 3]'. Please ensure that the gradient and the tensor are the same size"
        ),
    ),
    (
        "grad_wrong_dtype",
        set_grad(lambda lib: lib.ones(2, 3, dtype=lib.float64)),
        RuntimeError,
        E("attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'."),
    ),
    (
        "grad_not_a_tensor",
        set_grad(lambda lib: 3),
        TypeError,
        E("assigned grad expected to be a Tensor or None but got grad of type int"),
    ),
    (
        "grad_is_itself",
        lambda lib: (lambda a: setattr(a, "grad", a))(mk(lib)),
        RuntimeError,
        E("can't assign Variable as its own grad"),
    ),
    (
        "data_not_a_tensor",
        lambda lib: setattr(mk(lib), "data", 3),
        TypeError,
        E("Variable data has to be a tensor, but got int"),
    ),
    (
        "grad_fn_is_read_only",
        lambda lib: setattr(nonleaf(lib), "grad_fn", None),
        AttributeError,
        r"attribute 'grad_fn' of '.*' objects is not writable",
    ),
    (
        "is_leaf_is_read_only",
        lambda lib: setattr(nonleaf(lib), "is_leaf", True),
        AttributeError,
        r"attribute 'is_leaf' of '.*' objects is not writable",
    ),
    (
        "register_hook_without_grad",
        lambda lib: lib.ones(2).register_hook(lambda g: g),
        RuntimeError,
        E("cannot register a hook on a tensor that doesn't require gradient"),
    ),
    (
        "post_accumulate_hook_on_non_leaf",
        lambda lib: nonleaf(lib).register_post_accumulate_grad_hook(lambda p: None),
        RuntimeError,
        E("post accumulate grad hooks cannot be registered on non-leaf tensors"),
    ),
    (
        "post_accumulate_hook_without_grad",
        lambda lib: lib.ones(2).register_post_accumulate_grad_hook(lambda p: None),
        RuntimeError,
        E("cannot register a hook on a tensor that doesn't require gradient"),
    ),
    (
        "retain_grad_without_grad",
        lambda lib: lib.ones(2).retain_grad(),
        RuntimeError,
        E("can't retain_grad on Tensor that has requires_grad=False"),
    ),
    # --- hooks that are not callable or return the wrong thing
    (
        "tensor_hook_not_callable",
        hook_run(lambda lib, y: y.register_hook(3)),
        TypeError,
        E("'int' object is not callable"),
    ),
    (
        "node_hook_not_callable",
        hook_run(lambda lib, y: y.grad_fn.register_hook(3)),
        TypeError,
        E("'int' object is not callable"),
    ),
    (
        "node_prehook_not_callable",
        hook_run(lambda lib, y: y.grad_fn.register_prehook(3)),
        TypeError,
        E("'int' object is not callable"),
    ),
    (
        "tensor_hook_returns_str",
        hook_run(lambda lib, y: y.register_hook(lambda g: "x")),
        TypeError,
        E("expected Variable, but hook returned 'str'"),
    ),
    (
        "tensor_hook_changes_size",
        hook_run(lambda lib, y: y.register_hook(lambda g: lib.ones(5))),
        RuntimeError,
        E("hook '<lambda>' has changed the size of value"),
    ),
    (
        "node_prehook_returns_int",
        hook_run(lambda lib, y: y.grad_fn.register_prehook(lambda go: 3)),
        TypeError,
        E("expected tuple, but hook returned 'int'"),
    ),
    (
        "node_posthook_returns_int",
        hook_run(lambda lib, y: y.grad_fn.register_hook(lambda gi, go: 3)),
        TypeError,
        E("expected tuple, but hook returned 'int'"),
    ),
    (
        "node_prehook_returns_too_many",
        hook_run(lambda lib, y: y.grad_fn.register_prehook(lambda go: (go[0], go[0]))),
        RuntimeError,
        E("hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)"),
    ),
    (
        "node_posthook_fills_a_none_gradient",
        hook_run(lambda lib, y: y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))),
        RuntimeError,
        E("can't replace a None gradient with a non-None value"),
    ),
    (
        "post_accumulate_hook_returns_a_value",
        lambda lib: (lambda a: (a.register_post_accumulate_grad_hook(lambda p: 5), (a * 2).sum().backward()))(mk(lib)),
        TypeError,
        E("expected Variable, but hook returned 'int'"),
    ),
    # --- engine entry points
    (
        "backward_twice",
        backward_twice,
        RuntimeError,
        E(
            "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed)."
        ),
    ),
    (
        "saved_tensor_after_free",
        saved_after_free,
        RuntimeError,
        E(
            "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed)."
        ),
    ),
    (
        "backward_non_scalar",
        lambda lib: nonleaf(lib).backward(),
        RuntimeError,
        E("grad can be implicitly created only for scalar outputs"),
    ),
    (
        "grad_non_scalar",
        lambda lib: (lambda a: lib.autograd.grad(a * 2, a))(mk(lib)),
        RuntimeError,
        E("grad can be implicitly created only for scalar outputs"),
    ),
    (
        "backward_without_grad_fn",
        lambda lib: lib.ones(2).sum().backward(),
        RuntimeError,
        E("element 0 of tensors does not require grad and does not have a grad_fn"),
    ),
    (
        "backward_second_without_grad_fn",
        lambda lib: lib.autograd.backward([mk(lib).sum(), lib.ones(1).sum()]),
        RuntimeError,
        E("element 1 of tensors does not require grad and does not have a grad_fn"),
    ),
    (
        "grad_of_input_without_grad",
        lambda lib: lib.autograd.grad((mk(lib) * 2).sum(), lib.ones(2)),
        RuntimeError,
        E("One of the differentiated Tensors does not require grad"),
    ),
    (
        "grad_of_unused_input",
        lambda lib: lib.autograd.grad((mk(lib) * 2).sum(), mk(lib)),
        RuntimeError,
        E(
            "The differentiated Tensor at index 0 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
        ),
    ),
    (
        "grad_materialize_with_allow_unused_false",
        lambda lib: (lambda a: lib.autograd.grad((a * 2).sum(), a, allow_unused=False, materialize_grads=True))(
            mk(lib)
        ),
        ValueError,
        E("Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."),
    ),
    (
        "grad_outputs_wrong_shape",
        lambda lib: (lambda a: lib.autograd.grad((a * 2).sum(), a, grad_outputs=lib.ones(3)))(mk(lib)),
        RuntimeError,
        E(
            "Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a shape of torch.Size([])."
        ),
    ),
    (
        "grad_outputs_int",
        lambda lib: (lambda a: lib.autograd.grad((a * 2).sum(), a, grad_outputs=1))(mk(lib)),
        TypeError,
        E("'int' object is not iterable"),
    ),
    (
        "backward_gradient_wrong_shape",
        lambda lib: nonleaf(lib).backward(lib.ones(3)),
        RuntimeError,
        E(
            "Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a shape of torch.Size([2, 3])."
        ),
    ),
    (
        "backward_gradient_str",
        lambda lib: nonleaf(lib).backward("x"),
        TypeError,
        E("gradients can be either Tensors or None, but got str"),
    ),
    (
        "backward_count_mismatch",
        lambda lib: lib.autograd.backward([mk(lib).sum(), mk(lib).sum()], grad_tensors=[lib.tensor(1.0)]),
        RuntimeError,
        E("got 2 tensors and 1 gradients"),
    ),
    (
        "backward_empty_inputs",
        lambda lib: mk(lib).sum().backward(inputs=[]),
        RuntimeError,
        E("`inputs` argument to `backward()` cannot be empty."),
    ),
    (
        "grad_empty_inputs",
        lambda lib: lib.autograd.grad(mk(lib).sum(), []),
        RuntimeError,
        E("`inputs` argument to `grad()` cannot be empty."),
    ),
    ("backward_of_an_int", lambda lib: lib.autograd.backward(3), TypeError, E("'int' object is not iterable")),
    (
        "grad_input_str",
        lambda lib: (lambda a: lib.autograd.grad(a.sum(), "a"))(mk(lib)),
        RuntimeError,
        E("all inputs have to be Tensors or GradientEdges, but got str"),
    ),
    (
        "backward_inputs_str",
        lambda lib: mk(lib).sum().backward(inputs=["a"]),
        RuntimeError,
        E("all inputs have to be Tensors or GradientEdges, but got str"),
    ),
    (
        "backward_inputs_without_grad",
        lambda lib: mk(lib).sum().backward(inputs=[lib.ones(2)]),
        RuntimeError,
        E("can't retain_grad on Tensor that has requires_grad=False"),
    ),
    (
        "backward_retain_graph_str",
        lambda lib: (mk(lib) * 2).sum().backward(retain_graph="yes"),
        TypeError,
        E("'str' object cannot be interpreted as an integer"),
    ),
    (
        "grad_create_graph_str",
        lambda lib: (lambda a: lib.autograd.grad((a * 2).sum(), a, create_graph="x"))(mk(lib)),
        TypeError,
        E("'str' object cannot be interpreted as an integer"),
    ),
    (
        "gradient_edge_of_none",
        gradient_edge_none,
        RuntimeError,
        E("GradientEdge's first object must be an autograd.graph.Node but got NoneType"),
    ),
    # --- torch.autograd.graph
    (
        "multi_grad_hook_bogus_mode",
        multi_grad_hook(lambda lib: (mk(lib),), mode="bogus"),
        ValueError,
        E("Expects mode to be one of ('all', 'any') but got bogus"),
    ),
    (
        "multi_grad_hook_without_grad",
        multi_grad_hook(lambda lib: (lib.ones(2),)),
        AssertionError,
        E("Expected gradient function to be set"),
    ),
    (
        "multi_grad_hook_of_ints",
        multi_grad_hook(lambda lib: (1, 2)),
        AttributeError,
        E("'int' object has no attribute 'requires_grad'"),
    ),
    ("multi_grad_hook_fn_not_callable", multi_not_callable, TypeError, E("'int' object is not callable")),
    (
        "get_gradient_edge_without_grad",
        lambda lib: lib.autograd.graph.get_gradient_edge(lib.ones(2)),
        RuntimeError,
        E("It is not possible to get the gradient edge for a Tensor that does not require gradients"),
    ),
    (
        "get_gradient_edge_of_str",
        lambda lib: lib.autograd.graph.get_gradient_edge("x"),
        AttributeError,
        E("'str' object has no attribute 'requires_grad'"),
    ),
    (
        "increment_version_of_str",
        lambda lib: lib.autograd.graph.increment_version("x"),
        RuntimeError,
        E("increment_version expects each element of the iterable to be a tensor"),
    ),
    (
        "increment_version_of_int",
        lambda lib: lib.autograd.graph.increment_version(3),
        RuntimeError,
        E("increment_version expect a Iterable[Tensor] as input"),
    ),
    ("node_is_abstract", lambda lib: lib.autograd.graph.Node(), TypeError, E("Can't instantiate abstract class Node")),
    (
        "node_metadata_is_read_only",
        lambda lib: setattr(nonleaf(lib).grad_fn, "metadata", {}),
        AttributeError,
        E("attribute 'metadata' of 'MulBackward0' objects is not writable"),
    ),
    (
        "node_next_functions_is_read_only",
        lambda lib: setattr(nonleaf(lib).grad_fn, "next_functions", ()),
        AttributeError,
        E("attribute 'next_functions' of 'MulBackward0' objects is not writable"),
    ),
    (
        "allow_mutation_nested",
        allow_mutation_nested,
        RuntimeError,
        E("allow_mutation_on_saved_tensors contexts cannot be nested"),
    ),
    (
        "allow_mutation_backward_outside",
        allow_mutation_outside,
        AssertionError,
        E("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"),
    ),
    ("saved_tensors_hooks_inside_disable", hooks_inside_disabled, RuntimeError, E("no hooks here")),
    ("disable_nested_restores_outer_message", disabled_nested_restores_outer, RuntimeError, E("outer")),
    (
        "saved_tensors_hooks_pack_not_callable",
        enter_saved_tensors_hooks(3, lambda x: x),
        TypeError,
        E("_push_saved_tensors_default_hooks(): incompatible function arguments."),
    ),
    (
        "saved_tensors_hooks_unpack_not_callable",
        enter_saved_tensors_hooks(lambda x: x, "u"),
        TypeError,
        E("_push_saved_tensors_default_hooks(): incompatible function arguments."),
    ),
    ("saved_tensors_hooks_exit_twice", saved_tensors_hooks_exit_twice, RuntimeError, E("INTERNAL ASSERT FAILED")),
    (
        "raw_saved_register_hooks_twice",
        raw_saved_register((lambda x: x, lambda x: x), (lambda x: x, lambda x: x)),
        RuntimeError,
        E(
            "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one pair of hooks is allowed at a time."
        ),
    ),
    (
        "raw_saved_register_hooks_not_callable",
        raw_saved_register((1, lambda x: x)),
        TypeError,
        E("register_hooks(): incompatible function arguments."),
    ),
    (
        "unpack_hook_returns_str",
        unpack_returns_str,
        TypeError,
        E("Output of saved tensor unpack_hook expected to be a Tensor but got result of type str"),
    ),
    (
        "queue_callback_outside_backward",
        lambda lib: lib.autograd.Variable._execution_engine.queue_callback(lambda: None),
        RuntimeError,
        E("Final callbacks can only be installed during backward pass."),
    ),
    ("queue_callback_not_callable", queue_non_callable, TypeError, E("'int' object is not callable")),
    (
        "will_engine_execute_node_outside_backward",
        lambda lib: lib._C._will_engine_execute_node(nonleaf(lib).grad_fn),
        RuntimeError,
        E("_get_should_execute_nodes should only be called during the backward pass"),
    ),
    (
        "will_engine_execute_node_of_int",
        will_execute_non_node,
        RuntimeError,
        E("_will_engine_execute_node expects an grad_fn, but got int"),
    ),
    # --- grad mode and anomaly mode
    (
        "set_grad_enabled_str",
        lambda lib: lib.set_grad_enabled("yes"),
        TypeError,
        E("set_grad_enabled(): argument 'enabled' (position 1) must be bool, not str"),
    ),
    (
        "set_grad_enabled_without_argument",
        lambda lib: lib.set_grad_enabled(),
        TypeError,
        E("missing 1 required positional argument: 'mode'"),
    ),
    (
        "set_detect_anomaly_without_argument",
        lambda lib: lib.autograd.set_detect_anomaly(),
        TypeError,
        E("missing 1 required positional argument: 'mode'"),
    ),
    (
        "set_detect_anomaly_str",
        lambda lib: lib.autograd.set_detect_anomaly("x"),
        TypeError,
        E("set_anomaly_enabled(): argument 'enabled' (position 1) must be bool, not str"),
    ),
    # --- custom Function
    (
        "function_wrong_number_of_gradients",
        fn_wrong_count,
        RuntimeError,
        E("function WrongCountBackward returned an incorrect number of gradients (expected 2, got 1)"),
    ),
    (
        "function_too_many_gradients",
        lambda lib: function(lib, backward=lambda ctx, g: (g, g, g)).apply(mk(lib)).sum().backward(),
        RuntimeError,
        E("function FBackward returned an incorrect number of gradients (expected 1, got 3)"),
    ),
    (
        "function_wrong_gradient_shape",
        fn_wrong_shape,
        RuntimeError,
        E(
            "Function WrongShapeBackward returned an invalid gradient at index 0 - got [5] but expected shape compatible with [2, 3]"
        ),
    ),
    (
        "function_gradient_not_a_tensor",
        lambda lib: function(lib, backward=lambda ctx, g: 3).apply(mk(lib)).sum().backward(),
        RuntimeError,
        E("expected Variable or None (got int)"),
    ),
    (
        "function_save_for_backward_int",
        fn_forward_only(lambda ctx, x: (ctx.save_for_backward(3), x.clone())[1]),
        TypeError,
        E("save_for_backward can only save variables, but argument 0 is of type int"),
    ),
    (
        "function_mark_non_differentiable_int",
        fn_forward_only(lambda ctx, x: (ctx.mark_non_differentiable(3), x.clone())[1]),
        RuntimeError,
        E("mark_non_differentiable only accepts variable arguments, but got "),
    ),
    (
        "function_dirty_not_returned",
        fn_dirty_not_returned,
        RuntimeError,
        E(
            "Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function."
        ),
    ),
    (
        "function_without_backward",
        lambda lib: function(lib, backward=False).apply(mk(lib)).sum().backward(),
        NotImplementedError,
        E(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD."
        ),
    ),
    (
        "function_without_forward",
        fn_no_forward,
        NotImplementedError,
        E("You must implement the forward function for custom autograd.Function."),
    ),
    (
        "function_legacy_call",
        fn_legacy_call,
        RuntimeError,
        E("Legacy autograd function with non-static forward method is deprecated."),
    ),
    (
        "function_saved_tensors_after_backward",
        fn_saved_tensors_after_backward,
        RuntimeError,
        E(
            "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed)."
        ),
    ),
]


class _no_warning_filter:
    """Some calls warn in torch too (e.g. deprecations); warnings are not the subject
    here, and ``-W error`` would turn them into the exception under test."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


# Known npgrad gaps: torch raises another type or message for these inputs (open:
# see README "Guarantees"). Strict xfail under npgrad, so a fix must remove the id.
NPGRAD_BAD_INPUT_GAPS: frozenset[str] = frozenset()


def _gap(case_id: str) -> list[Any]:
    if case_id in NPGRAD_BAD_INPUT_GAPS and not AGAINST_TORCH:
        return [pytest.mark.xfail(strict=True, reason="known npgrad gap: error type or message differs")]
    return []


@pytest.mark.parametrize(
    "fn, exc_type, pattern",
    [pytest.param(f, t, p, id=i, marks=_gap(i)) for i, f, t, p in ERRORS],
)
def test_bad_input_raises_torchs_exception(ng, fn, exc_type, pattern):
    with _no_warning_filter():
        with pytest.raises(Exception) as info:
            fn(ng)
    assert type(info.value) is exc_type, f"{type(info.value).__name__}: {info.value}"
    assert re.search(pattern, str(info.value)), str(info.value)
    assert ng.is_grad_enabled()
    assert ng._C._current_graph_task_id() == -1


# ----------------------------------------------------------------------------------
# Misuse that torch accepts without an error: the same must hold, with the same state.


def exit_twice(factory):
    def run(lib):
        cm = factory(lib)
        cm.__enter__()
        cm.__exit__(None, None, None)
        cm.__exit__(None, None, None)
        return lib.is_grad_enabled()

    return run


def reenter_saved_tensors_hooks(lib):
    calls = []
    cm = lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t, lambda t: t)
    a = mk(lib)
    with cm:
        with cm:
            y = (a * a).sum()
    y.backward()
    return len(calls), to_np(a.grad).tolist()


def remove_handle_twice(lib):
    a = mk(lib)
    h = a.register_hook(lambda g: g * 100)
    h.remove()
    h.remove()
    with h:
        pass
    (a * 1).sum().backward()
    return to_np(a.grad).tolist()


ACCEPTED = [
    ("no_grad_exit_twice", exit_twice(lambda lib: lib.no_grad()), True),
    ("enable_grad_exit_twice", exit_twice(lambda lib: lib.enable_grad()), True),
    ("set_grad_enabled_exit_twice", exit_twice(lambda lib: lib.set_grad_enabled(False)), True),
    (
        "disable_saved_tensors_hooks_exit_twice",
        exit_twice(lambda lib: lib.autograd.graph.disable_saved_tensors_hooks("m")),
        True,
    ),
    ("set_detect_anomaly_exit_twice", exit_twice(lambda lib: lib.autograd.set_detect_anomaly(False)), True),
    ("allow_mutation_exit_twice", exit_twice(lambda lib: lib.autograd.graph.allow_mutation_on_saved_tensors()), True),
    ("saved_tensors_hooks_entered_twice", reenter_saved_tensors_hooks, (2, [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]])),
    ("removable_handle_removed_twice", remove_handle_twice, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]),
    (
        "multi_grad_hook_of_no_tensors",
        lambda lib: type(lib.autograd.graph.register_multi_grad_hook((), lambda g: None)).__name__,
        "_MultiHandle",
    ),
    (
        "multi_grad_hook_any_without_grad",
        lambda lib: lib.autograd.graph.register_multi_grad_hook((lib.ones(2),), lambda g: None, mode="any").remove(),
        None,
    ),
    ("retain_grad_on_leaf", lambda lib: (mk(lib).retain_grad(), "ok")[1], "ok"),
    (
        "data_of_another_shape",
        lambda lib: (lambda a: (setattr(a, "data", lib.ones(5)), tuple(a.shape))[1])(mk(lib)),
        (5,),
    ),
]


@pytest.mark.parametrize("fn, expected", [pytest.param(f, e, id=i) for i, f, e in ACCEPTED])
def test_misuse_torch_accepts(ng, fn, expected):
    assert fn(ng) == expected
    assert ng.is_grad_enabled()
    assert not ng.is_anomaly_enabled()
