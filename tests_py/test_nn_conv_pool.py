"""Convolution, pooling and padding layers against torch: constructor defaults
and options, parameter names and shapes, repr, outputs and gradients with torch's
weights loaded, default initialisation bounds, and torch's errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracle import assert_module_matches_torch, assert_same_error, to_np

RNG = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# (constructor given nn and a dtype, input shape, forward kwargs): the first of
# each class at the default float32, the others in float64 (tight tolerances).
CONVS = [
    (lambda nn, d: nn.Conv1d(2, 3, 3), (2, 2, 7), {}),
    (lambda nn, d: nn.Conv1d(4, 6, 2, stride=2, padding=1, dilation=2, groups=2, bias=False, dtype=d), (2, 4, 9), {}),
    (lambda nn, d: nn.Conv1d(2, 2, 4, padding="same", dtype=d), (1, 2, 6), {}),
    (lambda nn, d: nn.Conv1d(2, 2, 3, padding="valid", dtype=d), (2, 6), {}),
    (lambda nn, d: nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect", dtype=d), (1, 2, 5), {}),
    (lambda nn, d: nn.Conv1d(2, 3, 2, padding="same", padding_mode="circular", dtype=d), (1, 2, 5), {}),
    (lambda nn, d: nn.Conv2d(2, 4, 3), (2, 2, 5, 6), {}),
    (lambda nn, d: nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), dtype=d), (1, 2, 6, 5), {}),
    (lambda nn, d: nn.Conv2d(4, 4, 3, groups=4, padding=1, padding_mode="replicate", dtype=d), (1, 4, 4, 4), {}),
    (lambda nn, d: nn.Conv2d(1, 2, (2, 3), padding="same", padding_mode="circular", dtype=d), (1, 1, 4, 5), {}),
    (lambda nn, d: nn.Conv2d(1, 2, 3, padding=(1, 2), padding_mode="reflect", bias=False, dtype=d), (1, 4, 5), {}),
    (lambda nn, d: nn.ConvTranspose1d(2, 3, 3, stride=2), (2, 2, 4), {}),
    (lambda nn, d: nn.ConvTranspose1d(4, 2, 3, stride=3, padding=1, output_padding=2, groups=2, dtype=d), (4, 3), {}),
    (lambda nn, d: nn.ConvTranspose1d(2, 2, 3, stride=2, dtype=d), (1, 2, 4), {"output_size": [10]}),
    (lambda nn, d: nn.ConvTranspose2d(2, 3, 2, stride=2), (1, 2, 3, 3), {}),
    (lambda nn, d: nn.ConvTranspose2d(2, 2, (3, 2), stride=(2, 3), dilation=2, bias=False, dtype=d), (1, 2, 3, 2), {}),
    (
        lambda nn, d: nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1, dtype=d),
        (1, 2, 3, 3),
        {"output_size": (1, 2, 6, 5)},
    ),
]


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("build,shape,kwargs", CONVS)
def test_conv_layers_match_torch(ng, build, shape, kwargs):
    dtype = np.float64 if build(ng.nn, ng.float64).weight.dtype == ng.float64 else np.float32
    assert_module_matches_torch(
        lambda lib: build(lib.nn, lib.float64),
        [_x(*shape, dtype=dtype)],
        forward=(lambda m, x: m(x, **kwargs)) if kwargs else None,
    )


@pytest.mark.parametrize(
    "build,fan_in",
    [
        (lambda nn: nn.Conv1d(6, 40, 5), 30),
        (lambda nn: nn.Conv2d(8, 32, (3, 2), groups=2), 24),
        (lambda nn: nn.ConvTranspose2d(8, 12, 3, groups=2), 54),
    ],
)
def test_conv_default_init_is_kaiming_uniform(ng, build, fan_in):
    # kaiming_uniform_(a=sqrt(5)) and the bias both draw from U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    ng.manual_seed(0)
    conv = build(ng.nn)
    bound = 1 / math.sqrt(fan_in)
    for name, p in conv.named_parameters():
        values = to_np(p)
        assert p.requires_grad and p.dtype == ng.float32, name
        assert np.abs(values).max() <= bound, name
        assert np.abs(values).max() > 0.7 * bound and abs(values.mean()) < 0.3 * bound, name
    weight = to_np(conv.weight)
    assert weight.std() == pytest.approx(bound / math.sqrt(3), rel=0.15)
    assert ng.nn.Conv2d(2, 4, 1, bias=False).bias is None


def test_conv_attributes_and_state_dict(ng):
    conv = ng.nn.Conv2d(4, 6, (3, 1), stride=2, padding=1, groups=2)
    assert conv.kernel_size == (3, 1) and conv.stride == (2, 2) and conv.padding == (1, 1)
    assert conv.dilation == (1, 1) and conv.output_padding == (0, 0) and conv.transposed is False
    assert conv._reversed_padding_repeated_twice == (1, 1, 1, 1)
    assert conv.weight.shape == (6, 2, 3, 1) and list(conv.state_dict()) == ["weight", "bias"]
    same = ng.nn.Conv1d(1, 1, 4, padding="same", dilation=3)
    assert same.padding == "same" and same._reversed_padding_repeated_twice == [4, 5]
    up = ng.nn.ConvTranspose2d(4, 6, 2, groups=2, output_padding=1, stride=2)
    assert up.weight.shape == (4, 3, 2, 2) and up.transposed is True and up.output_padding == (1, 1)
    assert "padding_mode" in ng.nn.Conv1d.__constants__ and "output_padding" in ng.nn.Conv2d.__constants__


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.Conv2d(2, 2, 3, groups=0),
        lambda nn, t: nn.Conv2d(3, 2, 3, groups=2),
        lambda nn, t: nn.Conv1d(2, 3, 3, groups=2),
        lambda nn, t: nn.Conv1d(2, 3, 3, padding="full"),
        lambda nn, t: nn.Conv2d(2, 3, 3, stride=2, padding="same"),
        lambda nn, t: nn.ConvTranspose1d(2, 3, 3, padding_mode="reflect"),
        lambda nn, t: nn.ConvTranspose2d(2, 3, 3, groups=0, padding_mode="circular"),
        lambda nn, t: nn.Conv2d(2, 2, 3)(t.ones(2, 5, 5, 5, 5)),
        lambda nn, t: nn.Conv1d(2, 2, 3)(t.ones(1, 3, 5)),
        lambda nn, t: nn.Conv1d(2, 2, 3, padding=1, padding_mode="reflect")(t.ones(1, 2, 1)),
        lambda nn, t: nn.ConvTranspose1d(2, 2, 3, stride=2)(t.ones(1, 2, 4), output_size=[12]),
        lambda nn, t: nn.ConvTranspose2d(2, 2, 3)(t.ones(1, 2, 4, 4), output_size=[1, 6, 6]),
    ],
)
def test_conv_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib))


def test_conv_bad_padding_mode_lists_the_valid_ones():
    err = assert_same_error(
        lambda lib: lib.nn.Conv2d(2, 2, 3, padding_mode="mirror"), key="padding_mode must be one of"
    )
    assert "but got padding_mode='mirror'" in str(err) and "'circular'" in str(err)


def test_conv_transpose_output_size_error_names_the_valid_range():
    err = assert_same_error(
        lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, stride=2)(lib.ones(2, 4, 3), output_size=(10, 6)), length=200
    )
    assert str(err).endswith("valid sizes range from [9, 7] to [10, 8] (for an input of torch.Size([3]))")


def test_conv_forward_graph(ng):
    x = ng.ones(1, 1, 4, requires_grad=True)
    y = ng.nn.Conv1d(1, 1, 3, padding=1, padding_mode="replicate")(x)
    assert y.grad_fn.name() == "ConvolutionBackward0" and y.shape == (1, 1, 4)
    assert ng.nn.Conv1d(1, 1, 3)(ng.ones(1, 4)).grad_fn.name() == "SqueezeBackward1"


POOLS = [
    (lambda nn: nn.MaxPool1d(2), (2, 3, 7)),
    (lambda nn: nn.MaxPool1d(3, stride=2, padding=1, dilation=2, ceil_mode=True, return_indices=True), (2, 9)),
    (lambda nn: nn.MaxPool2d(2), (1, 2, 5, 4)),
    (lambda nn: nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), return_indices=True), (2, 6, 7)),
    (lambda nn: nn.MaxPool2d(3, ceil_mode=True), (1, 1, 7, 8)),
    (lambda nn: nn.AvgPool1d(3), (2, 2, 7)),
    (lambda nn: nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (2, 8)),
    (lambda nn: nn.AvgPool2d(2), (1, 2, 4, 5)),
    (lambda nn: nn.AvgPool2d((3, 2), stride=1, padding=(1, 0), count_include_pad=False), (2, 4, 5)),
    (lambda nn: nn.AvgPool2d(3, stride=2, ceil_mode=True, divisor_override=2), (1, 1, 6, 7)),
    (lambda nn: nn.AdaptiveAvgPool1d(3), (2, 2, 7)),
    (lambda nn: nn.AdaptiveAvgPool2d((2, None)), (1, 2, 5, 3)),
    (lambda nn: nn.AdaptiveAvgPool2d(1), (3, 4, 4)),
    (lambda nn: nn.AdaptiveMaxPool1d(4, return_indices=True), (2, 9)),
    (lambda nn: nn.AdaptiveMaxPool2d((3, 2)), (1, 2, 7, 5)),
    (lambda nn: nn.AdaptiveMaxPool2d(2, return_indices=True), (2, 5, 5)),
]


@pytest.mark.parametrize("build,shape", POOLS)
def test_pool_layers_match_torch(build, shape):
    assert_module_matches_torch(lambda lib: build(lib.nn), [_x(*shape, dtype=np.float64)])


def test_pool_attributes(ng):
    pool = ng.nn.MaxPool2d((2, 3))
    assert pool.stride == (2, 3) and pool.padding == 0 and pool.return_indices is False
    avg = ng.nn.AvgPool1d(3, 2)
    assert avg.kernel_size == (3,) and avg.stride == (2,) and avg.padding == (0,)
    assert "divisor_override" in ng.nn.AvgPool2d.__constants__
    assert ng.nn.AdaptiveMaxPool1d.__constants__ == ["output_size", "return_indices"]


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.MaxPool1d(2)(t.ones(1, 1, 1, 4)),
        lambda nn, t: nn.MaxPool1d(3, padding=2)(t.ones(1, 1, 6)),
        lambda nn, t: nn.MaxPool2d(2)(t.ones(4)),
        lambda nn, t: nn.AvgPool1d(2)(t.ones(4)),
        lambda nn, t: nn.AvgPool2d(4)(t.ones(1, 2, 2)),
        lambda nn, t: nn.AdaptiveAvgPool1d(2)(t.ones(2, 2, 2, 2)),
        lambda nn, t: nn.AdaptiveMaxPool2d((2, 2, 2))(t.ones(1, 4, 4)),
    ],
)
def test_pool_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib))


PADS = [
    (lambda nn: nn.ZeroPad1d(2), (2, 3)),
    (lambda nn: nn.ZeroPad2d((1, 0, 2, -1)), (1, 2, 3, 3)),
    (lambda nn: nn.ConstantPad1d((0, 2), 3.5), (2, 2, 3)),
    (lambda nn: nn.ConstantPad2d(1, -1.0), (2, 3, 2)),
    (lambda nn: nn.ReflectionPad1d((2, 1)), (2, 2, 4)),
    (lambda nn: nn.ReflectionPad2d((1, 2, 0, 2)), (1, 3, 4)),
    (lambda nn: nn.ReplicationPad1d(3), (1, 2, 3)),
    (lambda nn: nn.ReplicationPad2d((0, 1, 2, 0)), (1, 1, 2, 3)),
    (lambda nn: nn.CircularPad1d((1, 2)), (2, 3)),
    (lambda nn: nn.CircularPad2d(1), (1, 2, 3, 3)),
]


@pytest.mark.parametrize("build,shape", PADS)
def test_padding_layers_match_torch(build, shape):
    assert_module_matches_torch(lambda lib: build(lib.nn), [_x(*shape, dtype=np.float64)])


@pytest.mark.parametrize(
    "call",
    [
        lambda nn, t: nn.CircularPad1d(1)(t.ones(1, 1, 1, 3)),
        lambda nn, t: nn.CircularPad2d(1)(t.ones(3, 3)),
        lambda nn, t: nn.ReflectionPad1d(3)(t.ones(1, 3)),
        lambda nn, t: nn.ReplicationPad2d(1)(t.ones(3, 3)),
        lambda nn, t: nn.ReplicationPad2d(1)(t.ones(3)),
        lambda nn, t: t.nn.functional.pad(t.ones(3), (1, 1, 1), mode="bogus", value=1.0),
        lambda nn, t: t.nn.functional.pad(t.ones(3), (1, 1, 1, 1), mode="reflect", value=1.0),
        lambda nn, t: t.nn.functional.pad(t.ones(3), (1, 1), mode="reflect", value=1.0),
    ],
)
def test_padding_errors(call):
    assert_same_error(lambda lib: call(lib.nn, lib))
