"""Tensor basics: factories, dtypes, NumPy interop, repr, shape methods and the
autograd attributes of a tensor."""

from __future__ import annotations

import re

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, dtype_name, from_np, to_np, torch_or_skip

# ----------------------------------------------------------------------------------
# Factories and dtypes


# fmt: off
FACTORIES = [  # (expression, shape, dtype, values)
    ("ng.tensor([[1.0, 2.0], [3.0, 4.0]])", (2, 2), "float32", [[1, 2], [3, 4]]),
    ("ng.tensor([1, 2])", (2,), "int64", [1, 2]),
    ("ng.tensor([1, 2.5])", (2,), "float32", [1, 2.5]),
    ("ng.tensor(True)", (), "bool", True),
    ("ng.tensor(3)", (), "int64", 3),
    ("ng.tensor(1.5, dtype=ng.float64)", (), "float64", 1.5),
    ("ng.tensor([1, 2], dtype=ng.float32)", (2,), "float32", [1, 2]),
    ("ng.ones(2, 3)", (2, 3), "float32", np.ones((2, 3))),
    ("ng.ones((2, 3), dtype=ng.int64)", (2, 3), "int64", np.ones((2, 3))),
    ("ng.zeros([4])", (4,), "float32", np.zeros(4)),
    ("ng.zeros(2, dtype=ng.bool)", (2,), "bool", [False, False]),
    ("ng.full((2, 2), 1.5)", (2, 2), "float32", np.full((2, 2), 1.5)),
    ("ng.full((3,), 7)", (3,), "int64", [7, 7, 7]),
    ("ng.full((2,), True)", (2,), "bool", [True, True]),
    ("ng.full((2,), 2, dtype=ng.float64)", (2,), "float64", [2, 2]),
    ("ng.arange(5)", (5,), "int64", [0, 1, 2, 3, 4]),
    ("ng.arange(5.0)", (5,), "float32", [0, 1, 2, 3, 4]),
    ("ng.arange(1, 7, 2)", (3,), "int64", [1, 3, 5]),
    ("ng.arange(0, 1, 0.25)", (4,), "float32", [0, 0.25, 0.5, 0.75]),
    ("ng.arange(3, dtype=ng.float64)", (3,), "float64", [0, 1, 2]),
    ("ng.ones_like(ng.tensor([1, 2, 3]))", (3,), "int64", [1, 1, 1]),
    ("ng.zeros_like(ng.ones(2, 2, dtype=ng.float64))", (2, 2), "float64", np.zeros((2, 2))),
    ("ng.zeros_like(ng.tensor([1, 2]), dtype=ng.float32)", (2,), "float32", [0, 0]),
]
# fmt: on


@pytest.mark.parametrize(("expr", "shape", "dtype", "values"), FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factory_shape_dtype_values(ng, expr, shape, dtype, values):
    t = eval(expr, {"ng": ng})
    assert tuple(t.shape) == shape
    assert dtype_name(t.dtype) == dtype
    np.testing.assert_array_equal(to_np(t), np.asarray(values))
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None


@pytest.mark.parametrize(
    ("build", "shape", "dtype"),
    [
        (lambda ng: ng.empty(2, 3), (2, 3), "float32"),
        (lambda ng: ng.empty((4,), dtype=ng.float64), (4,), "float64"),
        (lambda ng: ng.empty_like(ng.tensor([1, 2])), (2,), "int64"),
        (lambda ng: ng.rand(2, 3), (2, 3), "float32"),
        (lambda ng: ng.rand((5,), dtype=ng.float64), (5,), "float64"),
        (lambda ng: ng.randn(3, 2), (3, 2), "float32"),
        (lambda ng: ng.rand_like(ng.ones(2, dtype=ng.float64)), (2,), "float64"),
        (lambda ng: ng.randn_like(ng.ones(1, 4)), (1, 4), "float32"),
    ],
    ids=[
        "empty",
        "empty_f64",
        "empty_like",
        "rand",
        "rand_f64",
        "randn",
        "rand_like",
        "randn_like",
    ],
)
def test_uninitialised_and_random_factories_shape_dtype(ng, build, shape, dtype):
    t = build(ng)
    assert tuple(t.shape) == shape
    assert dtype_name(t.dtype) == dtype


def test_rand_and_randn_distributions(ng):
    u = to_np(ng.rand(20000, dtype=ng.float64))
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.02
    n = to_np(ng.randn(20000, dtype=ng.float64))
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1.0) < 0.05


