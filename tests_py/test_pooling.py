"""Pooling and one_hot in ``nn.functional`` against torch: max and average pooling in
one and two dims (kernel, stride, padding, dilation, ceil_mode, count_include_pad,
divisor_override), the adaptive pools, returned indices, unbatched and empty-batch
inputs, dtypes, NaN, gradients and double backward (node names and values), one_hot,
and torch's errors for bad arguments.

The op_specs rows (``POOLING``) add the node names, saved values, gradients and second
order against finite differences.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracle import assert_same_error, assert_same_result, from_np, run_both, to_np


def _data(*shape: int, dtype: str = "float64") -> np.ndarray:
    """Distinct values (no ties), deterministic."""
    n = int(np.prod(shape))
    values = (np.arange(n) * 37 % n - n / 2) / 4
    return values.reshape(shape).astype(dtype)


def _forward_and_backward(fn: Callable[[Any, Any], Any], data: np.ndarray) -> Callable[[Any], Any]:
    """The result of fn and the input's gradient for a fixed output gradient."""

    def run(lib: Any) -> Any:
        x = from_np(lib, data, True)
        result = fn(lib, x)
        out = result[0] if isinstance(result, tuple) else result
        weights = from_np(lib, np.arange(out.numel(), dtype=data.dtype).reshape(tuple(out.shape)) % 5 + 1)
        (out * weights).sum().backward()
        return result, x.grad

    return run


def _F(lib: Any) -> Any:
    return lib.nn.functional


MAX_POOL_2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), ceil_mode=True),
    dict(kernel_size=3, stride=2, dilation=2, padding=1, ceil_mode=True),
    dict(kernel_size=[3, 2], stride=1, dilation=(1, 3)),
]


@pytest.mark.parametrize("kwargs", MAX_POOL_2D)
def test_max_pool2d_values_indices_and_gradient_match_torch(kwargs):
    got, expected = run_both(
        _forward_and_backward(lambda lib, x: _F(lib).max_pool2d(x, **kwargs, return_indices=True), _data(2, 2, 7, 8))
    )
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])


AVG_POOL_2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(3, 1), padding=(1, 1), ceil_mode=True),
    dict(kernel_size=2, stride=1, padding=1, divisor_override=3),
]


@pytest.mark.parametrize("kwargs", AVG_POOL_2D)
def test_avg_pool2d_values_and_gradient_match_torch(kwargs):
    got, expected = run_both(_forward_and_backward(lambda lib, x: _F(lib).avg_pool2d(x, **kwargs), _data(2, 7, 8)))
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])


ONE_DIM: list[Callable[[Any, Any], Any]] = [
    lambda lib, x: _F(lib).max_pool1d(x, 3, 2, 1, return_indices=True),
    lambda lib, x: _F(lib).max_pool1d(x, 2, dilation=2, ceil_mode=True),
    lambda lib, x: _F(lib).max_pool1d_with_indices(x, [2]),
    lambda lib, x: _F(lib).avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda lib, x: _F(lib).adaptive_avg_pool1d(x, 4),
    lambda lib, x: _F(lib).adaptive_max_pool1d(x, 3, return_indices=True),
    lambda lib, x: _F(lib).adaptive_max_pool1d_with_indices(x, (5,)),
]


@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 9)])
@pytest.mark.parametrize("fn", ONE_DIM)
def test_one_dim_pools_match_torch(fn, shape):
    got, expected = run_both(_forward_and_backward(fn, _data(*shape)))
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])
    assert type(got[0] if not isinstance(got[0], tuple) else got[0][0]).__name__ == "Tensor"


ADAPTIVE: list[Callable[[Any, Any], Any]] = [
    lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (3, 4)),
    lambda lib, x: _F(lib).adaptive_avg_pool2d(x, 5),
    lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (None, 2)),
    lambda lib, x: _F(lib).adaptive_avg_pool2d(x, 1),
    lambda lib, x: _F(lib).adaptive_max_pool2d(x, (3, 4), return_indices=True),
    lambda lib, x: _F(lib).adaptive_max_pool2d_with_indices(x, 4),
    lambda lib, x: _F(lib).adaptive_max_pool2d(x, (2, None)),
]


