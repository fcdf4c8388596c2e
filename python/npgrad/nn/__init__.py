"""``npgrad.nn``: as ``torch.nn``; for now its ``functional`` module only.

>>> import npgrad as torch
>>> torch.nn.functional.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from . import functional

__all__ = ["functional"]
