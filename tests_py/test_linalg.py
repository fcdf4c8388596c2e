"""The matrix products (addmm, bmm, baddbmm, dot, mv, addmv, outer/ger and their
methods and in-place forms) and matmul across ranks: values per dtype, errors,
in-place rules and the graphs matmul records, against torch.

Values, node names, saved attributes, graphs and gradients of the rows in
``op_specs.LINALG`` are compared by test_ops.py, test_gradients.py and
test_higher_order.py; this file covers what those rows do not.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, dtype_name, from_np, graph_desc, run_both, to_np


def _data(shape, seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _tensors(lib, shapes, dtype=np.float64, requires_grad=False):
    return [from_np(lib, _data(s, i, dtype), requires_grad) for i, s in enumerate(shapes)]


# fmt: off
PRODUCTS = [
    pytest.param(lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=-2), [(2, 4), (2, 3), (3, 4)], id="addmm"),
    pytest.param(lambda lib, s, a, b: s.addmm(a, b), [(4,), (2, 3), (3, 4)], id="addmm_method_broadcast"),
    pytest.param(lambda lib, a, b: lib.mm(a, b), [(2, 3), (3, 4)], id="mm"),
    pytest.param(lambda lib, a, b: lib.bmm(a, b), [(2, 2, 3), (2, 3, 4)], id="bmm"),
    pytest.param(lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=2, alpha=0.5), [(2, 1, 4), (2, 2, 3), (2, 3, 4)], id="baddbmm"),
    pytest.param(lambda lib, a, b: lib.dot(a, b), [(5,), (5,)], id="dot"),
    pytest.param(lambda lib, a, b: lib.mv(a, b), [(2, 3), (3,)], id="mv"),
    pytest.param(lambda lib, s, a, b: lib.addmv(s, a, b, alpha=3), [(1,), (2, 3), (3,)], id="addmv"),
    pytest.param(lambda lib, a, b: lib.outer(a, b), [(2,), (3,)], id="outer"),
    pytest.param(lambda lib, a, b: lib.tensordot(a, b, dims=([0, 2], [2, 0])), [(2, 3, 4), (4, 5, 2)], id="tensordot"),
    pytest.param(lambda lib, a, b: lib.tensordot(a, b, dims=lib.tensor(1)), [(2, 3), (3, 4)], id="tensordot_tensor_dims"),
    pytest.param(lambda lib, a, b: lib.kron(a, b), [(2, 1, 3), (2, 2)], id="kron"),
    pytest.param(lambda lib, a, b: a @ b, [(2, 2, 3), (3,)], id="matmul_3d_1d"),
    pytest.param(lambda lib, a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)], id="matmul_4d_3d"),
    pytest.param(lambda lib, a, b: a @ b, [(3,), (2, 3, 4)], id="matmul_1d_3d"),
]
# fmt: on


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize(("fn", "shapes"), PRODUCTS)
def test_values_and_dtype_match_torch(fn, shapes, dtype):
    got, expected = run_both(lambda lib: fn(lib, *_tensors(lib, shapes, dtype)))
    assert dtype_name(got.dtype) == dtype_name(expected.dtype)
    tol = {np.float16: 1e-3, np.float32: 1e-6, np.float64: 1e-12, np.int64: 0}[dtype]
    assert_close(got, expected, rtol=tol, atol=tol)


# fmt: off
EMPTY_AND_EDGE_SHAPES = [
    pytest.param([(3, 5, 0), (0, 0)], id="3d_2d_empty_contraction"),
    pytest.param([(0, 2, 3), (3, 4)], id="3d_2d_empty_batch"),
    pytest.param([(2, 0), (0, 3)], id="2d_2d_empty_contraction"),
    pytest.param([(0,), (0,)], id="1d_1d_empty"),
    pytest.param([(2, 1, 3, 4), (5, 4, 1)], id="4d_3d_broadcast"),
    pytest.param([(1, 1, 4), (4,)], id="3d_1d_ones"),
]
# fmt: on


@pytest.mark.parametrize("shapes", EMPTY_AND_EDGE_SHAPES)
def test_matmul_edge_shapes_match_torch(shapes):
    got, expected = run_both(lambda lib: lib.matmul(*_tensors(lib, shapes)))
    assert tuple(got.shape) == tuple(expected.shape)
    assert_close(got, expected, rtol=1e-12, atol=1e-14)


# Which operands require grad, and their layout, decide matmul's graph (torch folds
# into mm/mv when the smaller operand requires grad or the fold is a view).
# fmt: off
MATMUL_GRAPHS = [
    pytest.param(lambda a, b: a @ b, [(2, 3, 4), (4, 2)], (False, True), id="3d_2d_rhs_grad"),
    pytest.param(lambda a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4, 2)], (True, False), id="3d_transposed_batch_2d_no_fold"),
    pytest.param(lambda a, b: a.transpose(0, 1) @ b, [(3, 2, 4), (4, 2)], (True, True), id="3d_transposed_batch_2d_fold"),
    pytest.param(lambda a, b: a @ b.transpose(1, 2), [(4,), (2, 3, 4)], (False, True), id="1d_3d_transposed_fold"),
    pytest.param(lambda a, b: a @ b, [(2, 3), (4, 3, 2)], (False, True), id="2d_3d_lhs_no_grad"),
    pytest.param(lambda a, b: a @ b, [(1, 2, 3), (4, 3, 2)], (False, True), id="3d_3d_lhs_batch_one_no_grad"),
    pytest.param(lambda a, b: a @ b, [(4, 2, 3), (1, 3, 2)], (True, False), id="3d_3d_rhs_batch_one_no_grad"),
    pytest.param(lambda a, b: a @ b, [(2, 2, 2, 3), (3,)], (True, True), id="4d_1d"),
    pytest.param(lambda a, b: a.matmul(b), [(2, 3, 4), (2, 1, 4, 2)], (True, True), id="3d_4d"),
]
# fmt: on


@pytest.mark.usefixtures("torch_ref")
@pytest.mark.parametrize(("fn", "shapes", "mask"), MATMUL_GRAPHS)
def test_matmul_graph_and_gradients_match_torch(fn, shapes, mask):
    def run(lib):
        ts = [from_np(lib, _data(s, i), rg) for i, (s, rg) in enumerate(zip(shapes, mask))]
        out = fn(*ts)
        grads = lib.autograd.grad(out.sum(), [t for t in ts if t.requires_grad])
        return graph_desc(out.grad_fn), out, grads

    (g_desc, g_out, g_grads), (e_desc, e_out, e_grads) = run_both(run)
    assert g_desc == e_desc
    assert_close(g_out, e_out, rtol=1e-12, atol=1e-14)
    for g, e in zip(g_grads, e_grads):
        assert_close(g, e, rtol=1e-12, atol=1e-14)


def test_beta_zero_ignores_self(ng):
    """With beta=0 the input is not read: a NaN in it does not reach the result."""
    s = ng.full((2, 2), float("nan"))
    a = ng.ones(2, 3)
    b = ng.ones(3, 2)
    np.testing.assert_array_equal(to_np(ng.addmm(s, a, b, beta=0)), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(to_np(ng.addmv(ng.full((2,), float("nan")), a, ng.ones(3), beta=0)), [3.0, 3.0])
    bs = ng.full((1, 2, 2), float("nan"))
    np.testing.assert_array_equal(
        to_np(ng.baddbmm(bs, a.unsqueeze(0), b.unsqueeze(0), beta=0)), np.full((1, 2, 2), 3.0)
    )


def test_linear_layer_records_addmm_over_t(ng):
    """nn.Linear's 2-d form: addmm(bias, x, weight.t())."""
    x = ng.ones(2, 3, requires_grad=True)
    w = ng.ones(4, 3, requires_grad=True)
    bias = ng.zeros(4, requires_grad=True)
    out = ng.addmm(bias, x, w.t())
    assert graph_desc(out.grad_fn) == "AddmmBackward0(AccumulateGrad(), AccumulateGrad(), TBackward0(AccumulateGrad()))"
    assert out.grad_fn._saved_mat2_sym_strides == (1, 3)
    out.sum().backward()
    np.testing.assert_array_equal(to_np(bias.grad), [2.0] * 4)
    np.testing.assert_array_equal(to_np(w.grad), np.full((4, 3), 2.0))