@pytest.mark.parametrize("factory", ["rand", "randn"])
def test_manual_seed_makes_random_factories_reproducible(ng, factory):
    ng.manual_seed(1234)
    first = to_np(getattr(ng, factory)(3, 4))
    second = to_np(getattr(ng, factory)(3, 4))
    ng.manual_seed(1234)
    again = to_np(getattr(ng, factory)(3, 4))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)


def test_factories_accept_requires_grad(ng):
    for t in (
        ng.tensor([1.0, 2.0], requires_grad=True),
        ng.ones(2, requires_grad=True),
        ng.zeros(2, 2, dtype=ng.float64, requires_grad=True),
        ng.full((2,), 1.5, requires_grad=True),
        ng.ones_like(ng.ones(2), requires_grad=True),
    ):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None


@pytest.mark.parametrize(
    "build",
    [
        lambda lib: lib.tensor([1, 2], requires_grad=True),
        lambda lib: lib.ones(2, dtype=lib.int64, requires_grad=True),
    ],
    ids=["tensor", "ones"],
)
def test_factory_requires_grad_on_int_dtype_is_an_error(ng, build):
    with pytest.raises(RuntimeError, match="nly Tensors of floating point"):
        build(ng)
    assert_same_error(build)


def test_dtype_objects(ng):
    assert ng.ones(1).dtype == ng.float32
    assert ng.ones(1, dtype=ng.float64).dtype == ng.float64
    assert ng.tensor([1]).dtype == ng.int64
    assert ng.tensor([True]).dtype == ng.bool
    assert ng.float32 != ng.float64
    assert [dtype_name(d) for d in (ng.float32, ng.float64, ng.int64, ng.bool)] == [
        "float32",
        "float64",
        "int64",
        "bool",
    ]


@pytest.mark.parametrize("name", ["bool", "int64", "float16", "float32", "float64"])
def test_dtype_attributes_match_torch(ng, name):
    torch = torch_or_skip()
    d, expected = getattr(ng, name), getattr(torch, name)
    assert (d.is_floating_point, d.is_signed, d.itemsize) == (
        expected.is_floating_point,
        expected.is_signed,
        expected.itemsize,
    )


# ----------------------------------------------------------------------------------
# NumPy interop


@pytest.mark.parametrize(
    ("np_dtype", "name"),
    [
        (np.float32, "float32"),
        (np.float64, "float64"),
        (np.int64, "int64"),
        (np.bool_, "bool"),
    ],
)
def test_from_numpy_shares_memory(ng, np_dtype, name):
    arr = np.zeros((2, 3), dtype=np_dtype)
    t = ng.from_numpy(arr)
    assert dtype_name(t.dtype) == name
    arr[1, 2] = 1
    assert t.tolist()[1][2] == 1
    assert t._version == 0


def test_tensor_of_numpy_array_copies(ng):
    arr = np.arange(3.0)
    t = ng.tensor(arr)
    assert dtype_name(t.dtype) == "float64"
    arr[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_numpy_shares_memory_both_ways(ng):
    t = ng.tensor([[1.0, 2.0], [3.0, 4.0]])
    arr = t.numpy()
    assert arr.dtype == np.float32 and arr.shape == (2, 2)
    arr[0, 0] = 10.0
    assert t.tolist()[0][0] == 10.0
    t.add_(1)
    assert arr[0, 0] == 11.0


def test_numpy_of_tensor_requiring_grad_is_an_error(ng):
    x = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape("Can't call numpy() on Tensor that requires grad")):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]
    assert_same_error(lambda lib: lib.ones(2, requires_grad=True).numpy())


def test_np_asarray_of_tensor(ng):
    t = ng.tensor([1.0, 2.0], dtype=ng.float64)
    arr = np.asarray(t)
    assert arr.dtype == np.float64 and arr.tolist() == [1.0, 2.0]


