"""pytest configuration for npgrad.

``ng`` is the library under test: ``npgrad``, or ``torch`` itself when the
environment variable ``NPGRAD_TESTS_AGAINST_TORCH=1`` is set (run the whole suite
that way to prove each test states real PyTorch behaviour). ``torch_ref`` is real
torch for differential tests; they skip when torch is not installed.
"""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

if os.environ.get("NPGRAD_TESTS_WITHOUT_TORCH") == "1":
    # Runs as if torch were not installed (differential tests skip); used by
    # the sanitizer run, where torch is not built with ASan.
    sys.modules["torch"] = None  # type: ignore[assignment]

import oracle  # noqa: E402


@pytest.fixture(scope="session")
def ng():
    return oracle.lib()


@pytest.fixture(scope="session")
def torch_ref():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _grad_mode_is_restored(request):
    """Every test starts with grad mode on and must leave it on."""
    yield
    lib = getattr(request.node, "funcargs", {}).get("ng")
    if lib is None:  # the test does not use the library (or it failed to import)
        return
    enabled = lib.is_grad_enabled()
    lib.set_grad_enabled(True)
    assert enabled, "the test left grad mode disabled"
