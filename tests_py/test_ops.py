"""Forward values, backward-node names, graph structure and saved values of every
differentiable op of the README's API surface, compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

import op_specs
from oracle import (
    assert_close,
    dtype_name,
    from_np,
    graph_desc,
    run_both,
    same_value,
    to_np,
)

OPS = [pytest.param(op, id=op.id) for op in op_specs.ALL]
DTYPES = [
    pytest.param(np.float32, id="float32"),
    pytest.param(np.float64, id="float64"),
]


def _masks(op):
    """Which inputs require grad: all of them and, for several inputs, only the first
    or only the last (the others then show as ``None`` edges)."""
    n = len(op.inputs)
    if n == 1:
        return [(True,)]
    return [(True,) * n, (True,) + (False,) * (n - 1), (False,) * (n - 1) + (True,)]


OPS_AND_MASKS = [
    pytest.param(op, mask, id=f"{op.id}-{''.join('g' if m else 'c' for m in mask)}")
    for op in op_specs.ALL
    for mask in _masks(op)
]


# fmt: off
GRAPH_EXAMPLES = [
    pytest.param(lambda ng, x, y: (x * y).sum(), "SumBackward0(MulBackward0(AccumulateGrad(), AccumulateGrad()))", id="mul_sum"),
    pytest.param(lambda ng, x, y: x * 2, "MulBackward0(AccumulateGrad(), None)", id="mul_scalar"),
    pytest.param(lambda ng, x, y: 2 - x, "RsubBackward1(AccumulateGrad())", id="rsub"),
    pytest.param(lambda ng, x, y: 1 / x, "MulBackward0(ReciprocalBackward0(AccumulateGrad()), None)", id="rdiv"),
    pytest.param(lambda ng, x, y: (x + y.detach()).exp(), "ExpBackward0(AddBackward0(AccumulateGrad(), None))", id="detached_operand"),
    pytest.param(lambda ng, x, y: x.view(3, 2).t().reshape(6), "UnsafeViewBackward0(CloneBackward0(TBackward0(ViewBackward0(AccumulateGrad()))))", id="reshape_copy"),
    pytest.param(lambda ng, x, y: x[0, 1:], "SliceBackward0(SelectBackward0(AccumulateGrad()))", id="select_slice"),
    pytest.param(lambda ng, x, y: ng.cat([x, ng.ones(1, 3)]), "CatBackward0(AccumulateGrad(), None)", id="cat_const"),
    pytest.param(lambda ng, x, y: ng.stack([x.sin(), y]).sum(1), "SumBackward1(StackBackward0(SinBackward0(AccumulateGrad()), AccumulateGrad()))", id="stack_sum"),
]

PROMOTIONS = [
    pytest.param(lambda ng: ng.ones(2) * 2.5, "float32", id="f32*float"),
    pytest.param(lambda ng: 2.5 * ng.ones(2, dtype=ng.float64), "float64", id="float*f64"),
    pytest.param(lambda ng: ng.tensor([1, 2]) * 2, "int64", id="i64*int"),
    pytest.param(lambda ng: ng.tensor([1, 2]) * 2.5, "float32", id="i64*float"),
    pytest.param(lambda ng: 2.5 + ng.tensor([1, 2]), "float32", id="float+i64"),
    pytest.param(lambda ng: ng.tensor([1, 2]) / 2, "float32", id="i64/int"),
    pytest.param(lambda ng: ng.tensor([1, 2]) + ng.ones(2), "float32", id="i64+f32"),
    pytest.param(lambda ng: ng.ones(2) + ng.ones(2, dtype=ng.float64), "float64", id="f32+f64"),
    pytest.param(lambda ng: ng.ones(2) + ng.tensor(1.0, dtype=ng.float64), "float32", id="f32+f64_0dim"),
    pytest.param(lambda ng: ng.tensor([1, 2]) + ng.tensor(1.5, dtype=ng.float64), "float64", id="i64+f64_0dim"),
    pytest.param(lambda ng: ng.tensor([True, False]) * 2, "int64", id="bool*int"),
    pytest.param(lambda ng: ng.tensor([1, 2]) ** 2, "int64", id="i64**int"),
    pytest.param(lambda ng: 2.0 ** ng.tensor([1, 2]), "float32", id="float**i64"),
    pytest.param(lambda ng: ng.ones(2, dtype=ng.float64).sum(), "float64", id="sum_f64"),
    pytest.param(lambda ng: ng.tensor([1, 2]).sum(), "int64", id="sum_i64"),
]

RESULT_SHAPES = [
    pytest.param(lambda ng: ng.ones(2, 1, 3) + ng.ones(4, 1), (2, 4, 3), id="add_bcast"),
    pytest.param(lambda ng: ng.ones(3) * ng.ones(2, 1), (2, 3), id="mul_bcast"),
    pytest.param(lambda ng: ng.ones(2, 3) @ ng.ones(3, 4), (2, 4), id="mm"),
    pytest.param(lambda ng: ng.ones(3) @ ng.ones(3), (), id="dot"),
    pytest.param(lambda ng: ng.ones(2, 3) @ ng.ones(3), (2,), id="mv"),
    pytest.param(lambda ng: ng.ones(2, 3).sum(1, keepdim=True), (2, 1), id="sum_keepdim"),
    pytest.param(lambda ng: ng.cat([ng.ones(2, 3), ng.ones(2, 3)], 1), (2, 6), id="cat1"),
    pytest.param(lambda ng: ng.stack([ng.ones(2, 3), ng.ones(2, 3)], 2), (2, 3, 2), id="stack2"),
    pytest.param(lambda ng: ng.ones(2, 3)[None, ..., None], (1, 2, 3, 1), id="none_ellipsis"),
    pytest.param(lambda ng: ng.ones(4, 3)[ng.tensor([0, 2, 2, 1, 0])], (5, 3), id="index_repeat"),
    pytest.param(lambda ng: ng.ones(2, 1, 3, 1).squeeze(), (2, 3), id="squeeze_all"),
    pytest.param(lambda ng: ng.ones(2, 3).expand(4, 2, 3), (4, 2, 3), id="expand_new_dim"),
]
# fmt: on


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_forward_matches_torch(op, dtype):
    got, expected = run_both(lambda lib: op.fn(lib, *op.tensors(lib, dtype)))
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(
        got,
        expected,
        rtol=1e-5 if dtype == np.float32 else 1e-12,
        atol=1e-6 if dtype == np.float32 else 1e-14,
    )


@pytest.mark.parametrize("op", OPS)
def test_backward_node_name(ng, op):
    out = op.fn(ng, *op.tensors(ng))
    assert out.requires_grad
    assert not out.is_leaf
    assert type(out.grad_fn).__name__ == op.node
    assert out.grad_fn.name() == op.node


@pytest.mark.parametrize("op", OPS)
def test_inputs_without_grad_record_nothing(ng, op):
    out = op.fn(ng, *op.tensors(ng, requires_grad=False))
    assert not out.requires_grad
    assert out.grad_fn is None
    assert out.is_leaf


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(("op", "mask"), OPS_AND_MASKS)
def test_graph_matches_torch(op, mask):
    got, expected = run_both(lambda lib: graph_desc(op.fn(lib, *op.tensors(lib, requires_grad=mask)).grad_fn))
    assert got == expected


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(("op", "mask"), [p for p in OPS_AND_MASKS if p.values[0].saved])
def test_saved_values_match_torch(op, mask):
    def saved(lib):
        node = op.fn(lib, *op.tensors(lib, requires_grad=mask)).grad_fn
        return [getattr(node, name) for name in op.saved]

    got, expected = run_both(saved)
    for name, g, e in zip(op.saved, got, expected):
        assert same_value(g, e), (name, g, e)


# A negative dim or index is saved as the caller passed it and shown, as torch
# shows it, as an unsigned 64-bit integer (sum(dim=-1): _saved_dim == (2**64 - 1,)).
@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(("op", "mask"), OPS_AND_MASKS)
def test_every_saved_attribute_matches_torch(op, mask):
    """All ``_saved_*`` attributes, not only the ones listed in the op's row: names
    and values, with each input requiring grad or not (MmBackward0 saves an
    operand's strides only when that operand's gradient is needed)."""

    def saved(lib):
        node = op.fn(lib, *op.tensors(lib, requires_grad=mask)).grad_fn
        return {name: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}

    got, expected = run_both(saved)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert same_value(got[name], expected[name]), (name, got[name], expected[name])


@pytest.mark.parametrize(("build", "expected"), GRAPH_EXAMPLES)
def test_graph_desc_examples(ng, build, expected):
    x = ng.ones(2, 3, requires_grad=True)
    y = ng.ones(2, 3, requires_grad=True)
    assert graph_desc(build(ng, x, y).grad_fn) == expected


@pytest.mark.parametrize(("build", "expected"), PROMOTIONS)
def test_dtype_promotion(ng, build, expected):
    assert dtype_name(build(ng).dtype) == expected


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_return_values_and_indices(ng, name):
    data = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]], dtype=np.float32)
    x = from_np(ng, data, requires_grad=True)
    pick = np.argmax if name == "max" else np.argmin
    result = getattr(x, name)(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert result[0] is values and result[1] is indices
    np.testing.assert_array_equal(to_np(indices), pick(data, axis=1))
    np.testing.assert_array_equal(to_np(values), data[np.arange(2), pick(data, axis=1)])
    assert dtype_name(indices.dtype) == "int64"
    assert values.requires_grad and not indices.requires_grad
    kept = getattr(ng, name)(x, 0, keepdim=True)
    assert tuple(kept.values.shape) == (1, 3) and tuple(kept.indices.shape) == (1, 3)
    np.testing.assert_array_equal(to_np(kept.indices), pick(data, axis=0, keepdims=True))


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_full_reduction_is_0dim(ng, name):
    data = np.array([[0.5, -1.0], [3.0, 0.25]], dtype=np.float32)
    out = getattr(from_np(ng, data), name)()
    assert tuple(out.shape) == ()
    assert out.item() == getattr(data, name)()


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_normalises_along_dim(ng, fn, dim):
    data = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]])
    out = to_np(getattr(from_np(ng, data), fn)(dim=dim))
    probs = np.exp(out) if fn == "log_softmax" else out
    np.testing.assert_allclose(probs.sum(axis=dim), 1.0, rtol=1e-12)
    shifted = np.exp(data - data.max(axis=dim, keepdims=True))
    np.testing.assert_allclose(probs, shifted / shifted.sum(axis=dim, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_specs.VIEWS])
def test_views_share_storage_and_version_with_base(ng, op):
    inputs = op.tensors(ng, np.float32, requires_grad=False)
    base = inputs[0]
    view = op.fn(ng, *inputs)
    before = to_np(view)
    assert view._base is base
    base.add_(1.0)
    assert base._version == 1
    assert view._version == 1
    np.testing.assert_allclose(to_np(view), before + 1.0, rtol=1e-6)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_specs.COPIES])
def test_copies_do_not_alias(ng, op):
    inputs = op.tensors(ng, np.float32, requires_grad=False)
    out = op.fn(ng, *inputs)
    before = to_np(out)
    assert out._base is None
    for t in inputs:
        t.add_(1.0)
    assert out._version == 0
    np.testing.assert_array_equal(to_np(out), before)


def test_view_of_view_has_root_base(ng):
    x = ng.zeros(2, 3)
    assert x.view(6)[1:]._base is x
    assert x.t().unsqueeze(0)[0]._base is x
    assert x._base is None


def test_contiguous_of_contiguous_tensor_is_itself(ng):
    x = ng.ones(2, 3, requires_grad=True)
    assert x.contiguous() is x


@pytest.mark.parametrize(
    ("build", "strides"),
    [
        (lambda lib: lib.zeros(0, 3), (3, 1)),
        (lambda lib: lib.zeros(3, 0), (1, 1)),
        (lambda lib: lib.empty(2, 0, 4), (4, 4, 1)),
        (lambda lib: lib.zeros(3, 0).t(), (1, 1)),
        (lambda lib: lib.zeros(0, 3).permute(1, 0), (1, 3)),
        (lambda lib: lib.ones(2, 3)[:0], (3, 1)),
        (lambda lib: lib.zeros(0, 3) + 1, (3, 1)),
    ],
)
def test_empty_tensors_have_torch_strides_and_are_contiguous(ng, build, strides):
    # A tensor with no elements is contiguous whatever its strides, and a new
    # one has its contiguous strides (a size of 0 counted as 1).
    t = build(ng)
    assert t.stride() == strides
    assert t.is_contiguous()
    assert t.contiguous() is t


@pytest.mark.parametrize(("build", "shape"), RESULT_SHAPES)
def test_result_shapes(ng, build, shape):
    assert tuple(build(ng).shape) == shape


def test_arithmetic_values_with_python_scalars(ng):
    x = ng.tensor([1.0, 2.0, 4.0])
    cases = {
        "x + 1": (x + 1, [2.0, 3.0, 5.0]),
        "1 + x": (1 + x, [2.0, 3.0, 5.0]),
        "x - 1": (x - 1, [0.0, 1.0, 3.0]),
        "1 - x": (1 - x, [0.0, -1.0, -3.0]),
        "x * 3": (x * 3, [3.0, 6.0, 12.0]),
        "3 * x": (3 * x, [3.0, 6.0, 12.0]),
        "x / 2": (x / 2, [0.5, 1.0, 2.0]),
        "2 / x": (2 / x, [2.0, 1.0, 0.5]),
        "x ** 2": (x**2, [1.0, 4.0, 16.0]),
        "2 ** x": (2**x, [2.0, 4.0, 16.0]),
        "-x": (-x, [-1.0, -2.0, -4.0]),
    }
    for text, (got, expected) in cases.items():
        assert to_np(got).tolist() == expected, text


@pytest.mark.parametrize("scalar", ["float32", "float64", "int64", "bool_"])
def test_numpy_scalars_are_python_numbers(ng, scalar):
    def program(lib):
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        s = getattr(np, scalar)(2)
        y = x * s + s
        y.sum().backward()
        return to_np(y).tolist(), dtype_name(y.dtype), to_np(x.grad).tolist()

    got = program(ng)
    assert got[1] == "float32"
    if scalar == "bool_":
        assert got[0] == [2.5, -1.0] and got[2] == [1.0, 1.0]
    else:
        assert got[0] == [5.0, -2.0] and got[2] == [2.0, 2.0]


def test_abs_gradient_at_nan_is_zero_as_in_torch(ng, torch_ref):
    """abs's gradient is grad * sgn(x), and torch's sgn of NaN is 0 (NumPy's sign gives NaN)."""

    def run(lib):
        x = lib.tensor([float("nan"), -2.0, 0.0, 3.0], requires_grad=True)
        (g,) = lib.autograd.grad(x.abs().sum(), x, create_graph=True)
        sgn_node = g.grad_fn.next_functions[1][0]
        return g.tolist(), sgn_node.name(), sgn_node._saved_result.tolist()

    got, expected = run(ng), run(torch_ref)
    assert got == expected


def test_square_dtypes_and_node_match_torch(ng, torch_ref):
    """square is pow(x, 2) with an integer exponent: int and bool stay integral (int64)."""

    def run(lib):
        out = [lib.square(lib.tensor(v)) for v in ([1, -3], [True, False], [1.5, -2.0])]
        x = lib.tensor([1.5, -2.0], requires_grad=True)
        y = x.square()
        y.sum().backward()
        facts = [(str(t.dtype), t.tolist()) for t in out]
        return facts, y.grad_fn.name(), y.grad_fn._saved_exponent, x.grad.tolist()

    assert run(ng) == run(torch_ref)
