"""Views and in-place ops through views: ``_base`` and the shared version counter of
every view op, history rebase of the base (CopySlices) and the regenerated
``AsStridedBackward0`` of views, the errors of check_inplace / handle_view_on_rebase,
and saved-tensor version checks that see writes through any alias."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import op_specs
from oracle import (
    assert_close,
    assert_same_error,
    from_np,
    graph_desc,
    run_both,
    to_np,
)

VIEW_OPS = [pytest.param(op, id=op.id) for op in op_specs.VIEWS]
# every view op except the expanding ones can be written through
WRITABLE_VIEW_OPS = [pytest.param(op, id=op.id) for op in op_specs.VIEWS if not op.id.startswith("expand")]

DATA = np.array([[0.5, -1.5, 2.0], [-0.3, 0.8, 1.2]])
WEIGHTS = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_VIEW = "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
NO_GRAD_VIEW_INDIRECT = (
    "A view was created in no_grad mode and its base or another view of its base has "
    "been modified inplace with grad mode enabled."
)
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)
CUSTOM_VIEW = (
    "is a view and is being modified inplace. This view was created inside a custom "
    "Function (or because an input was returned as-is)"
)


def _root_and_others(lib: Any, op: op_specs.Op, requires_grad: bool):
    """The op's inputs: the viewed tensor (the root) and the shape-only ones."""
    tensors = op.tensors(lib, requires_grad=False)
    root = tensors[0]
    if requires_grad:
        root.requires_grad_()
    return root, tensors[1:]


# ----------------------------------------------------------------------------------
# _base and the shared version counter


@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "grad"])
@pytest.mark.parametrize("op", VIEW_OPS)
def test_view_base_is_the_viewed_tensor(ng, op, requires_grad):
    root, others = _root_and_others(ng, op, requires_grad)
    view = op.fn(ng, root, *others)
    assert view._base is root
    assert view.requires_grad == requires_grad
    assert view.data_ptr() >= root.data_ptr()  # same storage, maybe an offset
    assert root._base is None


@pytest.mark.parametrize("op", VIEW_OPS)
def test_view_of_a_view_points_at_the_root(ng, op):
    root, others = _root_and_others(ng, op, True)
    inner = root.view(tuple(root.shape))  # a view with the same shape
    assert inner._base is root
    view = op.fn(ng, inner, *others)
    assert view._base is root
    outer = view.unsqueeze(0)
    assert outer._base is root


@pytest.mark.parametrize("op", VIEW_OPS)
def test_inplace_on_the_base_bumps_the_view_version(ng, op):
    root, others = _root_and_others(ng, op, False)
    view = op.fn(ng, root, *others)
    assert view._version == root._version
    before = view._version
    root.mul_(2.0)
    assert root._version == before + 1
    assert view._version == before + 1
    # the view sees the new values
    expected = op.fn(ng, from_np(ng, to_np(root)), *others)
    assert_close(view, expected, rtol=0, atol=0)


@pytest.mark.parametrize("op", WRITABLE_VIEW_OPS)
def test_inplace_on_the_view_bumps_the_base_version(ng, op):
    root, others = _root_and_others(ng, op, False)
    view = op.fn(ng, root, *others)
    before = root._version
    view.mul_(3.0)
    assert view._version == before + 1
    assert root._version == before + 1
    sibling = root.view(-1)
    sibling.add_(1.0)
    assert view._version == root._version == before + 2


@pytest.mark.parametrize("op", WRITABLE_VIEW_OPS)
def test_inplace_on_the_view_writes_the_base_values(ng, op):
    arrays = op.arrays()
    root, others = _root_and_others(ng, op, False)
    view = op.fn(ng, root, *others)
    view.mul_(3.0)
    # the written region of the base is tripled, the rest unchanged
    marker = from_np(ng, np.ones_like(arrays[0]))
    op.fn(ng, marker, *others).mul_(3.0)
    assert_close(root, arrays[0] * to_np(marker), rtol=1e-15)


def test_detach_shares_the_counter_but_is_not_a_view(ng):
    b = from_np(ng, DATA, requires_grad=True).clone()
    d = b.detach()
    assert d._base is None and not d.requires_grad
    b.add_(1.0)
    assert d._version == b._version == 1
    d.add_(1.0)
    assert b._version == 2
    assert_close(b, DATA + 2)


