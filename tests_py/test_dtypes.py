"""The integer dtypes uint8, int8, int16 and int32 against torch: the dtype objects and
their aliases, type promotion with every other dtype, arithmetic that wraps as torch's,
the overflow checks of creation and fills, reductions, indexing with int32 and uint8,
conversions (``.int() .short() .byte() .char() .type()``), NumPy interop and errors.
"""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import numpy as np
import pytest

from oracle import assert_same_error, run_both, to_np

NARROW = ("uint8", "int8", "int16", "int32")
ALL = ("bool", *NARROW, "int64", "float16", "bfloat16", "float32", "float64")


def _facts(t: Any) -> tuple[str, list[Any]]:
    return str(t.dtype).split(".")[-1], to_np(t).reshape(-1).tolist()


@pytest.mark.parametrize("name", NARROW)
def test_dtype_objects(ng, name):
    d = getattr(ng, name)
    bits = {"uint8": 8, "int8": 8, "int16": 16, "int32": 32}[name]
    assert repr(d) == f"torch.{name}"
    assert d.itemsize == bits // 8
    assert d.is_floating_point is False
    assert d.is_signed is (name != "uint8")
    assert pickle.loads(pickle.dumps(d)) is d
    assert copy.deepcopy(d) is d


def test_aliases(ng):
    assert ng.short is ng.int16
    assert ng.int is ng.int32
    assert ng.long is ng.int64


def test_promotion_with_every_dtype(ng, torch_ref):
    def table(lib: Any) -> list[str]:
        out = []
        for a in ALL:
            for b in ALL:
                x = lib.ones(2, dtype=getattr(lib, a))
                y = lib.ones(2, dtype=getattr(lib, b))
                out.append(str((x * y).dtype))
        return out

    assert table(ng) == table(torch_ref)


@pytest.mark.parametrize("name", NARROW)
def test_scalars_and_zero_dim_tensors_do_not_raise_an_integer_dtype(ng, name):
    t = ng.tensor([1, 2], dtype=getattr(ng, name))
    assert (t + 1).dtype == t.dtype
    assert (t + ng.tensor(1)).dtype == t.dtype  # a 0-dim int64
    assert (t * 2.5).dtype == ng.float32
    assert (t / 2).dtype == ng.float32
    assert (t + True).dtype == t.dtype


@pytest.mark.parametrize(
    "expr",
    [
        "lib.tensor([1, 2, 3], dtype=lib.uint8) + 300",
        "lib.tensor([1, 2, 3], dtype=lib.int8) + 300",
        "lib.tensor([250, 3], dtype=lib.uint8) * 2",
        "lib.tensor([100, -100], dtype=lib.int8) * 2",
        "-lib.tensor([1, 200], dtype=lib.uint8)",
        "lib.tensor([2**31 - 1], dtype=lib.int32) + 1",
        "lib.tensor([1, 2], dtype=lib.uint8) - lib.tensor([2, 1], dtype=lib.uint8)",
        "lib.tensor([1, 2], dtype=lib.uint8) + lib.tensor([-1, 1], dtype=lib.int8)",
        "lib.tensor([7, -7], dtype=lib.int16) / 2",
        "lib.tensor([[1, 2], [3, 4]], dtype=lib.int32) @ lib.tensor([[1], [1]], dtype=lib.int32)",
        "lib.maximum(lib.tensor([1, 5], dtype=lib.int16), lib.tensor([3, 2], dtype=lib.int8))",
        "lib.where(lib.tensor([True, False]), lib.tensor([1, 2], dtype=lib.uint8), 7)",
        "lib.cat([lib.tensor([1], dtype=lib.int8), lib.tensor([2], dtype=lib.int32)])",
        "lib.tensor([3, 4], dtype=lib.int32).pow(2)",
        "lib.tensor([1, 2], dtype=lib.int16).exp().round()",
        "1 - lib.tensor([1, 2], dtype=lib.int8)",
        "3 - lib.tensor([1, 2])",
        "2.5 - lib.tensor([1, 2], dtype=lib.uint8)",
    ],
)
def test_arithmetic_wraps_and_promotes_as_torch(expr):
    got, expected = run_both(lambda lib: eval(expr))
    assert _facts(got) == _facts(expected)


