"""Grad mode: no_grad, enable_grad, set_grad_enabled, is_grad_enabled; as context
managers and decorators; thread-local."""

from __future__ import annotations

import threading

import pytest

# Each entry: how to build the manager, and the grad mode it sets.
MANAGERS = [
    pytest.param(lambda ng: ng.no_grad(), False, id="no_grad"),
    pytest.param(lambda ng: ng.enable_grad(), True, id="enable_grad"),
    pytest.param(lambda ng: ng.set_grad_enabled(False), False, id="set_grad_enabled_false"),
    pytest.param(lambda ng: ng.set_grad_enabled(True), True, id="set_grad_enabled_true"),
]
OUTER = [pytest.param(True, id="outer_on"), pytest.param(False, id="outer_off")]


def _records(ng):
    """Whether an op on a tensor requiring grad records a graph right now."""
    y = ng.ones(2, requires_grad=True) * 2
    return y.requires_grad and y.grad_fn is not None


def test_grad_is_enabled_by_default(ng):
    assert ng.is_grad_enabled() is True
    assert _records(ng)


@pytest.mark.parametrize("outer", OUTER)
@pytest.mark.parametrize(("make", "mode"), MANAGERS)
def test_context_manager_sets_and_restores(ng, make, mode, outer):
    with ng.set_grad_enabled(outer):
        with make(ng):
            assert ng.is_grad_enabled() is mode
            assert _records(ng) is mode
        assert ng.is_grad_enabled() is outer


@pytest.mark.parametrize("outer", OUTER)
@pytest.mark.parametrize(("make", "mode"), MANAGERS)
def test_decorator_sets_and_restores(ng, make, mode, outer):
    @make(ng)
    def f(a, b=1):
        """doc"""
        return ng.is_grad_enabled(), _records(ng), a + b

    with ng.set_grad_enabled(outer):
        assert f(1, b=2) == (mode, mode, 3)
        assert ng.is_grad_enabled() is outer
    assert f.__name__ == "f"


@pytest.mark.parametrize(("make", "mode"), MANAGERS)
def test_mode_is_restored_after_an_exception(ng, make, mode):
    with pytest.raises(KeyError):
        with make(ng):
            raise KeyError("boom")
    assert ng.is_grad_enabled() is True


def test_bare_no_grad_and_enable_grad_decorators(ng):
    @ng.no_grad
    def off():
        return ng.is_grad_enabled()

    @ng.enable_grad
    def on():
        return ng.is_grad_enabled()

    assert off() is False
    with ng.no_grad():
        assert on() is True
    assert ng.is_grad_enabled()


def test_set_grad_enabled_as_a_function_call(ng):
    try:
        ng.set_grad_enabled(False)
        assert ng.is_grad_enabled() is False
        assert not _records(ng)
        ng.set_grad_enabled(True)
        assert ng.is_grad_enabled() is True
    finally:
        ng.set_grad_enabled(True)


def test_nested_managers(ng):
    with ng.no_grad():
        with ng.enable_grad():
            assert _records(ng)
            with ng.set_grad_enabled(False):
                assert not ng.is_grad_enabled()
            assert ng.is_grad_enabled()
        assert not ng.is_grad_enabled()
    assert ng.is_grad_enabled()


def test_results_under_no_grad_are_leaves_without_history(ng):
    x = ng.ones(2, requires_grad=True)
    with ng.no_grad():
        y = (x * 2).sin().sum()
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    z = x * 2
    assert z.requires_grad and z.grad_fn is not None


def test_grad_mode_is_thread_local(ng):
    seen = {}

    def worker():
        seen["start"] = ng.is_grad_enabled()
        seen["records"] = _records(ng)
        with ng.no_grad():
            seen["inside"] = ng.is_grad_enabled()
            seen["ready"].set()
            seen["go"].wait(5)

    seen["ready"], seen["go"] = threading.Event(), threading.Event()
    with ng.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        assert seen["ready"].wait(5)
        assert ng.is_grad_enabled() is False
    # the worker is still inside its own no_grad: the main thread is not affected
    assert ng.is_grad_enabled() is True
    assert _records(ng)
    seen["go"].set()
    thread.join(5)
    assert seen["start"] is True and seen["records"] is True and seen["inside"] is False