@pytest.mark.parametrize(
    "expand",
    [
        pytest.param(lambda lib, t: t[0:1].expand(2, 3), id="expand"),
        pytest.param(lambda lib, t: t[0].expand(2, 3), id="expand_new_dim"),
        pytest.param(lambda lib, t: t.expand(2, 2, 3), id="expand_leading"),
    ],
)
@pytest.mark.parametrize(
    "inplace",
    [
        pytest.param(lambda lib, t: t.add_(1.0), id="add_"),
        pytest.param(lambda lib, t: t.mul_(2.0), id="mul_"),
        pytest.param(lambda lib, t: t.sin_(), id="sin_"),
    ],
)
@pytest.mark.parametrize("grad", [False, True], ids=["plain", "grad"])
def test_inplace_on_an_expanded_view_is_an_error(ng, expand, inplace, grad):
    def fail(lib):
        base = from_np(lib, DATA, requires_grad=grad)
        if grad:
            base = base.clone()
        inplace(lib, expand(lib, base))

    err = assert_same_error(fail, OVERLAP)
    assert type(err) is RuntimeError


def test_fill_and_zero_on_an_expanded_view_are_allowed(ng):
    base = ng.zeros(1, 3)
    view = base.expand(2, 3)
    view.fill_(2.0)
    assert to_np(base).tolist() == [[2.0, 2.0, 2.0]]
    view.zero_()
    assert to_np(base).tolist() == [[0.0, 0.0, 0.0]]
    assert base._version == 2


# ----------------------------------------------------------------------------------
# In-place through a view of a non-leaf that requires grad


def _setitem(t, key, value):
    t[key] = value


@dataclass(frozen=True)
class ViewInplace:
    id: str
    fn: Callable[[Any, Any, Any], Any]  # fn(lib, base, extra)
    extra: tuple[int, ...] | None = None  # shape of a grad-requiring operand
    copy_slices: bool = True  # whether the base's final grad_fn is CopySlices


# fmt: off
VIEW_INPLACE = [
    ViewInplace("select_mul_", lambda lib, b, y: b[0].mul_(2)),
    ViewInplace("view_sin_", lambda lib, b, y: b.view(-1).sin_()),
    ViewInplace("slice_add_tensor", lambda lib, b, y: b[1:].add_(y), (1, 3)),
    ViewInplace("setitem_scalar", lambda lib, b, y: _setitem(b, 0, 5.0)),
    ViewInplace("setitem_tensor", lambda lib, b, y: _setitem(b, 0, y), (3,)),
    ViewInplace("setitem_slice_tensor", lambda lib, b, y: _setitem(b, (slice(None), slice(1, None)), y), (2, 2)),
    # b[:] indexes nothing away: torch copies into b itself (CopyBackwards)
    ViewInplace("setitem_full_slice", lambda lib, b, y: _setitem(b, slice(None), y), (3,), False),
    ViewInplace("t_mul_", lambda lib, b, y: b.t().mul_(2)),
    ViewInplace("t_mul_tensor", lambda lib, b, y: b.t().mul_(y), (3, 2)),
    ViewInplace("transpose_add_", lambda lib, b, y: b.transpose(0, 1).add_(y), (3, 1)),
    ViewInplace("permute_div_", lambda lib, b, y: b.permute(1, 0).div_(y), (3, 2)),
    ViewInplace("unsqueeze_mul_", lambda lib, b, y: b.unsqueeze(0).mul_(3)),
    ViewInplace("unsqueeze_squeeze_sub_", lambda lib, b, y: b.unsqueeze(1).squeeze(1).sub_(y), (3,)),
    ViewInplace("step_slice_mul_tensor", lambda lib, b, y: b[:, ::2].mul_(y), (2, 2)),
    ViewInplace("none_ellipsis_sub_", lambda lib, b, y: b[None, ..., 1].sub_(1)),
    ViewInplace("view_of_view_div_", lambda lib, b, y: b[1][1:].div_(y), (2,)),
    ViewInplace("reshape_select_exp_", lambda lib, b, y: b.reshape(3, 2)[0].exp_()),
    ViewInplace("iadd_on_view", lambda lib, b, y: operator.iadd(b[0], y), (3,)),
    ViewInplace("imul_on_view", lambda lib, b, y: operator.imul(b[:, 1], 4.0)),
    ViewInplace("zero_", lambda lib, b, y: b[1].zero_()),
    ViewInplace("fill_", lambda lib, b, y: b[:, 0].fill_(2.0)),
    ViewInplace("copy_", lambda lib, b, y: b[0].copy_(y), (3,)),
    ViewInplace("clamp_", lambda lib, b, y: b.view(6).clamp_(min=-0.5, max=1.0)),
    ViewInplace("relu_", lambda lib, b, y: b[1].relu_()),
    ViewInplace("cos_", lambda lib, b, y: b[:, 2].cos_()),
    ViewInplace("two_views", lambda lib, b, y: (b[0].mul_(2), b[1].add_(y)), (3,)),
    ViewInplace("view_then_base", lambda lib, b, y: (b[0].mul_(2), b.mul_(y)), (2, 3), False),
    ViewInplace("base_then_view", lambda lib, b, y: (b.mul_(y), b[:, 1].sin_()), (2, 3)),
]
# fmt: on