@pytest.mark.parametrize("name", NARROW)
def test_reductions(ng, torch_ref, name):
    def facts(lib: Any) -> list[Any]:
        t = lib.tensor([[1, 2], [3, 4]], dtype=getattr(lib, name))
        results = [t.sum(), t.sum(0), t.sum(1, dtype=lib.int32), t.prod(), t.amax(0), t.argmax(), t.all(), t.any(1)]
        results += list(t.max(1)) + list(t.min(0))
        return [_facts(r) for r in results]

    assert facts(ng) == facts(torch_ref)


def test_mean_of_an_integer_tensor_is_torch_error():
    assert_same_error(lambda lib: lib.tensor([1, 2], dtype=lib.int32).mean(), "mean(): could not infer output dtype")


def test_integer_tensor_cannot_require_grad():
    assert_same_error(
        lambda lib: lib.tensor([1, 2], dtype=lib.int16).requires_grad_(),
        "only Tensors of floating point dtype can require gradients",
    )
    assert_same_error(
        lambda lib: lib.tensor([1], dtype=lib.uint8, requires_grad=True),
        "Only Tensors of floating point and complex dtype can require gradients",
    )


@pytest.mark.parametrize(
    "expr",
    [
        "lib.tensor([256], dtype=lib.uint8)",
        "lib.tensor([-256], dtype=lib.uint8)",
        "lib.tensor([128], dtype=lib.int8)",
        "lib.tensor([2**31], dtype=lib.int32)",
        "lib.tensor([255.5], dtype=lib.uint8)",
        "lib.tensor([float('nan')], dtype=lib.int16)",
        "lib.full((2,), 256, dtype=lib.uint8)",
        "lib.full((2,), -129, dtype=lib.int8)",
        "lib.full((2,), 2**63, dtype=lib.int64)",
        "lib.zeros(2, dtype=lib.int16).fill_(40000)",
        "lib.zeros(2, dtype=lib.int32).fill_(2**31)",
    ],
)
def test_values_out_of_range_are_torch_overflow_error(expr):
    assert_same_error(lambda lib: eval(expr), "without overflow")


@pytest.mark.parametrize(
    "expr",
    [
        "lib.tensor([-1, 255], dtype=lib.uint8)",
        "lib.tensor([1.9, -1.9], dtype=lib.int8)",
        "lib.full((2,), -1, dtype=lib.uint8)",
        "lib.full((1,), 2**63 - 1, dtype=lib.int64)",
        "lib.full((2,), 2.7, dtype=lib.int16)",
        "lib.zeros(2, dtype=lib.int8).fill_(-128)",
        "lib.arange(5, dtype=lib.uint8)",
        "lib.eye(2, dtype=lib.int32)",
        "lib.zeros_like(lib.tensor([1, 2], dtype=lib.int8))",
        "lib.full_like(lib.tensor([1, 2], dtype=lib.int16), 7)",
    ],
)
def test_creation_in_range(expr):
    got, expected = run_both(lambda lib: eval(expr))
    assert _facts(got) == _facts(expected)


@pytest.mark.parametrize("name", NARROW)
def test_conversions_and_type_names(ng, torch_ref, name):
    def facts(lib: Any) -> list[Any]:
        t = lib.tensor([1.7, -2.2, 3.0])
        converted = [t.int(), t.short(), t.char(), t.to(getattr(lib, name)), t.type(getattr(lib, name))]
        same = t.to(getattr(lib, name))
        return [_facts(c) for c in converted] + [same.type(), str(same.double().dtype), same.type(same.dtype) is same]

    assert facts(ng) == facts(torch_ref)


def test_byte_conversion(ng, torch_ref):
    got, expected = (lib.tensor([1.7, 300.0, 3.0]).byte() for lib in (ng, torch_ref))
    assert _facts(got) == _facts(expected)


@pytest.mark.parametrize("name", ["torch.IntTensor", "torch.ByteTensor", "torch.DoubleTensor", "torch.BoolTensor"])
def test_type_with_a_legacy_name(ng, torch_ref, name):
    got, expected = (lib.tensor([0.0, 2.5]).type(name) for lib in (ng, torch_ref))
    assert _facts(got) == _facts(expected)