INPLACE = [
    pytest.param(lambda s, a, b: s.addmm_(a, b, beta=2), [(2, 4), (2, 3), (3, 4)], id="addmm_"),
    pytest.param(lambda s, a, b: s.baddbmm_(a, b, alpha=2), [(2, 2, 4), (2, 2, 3), (2, 3, 4)], id="baddbmm_"),
    pytest.param(lambda s, a, b: s.addmv_(a, b, beta=0.5), [(2,), (2, 3), (3,)], id="addmv_"),
]


@pytest.mark.parametrize(("fn", "shapes"), INPLACE)
def test_inplace_returns_self_writes_values_and_bumps_version(fn, shapes):
    def run(lib):
        s, a, b = _tensors(lib, shapes)
        before = s._version
        out = fn(s, a, b)
        return out is s, s._version - before, to_np(s)

    (g_same, g_bump, g_val), (e_same, e_bump, e_val) = run_both(run)
    assert g_same and e_same
    assert g_bump == e_bump == 1
    np.testing.assert_allclose(g_val, e_val, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("fn", "shapes"), INPLACE)
def test_inplace_on_leaf_requiring_grad_raises(fn, shapes):
    def call(lib):
        s, a, b = _tensors(lib, shapes)
        s.requires_grad_()
        fn(s, a, b)

    assert_same_error(call, "a leaf Variable that requires grad is being used in an in-place operation.")


