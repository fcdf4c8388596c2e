"""``F.embedding_bag`` and ``nn.EmbeddingBag`` against torch: sum, mean and max bags
of 2-D inputs and of 1-D inputs with offsets (empty bags, include_last_offset),
per_sample_weights, padding_idx, scale_grad_by_freq, max_norm, int32 indices; the
gradients of weight and per_sample_weights, the node's saved results, the double
backward torch refuses, and torch's errors.

The op_specs rows (``EMBEDDING_BAG``) add the node names, saved values and gradients
against finite differences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH, assert_module_matches_torch, assert_same_error, assert_same_result, from_np, run_both

WEIGHT = np.random.default_rng(3).standard_normal((6, 4))
INDICES = [4, 1, 1, 0, 5, 2, 1, 3]
OFFSETS = [0, 3, 3, 6]


def _F(lib: Any) -> Any:
    return lib.nn.functional


CASES = [
    dict(mode="sum"),
    dict(mode="mean"),
    dict(mode="max"),
    dict(mode="mean", padding_idx=1),
    dict(mode="max", padding_idx=-5),
    dict(mode="sum", scale_grad_by_freq=True, padding_idx=0),
    dict(mode="mean", include_last_offset=True),
    dict(mode="max", include_last_offset=True),
]


@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_1d_bags_values_and_gradient_match_torch(kwargs, dtype):
    offsets = [*OFFSETS, len(INDICES)] if kwargs.get("include_last_offset") else OFFSETS

    def run(lib: Any) -> Any:
        w = from_np(lib, WEIGHT.astype(dtype), True)
        y = _F(lib).embedding_bag(lib.tensor(INDICES), w, lib.tensor(offsets), **kwargs)
        weights = from_np(lib, np.arange(y.numel()).reshape(tuple(y.shape)).astype(dtype) % 5 - 2)
        (y * weights).sum().backward()
        return y, w.grad

    got, expected = run_both(run)
    assert_same_result(got, expected)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_2d_input_with_padding_and_int32_indices_matches_torch(mode):
    def run(lib: Any) -> Any:
        w = from_np(lib, WEIGHT, True)
        x = lib.tensor([[1, 2, 2], [3, 3, 3], [0, 5, 4]], dtype=lib.int32)
        y = _F(lib).embedding_bag(x, w, mode=mode, padding_idx=3)
        y.pow(2).sum().backward()
        return y, w.grad

    got, expected = run_both(run)
    assert_same_result(got, expected)


def test_per_sample_weights_gradient_and_saved_weight_match_torch():
    def run(lib: Any) -> Any:
        w = from_np(lib, WEIGHT, True)
        psw = from_np(lib, np.linspace(-1.0, 2.0, len(INDICES)), True)
        y = _F(lib).embedding_bag(
            lib.tensor(INDICES), w, lib.tensor(OFFSETS), mode="sum", per_sample_weights=psw, padding_idx=1
        )
        node = y.grad_fn
        saved = {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}
        y.pow(2).sum().backward()
        return y, w.grad, psw.grad, saved

    got, expected = run_both(run)
    assert_same_result(got[:3], expected[:3])
    assert sorted(got[3]) == sorted(expected[3])
    for name, value in expected[3].items():
        if hasattr(value, "numpy"):
            assert_same_result(got[3][name], value)
        else:
            assert got[3][name] == value, name


def test_saved_padding_idx_reads_as_torchs_unsigned_minus_one():
    def run(lib: Any) -> Any:
        w = from_np(lib, WEIGHT, True)
        y = _F(lib).embedding_bag(lib.tensor([[0, 1]]), w)
        return y.grad_fn._saved_padding_idx, y.grad_fn._saved_mode

    got, expected = run_both(run)
    assert got == expected == (2**64 - 1, 1)


def test_double_backward_raises_torchs_errors():
    def weight_grad(lib: Any) -> Any:
        w = from_np(lib, WEIGHT, True)
        y = _F(lib).embedding_bag(lib.tensor([[0, 1]]), w, mode="sum")
        (g,) = lib.autograd.grad(y.pow(2).sum(), w, create_graph=True)
        assert type(g.grad_fn).__name__ == "EmbeddingBagBackwardBackward0"
        g.sum().backward()

    def psw_grad(lib: Any) -> Any:
        w = from_np(lib, WEIGHT, True)
        psw = from_np(lib, np.ones(2), True)
        y = _F(lib).embedding_bag(lib.tensor([[0, 1]]), w, mode="sum", per_sample_weights=psw)
        (g,) = lib.autograd.grad(y.pow(2).sum(), psw, create_graph=True)
        g.sum().backward()

    assert_same_error(weight_grad)
    assert_same_error(psw_grad)


def test_empty_input_and_max_norm_match_torch():
    def run(lib: Any) -> Any:
        w = from_np(lib, WEIGHT * 3)
        empty = _F(lib).embedding_bag(lib.tensor([], dtype=lib.int64), w, lib.tensor([0, 0]), mode="max")
        normed = _F(lib).embedding_bag(lib.tensor([[0, 2], [2, 3]]), w, max_norm=1.5, mode="sum")
        return empty, normed, w

    got, expected = run_both(run)
    assert_same_result(got, expected)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2, 6]), w, lib.tensor([0, 2])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2, -1]), w, lib.tensor([0, 2])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2, 3]), w, lib.tensor([1, 2])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2, 3]), w, lib.tensor([0, 5])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1.0, 2.0]), w, lib.tensor([0, 1])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2]), w.long(), lib.tensor([0, 1])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, lib.tensor([0])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2]), w),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([1, 2]), w, lib.tensor([[0]])),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[[1]]]), w),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w[0]),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, mode="median"),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, mode="max", scale_grad_by_freq=True),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, mode="max", sparse=True),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, per_sample_weights=lib.ones(1, 2)),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, mode="sum", per_sample_weights=lib.ones(2)),
        lambda lib, w: _F(lib).embedding_bag(
            lib.tensor([[1, 2]]), w, mode="sum", per_sample_weights=lib.ones(1, 2, dtype=lib.float32)
        ),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, padding_idx=6),
        lambda lib, w: _F(lib).embedding_bag(lib.tensor([[1, 2]]), w, padding_idx=-7),
    ],
)
def test_bad_arguments_raise_torchs_errors(call):
    assert_same_error(lambda lib: call(lib, from_np(lib, WEIGHT, True)))


def test_sparse_gradient_is_refused_clearly(ng):
    if AGAINST_TORCH:
        pytest.skip("npgrad's own limitation: torch implements this")
    w = ng.zeros(3, 2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        _F(ng).embedding_bag(ng.tensor([[0, 1]]), w, sparse=True)


@pytest.mark.parametrize(
    ("build", "forward", "inputs"),
    [
        (lambda lib: lib.nn.EmbeddingBag(6, 3), None, [np.array([[1, 2], [0, 5]])]),
        (
            lambda lib: lib.nn.EmbeddingBag(6, 3, mode="sum", padding_idx=2, include_last_offset=True),
            None,
            [np.array([1, 2, 2, 4, 0]), np.array([0, 1, 5])],
        ),
        (
            lambda lib: lib.nn.EmbeddingBag(6, 3, mode="sum"),
            lambda m, x, off, psw: m(x, off, per_sample_weights=psw),
            [np.array([1, 2, 3]), np.array([0, 1]), np.array([0.5, -1.0, 2.0], dtype=np.float32)],
        ),
        (lambda lib: lib.nn.EmbeddingBag(6, 3, mode="max", max_norm=1.0), None, [np.array([[1, 2, 3]])]),
    ],
)
def test_embedding_bag_module_matches_torch(build, forward, inputs):
    assert_module_matches_torch(build, inputs, forward=forward)


def test_from_pretrained_shares_and_freezes_the_weight():
    def run(lib: Any) -> Any:
        weight = from_np(lib, WEIGHT)
        frozen = lib.nn.EmbeddingBag.from_pretrained(weight, mode="max")
        trained = lib.nn.EmbeddingBag.from_pretrained(weight, freeze=False, padding_idx=0)
        x = lib.tensor([[0, 1, 3]])
        return repr(frozen), frozen(x), frozen.weight.requires_grad, trained(x), trained.weight.requires_grad

    got, expected = run_both(run)
    assert got[0] == expected[0] and got[2:5:2] == expected[2:5:2]
    assert_same_result((got[1], got[3]), (expected[1], expected[3]))
