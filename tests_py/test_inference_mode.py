"""``inference_mode`` against torch: the context manager and decorator forms, nesting
with ``inference_mode(False)`` and ``no_grad``, which tensors are inference tensors
(``Tensor.is_inference``), and torch's errors when an inference tensor is written in
place, saved for backward, set to require grad or asked for its version outside
inference mode; the tensors and the engine stay usable after each error.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import oracle
from oracle import assert_same_error, to_np


def test_modes_inside_and_after(ng, torch_ref):
    def facts(lib: Any) -> list[Any]:
        out = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            out += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            with lib.inference_mode(False):
                out += [lib.is_inference_mode_enabled(), lib.is_grad_enabled(), lib.ones(1).is_inference()]
            out += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        with lib.no_grad(), lib.inference_mode(mode=False):
            out.append(lib.is_grad_enabled())
        out += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
        return out

    assert facts(ng) == facts(torch_ref)


def test_decorator_forms(ng):
    @ng.inference_mode()
    def called() -> bool:
        return ng.is_inference_mode_enabled()

    @ng.inference_mode
    def bare() -> bool:
        return ng.is_inference_mode_enabled()

    @ng.autograd.inference_mode(mode=False)
    def off() -> bool:
        return ng.is_inference_mode_enabled()

    @ng.inference_mode()
    def generator() -> Any:
        yield ng.is_inference_mode_enabled()
        yield ng.is_grad_enabled()

    assert called() and bare() and not off()
    assert list(generator()) == [True, False]
    assert not ng.is_inference_mode_enabled() and ng.is_grad_enabled()


def test_mode_is_restored_after_an_exception(ng):
    with pytest.raises(ValueError), ng.inference_mode():
        raise ValueError("inside")
    assert not ng.is_inference_mode_enabled() and ng.is_grad_enabled()


def test_mode_is_per_thread(ng):
    seen = []
    with ng.inference_mode():
        worker = threading.Thread(target=lambda: seen.append(ng.is_inference_mode_enabled()))
        worker.start()
        worker.join()
    assert seen == [False]


def test_which_tensors_are_inference_tensors(ng, torch_ref):
    def facts(lib: Any) -> list[Any]:
        x = lib.ones(2, requires_grad=True)
        normal = lib.ones(2)
        with lib.inference_mode():
            made = x * 2
            view_of_normal = normal.view(2)
            view_of_inference = made[0]
        return [
            made.is_inference(),
            made.requires_grad,
            made.grad_fn is None,
            view_of_normal.is_inference(),
            view_of_inference.is_inference(),
            made.view(2).is_inference(),
            made.clone().is_inference(),
            x.is_inference(),
            normal.is_inference(),
        ]

    assert facts(ng) == facts(torch_ref)


def test_inference_tensors_written_in_place_inside_inference_mode(ng, torch_ref):
    def facts(lib: Any) -> Any:
        normal = lib.ones(2)
        with lib.inference_mode():
            made = lib.zeros(2)
            made.add_(1)
            normal.mul_(3)
        return to_np(made).tolist(), to_np(normal).tolist(), normal._version

    assert facts(ng) == facts(torch_ref)


def _inference_tensor(lib: Any) -> Any:
    with lib.inference_mode():
        return lib.ones(2)


@pytest.mark.parametrize("write", ["t.add_(1)", "t.zero_()", "t.fill_(2)", "t.__setitem__(0, 5.0)", "t.mul_(t)"])
def test_in_place_outside_inference_mode_is_torch_error(ng, write):
    assert_same_error(
        lambda lib: (lambda t: eval(write))(_inference_tensor(lib)),
        "Inplace update to inference tensor outside InferenceMode is not allowed.",
    )
    t = _inference_tensor(ng)
    with pytest.raises(RuntimeError):
        eval(write)
    if not oracle.AGAINST_TORCH:
        # npgrad checks before writing; torch writes, then raises.
        assert to_np(t).tolist() == [1.0, 1.0]


def test_saving_an_inference_tensor_for_backward_is_torch_error(ng):
    def save(lib: Any) -> Any:
        return lib.ones(2, requires_grad=True) * _inference_tensor(lib)

    assert_same_error(save, "Inference tensors cannot be saved for backward.")
    # An op that saves nothing takes it, and the engine still works.
    x = ng.ones(2, requires_grad=True)
    (x + _inference_tensor(ng)).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_requires_grad_and_version_are_torch_errors():
    assert_same_error(
        lambda lib: _inference_tensor(lib).requires_grad_(),
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",
    )
    assert_same_error(lambda lib: _inference_tensor(lib)._version, "Inference tensors do not track version counter.")


def test_an_inference_tensor_can_be_cloned_into_autograd(ng, torch_ref):
    def grad(lib: Any) -> list[float]:
        x = lib.ones(2, requires_grad=True)
        (x * _inference_tensor(lib).clone() * 2).sum().backward()
        return to_np(x.grad).tolist()

    assert grad(ng) == grad(torch_ref)