def _operand(lib, case):
    if case.extra is None:
        return None
    rng = np.random.default_rng(len(case.id))
    return from_np(lib, rng.uniform(0.5, 1.5, case.extra), requires_grad=True)


def _run_view_inplace(lib, case):
    a = from_np(lib, DATA, requires_grad=True)
    b = a.clone()
    y = _operand(lib, case)
    version = b._version
    case.fn(lib, b, y)
    facts = (
        graph_desc(b.grad_fn),
        b.grad_fn.name(),
        b._version - version,
        b.requires_grad,
        b.is_leaf,
    )
    values = to_np(b)
    (b * from_np(lib, WEIGHTS)).sum().backward()
    grads = [to_np(a.grad)] + ([] if y is None else [to_np(y.grad)])
    return facts, values, grads


CASES = [pytest.param(case, id=case.id) for case in VIEW_INPLACE]
COPY_SLICES_CASES = [pytest.param(case, id=case.id) for case in VIEW_INPLACE if case.copy_slices]


@pytest.mark.parametrize("case", CASES)
def test_inplace_on_view_matches_torch(ng, case):
    (facts, values, grads), (t_facts, t_values, t_grads) = run_both(lambda lib: _run_view_inplace(lib, case))
    assert facts == t_facts
    np.testing.assert_allclose(values, t_values, rtol=1e-10, atol=1e-12)
    assert len(grads) == len(t_grads)
    for g, e in zip(grads, t_grads):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", COPY_SLICES_CASES)
def test_inplace_on_view_makes_the_base_copy_slices(ng, case):
    (facts, _, _) = _run_view_inplace(ng, case)
    desc, name, _, requires_grad, is_leaf = facts
    assert desc.startswith("CopySlices(")
    assert name == "torch::autograd::CopySlices"
    assert requires_grad and not is_leaf


def test_copy_slices_gradient_values(ng):
    a = from_np(ng, DATA, requires_grad=True)
    b = a.clone()
    b[0].mul_(2)
    assert type(b.grad_fn).__name__ == "CopySlices"
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert graph_desc(b.grad_fn) == "CopySlices(CloneBackward0(AccumulateGrad()), None)"
    b.sum().backward()
    assert to_np(a.grad).tolist() == [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]]


def test_full_slice_setitem_copies_into_the_tensor_itself(ng):
    a = from_np(ng, DATA, requires_grad=True)
    y = from_np(ng, np.array([7.0, 8.0, 9.0]), requires_grad=True)
    b = a.clone()
    b[:] = y
    assert type(b.grad_fn).__name__ == "CopyBackwards"
    assert b.grad_fn.name() == "torch::autograd::CopyBackwards"
    (b * from_np(ng, WEIGHTS)).sum().backward()
    assert to_np(a.grad).tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert to_np(y.grad).tolist() == [5.0, 7.0, 9.0]


def test_setitem_with_grad_requiring_value_sends_grad_to_it(ng):
    a = from_np(ng, DATA, requires_grad=True)
    y = from_np(ng, np.array([7.0, 8.0, 9.0]), requires_grad=True)
    b = a.clone()
    b[0] = y
    assert graph_desc(b.grad_fn) == ("CopySlices(CloneBackward0(AccumulateGrad()), AccumulateGrad())")
    (b * from_np(ng, WEIGHTS)).sum().backward()
    assert to_np(a.grad).tolist() == [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]]
    assert to_np(y.grad).tolist() == [1.0, 2.0, 3.0]


