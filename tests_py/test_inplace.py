"""In-place ops: values, version counter, the leaf check, history rebase on non-leaves,
and the saved-tensor version check. (In-place through a view of a tensor that requires
grad is a later issue and is not tested here.)"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
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

DATA = np.array([0.3, -0.2, 0.7])  # no zero (relu_), two inside and one above clamp_'s range
LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
BACKWARD_TWICE = "Trying to backward through the graph a second time"


@dataclass(frozen=True)
class Inplace:
    id: str
    fn: Callable[[Any, Any], Any]  # fn(lib, t) modifies t in place and returns the result
    ref: Callable[[np.ndarray], np.ndarray]  # the new value, computed with NumPy
    node: str | None  # type(t.grad_fn).__name__ after the op on a non-leaf (None: not tested)
    name: str | None = None  # t.grad_fn.name() when it differs from the type name


def _setitem(lib, t, key, value):
    t[key] = value
    return t


# fmt: off
INPLACE = [
    Inplace("add_", lambda lib, t: t.add_(1.5), lambda a: a + 1.5, "AddBackward0"),
    Inplace("add_tensor", lambda lib, t: t.add_(lib.tensor([1.0, 2.0, 3.0], dtype=t.dtype)), lambda a: a + [1, 2, 3], "AddBackward0"),
    Inplace("sub_", lambda lib, t: t.sub_(0.5), lambda a: a - 0.5, "SubBackward0"),
    Inplace("mul_", lambda lib, t: t.mul_(3.0), lambda a: a * 3, "MulBackward0"),
    Inplace("div_", lambda lib, t: t.div_(4.0), lambda a: a / 4, "DivBackward0"),
    Inplace("sin_", lambda lib, t: t.sin_(), np.sin, "SinBackward0"),
    Inplace("cos_", lambda lib, t: t.cos_(), np.cos, "CosBackward0"),
    Inplace("exp_", lambda lib, t: t.exp_(), np.exp, "ExpBackward0"),
    Inplace("zero_", lambda lib, t: t.zero_(), np.zeros_like, "ZeroBackward0"),
    Inplace("fill_", lambda lib, t: t.fill_(0.25), lambda a: np.full_like(a, 0.25), "FillBackward2"),
    Inplace("copy_", lambda lib, t: t.copy_(lib.tensor([4.0, 5.0, 6.0], dtype=t.dtype)), lambda a: np.array([4.0, 5.0, 6.0]), "CopyBackwards", "torch::autograd::CopyBackwards"),
    Inplace("clamp_", lambda lib, t: t.clamp_(min=-0.25, max=0.5), lambda a: np.clip(a, -0.25, 0.5), "ClampBackward1"),
    Inplace("relu_", lambda lib, t: t.relu_(), lambda a: np.maximum(a, 0), "ReluBackward0"),
    Inplace("iadd", lambda lib, t: operator.iadd(t, 2.0), lambda a: a + 2, "AddBackward0"),
    Inplace("iadd_tensor", lambda lib, t: operator.iadd(t, lib.ones(3, dtype=t.dtype)), lambda a: a + 1, "AddBackward0"),
    Inplace("isub", lambda lib, t: operator.isub(t, 2.0), lambda a: a - 2, "SubBackward0"),
    Inplace("imul", lambda lib, t: operator.imul(t, 2.0), lambda a: a * 2, "MulBackward0"),
    Inplace("idiv", lambda lib, t: operator.itruediv(t, 2.0), lambda a: a / 2, "DivBackward0"),
    # __setitem__ on a tensor that requires grad writes through a view: later issue.
    Inplace("setitem_int", lambda lib, t: _setitem(lib, t, 1, 9.0), lambda a: np.where(np.arange(3) == 1, 9.0, a), None),
    Inplace("setitem_slice", lambda lib, t: _setitem(lib, t, slice(1, None), lib.tensor([7.0, 8.0], dtype=t.dtype)), lambda a: np.array([a[0], 7.0, 8.0]), None),
    Inplace("setitem_index_tensor", lambda lib, t: _setitem(lib, t, lib.tensor([0, 2]), 5.0), lambda a: np.array([5.0, a[1], 5.0]), None),
]
# fmt: on
ALL = [pytest.param(op, id=op.id) for op in INPLACE]
REBASED = [pytest.param(op, id=op.id) for op in INPLACE if op.node]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("op", ALL)
def test_inplace_without_grad_updates_values_and_bumps_version_once(ng, op, dtype):
    t = from_np(ng, DATA.astype(dtype))
    result = op.fn(ng, t)
    assert result is t
    assert t._version == 1
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None
    assert_close(t, op.ref(DATA).astype(dtype), rtol=1e-6)


@pytest.mark.parametrize("op", REBASED)
def test_inplace_on_non_leaf_rebases_history(ng, op):
    a = from_np(ng, DATA.astype(np.float32), requires_grad=True)
    b = a.clone()
    assert op.fn(ng, b) is b
    assert b._version == 1
    assert not b.is_leaf and b.requires_grad
    assert type(b.grad_fn).__name__ == op.node
    assert b.grad_fn.name() == (op.name or op.node)
    producer = b.grad_fn.next_functions[0][0]
    assert type(producer).__name__ == "CloneBackward0"
    assert type(producer.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert producer.next_functions[0][0].variable is a
    assert_close(b, op.ref(DATA).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("op", REBASED)
def test_inplace_on_non_leaf_gradient_matches_finite_differences(ng, op):
    a = from_np(ng, DATA, requires_grad=True)
    weights = np.array([0.5, -1.0, 2.0])
    b = a.clone()
    op.fn(ng, b)
    b.backward(from_np(ng, weights))
    expected = numerical_grad(lambda t: op.fn(ng, t.clone()), [a], weights)[0]
    assert_close(a.grad, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("op", REBASED)
def test_inplace_on_non_leaf_graph_and_gradient_match_torch(op):
    def run(lib):
        a = from_np(lib, DATA, requires_grad=True)
        b = (a * 2).sin()  # SinBackward0 saves its input, not b
        op.fn(lib, b)
        desc = graph_desc(b.grad_fn)
        (b * b).sum().backward()
        return desc, to_np(a.grad)

    (got_desc, got_grad), (expected_desc, expected_grad) = run_both(run)
    assert got_desc == expected_desc
    np.testing.assert_allclose(got_grad, expected_grad, rtol=1e-10)


@pytest.mark.parametrize("op", ALL)
def test_inplace_on_leaf_that_requires_grad_is_an_error(ng, op):
    x = from_np(ng, DATA, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(LEAF_ERROR)):
        op.fn(ng, x)
    assert x._version == 0
    assert x.is_leaf and x.grad_fn is None
    np.testing.assert_array_equal(to_np(x), DATA)


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("op", ALL)
def test_inplace_on_leaf_error_matches_torch(op):
    assert_same_error(lambda lib: op.fn(lib, from_np(lib, DATA, requires_grad=True)), key=LEAF_ERROR)


@pytest.mark.parametrize("op", ALL)
def test_inplace_on_leaf_under_no_grad_is_allowed(ng, op):
    x = from_np(ng, DATA, requires_grad=True)
    with ng.no_grad():
        op.fn(ng, x)
    assert x._version == 1
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    assert_close(x, op.ref(DATA), rtol=1e-12)


@pytest.mark.parametrize(
    ("op", "node"),
    [
        (lambda a, b: a.add_(b), "AddBackward0"),
        (lambda a, b: a.sub_(b), "SubBackward0"),
        (lambda a, b: a.mul_(b), "MulBackward0"),
        (lambda a, b: a.div_(b), "DivBackward0"),
        (lambda a, b: a.copy_(b), "CopyBackwards"),
        (lambda a, b: operator.iadd(a, b), "AddBackward0"),
    ],
    ids=["add_", "sub_", "mul_", "div_", "copy_", "iadd"],
)
def test_inplace_with_grad_requiring_operand_makes_target_non_leaf(ng, op, node):
    a = ng.full((3,), 2.0)
    b = ng.tensor([1.0, 2.0, 4.0], requires_grad=True)
    op(a, b)
    assert a.requires_grad and not a.is_leaf
    assert a._version == 1
    assert type(a.grad_fn).__name__ == node
    assert graph_desc(a.grad_fn) == f"{node}(None, AccumulateGrad())"
    assert a.grad_fn.next_functions[1][0].variable is b
    a.sum().backward()
    expected = numerical_grad(
        lambda t: op(ng.full((3,), 2.0, dtype=ng.float64), t),
        [from_np(ng, to_np(b).astype(np.float64))],
    )[0]
    assert_close(b.grad, expected.astype(np.float32), rtol=1e-5, atol=1e-6)


def test_version_counts_every_inplace_op(ng):
    t = ng.zeros(3)
    versions = [t._version]
    for step in (
        lambda: t.add_(1),
        lambda: t.mul_(2),
        lambda: t.__setitem__(0, 5.0),
        lambda: t.zero_(),
        lambda: t.__iadd__(1),
        lambda: t[1:].mul_(2),  # through a view: the counter is shared
    ):
        step()
        versions.append(t._version)
    assert versions == [0, 1, 2, 3, 4, 5, 6]
    _ = (t + 1, t.sin(), t.clone(), t.view(3))  # out-of-place ops and views
    assert t._version == 6


def test_augmented_assignment_keeps_the_same_object(ng):
    a = ng.tensor([1.0, 2.0], dtype=ng.float64)
    before = a
    a += 1
    a *= 3
    a -= 1
    a /= 5
    assert a is before
    assert a._version == 4
    assert to_np(a).tolist() == [1.0, 1.6]


@pytest.mark.parametrize(
    ("build", "tail"),
    [
        (
            lambda ng, x: x.tanh().add_(1),
            "[torch.FloatTensor [3]], which is output 0 of Tanh, is at version 1; expected version 0 instead.",
        ),
        (
            lambda ng, x: x.to(ng.float64).reshape(3, 1).expand(3, 2).contiguous().exp().mul_(2),
            "[torch.DoubleTensor [3, 2]], which is output 0 of Exp, is at version 1; expected version 0 instead.",
        ),
        (
            lambda ng, x: x.sigmoid().mul_(2).add_(1),
            "[torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 2; expected version 0 instead.",
        ),
        (
            lambda ng, x: _saved_input_modified(x),
            "[torch.FloatTensor [3]], which is output 0 of Mul, is at version 1; expected version 0 instead.",
        ),
        (
            lambda ng, x: _saved_leaf_modified_without_grad(ng, x),
            "[torch.FloatTensor [3]] is at version 1; expected version 0 instead.",
        ),
    ],
    ids=[
        "saved_result",
        "saved_result_float64_2d",
        "modified_twice",
        "saved_input",
        "saved_leaf_under_no_grad",
    ],
)
def test_modified_saved_tensor_is_detected_at_backward(ng, build, tail):
    x = ng.tensor([0.5, -1.0, 2.0], requires_grad=True)
    out = build(ng, x)
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    message = str(info.value)
    head = "one of the variables needed for gradient computation has been modified by an inplace operation: "
    assert message.startswith(head + tail), message


def _saved_input_modified(x):
    a = x * 1
    out = a.sin()
    a.mul_(2)
    return out


def _saved_leaf_modified_without_grad(ng, x):
    out = x.sin()
    with ng.no_grad():
        x.mul_(2)
    return out


@pytest.mark.usefixtures("torch_ref")
def test_modified_saved_tensor_error_matches_torch():
    def fail(lib):
        y = lib.tensor([0.5, -1.0, 2.0], requires_grad=True).tanh()
        y.add_(1)
        y.sum().backward()

    err = assert_same_error(fail)
    assert "instead." in str(err)


def test_inplace_on_tensor_not_saved_by_anyone_is_fine(ng):
    x = ng.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 2  # MulBackward0 with a scalar saves only the scalar
    y.add_(1)
    y.sum().backward()
    assert to_np(x.grad).tolist() == [2.0, 2.0, 2.0]


def test_inplace_after_backward_of_a_retained_graph_is_detected(ng):
    x = ng.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward(retain_graph=True)
    with ng.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensor_freed_error_takes_precedence_after_backward(ng):
    x = ng.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(RuntimeError, match=BACKWARD_TWICE):
        y.sum().backward()