@pytest.mark.parametrize(("fn", "shapes"), INPLACE)
def test_inplace_gradients_match_torch(fn, shapes):
    def run(lib):
        s, a, b = _tensors(lib, shapes, requires_grad=True)
        out = fn(s * 1, a, b)
        return lib.autograd.grad((out * out).sum(), [s, a, b])

    got, expected = run_both(run)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-12, atol=1e-14)


def test_inplace_on_view_rebases_history(ng):
    """addmm_ into a row view of a non-leaf: the base's graph goes through CopySlices."""
    base = ng.zeros(3, 2, requires_grad=True) * 1
    mat1 = ng.ones(1, 2, requires_grad=True)
    base[1:2].addmm_(mat1, ng.ones(2, 2))
    assert type(base.grad_fn).__name__ == "CopySlices"
    base.sum().backward()
    np.testing.assert_array_equal(to_np(mat1.grad), [[2.0, 2.0]])


def test_keyword_only_beta_alpha(ng):
    s, a, b = _tensors(ng, [(2, 2), (2, 3), (3, 2)])
    with pytest.raises(TypeError):
        ng.addmm(s, a, b, 0.5, 2)
    with pytest.raises(TypeError):
        s.addmm_(a, b, 0.5)


def _t(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32)


# (call, torch's key phrase or None for the first 60 characters)
# fmt: off
ERRORS = [
    pytest.param(lambda lib: lib.mm(_t(lib, 2, 3), _t(lib, 4, 5)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", id="mm_shapes"),
    pytest.param(lambda lib: lib.mm(_t(lib, 2, 3), _t(lib, 3, 2, dtype=lib.float64)), "expected m1 and m2 to have the same dtype, but got: float != double", id="mm_dtype"),
    pytest.param(lambda lib: lib.mm(_t(lib, 2, 2, dtype=lib.bool), _t(lib, 2, 2, dtype=lib.bool)), "\"addmm_impl_cpu_\" not implemented for 'Bool'", id="mm_bool"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 2), _t(lib, 2, 3), _t(lib, 4, 5)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", id="addmm_shapes"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 5), _t(lib, 2, 3, 1), _t(lib, 3, 5)), "mat1 must be a matrix, got 3-D tensor", id="addmm_mat1_3d"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 5), _t(lib, 2, 3), _t(lib, 3)), "mat2 must be a matrix, got 1-D tensor", id="addmm_mat2_1d"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 5, dtype=lib.float64), _t(lib, 2, 3), _t(lib, 3, 5)), "self and mat2 must have the same dtype, but got Double and Float", id="addmm_self_dtype"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 5), _t(lib, 2, 3, dtype=lib.float64), _t(lib, 3, 5)), "mat1 and mat2 must have the same dtype, but got Double and Float", id="addmm_mat1_dtype"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 3, 3), _t(lib, 2, 3), _t(lib, 3, 5)), "The expanded size of the tensor (5) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 5].  Tensor sizes: [3, 3]", id="addmm_self_shape"),
    pytest.param(lambda lib: _t(lib, 5).addmm_(_t(lib, 2, 3), _t(lib, 3, 5)), "Bad in-place call: input tensor size [5] and output tensor size [2, 5] should match", id="addmm__shape"),
    pytest.param(lambda lib: lib.addmm(_t(lib, 2, 2, dtype=lib.bool), _t(lib, 2, 2, dtype=lib.bool), _t(lib, 2, 2, dtype=lib.bool)), "\"addmm_impl_cpu_\" not implemented for 'Bool'", id="addmm_bool"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 2, 3), _t(lib, 2, 3, 4)), "batch1 must be a 3D tensor", id="bmm_batch1_2d"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 2, 2, 3), _t(lib, 2, 3)), "batch2 must be a 3D tensor", id="bmm_batch2_2d"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 2, 2, 3), _t(lib, 3, 3, 4)), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].", id="bmm_batch_size"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 2, 2, 3), _t(lib, 2, 4, 4)), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].", id="bmm_contraction"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 1, 2, 2, dtype=lib.float64), _t(lib, 1, 2, 2)), "expected scalar type Double but found Float", id="bmm_dtype"),
    pytest.param(lambda lib: lib.bmm(_t(lib, 1, 2, 2, dtype=lib.bool), _t(lib, 1, 2, 2, dtype=lib.bool)), "\"bmm\" not implemented for 'Bool'", id="bmm_bool"),
    pytest.param(lambda lib: lib.baddbmm(_t(lib, 3), _t(lib, 2, 2, 3), _t(lib, 2, 3, 4)), "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 2.  Target sizes: [2, 2, 4].  Tensor sizes: [3]", id="baddbmm_self_shape"),
    pytest.param(lambda lib: lib.baddbmm(_t(lib, 2, 2, 4, dtype=lib.float64), _t(lib, 2, 2, 3), _t(lib, 2, 3, 4)), "Input dtypes must be the same, got: input double, batch1: float, batch2: float", id="baddbmm_self_dtype"),
    pytest.param(lambda lib: lib.baddbmm(_t(lib, 2, 2, 4), _t(lib, 2, 2, 3), _t(lib, 2, 4, 4)), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].", id="baddbmm_contraction"),
    pytest.param(lambda lib: lib.baddbmm(_t(lib, 2, 2, 4), _t(lib, 2, 2, 3), _t(lib, 2, 3, 4, dtype=lib.float64)), "expected scalar type Float but found Double", id="baddbmm_batch2_dtype"),
    pytest.param(lambda lib: _t(lib, 1, 2, 4).baddbmm_(_t(lib, 2, 2, 3), _t(lib, 2, 3, 4)), "Bad in-place call: input tensor size [1, 2, 4] and output tensor size [2, 2, 4] should match", id="baddbmm__shape"),
    pytest.param(lambda lib: lib.dot(_t(lib, 3), _t(lib, 4)), "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively", id="dot_sizes"),
    pytest.param(lambda lib: lib.dot(_t(lib, 3, 1), _t(lib, 3)), "1D tensors expected, but got 2D and 1D tensors", id="dot_2d"),
    pytest.param(lambda lib: lib.dot(_t(lib, 3), _t(lib, 3, dtype=lib.float64)), "dot : expected both vectors to have same dtype, but found Float and Double", id="dot_dtype"),
    pytest.param(lambda lib: lib.dot(_t(lib, 2, dtype=lib.bool), _t(lib, 2, dtype=lib.bool)), "\"dot\" not implemented for 'Bool'", id="dot_bool"),
    pytest.param(lambda lib: lib.mv(_t(lib, 2, 3), _t(lib, 4)), "size mismatch, got input (2), mat (2x3), vec (4)", id="mv_sizes"),
    pytest.param(lambda lib: lib.mv(_t(lib, 2, 3), _t(lib, 3, 1)), "vector + matrix @ vector expected, got 1, 2, 2", id="mv_vec_2d"),
    pytest.param(lambda lib: lib.mv(_t(lib, 2, 3, dtype=lib.float64), _t(lib, 3)), "addmv input tensors must have the same dtype, but got Float, Double, and Float", id="mv_dtype"),
    pytest.param(lambda lib: lib.addmv(_t(lib, 3), _t(lib, 2, 3), _t(lib, 3)), "size mismatch, got input (3), mat (2x3), vec (3)", id="addmv_self_size"),
    pytest.param(lambda lib: lib.addmv(_t(lib, 2, 2), _t(lib, 2, 3), _t(lib, 3)), "vector + matrix @ vector expected, got 2, 2, 1", id="addmv_self_2d"),
    pytest.param(lambda lib: lib.addmv(_t(lib, 2), _t(lib, 2, 3), _t(lib, 3, dtype=lib.float64)), "addmv input tensors must have the same dtype, but got Float, Float, and Double", id="addmv_dtype"),
    pytest.param(lambda lib: _t(lib, 1).addmv_(_t(lib, 2, 3), _t(lib, 3)), "Bad in-place call: input tensor size [1] and output tensor size [2] should match", id="addmv__shape"),
    pytest.param(lambda lib: lib.addmv(_t(lib, 2, dtype=lib.bool), _t(lib, 2, 2, dtype=lib.bool), _t(lib, 2, dtype=lib.bool)), "\"addmv_impl_cpu\" not implemented for 'Bool'", id="addmv_bool"),
    pytest.param(lambda lib: lib.outer(_t(lib, 2, 3), _t(lib, 3)), "outer: Expected 1-D argument self, but got 2-D", id="outer_self_2d"),
    pytest.param(lambda lib: lib.ger(_t(lib, 2), _t(lib, 3, 1)), "outer: Expected 1-D argument vec2, but got 2-D", id="ger_vec2_2d"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=-1), "tensordot expects dims >= 0, but got dims=-1", id="tensordot_negative"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=3), "tensordot expects dims < ndim_a or ndim_b, but got dims=3", id="tensordot_too_many"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 4, 2), dims=1), "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 in dim 0", id="tensordot_sizes"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=([1], [0, 1])), "both dimension lists should have same length", id="tensordot_lengths"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 3), dims=([1, 1], [0, 0])), "appears multiple times in the list of dims", id="tensordot_repeated"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=([3], [0])), "Dimension out of range (expected to be in range of [-2, 1], but got 3)", id="tensordot_out_of_range"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=(1, 0)), "must be tuple of ints, not int", id="tensordot_int_pair"),
    pytest.param(lambda lib: lib.tensordot(_t(lib, 2, 3), _t(lib, 3, 2), dims=1.5), "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two lists, but got dims=1.5", id="tensordot_float"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3, 4), _t(lib, 4, 2, dtype=lib.float64)), "expected m1 and m2 to have the same dtype, but got: float != double", id="matmul_fold_dtype"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3, 4), _t(lib, 2, 4, 2, dtype=lib.float64)), "expected scalar type Float but found Double", id="matmul_bmm_dtype"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3, 4), _t(lib, 3, 4, 2)), "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0", id="matmul_batch_broadcast"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3, 4), _t(lib, 2, 5, 2)), "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].", id="matmul_contraction"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3, 4), _t(lib, 5)), "size mismatch, got input (6), mat (6x4), vec (5)", id="matmul_3d_1d_size"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 3), _t(lib, 2, 5, 2)), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 5].", id="matmul_1d_3d_size"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 3), lib.tensor(1.0)), "both arguments to matmul need to be at least 1D, but they are 2D and 0D", id="matmul_0d"),
    pytest.param(lambda lib: lib.matmul(_t(lib, 2, 2, 2, dtype=lib.bool), _t(lib, 2, 2, dtype=lib.bool)), "\"addmm_impl_cpu_\" not implemented for 'Bool'", id="matmul_bool"),
]
# fmt: on