def test_type_errors():
    assert_same_error(lambda lib: lib.tensor([1.0]).type("FloatTensor"), "invalid type: 'FloatTensor'")
    assert_same_error(lambda lib: lib.tensor([1.0]).type(3), "dtype must be a type, str, or dtype object")


@pytest.mark.parametrize("name", NARROW)
def test_item_and_tolist_are_python_ints(ng, name):
    t = ng.tensor([[5, 6]], dtype=getattr(ng, name))
    assert t[0, 1].item() == 6 and type(t[0, 1].item()) is int
    assert t.tolist() == [[5, 6]] and type(t.tolist()[0][0]) is int


@pytest.mark.parametrize("name", NARROW)
def test_numpy_round_trip_keeps_the_dtype(ng, name):
    a = np.array([1, 2, 3], dtype=name)
    assert str(ng.from_numpy(a).dtype) == f"torch.{name}"
    assert str(ng.tensor(a).dtype) == f"torch.{name}"
    assert str(ng.as_tensor(a).dtype) == f"torch.{name}"
    assert ng.tensor([1], dtype=getattr(ng, name)).numpy().dtype == np.dtype(name)
    shared = ng.from_numpy(a)
    shared[0] = 9
    assert a[0] == 9


def test_numpy_scalars_keep_their_dtype(ng, torch_ref):
    def facts(lib: Any) -> list[str]:
        return [
            str(lib.tensor(np.int32(5)).dtype),
            str(lib.tensor(np.int16(5)).dtype),
            str(lib.tensor(np.float32(2)).dtype),
        ]

    assert [s.split(".")[-1] for s in facts(ng)] == [s.split(".")[-1] for s in facts(torch_ref)]


@pytest.mark.parametrize("name", NARROW)
def test_repr(ng, torch_ref, name):
    got, expected = (repr(lib.tensor([[1, -2], [3, 100]], dtype=getattr(lib, name))) for lib in (ng, torch_ref))
    assert got == expected


def test_indexing_with_int32_indices(ng, torch_ref):
    def facts(lib: Any) -> Any:
        t = lib.arange(6.0).reshape(2, 3)
        idx = lib.tensor([2, 0, -1], dtype=lib.int32)
        t[0, idx[:1]] = 10.0
        return _facts(t[:, idx]), _facts(t)

    assert facts(ng) == facts(torch_ref)


def test_indexing_with_int32_out_of_range_is_torch_error():
    assert_same_error(
        lambda lib: lib.arange(3.0)[lib.tensor([5], dtype=lib.int32)],
        "index 5 is out of bounds for dimension 0 with size 3",
    )


@pytest.mark.parametrize("name", ["int8", "int16"])
def test_indexing_with_other_integer_dtypes_is_torch_error(name):
    assert_same_error(
        lambda lib: lib.arange(3.0)[lib.tensor([1], dtype=getattr(lib, name))],
        "tensors used as indices must be long, int, byte or bool tensors",
    )


def test_a_uint8_index_is_a_mask_with_torch_warning(ng, torch_ref):
    def facts(lib: Any) -> Any:
        t = lib.arange(6.0).reshape(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            picked = t[lib.tensor([1, 0], dtype=lib.uint8)]
        return _facts(picked), [str(w.message) for w in caught]

    got, expected = facts(ng), facts(torch_ref)
    assert got[0] == expected[0]
    assert len(got[1]) == 1
    assert "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead." in got[1][0]
    assert "indexing with dtype torch.uint8 is now deprecated" in expected[1][0]


@pytest.mark.parametrize(
    "expr",
    [
        "lib.tensor([True]) - lib.tensor([1])",
        "lib.tensor([1]) - lib.tensor([True])",
        "lib.tensor([1.0]) - lib.tensor([True])",
        "1 - lib.tensor([True])",
        "lib.tensor([True]) - 1",
    ],
)
def test_subtracting_a_bool_tensor_is_torch_error(expr):
    assert_same_error(lambda lib: eval(expr), "Subtraction, the `-` operator, with a bool tensor is not supported.")


def test_return_types_print_as_torch(ng, torch_ref):
    got, expected = (repr(lib.tensor([[1, 5], [3, 4]], dtype=lib.int16).max(1)) for lib in (ng, torch_ref))
    assert got == expected