@pytest.mark.parametrize("shape", [(2, 2, 7, 6), (2, 7, 6)])
@pytest.mark.parametrize("fn", ADAPTIVE)
def test_adaptive_pools_match_torch(fn, shape):
    got, expected = run_both(_forward_and_backward(fn, _data(*shape)))
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int32", "uint8"])
def test_dtypes_match_torch(dtype):
    data = np.abs(_data(1, 2, 5, 6)) * (4 if "int" in dtype else 1)
    cases = [
        lambda lib, x: _F(lib).max_pool2d(x, 2, return_indices=True),
        lambda lib, x: _F(lib).max_pool1d(x[0], 3, return_indices=True),
    ]
    if dtype in ("float32", "float16", "int64"):
        cases += [
            lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1),
            lambda lib, x: _F(lib).avg_pool2d(x, 2, count_include_pad=False, divisor_override=3),
        ]
    if "float" in dtype:
        cases += [
            lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (2, 4)),
            lambda lib, x: _F(lib).adaptive_max_pool2d(x, 3, True),
        ]
    got, expected = run_both(lambda lib: [fn(lib, from_np(lib, data.astype(dtype))) for fn in cases])
    for g, e in zip(got, expected):
        assert_same_result(g, e)


def test_nan_is_the_maximum_and_empty_batches_pool_to_empty():
    data = _data(1, 1, 4, 4)
    data[0, 0, 1, 0] = np.nan
    data[0, 0, 3, 3] = np.nan
    got, expected = run_both(
        lambda lib: [
            _F(lib).max_pool2d(from_np(lib, data), 2, return_indices=True),
            _F(lib).adaptive_max_pool2d(from_np(lib, data), 1, return_indices=True),
            _F(lib).max_pool2d(lib.zeros(0, 2, 4, 4), 2),
            _F(lib).avg_pool2d(lib.zeros(0, 2, 4, 4), 2),
            _F(lib).max_pool1d(lib.zeros(0, 2, 4), 2),
            _F(lib).adaptive_avg_pool2d(lib.zeros(2, 4, 4), 0),
        ]
    )
    for g, e in zip(got, expected):
        assert_same_result(g, e)


DOUBLE_BACKWARD: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("MaxPool2DWithIndicesBackwardBackward0", lambda lib, x: _F(lib).max_pool2d(x, 2, 1)),
    ("AvgPool2DBackwardBackward0", lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("AdaptiveAvgPool2DBackwardBackward0", lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (2, 3))),
    ("AdaptiveMaxPool2DBackwardBackward0", lambda lib, x: _F(lib).adaptive_max_pool2d(x, (2, 3))),
]


@pytest.mark.parametrize(("node", "fn"), DOUBLE_BACKWARD)
def test_double_backward_records_torchs_node_and_values(node, fn):
    data = _data(1, 2, 5, 6)

    def run(lib: Any) -> Any:
        x = from_np(lib, data, True)
        out = fn(lib, x)
        g = from_np(lib, np.ones(tuple(out.shape)), True)
        (gx,) = lib.autograd.grad(out, x, g, create_graph=True)
        name = gx.grad_fn.name()
        saved = {a: getattr(gx.grad_fn, a) for a in dir(gx.grad_fn) if a.startswith("_saved_")}
        (gx * gx).sum().backward()
        return name, sorted(saved), gx, g.grad, x.grad

    got, expected = run_both(run)
    assert got[0] == expected[0] == node
    assert got[1] == expected[1]
    for g, e in zip(got[2:], expected[2:]):
        assert_same_result(g, e)


def test_one_hot_matches_torch():
    got, expected = run_both(
        lambda lib: [
            _F(lib).one_hot(lib.tensor([[0, 2], [1, 3]])),
            _F(lib).one_hot(lib.tensor([1, 0]), 4),
            _F(lib).one_hot(lib.tensor(2), num_classes=3),
            _F(lib).one_hot(lib.zeros(0, 2, dtype=lib.int64), 3),
        ]
    )
    for g, e in zip(got, expected):
        assert_same_result(g, e)
        assert g.requires_grad is False


PADS: list[Callable[[Any, Any], Any]] = [
    lambda F, x: F.pad(x, (1, 2)),
    lambda F, x: F.pad(x, [0, 1, 2, 0], value=-3.5),
    lambda F, x: F.pad(x, (-1, 1, 1, -2, 1, 0)),
    lambda F, x: F.pad(x, (-2, -3)),
    lambda F, x: F.pad(x, ()),
    lambda F, x: F.pad(x[:, :, 1:], (1, 1), mode="constant", value=None),
]