def test_inplace_on_view_of_tensor_without_grad_with_grad_operand(ng):
    c = ng.zeros(2, 3, dtype=ng.float64)
    y = from_np(ng, np.array([[1.0, 2.0, 3.0]]), requires_grad=True)
    c[1:].add_(y)
    assert c.requires_grad and not c.is_leaf
    assert type(c.grad_fn).__name__ == "CopySlices"
    (c * from_np(ng, WEIGHTS)).sum().backward()
    assert to_np(y.grad).tolist() == [[4.0, 5.0, 6.0]]


def _copy_slices_structure(lib):
    a = from_np(lib, DATA, requires_grad=True)
    y = from_np(lib, np.array([1.0, 2.0, 3.0]), requires_grad=True)
    out = []
    c = lib.zeros(2, 3, dtype=lib.float64)
    c[1:].add_(y)
    out.append(graph_desc(c.grad_fn))
    b = a.clone()
    b[1].add_(y)
    out.append(graph_desc(b.grad_fn))
    b = a.clone()
    b.t().mul_(2)
    out.append(graph_desc(b.grad_fn))
    return out


def test_copy_slices_edges_match_torch(ng):
    got, expected = run_both(_copy_slices_structure)
    assert got == expected


# ----------------------------------------------------------------------------------
# grad_fn of views after an in-place


def _view_grad_fns(lib):
    a = from_np(lib, DATA, requires_grad=True)
    b = a.clone()
    v = b[0]
    w = b[1]  # another view created before the in-place
    u = b.view(-1)
    before = (
        type(v.grad_fn).__name__,
        type(w.grad_fn).__name__,
        type(u.grad_fn).__name__,
    )
    v.mul_(2)
    after = tuple(
        (
            type(t.grad_fn).__name__,
            t.grad_fn.name(),
            t.grad_fn.next_functions[0][0] is b.grad_fn,
            len(t.grad_fn.next_functions),
        )
        for t in (v, w, u)
    )
    return before, after, type(b.grad_fn).__name__


def test_views_get_as_strided_backward_after_inplace(ng):
    got, expected = run_both(_view_grad_fns)
    assert got == expected
    before, after, base = got
    assert before == ("SelectBackward0", "SelectBackward0", "ViewBackward0")
    assert base == "CopySlices"
    for entry in after:
        assert entry == ("AsStridedBackward0", "AsStridedBackward0", True, 1)


@pytest.mark.parametrize(
    ("which", "expected"),
    [
        ("modified", [[2.0, 4.0, 6.0], [0.0, 0.0, 0.0]]),
        ("sibling", [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]),
        ("flat", [[2.0, 4.0, 6.0], [4.0, 5.0, 6.0]]),
    ],
)
def test_backward_through_regenerated_view(ng, which, expected):
    a = from_np(ng, DATA, requires_grad=True)
    b = a.clone()
    views = {"modified": b[0], "sibling": b[1], "flat": b.view(-1)}
    b[0].mul_(2)
    view = views[which]
    weights = WEIGHTS[0] if which != "flat" else WEIGHTS.reshape(-1)
    (view * from_np(ng, weights)).sum().backward()
    assert to_np(a.grad).tolist() == expected


def test_view_sees_base_inplace_in_its_grad_fn(ng):
    a = from_np(ng, DATA, requires_grad=True)
    b = a.clone()
    w = b[1]
    assert type(w.grad_fn).__name__ == "SelectBackward0"
    b.mul_(3)
    assert type(b.grad_fn).__name__ == "MulBackward0"
    assert type(w.grad_fn).__name__ == "AsStridedBackward0"
    assert w.grad_fn.next_functions[0][0] is b.grad_fn
    w.sum().backward()
    assert to_np(a.grad).tolist() == [[0.0, 0.0, 0.0], [3.0, 3.0, 3.0]]


def test_view_grad_fn_is_stable_without_new_inplace(ng):
    a = from_np(ng, DATA, requires_grad=True)
    b = a.clone()
    v = b[0]
    v.mul_(2)
    node = v.grad_fn
    assert v.grad_fn is node
    b[1].add_(1)  # another in-place: v's grad_fn is regenerated again
    assert v.grad_fn is not node
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is b.grad_fn


# ----------------------------------------------------------------------------------
# Errors

