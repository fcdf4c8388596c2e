"""The edges of npgrad's small-input paths (per-op overhead), against torch.

nll_loss's one-loop forward and no-graph backward (byte targets, class weights with
ignore_index, a spatial target, a strided input, an out-of-range target); the sorts'
selection (topk, median, kthvalue, descending sort) along every dim, with NaN;
whole-array and last-dim sums, amax and amin with signed zeros and infinities;
sigmoid and glu on strided views with large and non-finite values, and their
gradients.
"""

from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, assert_same_error, assert_same_result, from_np, run_both, to_np

RNG = np.random.default_rng(0)


def _arr(*shape: int, dtype: str = "float32") -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_paths(dtype: str, reduction: str) -> None:
    x2, x4 = _arr(5, 4, dtype=dtype), _arr(2, 3, 2, 2, dtype=dtype)
    w = np.array([1.0, 2.0, 0.5, 3.0], dtype=dtype)

    def fn(lib):
        F = lib.nn.functional
        a = from_np(lib, x2, requires_grad=True)
        b = from_np(lib, x4, requires_grad=True)
        byte_target = lib.tensor([3, 0, 1, 1, 2], dtype=lib.uint8)
        losses = (
            F.nll_loss(a, byte_target, reduction=reduction),
            F.nll_loss(a, lib.tensor([3, 0, 1, 1, 2]), from_np(lib, w), ignore_index=1, reduction=reduction),
            F.nll_loss(a.t().contiguous().t(), lib.tensor([0, 0, 2, 3, -100]), reduction=reduction),
            F.nll_loss(b, lib.tensor([[[0, 2], [1, 1]], [[2, 0], [0, 1]]]), reduction=reduction),
            F.nll_loss(a[0], lib.tensor(2), reduction=reduction),
        )
        total = sum(loss.sum() for loss in losses)
        total.backward()
        return (*losses, a.grad, b.grad)

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-6, atol=1e-6)


def test_nll_loss_target_out_of_range() -> None:
    x = _arr(3, 4)
    assert_same_error(lambda lib: lib.nn.functional.nll_loss(from_np(lib, x), lib.tensor([0, 4, 1])))
    assert_same_error(lambda lib: lib.nn.functional.nll_loss(from_np(lib, x), lib.tensor([0, -1, 1]), ignore_index=1))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_selection_along_dims(dim: int) -> None:
    x = _arr(4, 5, 3)
    x[1, 2, 0] = np.nan

    def fn(lib):
        a = from_np(lib, x)
        k = a.shape[dim] // 2 + 1
        return (
            a.topk(k, dim),
            a.topk(k, dim, largest=False),
            a.median(dim),
            a.kthvalue(k, dim, keepdim=True),
            a.sort(dim, descending=True),
            a.median(),
        )

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        assert_same_result(g, e)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sums_and_extrema(dtype: str) -> None:
    x = np.array([[-0.0, -0.0, 1.5, -0.0], [np.inf, 2.0, -np.inf, 0.0], [-3.0, -0.0, 0.0, 7.0]], dtype=dtype)
    big = _arr(7, 33, dtype=dtype) * 1e3

    def fn(lib):
        a, b = from_np(lib, x), from_np(lib, big)
        return (
            a[0].sum(),
            a.sum(-1),
            a.sum(1, keepdim=True),
            lib.amax(a, -1),
            lib.amin(a, -1, keepdim=True),
            b.sum(),
            b.sum(-1),
            lib.amax(b, 1),
        )

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-6, atol=1e-3)


def test_sigmoid_and_glu_strided() -> None:
    x = _arr(4, 6) * 30
    x[0, :3] = [np.inf, -np.inf, np.nan]

    def fn(lib):
        a = from_np(lib, x, requires_grad=True)
        s = a[:, 1::2].sigmoid()
        t = a.t().sigmoid()
        g = lib.nn.functional.glu(a, -1)
        (s.nan_to_num().sum() + t.nan_to_num().sum() + g.nan_to_num().sum()).backward()
        return s, t, g, a.grad

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(to_np(g), to_np(e), rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_add_duplicates(dim: int) -> None:
    x, idx = _arr(3, 4, 5, dtype="float64"), np.array([1, 0, 1, 1])
    src = _arr(*[4 if d == dim else n for d, n in enumerate((3, 4, 5))], dtype="float64")

    def fn(lib):
        a, s = from_np(lib, x, requires_grad=True), from_np(lib, src, requires_grad=True)
        out = a.index_add(dim, lib.tensor(idx), s, alpha=2.0)
        out.sum().backward()
        return out, a.grad, s.grad

    got, expected = run_both(fn)
    for g, e in zip(got, expected):
        assert_close(g, e, rtol=1e-12, atol=1e-12)