@pytest.mark.parametrize("fn", PADS)
def test_constant_pad_matches_torch(fn):
    got, expected = run_both(_forward_and_backward(lambda lib, x: fn(lib.nn.functional, x), _data(2, 3, 5)))
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])


@pytest.mark.parametrize("dtype", ["int64", "bool", "float16"])
def test_constant_pad_keeps_the_dtype_and_casts_the_value(dtype):
    got, expected = run_both(
        lambda lib: [
            lib.nn.functional.pad(from_np(lib, _data(2, 3).astype(dtype)), (1, 1, 2, 0), value=2.5),
            lib.nn.functional.pad(from_np(lib, _data(2, 3).astype(dtype)), (0, -1)),
        ]
    )
    for g, e in zip(got, expected):
        assert_same_result(g, e)


X4 = (1, 2, 5, 5)
ERRORS: list[tuple[tuple[int, ...], Callable[[Any, Any], Any]]] = [
    (X4, lambda F, x: F.max_pool2d(x, (2, 2, 2))),
    (X4, lambda F, x: F.max_pool2d(x, 2, (1, 1, 1))),
    (X4, lambda F, x: F.max_pool2d(x, 2, padding=(1, 1, 1))),
    (X4, lambda F, x: F.max_pool2d(x, 2, dilation=(1, 1, 1))),
    (X4, lambda F, x: F.max_pool2d(x, 2, padding=2)),
    (X4, lambda F, x: F.max_pool2d(x, 2, padding=-1)),
    (X4, lambda F, x: F.max_pool2d(x, 2, stride=0)),
    (X4, lambda F, x: F.max_pool2d(x, 2, dilation=0)),
    (X4, lambda F, x: F.max_pool2d(x, (2, 2), dilation=(3, 3), padding=2)),
    (X4, lambda F, x: F.max_pool2d(x, 6)),
    (X4, lambda F, x: F.max_pool2d(x, 2.0)),
    ((5, 5), lambda F, x: F.max_pool2d(x, 2)),
    ((1, 0, 4, 4), lambda F, x: F.max_pool2d(x, 2)),
    (X4, lambda F, x: F.max_pool2d(x > 0, 2)),
    (X4, lambda F, x: F.avg_pool2d(x, (2, 2, 2))),
    (X4, lambda F, x: F.avg_pool2d(x, 2, padding=2)),
    (X4, lambda F, x: F.avg_pool2d(x, 2, divisor_override=0)),
    (X4, lambda F, x: F.avg_pool2d(x, 6)),
    (X4, lambda F, x: F.avg_pool2d(x > 0, 2)),
    (X4, lambda F, x: F.avg_pool2d(x.int(), 2)),
    ((5, 5), lambda F, x: F.avg_pool2d(x, 2)),
    ((1, 2, 3, 4, 5), lambda F, x: F.avg_pool2d(x, 2)),
    ((2, 5), lambda F, x: F.max_pool1d(x[0], 2)),
    ((2, 0, 3), lambda F, x: F.max_pool1d(x, 2)),
    ((2, 5), lambda F, x: F.max_pool1d(x, (2, 2))),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, stride=(1, 1))),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, padding=(1, 1))),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, dilation=(1, 1))),
    ((2, 5), lambda F, x: F.max_pool1d(x, 0)),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, stride=0)),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, padding=-1)),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, padding=2)),
    ((2, 5), lambda F, x: F.max_pool1d(x, 2, dilation=0)),
    ((2, 5), lambda F, x: F.max_pool1d(x, 6)),
    ((2, 5), lambda F, x: F.max_pool1d(x > 0, 2)),
    ((2, 5), lambda F, x: F.avg_pool1d(x, (2, 2))),
    ((2, 5), lambda F, x: F.avg_pool1d(x, 2, stride=(1, 1))),
    ((2, 5), lambda F, x: F.avg_pool1d(x[0], 2)),
    ((2, 5), lambda F, x: F.avg_pool1d(x, 6)),
    ((2, 5), lambda F, x: F.adaptive_avg_pool1d(x, (2, 2))),
    ((1, 2, 5), lambda F, x: F.adaptive_max_pool1d(x[None], 2)),
    (X4, lambda F, x: F.adaptive_avg_pool2d(x[0], (2, 2, 2))),
    ((5, 5), lambda F, x: F.adaptive_avg_pool2d(x, 2)),
    ((5, 5), lambda F, x: F.adaptive_max_pool2d(x, 2)),
    (X4, lambda F, x: F.adaptive_avg_pool2d(x, -1)),
    (X4, lambda F, x: F.adaptive_max_pool2d(x, -1)),
    ((1, 0, 3, 3), lambda F, x: F.adaptive_max_pool2d(x, 2)),
    ((1, 2, 0, 3), lambda F, x: F.adaptive_avg_pool2d(x, 2)),
    (X4, lambda F, x: F.adaptive_avg_pool2d(x.long(), 2)),
    (X4, lambda F, x: F.adaptive_max_pool2d(x.long(), 2)),
    (X4, lambda F, x: F.one_hot(x.long().int())),
    ((0,), lambda F, x: F.one_hot(x.long())),
    ((3,), lambda F, x: F.one_hot(x.long() - 1)),
    ((3,), lambda F, x: F.one_hot(x.long() + 2, 2)),
    (X4, lambda F, x: F.one_hot(x)),
    (X4, lambda F, x: F.pad(x, (1, 2, 3))),
    (X4, lambda F, x: F.pad(x, (1,) * 10)),
    (X4, lambda F, x: F.pad(x, (-3, -3))),
    (X4, lambda F, x: F.pad(x, (1.5, 1))),
    (X4, lambda F, x: F.pad(x, (1, 1), mode="foo")),
    (X4, lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0)),
    (X4, lambda F, x: F.pad(x, (4, 4), mode="reflect")),
    ((5,), lambda F, x: F.pad(x, (1, 1), mode="replicate")),
    (X4, lambda F, x: F.pad(x, (1,) * 8, mode="circular")),
]


