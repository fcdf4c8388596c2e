"""npgrad.nn.functional (activations, softmaxes, dropouts) and fmod/remainder against torch.

Values, nodes and gradients of every function are compared through op_specs
(``ACTIVATIONS``); here: dtypes, in-place forms, torch's errors and warnings, and
the dropouts' masks.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import from_np, run_both, to_np

X = np.array([[-2.5, -0.7, 0.3], [0.9, 1.6, 4.0]])


def _x(lib, dtype=None, requires_grad=False):
    t = from_np(lib, X, requires_grad)
    return t if dtype is None else t.to(dtype)


# (function name, extra arguments): every table activation, by its functional name.
CALLS = [
    ("leaky_relu", (0.2,)),
    ("elu", (0.5,)),
    ("selu", ()),
    ("celu", (2.0,)),
    ("gelu", ()),
    ("silu", ()),
    ("mish", ()),
    ("softplus", (2.0, 3.0)),
    ("hardtanh", (-0.5, 2.0)),
    ("relu6", ()),
    ("hardsigmoid", ()),
    ("hardswish", ()),
    ("logsigmoid", ()),
    ("softshrink", (0.8,)),
    ("hardshrink", (0.8,)),
    ("threshold", (0.5, -3.0)),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_dtype_is_kept_and_values_match(name, args, dtype):
    def run(lib):
        out = getattr(lib.nn.functional, name)(_x(lib, getattr(lib, dtype)), *args)
        return str(out.dtype), to_np(out).astype(np.float64)

    (got_dtype, got), (want_dtype, want) = run_both(run)
    assert got_dtype == want_dtype
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-3)


@pytest.mark.parametrize(
    "name,args,kernel",
    [("elu", (), "elu_cpu"), ("gelu", (), "GeluKernelImpl"), ("softplus", (), "softplus_cpu"), ("celu", (), "elu_cpu")],
)
def test_integer_input_is_torchs_not_implemented_error(ng, name, args, kernel):
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Long'"):
        getattr(ng.nn.functional, name)(ng.tensor([1, 2]), *args)


def test_integer_inputs_hardtanh_and_threshold_keep_their_dtype(ng):
    x = ng.tensor([-3, 0, 5])
    assert ng.nn.functional.hardtanh(x).tolist() == [-1, 0, 1]
    assert ng.nn.functional.relu6(x).dtype == ng.int64
    assert ng.threshold(x, 1, 9).tolist() == [9, 9, 5]


def test_bad_arguments_raise_torchs_errors(ng):
    F = ng.nn.functional
    x = ng.ones(2)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(x, approximate="exact")
    with pytest.raises(
        RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, but found -1"
    ):
        F.softshrink(x, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 1.0, -1.0)
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.hardtanh(ng.tensor([True]))
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(TypeError, match=r"argument 'input' \(position 1\) must be Tensor, not NoneType"):
        F.softplus(None)
    with pytest.raises(TypeError):
        ng.threshold(x, 0.5)  # value has no default
    assert x.tolist() == [1.0, 1.0]  # still usable


@pytest.mark.parametrize(
    "name,args,node",
    [
        ("leaky_relu_", (0.1,), "LeakyReluBackward1"),
        ("elu_", (), "EluBackward1"),
        ("selu_", (), "EluBackward1"),
        ("celu_", (), "CeluBackward1"),
        ("hardtanh_", (), "HardtanhBackward0"),
        ("threshold_", (0.0, 5.0), "ThresholdBackward1"),
        ("relu_", (), "ReluBackward0"),
    ],
)
def test_inplace_forms_write_self_and_bump_the_version(name, args, node):
    def run(lib):
        leaf = _x(lib, requires_grad=True)
        y = leaf * 1
        version = y._version
        out = getattr(lib.nn.functional, name)(y, *args)
        out.sum().backward()
        return out is y, y._version - version, out.grad_fn.name(), to_np(out.detach()), to_np(leaf.grad)

    got, want = run_both(run)
    assert got[:3] == want[:3] == (True, 1, node)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)
    np.testing.assert_allclose(got[4], want[4], rtol=1e-12)


@pytest.mark.parametrize("call", [lambda F, x: F.elu(x, inplace=True), lambda F, x: F.silu(x, inplace=True)])
def test_inplace_on_a_leaf_that_requires_grad_is_an_error(ng, call):
    x = _x(ng, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        call(ng.nn.functional, x)
    assert x._version == 0


def test_inplace_functions_of_the_top_level_return_their_input(ng):
    x = _x(ng)
    assert ng.celu_(x) is x and ng.selu_(x) is x and ng.threshold_(x, 0.0, 1.0) is x
    assert x._version == 3


def test_hardsigmoid_has_no_double_backward_as_torch(ng):
    x = _x(ng, requires_grad=True)
    (g,) = ng.autograd.grad(ng.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
        g.sum().backward()


def test_top_level_and_method_forms(ng):
    x = _x(ng)
    assert ng.hardshrink(x, 1.0).tolist() == x.hardshrink(1.0).tolist() == [[-2.5, 0.0, 0.0], [0.0, 1.6, 4.0]]
    assert ng.selu(x).grad_fn is None
    assert ng.celu(x, alpha=2.0).tolist() == ng.nn.functional.celu(x, 2.0).tolist()


# ---- softmax, log_softmax, softmin


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape,dim", [((3,), 0), ((2, 3), 1), ((2, 3, 2), 0), ((2, 2, 2, 2), 1)])
def test_softmax_without_dim_warns_and_picks_torchs_dim(ng, name, shape, dim):
    x = ng.arange(float(np.prod(shape))).reshape(shape)
    fn = getattr(ng.nn.functional, name)
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been deprecated"):
        implicit = fn(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explicit = fn(x, dim=dim)
    np.testing.assert_allclose(to_np(implicit), to_np(explicit))


def test_softmax_dtype_converts_first(ng):
    x = _x(ng, ng.float32, requires_grad=True)
    out = ng.nn.functional.softmax(x, -1, dtype=ng.float64)
    assert out.dtype == ng.float64
    assert out.grad_fn.next_functions[0][0].name() == "ToCopyBackward0"
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        ng.nn.functional.log_softmax(x, 2)


# ---- dropout


def test_dropout_is_reproducible_with_manual_seed_and_scales_kept_values(ng):
    x = ng.ones(200, requires_grad=True)
    ng.manual_seed(3)
    a = ng.nn.functional.dropout(x, 0.25)
    ng.manual_seed(3)
    b = ng.nn.functional.dropout(x, 0.25)
    assert a.tolist() == b.tolist()
    np.testing.assert_allclose(np.unique(to_np(a.detach())), [0.0, 1 / 0.75], rtol=1e-6)
    assert a.grad_fn.name() == "MulBackward0"
    assert a.grad_fn._saved_self is None and tuple(a.grad_fn._saved_other.shape) == (200,)
    a.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), to_np(a.detach()))


def test_dropout_edge_cases_as_torch(ng):
    F = ng.nn.functional
    x = _x(ng, requires_grad=True)
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.5, training=False) is x
    zeroed = F.dropout(x, 1.0)
    assert zeroed.grad_fn.name() == "MulBackward0" and zeroed.grad_fn._saved_other.dim() == 0
    assert to_np(zeroed.detach()).tolist() == [[0.0] * 3] * 2
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
            F.dropout(x, p)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        F.dropout(ng.tensor([1, 2]), 0.5)
    y = x * 1
    assert F.dropout(y, 0.5, inplace=True) is y and y._version == 1


def test_channel_dropouts_zero_whole_channels(ng):
    F = ng.nn.functional
    ng.manual_seed(0)
    out1 = F.dropout1d(ng.ones(4, 8, 5, requires_grad=True), 0.5)
    assert tuple(out1.grad_fn._saved_other.shape) == (4, 8, 1)
    ng.manual_seed(0)
    out2 = F.dropout2d(ng.ones(4, 8, 3, 2), 0.5)
    for out in (out1, out2):
        per_channel = to_np(out.detach()).reshape(32, -1)
        assert all(len(set(row.tolist())) == 1 for row in per_channel)
        assert set(per_channel[:, 0].tolist()) == {0.0, 2.0}
    unbatched = F.dropout1d(ng.ones(3, 4), 0.5)
    assert tuple(unbatched.shape) == (3, 4)


def test_channel_dropout_shape_checks_and_warnings(ng):
    F = ng.nn.functional
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(ng.ones(1, 2, 3, 4))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d, which is deprecated"):
        F.dropout2d(ng.ones(2, 3))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d and assuming"):
        F.dropout2d(ng.ones(2, 3, 4))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 2"):
        F.dropout2d(ng.ones(1, 2, 3, 4), 2)


def test_alpha_dropout_keeps_selu_moments(ng):
    F = ng.nn.functional
    x = ng.ones(3)
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False
    ng.manual_seed(1)
    out = F.alpha_dropout(ng.zeros(400, requires_grad=True), 0.2, training=True)
    assert out.grad_fn.name() == "AddBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert len(set(np.round(to_np(out.detach()), 6).tolist())) == 2


# ---- fmod and remainder (the binary table's number_node)


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_modulo_values_dtypes_and_signs_match_torch(name):
    def run(lib):
        a = lib.tensor([5, -7, 9])
        f = lib.tensor([5.5, -7.25, 0.5])
        outs = [getattr(lib, name)(a, 3), getattr(lib, name)(a, 2.5), getattr(lib, name)(f, lib.tensor([-2.0])), a % -4]
        return [(str(o.dtype), o.tolist()) for o in outs]

    got, want = run_both(run)
    assert got == want


@pytest.mark.parametrize("name,kernel", [("fmod", "fmod_cpu"), ("remainder", "remainder_cpu")])
def test_modulo_errors_as_torch(ng, name, kernel):
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(ng, name)(ng.tensor([5, 3]), ng.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(ng, name)(ng.tensor([5, 3]), 0)
    with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for 'Bool'"):
        getattr(ng, name)(ng.tensor([True]), ng.tensor([True]))
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        getattr(x, name + "_")(2)
    assert x._version == 0


def test_modulo_in_place_forms_and_number_left_operand(ng):
    x = ng.tensor([5.5, -7.25], requires_grad=True)
    y = x * 1
    y %= 2
    assert y.grad_fn.name() == "RemainderBackward0" and y._version == 1
    assert y.tolist() == [1.5, 0.75]
    r = 2 % x
    assert r.tolist() == [2.0, -5.25]
    assert r.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        r.sum().backward()


def test_sgn_function_and_method_record_sgnbackward0():
    def run(lib):
        x = lib.tensor([-2.0, 0.0, 3.0, float("nan")], requires_grad=True)
        y = lib.sgn(x)
        fn = y.grad_fn
        return y.detach().tolist(), lib.tensor([-4, 0, 2]).sgn().tolist(), fn.name(), to_np(fn._saved_result).tolist()

    got, want = run_both(run)
    assert got == want


# The activations whose small inputs run one loop (forward, and the backward op from
# self), at the loop's limit of 128 elements and past it (the NumPy passes).
LOOPED = [("elu", (0.5,)), ("selu", ()), ("celu", (2.0,)), ("gelu", ()), ("softshrink", (0.8,))]
LOOPED += [("gelu", ("tanh",))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [6, 128, 129])
@pytest.mark.parametrize("name,args", LOOPED, ids=[f"{c[0]}-{c[1]}" for c in LOOPED])
def test_small_inputs_loop_as_the_passes_compute(name, args, n, dtype):
    """Values, gradients and second order against torch on both sides of the loop's
    limit, with infinities, zero and the shrink's bounds (elu's gradient takes its
    negative branch at 0, as torch's kernel), a transposed input and an expanded
    incoming gradient. (Not nan: torch's gradients there differ between its vectorized
    and its scalar loops.)"""
    x = np.linspace(-6, 6, 2 * n).reshape(n, 2).astype(dtype)
    x[:4, 0] = [np.inf, -np.inf, 0.0, 0.8]
    x[:2, 1] = [-0.8, -0.0]
    fn_args = (("approximate", args[0]),) if args and isinstance(args[0], str) else ()
    call_args = () if fn_args else args

    def run(lib):
        xs = from_np(lib, x, requires_grad=True)
        f = getattr(lib.nn.functional, name)
        out = f(xs.t(), *call_args, **dict(fn_args))
        (g,) = lib.autograd.grad(out.sum(), xs, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), xs) if g.requires_grad else (lib.zeros_like(xs),)
        return out, g, gg

    got, expected = run_both(run)
    for a, e in zip(got, expected):
        tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
        np.testing.assert_allclose(to_np(a), to_np(e), **tol)
