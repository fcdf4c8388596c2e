"""The Tensor type caster reads a Tensor's holder directly when the object is exactly
a Tensor, with pybind11's type record looked up once (bindings.h). Other objects
take pybind11's own path: these tests pin that both give the same answers."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import npgrad as ng


def test_uninitialised_tensor_is_rejected_not_read():
    t = ng.Tensor.__new__(ng.Tensor)  # no holder: pybind11's error, no crash
    for f in (lambda: ng.exp(t), lambda: t + 1, lambda: ng.ones(2) * t):
        with pytest.raises(RuntimeError, match="non-held to held"):
            f()


def test_non_tensor_operands_still_fall_back():
    with pytest.raises(TypeError):
        ng.exp("not a tensor")
    assert (ng.ones(2) + 1).tolist() == [2.0, 2.0]


def test_identity_and_preserved_objects_round_trip():
    x = ng.ones(3, requires_grad=True)
    assert x.requires_grad_() is x
    y = x.sin()  # saves x
    saved = y.grad_fn._saved_self
    assert saved is x
    x.tag = "kept"
    w = weakref.ref(x)
    del x, saved
    gc.collect()
    # The node still owns the TensorImpl, so the object survives (Note [PyObject
    # preservation]); reached again through the weakref and the node.
    assert w() is not None and w().tag == "kept"
    assert y.grad_fn._saved_self is w()
    y.sum().backward()
    np.testing.assert_allclose(w().grad.numpy(), np.cos(np.ones(3, np.float32)), rtol=1e-6)
