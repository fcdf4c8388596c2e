"""``F.interpolate`` (nearest, nearest-exact, linear, bilinear; area through the
adaptive pools), the deprecated ``F.upsample*`` and the ``nn.Upsample`` modules
against torch: values over many input sizes and scale factors (torch's source-index
rounding), gradients, the double backward's nodes, dtypes, torch's errors and
warnings.

The op_specs rows (``UPSAMPLE``) add the node names, saved values, gradients and
second order against finite differences.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from oracle import (
    AGAINST_TORCH,
    assert_module_matches_torch,
    assert_same_error,
    assert_same_result,
    from_np,
    run_both,
    to_np,
)


def _F(lib: Any) -> Any:
    return lib.nn.functional


def _data(*shape: int, dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(dtype)


# Input sizes against scale factors and sizes: nearest's float32 index rounding,
# the output == input and output == 2 * input cases, down- and upsampling.
SIZES = [1, 2, 3, 5, 7, 10]
SCALES = [0.3, 0.5, 0.7, 1.0, 1.1, 1.5, 2.0, 2.5, 3.7]
MODES = [("nearest", None), ("nearest-exact", None), ("linear", False), ("linear", True)]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_1d_values_are_torchs_to_the_bit_over_sizes_and_scales(dtype):
    def run(lib: Any) -> list[np.ndarray]:
        out = []
        for n in SIZES:
            x = from_np(lib, _data(1, 2, n, dtype=dtype))
            for mode, align in MODES:
                for s in SCALES:
                    if int(n * s) > 0:
                        out.append(to_np(_F(lib).interpolate(x, scale_factor=s, mode=mode, align_corners=align)))
                for size in (1, n + 1, 2 * n, 3 * n - 1):
                    out.append(to_np(_F(lib).interpolate(x, size=size, mode=mode, align_corners=align)))
        return out

    got, expected = run_both(run)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        # torch's values to the bit: the same source indices, weights and roundings.
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


CASES_2D = [
    dict(scale_factor=2),
    dict(scale_factor=(0.5, 1.7)),
    dict(size=(5, 3)),
    dict(scale_factor=1.3, recompute_scale_factor=True),
    dict(scale_factor=(2.5, 0.75), mode="nearest-exact"),
    dict(size=(7, 9), mode="nearest-exact"),
    dict(scale_factor=(1.5, 2.2), mode="bilinear"),
    dict(size=(2, 11), mode="bilinear", align_corners=True),
    dict(scale_factor=0.6, mode="bilinear", align_corners=False, recompute_scale_factor=True),
    dict(size=(3, 3), mode="area"),
]


@pytest.mark.parametrize("kwargs", CASES_2D)
def test_2d_values_and_gradients_match_torch(kwargs):
    data = _data(2, 3, 6, 5)

    def run(lib: Any) -> Any:
        x = from_np(lib, data, True)
        y = _F(lib).interpolate(x, **kwargs)
        weights = from_np(lib, np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) % 7 - 3)
        (y * weights).sum().backward()
        return y, x.grad

    got, expected = run_both(run)
    assert_same_result(got[0], expected[0])
    assert_same_result(got[1], expected[1])
    assert type(got[0].grad_fn).__name__ == type(expected[0].grad_fn).__name__


@pytest.mark.parametrize(
    ("kwargs", "node"),
    [
        (dict(scale_factor=2, mode="bilinear"), "UpsampleBilinear2DBackwardBackward0"),
        (dict(size=(3, 7)), "UpsampleNearest2DBackwardBackward0"),
    ],
)
def test_double_backward_records_torchs_backward_node(kwargs, node):
    data = _data(1, 2, 4, 3)

    def run(lib: Any) -> Any:
        x = from_np(lib, data, True)
        y = _F(lib).interpolate(x, **kwargs)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        fn = g.grad_fn
        saved = {n: getattr(fn, n) for n in dir(fn) if n.startswith("_saved_")}
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        return type(fn).__name__, saved, g, gg

    got, expected = run_both(run)
    assert got[0] == expected[0] == node
    assert got[1] == expected[1]
    assert_same_result(got[2], expected[2])
    assert_same_result(got[3], expected[3])


def test_float16_computes_in_float32_and_empty_batch():
    def run(lib: Any) -> Any:
        x = from_np(lib, _data(1, 2, 5, dtype="float16"))
        empty = from_np(lib, np.zeros((0, 2, 3), dtype=np.float32))
        return (
            _F(lib).interpolate(x, scale_factor=1.6, mode="linear"),
            _F(lib).interpolate(x, size=8),
            _F(lib).interpolate(empty, size=5, mode="linear"),
        )

    got, expected = run_both(run)
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: _F(lib).interpolate(x, size=0),
        lambda lib, x: _F(lib).interpolate(x[..., None], size=(0, 3)),
        lambda lib, x: _F(lib).interpolate(x, scale_factor=0.1),
        lambda lib, x: _F(lib).interpolate(x.long(), size=3),
        lambda lib, x: _F(lib).interpolate(x.long(), size=3, mode="linear"),
        lambda lib, x: _F(lib).interpolate(x[:, :0], size=3),
        lambda lib, x: _F(lib).interpolate(x[0], size=3),
        lambda lib, x: _F(lib).interpolate(x, size=(3, 4)),
        lambda lib, x: _F(lib).interpolate(x, scale_factor=(2, 3)),
        lambda lib, x: _F(lib).interpolate(x, size=[2.0]),
        lambda lib, x: _F(lib).interpolate(x),
        lambda lib, x: _F(lib).interpolate(x, size=3, scale_factor=2),
        lambda lib, x: _F(lib).interpolate(x, size=3, recompute_scale_factor=True),
        lambda lib, x: _F(lib).interpolate(x, size=3, mode="foo"),
        lambda lib, x: _F(lib).interpolate(x, size=3, mode="bilinear"),
        lambda lib, x: _F(lib).interpolate(x[..., None], size=3, mode="linear"),
        lambda lib, x: _F(lib).interpolate(x, size=3, antialias=True),
        lambda lib, x: _F(lib).interpolate(x, size=3, align_corners=False),
        lambda lib, x: _F(lib).interpolate(x, size=3, mode="nearest-exact", align_corners=True),
    ],
)
def test_bad_arguments_raise_torchs_errors(call):
    data = _data(1, 2, 5)
    assert_same_error(lambda lib: call(lib, from_np(lib, data)))


def test_unsupported_modes_raise_a_clear_error(ng):
    if AGAINST_TORCH:
        pytest.skip("npgrad's own limitation: torch implements this")
    x = ng.zeros(1, 1, 3, 3)
    for kwargs in (dict(mode="bicubic"), dict(mode="bilinear", antialias=True)):
        with pytest.raises(NotImplementedError):
            _F(ng).interpolate(x, size=4, **kwargs)


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("upsample", dict(size=4), "`nn.functional.upsample` is deprecated"),
        ("upsample_nearest", dict(scale_factor=2), "`nn.functional.upsample_nearest` is deprecated"),
        ("upsample_bilinear", dict(size=(3, 4)), "`nn.functional.upsample_bilinear` is deprecated"),
    ],
)
def test_deprecated_upsample_functions_warn_and_match_torch(name, kwargs, message):
    data = _data(1, 2, 2, 3)

    def run(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(_F(lib), name)(from_np(lib, data), **kwargs)
        assert [str(w.message) for w in caught if message in str(w.message)]
        return y

    got, expected = run_both(run)
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "build",
    [
        lambda lib: lib.nn.Upsample(scale_factor=2),
        lambda lib: lib.nn.Upsample(size=(3, 7), mode="bilinear", align_corners=False),
        lambda lib: lib.nn.Upsample(scale_factor=(1.5, 0.5), mode="nearest-exact", recompute_scale_factor=True),
        lambda lib: lib.nn.UpsamplingNearest2d(size=5),
        lambda lib: lib.nn.UpsamplingBilinear2d(scale_factor=2.5),
    ],
)
def test_upsample_modules_match_torch(build):
    assert_module_matches_torch(build, [_data(2, 2, 4, 3)])


def test_upsample_module_on_3d_input_matches_torch():
    assert_module_matches_torch(lambda lib: lib.nn.Upsample(scale_factor=1.5, mode="linear"), [_data(2, 3, 5)])
