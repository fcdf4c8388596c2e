"""A Python number in an op (`x * 2.5`) becomes a 0-dim "wrapped number" tensor
whose ndarray is only made when something needs it (Note [Wrapped numbers have no
ndarray until one is needed] in tensor.h). These tests pin what must not change:
the saved number torch exposes, its dtype and value, a data_ptr() that is stable
once Python sees it, storage shared with numpy() and detach(), and mutation
checks on it. The expected values are torch 2.13's."""

from __future__ import annotations

import numpy as np
import pytest

import npgrad as ng


@pytest.mark.parametrize(
    ("number", "dtype", "value"),
    [
        (2.5, ng.float64, 2.5),
        (2, ng.int64, 2),
        (True, ng.bool, True),
        (np.float32(2.5), ng.float64, 2.5),
    ],
)
def test_saved_number_value_and_dtype(number, dtype, value):
    x = ng.ones(3, requires_grad=True)
    s = (x * number).grad_fn._saved_other
    assert s.dtype == dtype
    assert s.dim() == 0
    assert s.item() == value
    assert s._version == 0


def test_saved_number_is_the_same_object_with_a_stable_data_ptr():
    x = ng.ones(3, requires_grad=True)
    y = x / 3
    s = y.grad_fn._saved_other
    ptr = s.data_ptr()
    assert s.numpy().__array_interface__["data"][0] == ptr
    assert y.grad_fn._saved_other is s
    del s
    s = y.grad_fn._saved_other
    assert s.data_ptr() == ptr


def test_saved_number_shares_storage_with_numpy_and_detach():
    x = ng.ones(3, requires_grad=True)
    y = x / 3
    s = y.grad_fn._saved_other
    d = s.detach()
    assert d.data_ptr() == s.data_ptr()
    s.numpy()[...] = 7  # as in torch: shared memory, no version bump
    assert y.grad_fn._saved_other.item() == 7
    assert d.item() == 7
    assert s._version == 0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 1 / 7, np.float32), rtol=1e-6)


def test_saved_number_mutated_in_place_fails_backward():
    x = ng.ones(3, requires_grad=True)
    y = x * 2.5
    y.grad_fn._saved_other.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_backward_reads_the_number_without_python_seeing_it():
    # Nothing materializes these numbers: the formulas read the stored values.
    x = ng.tensor([1.0, 2.0, 4.0], requires_grad=True)
    y = ((x * 1.5 + 0.25) / 0.5 - 1) ** 2
    y.sum().backward()
    xv = np.array([1.0, 2.0, 4.0], np.float32)
    expected = 2 * ((xv * np.float32(1.5) + np.float32(0.25)) / np.float32(0.5) - 1) * 3
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_number_on_numpys_fallback_path():
    # A strided operand takes the ufunc path, where the number enters as a
    # Python scalar; in float16 mul and div read it in float32 (Note [float16
    # computes in float32 where torch does]).
    base = ng.arange(8, dtype=ng.float32)
    v = base[::2]
    assert (v * 0.5).tolist() == [0.0, 1.0, 2.0, 3.0]
    h = ng.ones(4, dtype=ng.float16, requires_grad=True)
    out = h * 0.1
    assert out.dtype == ng.float16
    assert out.tolist() == (np.ones(4, np.float32) * np.float32(0.1)).astype(np.float16).tolist()
    assert out.grad_fn._saved_other.dtype == ng.float64


def test_number_kept_alive_by_a_node_after_the_output_is_gone():
    x = ng.ones(3, requires_grad=True)
    node = (x * 4.0).grad_fn  # the output is dropped; the node keeps the number
    s = node._saved_other
    assert s.item() == 4.0
    assert s.numpy().item() == 4.0