@pytest.mark.parametrize(("call", "key"), ERRORS)
def test_errors_match_torch(call, key):
    assert_same_error(call, key)


def test_engine_usable_after_errors(ng):
    a = ng.ones(2, 3, requires_grad=True)
    for bad in (lambda: ng.mm(a, ng.ones(4, 2)), lambda: ng.bmm(a, a), lambda: a.addmm_(a, a)):
        with pytest.raises((RuntimeError, TypeError)):
            bad()
    out = ng.addmm(ng.zeros(2), a, ng.ones(3, 2))
    out.sum().backward()
    np.testing.assert_array_equal(to_np(a.grad), np.full((2, 3), 2.0))


# float32 products of model size (at least 2^16 multiply-adds, every dim at least 8)
# take npgrad's own GEMM on CPUs with AVX-512 (Note [float32 GEMM in AVX-512]); each
# case crosses its tile and block edges or reads its operands through strides.
# (a's shape, b's shape, how each is laid out)
LARGE_FLOAT32 = [
    ((130, 390), (390, 50), "plain"),
    ((9, 385), (385, 1930), "plain"),
    ((3, 40, 64), (3, 64, 97), "plain"),  # a batch
    ((2, 1, 40, 64), (5, 64, 33), "plain"),  # batch dims broadcast
    ((64, 100), (100, 60), "a transposed"),
    ((64, 100), (100, 60), "b transposed"),
    ((4, 64, 100), (100, 60), "a expanded"),  # a batch of stride 0
    ((70, 300), (300, 90), "b sliced"),  # rows of b further apart than its width
]


