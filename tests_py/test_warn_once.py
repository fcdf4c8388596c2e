"""Warnings torch gives once per process (its TORCH_WARN_ONCE), ``set_warn_always`` and
``is_warn_always_enabled``: ``float()`` of a tensor that requires grad, in grad mode."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

import oracle

SCALAR = "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior."


@pytest.fixture
def warn_always(ng: Any) -> Iterator[None]:
    ng.set_warn_always(True)
    yield
    ng.set_warn_always(False)


def _warnings_of(fn: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_set_warn_always_round_trip(ng):
    assert ng.is_warn_always_enabled() is False
    ng.set_warn_always(True)
    try:
        assert ng.is_warn_always_enabled() is True
    finally:
        ng.set_warn_always(False)
    assert ng.is_warn_always_enabled() is False


@pytest.mark.usefixtures("warn_always")
def test_float_of_a_tensor_that_requires_grad_warns(ng):
    leaf = ng.tensor(2.0, requires_grad=True)
    for t in (leaf, leaf * 3, ng.ones(2, requires_grad=True)[0]):
        (message,) = _warnings_of(lambda t=t: float(t))
        # torch adds where in its C++ the warning was triggered
        assert message.startswith(SCALAR + "\nConsider using tensor.detach() first.")


@pytest.mark.usefixtures("warn_always")
def test_other_conversions_and_no_grad_do_not_warn(ng):
    t = ng.tensor(2.0, requires_grad=True)
    assert _warnings_of(lambda: float(t.detach())) == []
    assert _warnings_of(lambda: (int(t), bool(t), t.item(), t.tolist())) == []
    with ng.no_grad():
        assert _warnings_of(lambda: float(t)) == []


def test_the_warning_is_once_per_process():
    """In a fresh interpreter: the first float() warns, the next ones do not, and
    set_warn_always(True) makes them warn again."""
    program = f"""
import warnings
import {oracle.lib().__name__} as lib
t = lib.tensor(1.5, requires_grad=True)
counts = []
for always in (False, False, True, True):
    lib.set_warn_always(always)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        float(t * 2)
    counts.append(len(caught))
print(counts)
"""
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[1, 0, 1, 1]"


@pytest.mark.usefixtures("warn_always")
def test_a_warning_made_an_error_raises(ng):
    t = ng.tensor(2.0, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="Converting a tensor with requires_grad=True"):
            float(t)
    assert float(t.detach()) == 2.0
