"""Python and NumPy protocols as torch has them: ``copy.deepcopy``, ``copy.copy`` and
``pickle`` of tensors (requires_grad, dtype, views, ``.grad`` and attributes), and NumPy
ufuncs on tensors returning tensors (``np.sin(t)``, ``t + ndarray``) without NumPy 2's
``__array_wrap__`` deprecation warning.
"""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import numpy as np
import pytest

import oracle
from oracle import assert_same_error, to_np


def _facts(t: Any) -> tuple[Any, ...]:
    return (
        type(t).__name__,
        str(t.dtype).split(".")[-1],
        to_np(t).tolist(),
        t.requires_grad,
        t.is_leaf,
        t.stride(),
    )


def _round_trips(lib: Any) -> dict[str, Any]:
    return {
        "deepcopy": lambda t: copy.deepcopy(t),
        "copy": lambda t: copy.copy(t),
        "pickle": lambda t: pickle.loads(pickle.dumps(t)),
    }


@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
@pytest.mark.parametrize(
    "make",
    [
        "lib.tensor([1.0, 2.0], requires_grad=True)",
        "lib.tensor([[1, 2], [3, 4]], dtype=lib.int8)",
        "lib.tensor([True, False])",
        "lib.tensor(2.5, dtype=lib.float64)",
        "lib.arange(6.0).reshape(2, 3).t()",
        "lib.arange(6.0).reshape(2, 3)[:, 1]",
        "lib.tensor([1.5, -2.0], dtype=lib.float16)",
    ],
)
def test_copies_keep_values_dtype_strides_and_requires_grad(ng, torch_ref, how, make):
    def facts(lib: Any) -> tuple[Any, ...]:
        original = eval(make)
        copied = _round_trips(lib)[how](original)
        assert copied is not original
        return _facts(copied)

    assert facts(ng) == facts(torch_ref)


@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_only_copy_copy_shares_memory_with_the_original(ng, how):
    t = ng.tensor([1.0, 2.0])
    copied = _round_trips(ng)[how](t)
    with ng.no_grad():
        copied[0] = 5.0
    assert t.tolist() == ([5.0, 2.0] if how == "copy" else [1.0, 2.0])


def test_copy_copy_of_a_non_leaf_is_a_leaf_over_its_memory(ng, torch_ref):
    def facts(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.tag = 1
        c = copy.copy(y)
        with lib.no_grad():
            c[0] = 5.0
        return _facts(c), c.grad, c.tag, to_np(y).tolist()

    assert facts(ng) == facts(torch_ref)


def test_deepcopy_of_a_non_leaf_is_torch_error():
    assert_same_error(
        lambda lib: copy.deepcopy(lib.ones(2, requires_grad=True) * 2),
        "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol",
    )


def test_pickle_of_a_non_leaf_is_a_leaf_that_requires_grad(ng, torch_ref):
    def facts(lib: Any) -> tuple[Any, ...]:
        return _facts(pickle.loads(pickle.dumps(lib.ones(2, requires_grad=True) * 2)))

    assert facts(ng) == facts(torch_ref)


def test_deepcopy_keeps_memory_shared_between_the_tensors_it_copies(ng, torch_ref):
    def facts(lib: Any) -> Any:
        base = lib.arange(6.0).reshape(2, 3)
        view = base[:, 1]
        copied_base, copied_view = copy.deepcopy([base, view])
        copied_base[0, 1] = 100.0
        return to_np(copied_view).tolist(), to_np(view).tolist()

    assert facts(ng) == facts(torch_ref) == ([100.0, 4.0], [1.0, 4.0])


def test_pickle_does_not_share_memory_between_the_tensors_it_loads(ng, torch_ref):
    def facts(lib: Any) -> Any:
        base = lib.arange(6.0).reshape(2, 3)
        loaded_base, loaded_view = pickle.loads(pickle.dumps([base, base[:, 1]]))
        loaded_base[0, 1] = 100.0
        return to_np(loaded_view).tolist(), loaded_view.stride()

    assert facts(ng) == facts(torch_ref)


def test_deepcopy_keeps_grad_and_attributes_pickle_keeps_attributes(ng, torch_ref):
    def facts(lib: Any) -> Any:
        t = lib.ones(2, requires_grad=True)
        t.grad = lib.full((2,), 3.0)
        t.tag = {"name": "w"}
        deep, loaded = copy.deepcopy(t), pickle.loads(pickle.dumps(t))
        assert deep.tag is not t.tag
        return to_np(deep.grad).tolist(), deep.tag, loaded.grad, loaded.tag

    assert facts(ng) == facts(torch_ref)


def test_deepcopy_memo_returns_one_copy_per_tensor(ng):
    t = ng.ones(2, requires_grad=True)
    a, b = copy.deepcopy([t, t])
    assert a is b


def test_a_deep_copied_leaf_trains_on_its_own(ng):
    w = ng.ones(2, requires_grad=True)
    w2 = copy.deepcopy(w)
    (w2 * 3).sum().backward()
    assert w.grad is None
    assert w2.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize(
    "expr",
    [
        "np.sin(lib.tensor([0.0, 1.0]))",
        "np.exp(lib.tensor(1.0, dtype=lib.float64))",
        "np.add(lib.ones(2), 1)",
        "lib.ones(2) + np.ones(2)",
        "lib.tensor([1, 2], dtype=lib.int32) * np.int64(2)",
        "np.greater(lib.tensor([1.0, 3.0]), 2)",
        "np.isnan(lib.tensor([0.0, float('nan')]))",
        "np.maximum(lib.tensor([1, 5], dtype=lib.int16), lib.tensor([3, 2], dtype=lib.int16))",
    ],
)
def test_numpy_ufuncs_on_tensors_return_tensors(ng, torch_ref, expr):
    def facts(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = eval(expr)
        deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
        return lib.is_tensor(r), str(r.dtype).split(".")[-1], np.round(to_np(r), 4).tolist(), len(deprecations)

    got, expected = facts(ng), facts(torch_ref)
    assert got[:3] == expected[:3]
    if not oracle.AGAINST_TORCH:
        # torch's __array_wrap__ takes one argument, so NumPy 2 warns that it
        # must accept context and return_scalar; npgrad's takes them.
        assert got[3] == 0


def test_numpy_ufunc_with_two_outputs_returns_tensors(ng):
    with warnings.catch_warnings():
        if oracle.AGAINST_TORCH:
            # torch's __array_wrap__ takes one argument: NumPy 2's deprecation (npgrad's
            # takes context and return_scalar, and must not warn)
            warnings.simplefilter("ignore", DeprecationWarning)
        quotient, remainder = np.divmod(ng.tensor([5.0, 7.0]), 2)
    assert ng.is_tensor(quotient) and ng.is_tensor(remainder)
    assert quotient.tolist() == [2.0, 3.0] and remainder.tolist() == [1.0, 1.0]


def test_numpy_ufunc_on_a_tensor_that_requires_grad_is_torch_error():
    assert_same_error(
        lambda lib: np.sin(lib.ones(2, requires_grad=True)), "Can't call numpy() on Tensor that requires grad"
    )