# ----------------------------------------------------------------------------------
# repr


# fmt: off
REPRS = [  # (expression, repr)
    ("ng.tensor([1.0, 2.0])", "tensor([1., 2.])"),
    ("ng.tensor([1.0, 2.0], requires_grad=True)", "tensor([1., 2.], requires_grad=True)"),
    ("ng.tensor([1.0, 2.0], requires_grad=True) * 2", "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    ("ng.tensor([1.0, 2.0], dtype=ng.float64)", "tensor([1., 2.], dtype=torch.float64)"),
    ("ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)", "tensor([1., 2.], dtype=torch.float64, requires_grad=True)"),
    ("ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True).sum()", "tensor(3., dtype=torch.float64, grad_fn=<SumBackward0>)"),
    ("ng.tensor([1, 2])", "tensor([1, 2])"),
    ("ng.tensor(3.5)", "tensor(3.5000)"),
    ("ng.tensor(7)", "tensor(7)"),
    ("ng.tensor(True)", "tensor(True)"),
    ("ng.tensor([1.5, 2.25])", "tensor([1.5000, 2.2500])"),
    ("ng.tensor([[1.0, 2.0], [3.0, 4.0]])", "tensor([[1., 2.],\n        [3., 4.]])"),
    ("ng.tensor([[1, 2], [3, 4]])", "tensor([[1, 2],\n        [3, 4]])"),
    # The width and the mode come from the nonzero finite values only.
    ("ng.tensor([0.0, -float('inf')])", "tensor([0., -inf])"),
    ("ng.tensor([1.0, -float('inf')])", "tensor([1., -inf])"),
    ("ng.tensor([-0.0, 1.0])", "tensor([-0., 1.])"),
    ("ng.tensor([0.5, -float('inf'), float('nan')])", "tensor([0.5000,   -inf,    nan])"),
    ("ng.tensor([1.0, 10000.0])", "tensor([1.0000e+00, 1.0000e+04])"),
    ("ng.tensor([100.0, 0.5])", "tensor([100.0000,   0.5000])"),
    ("ng.tensor([1e-05, 0.0])", "tensor([1.0000e-05, 0.0000e+00])"),
    ("ng.tensor([float('nan')])", "tensor([nan])"),
]
# fmt: on


@pytest.mark.parametrize(("expr", "expected"), REPRS, ids=[r[0] for r in REPRS])
def test_repr_like_torch(ng, expr, expected):
    assert repr(eval(expr, {"ng": ng})) == expected


# ----------------------------------------------------------------------------------
# Shape


def test_shape_methods(ng):
    t = ng.zeros(2, 3, 4)
    assert tuple(t.shape) == (2, 3, 4)
    assert t.shape == (2, 3, 4)
    assert tuple(t.size()) == (2, 3, 4)
    assert t.size(0) == 2 and t.size(-1) == 4 and t.size(dim=1) == 3
    assert t.shape[1] == 3
    assert t.dim() == 3 and t.ndim == 3
    assert t.numel() == 24
    assert len(t) == 2


def test_zero_dim_shape(ng):
    t = ng.tensor(2.5)
    assert tuple(t.shape) == () and t.dim() == 0 and t.ndim == 0 and t.numel() == 1


def test_size_dim_out_of_range_is_index_error(ng):
    with pytest.raises(IndexError, match="Dimension out of range"):
        ng.zeros(2, 3).size(2)
    assert_same_error(lambda lib: lib.zeros(2, 3).size(-3))


def test_len_of_0dim_is_type_error(ng):
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ng.tensor(1.0))


@pytest.mark.parametrize(
    ("build", "expected", "kind"),
    [
        (lambda ng: ng.tensor(2.5), 2.5, float),
        (lambda ng: ng.tensor([[4.0]], dtype=ng.float64), 4.0, float),
        (lambda ng: ng.tensor(3), 3, int),
        (lambda ng: ng.tensor([True]), True, bool),
        (lambda ng: ng.tensor([2.0], requires_grad=True), 2.0, float),
    ],
    ids=["0dim", "one_element_2d", "int", "bool", "requires_grad"],
)
def test_item(ng, build, expected, kind):
    value = build(ng).item()
    assert type(value) is kind and value == expected