LEAF_VIEW_INPLACE = [
    pytest.param(lambda lib, a: a[0].mul_(2), id="select_mul_"),
    pytest.param(lambda lib, a: a.view(-1).add_(1), id="view_add_"),
    pytest.param(lambda lib, a: a.t().sin_(), id="t_sin_"),
    pytest.param(lambda lib, a: a.unsqueeze(0).zero_(), id="unsqueeze_zero_"),
    pytest.param(lambda lib, a: a[:, 1:].copy_(lib.ones(2, 2, dtype=a.dtype)), id="slice_copy_"),
    pytest.param(lambda lib, a: _setitem(a, 0, 5.0), id="setitem"),
    pytest.param(lambda lib, a: operator.iadd(a[1], 1.0), id="iadd"),
    pytest.param(lambda lib, a: a[0][1:].relu_(), id="view_of_view"),
]


@pytest.mark.parametrize("fn", LEAF_VIEW_INPLACE)
def test_inplace_on_view_of_leaf_is_an_error(ng, fn):
    a = from_np(ng, DATA, requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        fn(ng, a)
    assert VIEW_OF_LEAF in str(info.value)
    assert a._version == 0
    assert_close(a, DATA, rtol=0, atol=0)


@pytest.mark.parametrize("fn", LEAF_VIEW_INPLACE)
def test_inplace_on_view_of_leaf_error_matches_torch(ng, fn):
    assert_same_error(lambda lib: fn(lib, from_np(lib, DATA, requires_grad=True)), VIEW_OF_LEAF)


@pytest.mark.parametrize("fn", LEAF_VIEW_INPLACE)
def test_inplace_on_view_of_leaf_under_no_grad_is_allowed(ng, fn):
    a = from_np(ng, DATA, requires_grad=True)
    with ng.no_grad():
        fn(ng, a)
    assert a._version == 1
    assert a.is_leaf and a.requires_grad and a.grad_fn is None


def _no_grad_view_direct(lib):
    b = from_np(lib, DATA, requires_grad=True).clone()
    with lib.no_grad():
        v = b[0]
    v.mul_(2)


def _no_grad_view_of_view(lib):
    b = from_np(lib, DATA, requires_grad=True).clone()
    w = b[0]
    with lib.no_grad():
        v = w[1:]
    v.mul_(2)


def _no_grad_view_grad_operand(lib):
    c = lib.zeros(2, 3, dtype=lib.float64)
    with lib.no_grad():
        v = c[0]
    v.add_(from_np(lib, np.ones(3), requires_grad=True))


def _no_grad_view_indirect(lib):
    b = from_np(lib, DATA, requires_grad=True).clone()
    with lib.no_grad():
        v = b[0]
    b.mul_(2)
    _ = v.grad_fn


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        pytest.param(_no_grad_view_direct, NO_GRAD_VIEW, id="direct"),
        pytest.param(_no_grad_view_of_view, NO_GRAD_VIEW, id="view_of_view"),
        pytest.param(_no_grad_view_grad_operand, NO_GRAD_VIEW, id="grad_operand"),
        pytest.param(_no_grad_view_indirect, NO_GRAD_VIEW_INDIRECT, id="indirect"),
    ],
)
def test_view_created_in_no_grad_then_modified_with_grad(ng, fn, message):
    with pytest.raises(RuntimeError) as info:
        fn(ng)
    assert message in str(info.value)
    assert "Given that this use case is ambiguous and error-prone, it is forbidden." in str(info.value)
    assert_same_error(fn, message)


def test_view_created_in_no_grad_facts(ng):
    b = from_np(ng, DATA, requires_grad=True).clone()
    with ng.no_grad():
        v = b[0]
    assert v._base is b
    assert v.requires_grad and v.grad_fn is None
    with ng.no_grad():
        v.mul_(2)  # both under no_grad: allowed, not tracked
    assert type(b.grad_fn).__name__ == "CloneBackward0"
    assert b._version == 1


