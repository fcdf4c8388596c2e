"""Full collections of Python's gc also collect cycles of C++ autograd state.

A ``.grad`` computed with ``create_graph=True`` references its own tensor
through its graph (torch's issue #7343). Those links are C++ references that
Python's gc cannot see, so at the start of every full collection the native
collector breaks such cycles when nothing outside them is still using them
(Note [Autograd cycles] in csrc/npgrad/autograd/cycle_collector.h).
"""

from __future__ import annotations

import gc
from typing import Any

from . import _C


def _collect_autograd_cycles(phase: str, info: dict[str, Any]) -> None:
    if phase == "start" and info.get("generation") == 2:
        _C._collect_autograd_cycles()


if _collect_autograd_cycles not in gc.callbacks:
    gc.callbacks.append(_collect_autograd_cycles)
