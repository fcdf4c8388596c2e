"""Anomaly mode: ``detect_anomaly`` / ``set_detect_anomaly`` and the global flags, the
forward traceback stored in ``node.metadata``, the "Error detected in ..." warnings on a
failing backward, and the NaN check on backward outputs.

The suite runs with ``-W error``: every expected warning is recorded with
``recorded()`` (warnings.catch_warnings) and asserted on explicitly."""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from oracle import assert_close, from_np, run_both, to_np

ENABLED_WARNING = (
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging."
)
TRACEBACK_OF_FORWARD = "Traceback of forward call that caused the error:"
NO_FORWARD_INFO = (
    "No forward pass information available. Enable detect anomaly during forward pass for more information."
)
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"
ANOMALY_HINT = (
    "Hint: the backtrace further above shows the operation that failed to compute its "
    "gradient. The variable in question was changed in there or anywhere later. Good luck!"
)
NORMAL_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its "
    "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


@pytest.fixture(autouse=True)
def _anomaly_mode_is_restored(ng):
    """Anomaly mode is process-global: never leak it into other tests."""
    yield
    set_mode = getattr(getattr(ng, "autograd", None), "set_detect_anomaly", None)
    if set_mode is not None:
        set_mode(False)


@contextlib.contextmanager
def recorded() -> Iterator[list[str]]:
    """Records every warning raised inside (as message strings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages: list[str] = []
        try:
            yield messages
        finally:
            messages.extend(str(w.message) for w in caught)


@contextlib.contextmanager
def detect_anomaly(ng: Any, **kwargs: Any) -> Iterator[None]:
    """``ng.autograd.detect_anomaly(**kwargs)`` with its enabling warning swallowed."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Anomaly Detection has been enabled")
        manager = ng.autograd.detect_anomaly(**kwargs)
    with manager:
        yield


def _line() -> int:
    """The line number of the caller's current line."""
    return inspect.currentframe().f_back.f_lineno