def test_item_of_several_elements_is_an_error(ng):
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to Scalar"):
        ng.ones(3).item()


def test_tolist(ng):
    assert ng.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert ng.tensor([1, 2]).tolist() == [1, 2]
    assert type(ng.tensor([1, 2]).tolist()[0]) is int
    assert ng.tensor(1.5).tolist() == 1.5
    assert ng.tensor([True, False]).tolist() == [True, False]


# ----------------------------------------------------------------------------------
# requires_grad, grad, is_leaf, retain_grad


def test_requires_grad_setter_on_leaf(ng):
    x = ng.ones(2)
    assert x.requires_grad is False
    x.requires_grad = True
    assert x.requires_grad is True and x.is_leaf
    x.requires_grad = False
    assert x.requires_grad is False


def test_requires_grad_on_int_tensor_is_an_error(ng):
    t = ng.tensor([1, 2])
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        t.requires_grad_()

    def setter(lib):
        lib.tensor([1, 2]).requires_grad = True

    assert_same_error(setter, key="only Tensors of floating point")
    assert_same_error(
        lambda lib: lib.tensor([True]).requires_grad_(),
        key="only Tensors of floating point",
    )


def test_requires_grad_of_non_leaf_cannot_be_changed(ng):
    y = ng.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables."):
        y.requires_grad = False

    def setter(lib):
        (lib.ones(2, requires_grad=True) * 2).requires_grad = False

    assert_same_error(setter, length=200)


def test_requires_grad_method(ng):
    x = ng.ones(2)
    assert x.requires_grad_() is x and x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad
    assert x.requires_grad_(requires_grad=True) is x and x.requires_grad


def test_grad_getter_and_setter(ng):
    x = ng.ones(3, requires_grad=True)
    assert x.grad is None
    g = ng.full((3,), 2.0)
    x.grad = g
    assert x.grad is g
    x.grad = None
    assert x.grad is None


def test_grad_setter_rejects_non_tensor(ng):
    x = ng.ones(3, requires_grad=True)
    with pytest.raises(
        TypeError,
        match="assigned grad expected to be a Tensor or None but got grad of type int",
    ):
        x.grad = 3

    def assign(lib):
        lib.ones(3, requires_grad=True).grad = 3

    assert_same_error(assign, length=200)


def test_grad_setter_rejects_wrong_size(ng):
    x = ng.ones(3, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=re.escape("attempting to assign a gradient of size '[2]' to a tensor of size '[3]'"),
    ):
        x.grad = ng.ones(2)
    assert x.grad is None

    def assign(lib):
        lib.ones(3, requires_grad=True).grad = lib.ones(2, 3)

    assert_same_error(assign, length=200)


def test_grad_setter_rejects_itself(ng):
    x = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        x.grad = x


def test_grad_setter_rejects_other_dtype(ng):
    x = ng.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
        x.grad = ng.ones(3, dtype=ng.float64)


def test_grad_of_non_leaf_warns_and_is_none(ng):
    y = ng.ones(2, requires_grad=True) * 2
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_is_leaf(ng):
    a = ng.ones(2)
    x = ng.ones(2, requires_grad=True)
    assert a.is_leaf and x.is_leaf
    assert (a * 2).is_leaf  # does not require grad
    assert not (x * 2).is_leaf
    assert x.detach().is_leaf