@pytest.mark.parametrize(("a_shape", "b_shape", "layout"), LARGE_FLOAT32)
def test_large_float32_products_match_torch(a_shape, b_shape, layout):
    a = _data(a_shape, 0, np.float32)
    b = _data(b_shape, 1, np.float32)
    grad = _data(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]) + (a_shape[-2], b_shape[-1]), 2, np.float32)

    def run(lib):
        if layout == "a transposed":
            x = from_np(lib, np.ascontiguousarray(a.T), True)
            left, right, leaf = x.t(), from_np(lib, b), x
        elif layout == "b transposed":
            y = from_np(lib, np.ascontiguousarray(b.T), True)
            left, right, leaf = from_np(lib, a), y.t(), y
        elif layout == "a expanded":
            x = from_np(lib, a[0], True)
            left, right, leaf = x.expand(a_shape), from_np(lib, b), x
        elif layout == "b sliced":
            y = from_np(lib, np.concatenate([b, b], axis=1), True)
            left, right, leaf = from_np(lib, a), y[:, : b_shape[1]], y
        else:
            x = from_np(lib, a, True)
            left, right, leaf = x, from_np(lib, b), x
        out = lib.matmul(left, right)
        out.backward(from_np(lib, grad))
        return out, leaf.grad, out.is_contiguous()

    (out, g, contiguous), (want_out, want_g, _) = run_both(run)
    assert contiguous
    assert_close(out, want_out, rtol=1e-5, atol=1e-4)
    assert_close(g, want_g, rtol=1e-5, atol=1e-4)


def test_large_float32_product_propagates_nan_and_inf_as_torch():
    a = _data((64, 128), 0, np.float32)
    b = _data((128, 64), 1, np.float32)
    a[3, 5] = np.nan
    b[7, 9] = np.inf
    got, want = run_both(lambda lib: lib.matmul(from_np(lib, a), from_np(lib, b)))
    assert_close(got, want, rtol=1e-5, atol=1e-4)  # nan where torch has nan (assert_allclose)