def _boom(ng: Any):
    class Boom(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    return Boom


def _nan_function(ng: Any):
    class NanOut(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    return NanOut


def _frame(ng_line: int) -> str:
    return f'File "{__file__}", line {ng_line}'


# ----------------------------------------------------------------------------------
# The switches


def test_names_exist(ng):
    assert inspect.isclass(ng.autograd.detect_anomaly)
    assert inspect.isclass(ng.autograd.set_detect_anomaly)
    assert callable(ng.is_anomaly_enabled)
    assert callable(ng.is_anomaly_check_nan_enabled)
    assert ng.is_anomaly_enabled() is False
    assert ng.is_anomaly_check_nan_enabled() is True


def test_detect_anomaly_warns_when_constructed(ng):
    with recorded() as messages:
        manager = ng.autograd.detect_anomaly()
    assert messages == [ENABLED_WARNING]
    assert ng.is_anomaly_enabled() is False  # takes effect on __enter__
    with recorded() as messages, manager:
        assert ng.is_anomaly_enabled() is True
        assert ng.is_anomaly_check_nan_enabled() is True
    assert messages == []
    assert ng.is_anomaly_enabled() is False


def test_detect_anomaly_warning_is_a_user_warning(ng):
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled") as info:
        ng.autograd.detect_anomaly()
    assert len(info) == 1
    assert info[0].category is UserWarning


def test_detect_anomaly_check_nan_parameter(ng):
    with detect_anomaly(ng, check_nan=False):
        assert ng.is_anomaly_enabled() is True
        assert ng.is_anomaly_check_nan_enabled() is False
    assert ng.is_anomaly_enabled() is False
    assert ng.is_anomaly_check_nan_enabled() is True


def test_detect_anomaly_nests_and_restores(ng):
    with detect_anomaly(ng):
        with detect_anomaly(ng, check_nan=False):
            assert ng.is_anomaly_check_nan_enabled() is False
        assert ng.is_anomaly_enabled() is True
        assert ng.is_anomaly_check_nan_enabled() is True
    assert ng.is_anomaly_enabled() is False


def test_detect_anomaly_restores_on_exception(ng):
    with pytest.raises(KeyError), detect_anomaly(ng):
        raise KeyError("x")
    assert ng.is_anomaly_enabled() is False


def test_set_detect_anomaly_as_a_plain_call(ng):
    with recorded() as messages:
        ng.autograd.set_detect_anomaly(True)
        assert ng.is_anomaly_enabled() is True
        ng.autograd.set_detect_anomaly(False)
        assert ng.is_anomaly_enabled() is False
        ng.autograd.set_detect_anomaly(True, check_nan=False)
        assert ng.is_anomaly_enabled() is True
        assert ng.is_anomaly_check_nan_enabled() is False
        ng.autograd.set_detect_anomaly(False)
    assert messages == []  # no warning, unlike detect_anomaly
    assert ng.is_anomaly_check_nan_enabled() is True


def test_set_detect_anomaly_as_a_context_manager_restores(ng):
    with ng.autograd.set_detect_anomaly(True):
        assert ng.is_anomaly_enabled() is True
        with ng.autograd.set_detect_anomaly(False):
            assert ng.is_anomaly_enabled() is False
        assert ng.is_anomaly_enabled() is True
        with ng.autograd.set_detect_anomaly(True, check_nan=False):
            assert ng.is_anomaly_check_nan_enabled() is False
        assert ng.is_anomaly_check_nan_enabled() is True
    assert ng.is_anomaly_enabled() is False
    ng.autograd.set_detect_anomaly(True)
    with ng.autograd.set_detect_anomaly(False):
        assert ng.is_anomaly_enabled() is False
    assert ng.is_anomaly_enabled() is True  # the previous value, not False


def test_anomaly_mode_is_process_global(ng):
    seen = []
    with ng.autograd.set_detect_anomaly(True):
        thread = threading.Thread(target=lambda: seen.append(ng.is_anomaly_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


# ----------------------------------------------------------------------------------
# The forward traceback in node.metadata


def test_nodes_created_in_anomaly_mode_store_the_forward_traceback(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with detect_anomaly(ng):
        line = _line() + 1  # the next line
        y = x.sin()
    stack = y.grad_fn.metadata["traceback_"]
    assert isinstance(stack, list) and all(isinstance(s, str) for s in stack)
    assert list(y.grad_fn.metadata) == ["traceback_"]
    mine = [s for s in stack if __file__ in s]
    assert mine[-1].startswith("  " + _frame(line))
    assert "y = x.sin()" in mine[-1]
    # the frames are outermost first, like traceback.format_stack()
    assert any("test_nodes_created_in_anomaly_mode" in s for s in mine)


def test_nodes_created_outside_anomaly_mode_have_no_traceback(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    assert y.grad_fn.metadata == {}
    with detect_anomaly(ng):
        z = y * 2
    assert "traceback_" in z.grad_fn.metadata
    assert y.grad_fn.metadata == {}


def test_grad_accumulator_created_in_anomaly_mode_stores_a_traceback(ng):
    with detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        line = _line() + 1  # the next line
        y = x * 2
    accumulator = y.grad_fn.next_functions[0][0]
    assert type(accumulator).__name__ == "AccumulateGrad"
    stack = accumulator.metadata["traceback_"]
    assert any(_frame(line) in s for s in stack)


def test_custom_function_node_stores_the_forward_traceback(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    boom = _boom(ng)
    with detect_anomaly(ng):
        line = _line() + 1  # the next line
        y = boom.apply(x)
    stack = y.grad_fn.metadata["traceback_"]
    mine = [s for s in stack if __file__ in s]
    assert _frame(line) in mine[-1] and "boom.apply(x)" in mine[-1]


def test_nodes_created_during_backward_record_their_parent(ng):
    with detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        y = x.sin()
        (g,) = ng.autograd.grad(y.sum(), x, create_graph=True)
    meta = g.grad_fn.metadata
    assert set(meta) == {"traceback_", "parent_"}
    assert meta["parent_"] is y.grad_fn
    assert isinstance(meta["traceback_"], list)
    assert "parent_" not in y.grad_fn.metadata


def test_anomaly_mode_does_not_change_gradients(ng):
    def grads(enabled):
        x = from_np(ng, np.array([0.3, -0.7, 1.1]), requires_grad=True)
        manager = detect_anomaly(ng) if enabled else contextlib.nullcontext()
        with manager:
            y = (x.sin() * x.exp()).sum()
            (g,) = ng.autograd.grad(y, x, create_graph=True)
            (gg,) = ng.autograd.grad(g.sum(), x)
        return to_np(g), to_np(gg)

    for a, b in zip(grads(True), grads(False)):
        assert_close(a, b, rtol=0, atol=0)


# ----------------------------------------------------------------------------------
# Errors in backward


def test_error_in_custom_backward_reports_the_forward_line(ng):
    boom = _boom(ng)
    with recorded() as messages, detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        line = _line() + 1  # the next line
        y = boom.apply(x)
        with pytest.raises(ValueError, match="boom in backward"):
            y.sum().backward()
    (message,) = messages
    assert message.startswith(f"Error detected in BoomBackward. {TRACEBACK_OF_FORWARD}\n")
    assert _frame(line) in message
    assert "y = boom.apply(x)" in message


def test_error_with_forward_outside_anomaly_mode(ng):
    boom = _boom(ng)
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = boom.apply(x)
    with (
        recorded() as messages,
        detect_anomaly(ng),
        pytest.raises(ValueError, match="boom in backward"),
    ):
        y.sum().backward()
    (message,) = messages
    assert message.startswith(f"Error detected in BoomBackward. {NO_FORWARD_INFO}")


def test_error_without_anomaly_mode_warns_nothing(ng):
    y = _boom(ng).apply(ng.tensor([1.0, 2.0], requires_grad=True))
    with recorded() as messages, pytest.raises(ValueError, match="boom in backward"):
        y.sum().backward()
    assert messages == []


def test_error_detected_through_grad(ng):
    boom = _boom(ng)
    with recorded() as messages, detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        line = _line() + 1  # the next line
        y = boom.apply(x)
        with pytest.raises(ValueError, match="boom in backward"):
            ng.autograd.grad(y.sum(), x)
    (message,) = messages
    assert message.startswith("Error detected in BoomBackward.")
    assert _frame(line) in message


def test_modified_saved_tensor_under_anomaly_mode(ng):
    with recorded() as messages, detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        y = x.clone()
        line = _line() + 1  # the next line
        z = y.sin()
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
    error = str(info.value)
    assert MODIFIED in error
    # npgrad appends where the write happened (test_mutation_provenance.py).
    assert error.split("\n")[0].endswith(ANOMALY_HINT)
    (message,) = messages
    assert message.startswith(f"Error detected in SinBackward0. {TRACEBACK_OF_FORWARD}\n")
    assert _frame(line) in message and "z = y.sin()" in message


def test_modified_saved_tensor_hint_without_anomaly_mode(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.clone()
    z = y.sin()
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    assert MODIFIED in str(info.value)
    assert str(info.value).endswith(NORMAL_HINT)


def _nested_failure(ng):
    boom = _boom(ng)

    class Outer(ng.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return boom.apply(g) * 3

    return Outer


def test_error_in_double_backward_names_the_parent(ng):
    outer = _nested_failure(ng)
    with recorded() as messages, detect_anomaly(ng):
        x = ng.tensor([1.0, 2.0], requires_grad=True)
        outer_line = _line() + 1  # the next line
        y = outer.apply(x)
        (g,) = ng.autograd.grad((y * y).sum(), x, create_graph=True)
        with pytest.raises(ValueError, match="boom in backward"):
            g.sum().backward()
    assert len(messages) == 2
    first, second = messages
    assert first.startswith(f"Error detected in BoomBackward. {TRACEBACK_OF_FORWARD}\n")
    assert "return boom.apply(g) * 3" in first  # created inside Outer's backward
    assert second.startswith(
        "\n\nPrevious calculation was induced by OuterBackward. Traceback of forward "
        "call that induced the previous calculation:\n"
    )
    assert _frame(outer_line) in second


# ----------------------------------------------------------------------------------
# The NaN check


def _sqrt_at_zero(ng):
    x = ng.tensor([0.0, 2.0], requires_grad=True)
    return x, (x.sqrt() * ng.tensor([0.0, 1.0])).sum()  # 0 * inf -> nan


def _div_by_self_at_zero(ng):
    x = ng.tensor([0.0, 2.0], requires_grad=True)
    return x, (x / x).sum()  # d/d(other) = -x / x^2 -> 0 / 0


def _custom_nan(ng):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    return x, _nan_function(ng).apply(x).sum()


NAN_CASES = [
    pytest.param(_sqrt_at_zero, "SqrtBackward0", 0, id="sqrt"),
    pytest.param(_div_by_self_at_zero, "DivBackward0", 1, id="div"),
    pytest.param(_custom_nan, "NanOutBackward", 0, id="custom"),
]


@pytest.mark.parametrize(("build", "node", "index"), NAN_CASES)
def test_nan_in_backward_is_an_error(ng, build, node, index):
    with recorded() as messages, detect_anomaly(ng):
        _x, loss = build(ng)
        with pytest.raises(RuntimeError) as info:
            loss.backward()
    assert str(info.value) == f"Function '{node}' returned nan values in its {index}th output."
    (message,) = messages
    assert message.startswith(f"Error detected in {node}. {TRACEBACK_OF_FORWARD}")


@pytest.mark.parametrize(("build", "node", "index"), NAN_CASES)
def test_nan_check_matches_torch(ng, build, node, index):
    def run(lib):
        with recorded(), detect_anomaly(lib):
            _, loss = build(lib)
            try:
                loss.backward()
            except RuntimeError as e:
                return str(e)
        return None

    got, expected = run_both(run)
    assert got == expected


@pytest.mark.parametrize(("build", "node", "index"), NAN_CASES)
def test_nan_check_disabled_by_check_nan_false(ng, build, node, index):
    with recorded() as messages, detect_anomaly(ng, check_nan=False):
        x, loss = build(ng)
        loss.backward()
    assert messages == []
    assert np.isnan(to_np(x.grad)).any()


@pytest.mark.parametrize(("build", "node", "index"), NAN_CASES)
def test_nan_check_disabled_by_set_detect_anomaly(ng, build, node, index):
    with ng.autograd.set_detect_anomaly(True, check_nan=False):
        x, loss = build(ng)
        loss.backward()
    assert np.isnan(to_np(x.grad)).any()


@pytest.mark.parametrize(("build", "node", "index"), NAN_CASES)
def test_no_nan_check_without_anomaly_mode(ng, build, node, index):
    x, loss = build(ng)
    loss.backward()
    assert np.isnan(to_np(x.grad)).any()


def test_inf_is_not_nan(ng):
    with detect_anomaly(ng):
        x = ng.tensor([0.0, 4.0], requires_grad=True)
        x.sqrt().sum().backward()
    assert to_np(x.grad).tolist() == [np.inf, 0.25]


def test_nan_check_set_through_plain_call(ng):
    ng.autograd.set_detect_anomaly(True)
    _x, loss = _sqrt_at_zero(ng)
    with (
        recorded() as messages,
        pytest.raises(RuntimeError, match="returned nan values in its 0th output"),
    ):
        loss.backward()
    assert len(messages) == 1 and messages[0].startswith("Error detected in SqrtBackward0.")