@pytest.mark.parametrize(("shape", "fn"), ERRORS)
def test_bad_arguments_raise_torchs_error(shape, fn):
    data = _data(*shape) if 0 not in shape else np.zeros(shape)
    assert_same_error(lambda lib: fn(lib.nn.functional, from_np(lib, data)), length=80)


def test_tensors_stay_usable_after_an_error(ng):
    x = ng.ones(1, 1, 4, 4, requires_grad=True)
    with pytest.raises(RuntimeError):
        ng.nn.functional.max_pool2d(x, 2, padding=3)
    out = ng.nn.functional.max_pool2d(x, 2)
    out.sum().backward()
    assert to_np(x.grad).sum() == 4


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    ("shape", "pad"),
    [((2, 5), (2, 1)), ((1, 2, 5), (-1, 3)), ((1, 3, 4), (1, 2, 2, 0)), ((1, 2, 3, 4), (0, 3, 2, -1))],
    ids=["unbatched_1d", "crop_1d", "2d", "crop_2d"],
)
def test_non_constant_pad_modes_match_torch(ng, torch_ref, mode, shape, pad):
    """Values and gradients of the index-built modes (their nodes are npgrad's own)."""
    data = _data(*shape)
    weights = None

    def run(lib):
        nonlocal weights
        x = from_np(lib, data, requires_grad=True)
        out = lib.nn.functional.pad(x, pad, mode=mode)
        if weights is None:
            weights = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * from_np(lib, weights)).sum().backward()
        return to_np(out), to_np(x.grad)

    got, want = run(ng), run(torch_ref)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b)


def test_reflect_pad_second_order_against_finite_differences(ng):
    x = from_np(ng, _data(1, 2, 4), requires_grad=True)
    assert ng.autograd.gradgradcheck(lambda t: ng.nn.functional.pad(t, (2, 3), mode="reflect") ** 2, (x,))


@pytest.mark.parametrize(
    ("name", "output_size", "message"),
    [
        ("adaptive_max_pool1d", 2**62, "Storage size calculation overflowed with sizes=[3, 1, 4611686018427387904]"),
        ("adaptive_avg_pool1d", 2**62, "numel: integer multiplication overflow"),
        ("adaptive_max_pool2d", (2**40, 2**40), "Storage size calculation overflowed with sizes=[3, 1099511627776,"),
        ("adaptive_avg_pool2d", (2**40, 2**40), "numel: integer multiplication overflow"),
    ],
)
def test_adaptive_pool_output_size_too_large_to_allocate(ng, name, output_size, message):
    """Refused before the pooling windows are built (npgrad used to build them for ever)."""
    x = ng.zeros(3, 4, 4, dtype=ng.float64) if name.endswith("2d") else ng.zeros(3, 4, dtype=ng.float64)
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}"):
        getattr(ng.nn.functional, name)(x, output_size)