def test_retain_grad(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y * y
    assert not y.retains_grad
    y.retain_grad()
    assert y.retains_grad
    z.sum().backward()
    assert to_np(y.grad).tolist() == [6.0, 12.0]
    assert to_np(x.grad).tolist() == [18.0, 36.0]
    assert not x.retains_grad
    x.retain_grad()  # no-op on a leaf
    assert not x.retains_grad
    assert not z.retains_grad


def test_retain_grad_without_grad_is_an_error(ng):
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        ng.ones(2).retain_grad()


# ----------------------------------------------------------------------------------
# detach, versions, aliasing


def test_detach_shares_memory_and_version_counter(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d._base is None
    assert d.data_ptr() == x.data_ptr()
    d.add_(1)
    assert d._version == 1 and x._version == 1
    assert to_np(x).tolist() == [2.0, 3.0]


def test_detach_inplace(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    assert to_np(y).tolist() == [2.0, 4.0]


DETACHED_IN_PLACE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not "
    "supported, please use out-of-place `.detach()` instead"
)


@pytest.mark.parametrize("op", ["sin", "mul"])
def test_saved_input_detached_in_place_is_refused_by_backward(ng, op):
    """A formula's saved input that lost its history to ``detach_()`` raises torch's
    error; the ``_saved_self`` attribute still reads it; saved outputs are unaffected."""
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 4.0], requires_grad=True)
    a = x.clone()
    b = a.sin() if op == "sin" else a * w
    a.detach_()
    assert to_np(b.grad_fn._saved_self).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match=re.escape(DETACHED_IN_PLACE)):
        b.sum().backward()
    c = x * 1
    d = c.exp()  # saves its result, not c
    c.detach_()
    d.sum().backward()
    assert_close(x.grad, np.exp([1.0, 2.0]))


def test_version_increments_by_one_per_inplace_op(ng):
    t = ng.zeros(2)
    assert t._version == 0
    t.add_(1)
    assert t._version == 1
    t.mul_(2).sub_(1)
    assert t._version == 3
    t.sin()
    assert t._version == 3


def test_data_ptr_of_views_and_detach(ng):
    x = ng.zeros(2, 3)
    for alias in (
        x.view(6),
        x.t(),
        x[0],
        x[:, :2],
        x.detach(),
        x.reshape(3, 2),
        x.unsqueeze(0),
    ):
        assert alias.data_ptr() == x.data_ptr()
    assert x[1].data_ptr() - x.data_ptr() == 3 * 4
    assert x[:, 1:].data_ptr() - x.data_ptr() == 4
    assert x.clone().data_ptr() != x.data_ptr()


def test_output_nr(ng):
    x = ng.ones(2, 3, requires_grad=True)
    assert x.output_nr == 0
    assert (x * 2).output_nr == 0
    values, indices = x.max(dim=1)
    assert values.output_nr == 0


def test_base_of_views(ng):
    x = ng.ones(2, 3, requires_grad=True)
    v = x.view(6)
    assert x._base is None
    assert v._base is x
    assert v[1:]._base is x
    assert (x * 2)._base is None
    assert x.detach()._base is None


def test_data_is_a_detached_alias_with_its_own_version(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    assert d.data_ptr() == x.data_ptr()
    d.mul_(3)
    assert to_np(x).tolist() == [3.0, 6.0]
    assert x._version == 0


def test_device_and_cpu(ng):
    x = ng.ones(2)
    assert str(x.device) == "cpu"
    assert x.cpu() is x


def test_to_dtype(ng):
    x = ng.tensor([1.5, 2.5])
    y = x.to(ng.float64)
    assert dtype_name(y.dtype) == "float64"
    assert to_np(y).tolist() == [1.5, 2.5]
    assert x.to(ng.float32) is x
    assert x.to("cpu") is x
    assert ng.tensor([1.7, -1.7]).to(ng.int64).tolist() == [1, -1]
    assert ng.tensor([1, 0]).to(ng.float32).tolist() == [1.0, 0.0]


def test_to_dtype_is_differentiable(ng):
    x = ng.tensor([1.5, 2.5], requires_grad=True)
    y = x.to(ng.float64)
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).sum().backward()
    assert dtype_name(x.grad.dtype) == "float32"
    assert_close(x.grad, [3.0, 5.0])


def test_from_np_helper_round_trip(ng):
    arr = np.array([[1.0, 2.0]])
    t = from_np(ng, arr, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    np.testing.assert_array_equal(to_np(t), arr)


def test_format_of_zero_dim_tensor_is_its_number(ng):
    x = ng.tensor(1.5, dtype=ng.float64)
    assert f"{x}" == "1.5"
    assert f"{x:.2f}" == "1.50"
    assert f"{ng.ones(2)}" == str(ng.ones(2))
    with pytest.raises(TypeError):
        f"{ng.ones(2):.2f}"
