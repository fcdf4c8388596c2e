"""Mutation provenance: under anomaly mode, the "modified by an inplace operation" error
also names the op and the user's line that wrote the saved tensor (torch #15803).

npgrad-only: torch has no such addition, so these tests skip with
``NPGRAD_TESTS_AGAINST_TORCH=1``. Without anomaly mode the message is torch's, which
``test_message_is_torchs_without_anomaly_mode`` checks against real torch."""

from __future__ import annotations

import contextlib
import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from oracle import AGAINST_TORCH, run_in_threads

pytestmark = pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own addition to the in-place error")

HERE = __file__


@contextlib.contextmanager
def anomaly(lib: Any) -> Iterator[None]:
    """``detect_anomaly()`` with its warnings (enabling, "Error detected in") swallowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with lib.autograd.detect_anomaly():
            yield


def line() -> int:
    """The caller's current line."""
    return inspect.currentframe().f_back.f_lineno


def backward_error(lib: Any, out: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            out.sum().backward()
    return str(info.value)


def where(lineno: int, function: str) -> str:
    return f'File "{HERE}", line {lineno}, in {function}'


def saved_then_written(lib: Any, write: Callable[[Any], Any]) -> tuple[Any, int]:
    """exp saves its result b; `write(b)` runs on the returned line."""
    a = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    b = a.exp()
    lineno = line() + 1
    write(b)
    return b, lineno


def test_names_op_and_users_line(ng):
    def user_function(b):
        b.add_(1)

    with anomaly(ng):
        a = ng.tensor([0.5, 1.0], requires_grad=True)
        b = a.exp()
        user_function(b)
        message = backward_error(ng, b)
    lineno = user_function.__code__.co_firstlineno + 1
    expected = f"\nThe tensor was modified in place by add_ at {where(lineno, 'user_function')}"
    assert message.endswith(expected), message


def test_message_is_torchs_without_anomaly_mode(ng, torch_ref):
    messages = []
    for lib in (ng, torch_ref):
        a = lib.tensor([0.5, 1.0], requires_grad=True)
        b = a.exp()
        b.mul_(2)
        messages.append(backward_error(lib, b))
    assert messages[0] == messages[1]


def test_torchs_message_comes_first(ng, torch_ref):
    messages = []
    for lib in (ng, torch_ref):
        with anomaly(lib):
            a = lib.tensor([0.5, 1.0], requires_grad=True)
            b = a.exp()
            b.mul_(2)
            messages.append(backward_error(lib, b))
    npgrad_message, torch_message = messages
    assert npgrad_message.startswith(torch_message)
    assert npgrad_message[len(torch_message) :].startswith("\nThe tensor was modified in place by mul_ at File")


WRITES = [
    ("add_", lambda t: t.add_(1)),
    ("__setitem__", lambda t: t.__setitem__(0, 5.0)),
    ("__setitem__", lambda t: t.__setitem__(t > 1, 5.0)),
    ("copy_", lambda t: t.copy_(t.detach() * 2)),
    ("zero_", lambda t: t.zero_()),
    ("fill_", lambda t: t.fill_(3.0)),
    ("normal_", lambda t: t.normal_()),
    ("uniform_", lambda t: t.uniform_()),
    ("exp_", lambda t: t.exp_()),
    ("clamp_", lambda t: t.clamp_(0, 1)),
    ("masked_fill_", lambda t: t.masked_fill_(t > 1, 0.0)),
    ("index_add_", lambda t: t.index_add_(0, (t[:1] * 0).long(), t.detach()[:1])),
    ("addcmul_", lambda t: t.addcmul_(t.detach(), t.detach())),
    ("lerp_", lambda t: t.lerp_(t.detach() * 0, 0.5)),
    ("cumsum_", lambda t: t.cumsum_(0)),
    ("t_", lambda t: t.t_()),
    ("increment_version", lambda t: __import__("npgrad").autograd.graph.increment_version(t)),
]


@pytest.mark.parametrize(("op", "write"), WRITES, ids=[f"{op}-{i}" for i, (op, _) in enumerate(WRITES)])
def test_every_kind_of_write(ng, op, write):
    with anomaly(ng):
        b, _ = saved_then_written(ng, write)
        message = backward_error(ng, b)
    # The write's own frame is the lambda's (the innermost outside npgrad).
    assert f"modified in place by {op} at {where(write.__code__.co_firstlineno, '<lambda>')}" in message


def test_write_through_an_alias(ng):
    with anomaly(ng):
        a = ng.tensor([0.5, 1.0, 2.0], requires_grad=True)
        b = a.exp()
        view = b.detach()[1:]
        lineno = line() + 1
        view *= 3
        message = backward_error(ng, b)
    assert message.endswith(f"by mul_ at {where(lineno, 'test_write_through_an_alias')}")


def test_names_the_first_write_after_the_save(ng):
    with anomaly(ng):
        a = ng.tensor([0.5, 1.0], requires_grad=True)
        x = ng.ones(2)
        x.add_(1)  # before the save: not the culprit
        y = a * x
        lineno = line() + 1
        x.mul_(2)
        x.sub_(1)
        x.div_(2)
        message = backward_error(ng, y)
    expected = (
        f"by mul_ at {where(lineno, 'test_names_the_first_write_after_the_save')}"
        " (the first of 3 in-place writes since it was saved)"
    )
    assert message.endswith(expected), message


def test_write_inside_npgrad_names_the_users_frame(ng):
    with anomaly(ng):
        a = ng.tensor([0.5, 1.0], requires_grad=True)
        w = ng.ones(2)
        y = a * w
        lineno = line() + 1
        ng.nn.init.constant_(w, 2.0)
        message = backward_error(ng, y)
    assert f"by fill_ at {where(lineno, 'test_write_inside_npgrad_names_the_users_frame')}" in message


def test_write_without_anomaly_mode_is_not_recorded(ng):
    a = ng.tensor([0.5, 1.0], requires_grad=True)
    b = a.exp()
    b.add_(1)
    with anomaly(ng):
        message = backward_error(ng, b)
    assert "modified in place by" not in message
    assert message.endswith("Good luck!")


def test_old_records_are_dropped(ng):
    with anomaly(ng):
        x = ng.zeros(2)
        for _ in range(40):  # more than the records kept per buffer
            x.add_(1)
        a = ng.tensor([0.5, 1.0], requires_grad=True)
        y = a * x
        for _ in range(40):
            x.add_(1)
        message = backward_error(ng, y)
    assert "(older ones were not recorded) was add_ at File" in message
    assert re.search(r"at version 80; expected version 40", message)


def test_engine_usable_after_the_error(ng):
    with anomaly(ng):
        b, _ = saved_then_written(ng, lambda t: t.add_(1))
        backward_error(ng, b)
        a = ng.tensor([0.5, 1.0], requires_grad=True)
        a.exp().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)


def test_threads(ng):
    def work(i: int) -> None:
        for _ in range(5):
            a = ng.tensor([0.5, float(i)], requires_grad=True)
            b = a.exp()
            lineno = line() + 1
            b.add_(i)
            with pytest.raises(RuntimeError) as info:
                b.sum().backward()
            assert str(info.value).endswith(f"by add_ at {where(lineno, 'work')}")

    with anomaly(ng):
        run_in_threads(work, 8)