def _custom_identity(lib):
    class Identity(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return Identity


def _custom_view_modified(lib):
    b = from_np(lib, DATA, requires_grad=True).clone()
    _custom_identity(lib).apply(b).mul_(2)


def test_inplace_on_custom_function_view_is_an_error(ng):
    err = assert_same_error(_custom_view_modified, CUSTOM_VIEW)
    assert type(err) is RuntimeError
    assert "You can fix this by cloning the output of the custom Function." in str(err)


# ----------------------------------------------------------------------------------
# Saved tensors see writes through every alias


def _saved_x_write_view(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x.sin()
    x.view(-1).add_(1)
    return z


def _saved_x_setitem(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x.sin()
    x[0] = 0.0
    return z


def _saved_x_write_t(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x.cos()
    x.t().mul_(2)
    return z


def _saved_view_write_sibling(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x[0].sin()  # saves the view x[0]
    x[1].mul_(2)  # writes elsewhere, same version counter
    return z


def _saved_view_write_base(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x[0].sin()
    x.add_(1)
    return z


def _saved_plain_setitem(lib):
    w = from_np(lib, np.ones(3), requires_grad=True)
    x = from_np(lib, np.arange(3.0))
    z = x * w  # saves x (does not require grad)
    x[0] = 5.0
    return z


def _saved_plain_view_write(lib):
    w = from_np(lib, np.ones(3), requires_grad=True)
    x = from_np(lib, np.arange(3.0))
    z = x * w
    x.view(3, 1).mul_(2)
    return z


def _saved_detach_write(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x.exp()  # saves its result
    z.detach().add_(1)
    return z


def _saved_write_under_no_grad(lib):
    x = from_np(lib, DATA, requires_grad=True).clone()
    z = x.sin()
    with lib.no_grad():
        x[1].mul_(2)
    return z


ALIAS_WRITES = [
    pytest.param(_saved_x_write_view, id="base_saved_write_view"),
    pytest.param(_saved_x_setitem, id="base_saved_setitem"),
    pytest.param(_saved_x_write_t, id="base_saved_write_t"),
    pytest.param(_saved_view_write_sibling, id="view_saved_write_sibling"),
    pytest.param(_saved_view_write_base, id="view_saved_write_base"),
    pytest.param(_saved_plain_setitem, id="plain_saved_setitem"),
    pytest.param(_saved_plain_view_write, id="plain_saved_write_view"),
    pytest.param(_saved_detach_write, id="result_saved_write_detached"),
    pytest.param(_saved_write_under_no_grad, id="base_saved_write_view_no_grad"),
]


@pytest.mark.parametrize("build", ALIAS_WRITES)
def test_saved_tensor_version_check_sees_writes_through_aliases(ng, build):
    z = build(ng)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    assert MODIFIED in str(info.value)
    assert "is at version 1; expected version 0 instead." in str(info.value)


@pytest.mark.parametrize("build", ALIAS_WRITES)
def test_saved_tensor_alias_message_matches_torch(ng, build):
    def fail(lib):
        build(lib).sum().backward()

    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as expected:
        fail(torch)
    sentence = str(expected.value).split(" Hint:")[0]
    assert_same_error(fail, sentence)


def test_unrelated_write_does_not_break_backward(ng):
    x = from_np(ng, DATA, requires_grad=True)
    b = x.clone()
    z = b[0] * 2  # MulBackward0 with a Python scalar saves no tensor
    b[1].mul_(3)
    z.sum().backward()
    assert to_np(x.grad).tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]


@pytest.mark.parametrize(
    "prog",
    [
        pytest.param(lambda lib, x: x.add_(x), id="self"),
        pytest.param(lambda lib, x: x[1:].add_(x[1:]), id="same_view"),
        pytest.param(lambda lib, x: x[:3].add_(x[3:]), id="disjoint_halves"),
        pytest.param(lambda lib, x: x[::2].add_(x[1::2]), id="interleaved"),
        pytest.param(lambda lib, x: x[::2].mul_(x[:3]), id="strided_too_hard"),
        pytest.param(lambda lib, x: x.reshape(2, 3)[0].copy_(x.reshape(2, 3)[1]), id="copy_row"),
        pytest.param(lambda lib, x: x[1:].fill_(x[0]), id="fill_from_element"),
    ],
)
def test_inplace_ops_that_torch_allows_between_aliases(prog):
    """torch refuses only a partial overlap of non-overlapping dense layouts
    (assert_no_partial_overlap); these aliasing writes run, with torch's values."""

    def run(lib):
        x = lib.arange(6.0)
        prog(lib, x)
        return to_np(x).tolist()

    ours, torchs = run_both(run)
    assert ours == torchs


# ----------------------------------------------------------------------------------
# In-place view ops (t_, transpose_, swapaxes_, swapdims_, squeeze_, unsqueeze_):
# they change the tensor's sizes and strides in place, bump its version, and stack
# torch's in-place node variant on its history (no CopySlices: no element changed).

# fmt: off
INPLACE_VIEW_OPS = [
    pytest.param(lambda x: x.t_(), (2, 3), id="t_"),
    pytest.param(lambda x: x.transpose_(0, 2), (2, 1, 3), id="transpose_"),
    pytest.param(lambda x: x.swapaxes_(1, -1), (2, 1, 3), id="swapaxes_"),
    pytest.param(lambda x: x.swapdims_(0, 1), (2, 3), id="swapdims_"),
    pytest.param(lambda x: x.squeeze_(), (2, 1, 3, 1), id="squeeze_"),
    pytest.param(lambda x: x.squeeze_(1), (2, 1, 3), id="squeeze_dim"),
    pytest.param(lambda x: x.squeeze_((1, 3)), (2, 1, 3, 1), id="squeeze_dims"),
    pytest.param(lambda x: x.unsqueeze_(-1), (2, 3), id="unsqueeze_"),
]
# fmt: on


def _inplace_view_facts(t: Any) -> tuple[Any, ...]:
    fn = t.grad_fn
    saved = [] if fn is None else sorted((k, getattr(fn, k)) for k in dir(fn) if k.startswith("_saved_"))
    return (tuple(t.shape), t.stride(), t._version, None if fn is None else fn.name(), saved, t._base is not None)


@pytest.mark.parametrize(("op", "shape"), INPLACE_VIEW_OPS)
def test_inplace_view_op_matches_torch(op, shape):
    """On a non-leaf and on a view of one: the same object back, torch's sizes,
    strides, version, node and saved values, the history below it, and gradients."""

    def run(lib):
        data = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
        a = from_np(lib, data, requires_grad=True)
        x = a * 2
        assert op(x) is x
        facts = [_inplace_view_facts(x), x.grad_fn.next_functions[0][0].name()]
        base = a * 1
        v = base[:]
        op(v)
        facts += [_inplace_view_facts(v), v.grad_fn.next_functions[0][0].name(), base.grad_fn.name()]
        weights = from_np(lib, np.linspace(-1.0, 1.0, x.numel()).reshape(tuple(x.shape)))
        ((x * weights).sum() + (v * weights).sum()).backward()
        return facts, to_np(a.grad)

    (facts, grad), (t_facts, t_grad) = run_both(run)
    assert facts == t_facts
    np.testing.assert_allclose(grad, t_grad)


@pytest.mark.parametrize(("op", "shape"), INPLACE_VIEW_OPS)
def test_inplace_view_op_without_grad_bumps_the_version_only(op, shape):
    def run(lib):
        plain = lib.zeros(shape)
        op(plain)
        with lib.no_grad():
            leaf = lib.zeros(shape, requires_grad=True)
            op(leaf)
        return _inplace_view_facts(plain), _inplace_view_facts(leaf), leaf.is_leaf, leaf.requires_grad

    ours, torchs = run_both(run)
    assert ours == torchs


@pytest.mark.parametrize(("op", "shape"), INPLACE_VIEW_OPS)
def test_inplace_view_op_on_a_leaf_or_its_view_is_torchs_error(op, shape):
    assert_same_error(lambda lib: op(lib.zeros(shape, requires_grad=True)))
    assert_same_error(lambda lib: op(lib.zeros(shape, requires_grad=True)[:]))


def test_inplace_view_op_bad_dims_are_torchs_errors():
    assert_same_error(lambda lib: lib.zeros(2, 3, 4).t_())
    assert_same_error(lambda lib: lib.zeros(2, 3).transpose_(0, 5))
    assert_same_error(lambda lib: lib.zeros(2, 3).unsqueeze_(4))
    assert_same_error(lambda lib: lib.zeros(2, 3).squeeze_(3))


def test_inplace_view_op_on_a_base_regenerates_its_views(ng):
    """The version bump reaches the views of the tensor: their history becomes an
    AsStridedBackward0 over the base, whose values they still show."""
    b = ng.arange(6.0, requires_grad=True).reshape(2, 3) * 1
    row = b[0]
    b.t_()
    assert row.grad_fn.name() == "AsStridedBackward0"
    assert to_np(row).tolist() == [0.0, 1.0, 2.0]
    assert tuple(b.shape) == (3, 2)
