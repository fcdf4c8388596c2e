"""Utilities mirroring ``torch.utils``.

``npgrad.utils.checkpoint`` is imported on first use: it builds on
``npgrad.autograd``, which itself imports ``npgrad.utils.hooks``.

>>> import npgrad as torch
>>> torch.utils.checkpoint.checkpoint.__name__
'checkpoint'
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "checkpoint":
        return importlib.import_module(".checkpoint", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
