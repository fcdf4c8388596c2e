"""Helpers of ``npgrad.utils.data`` (torch's ``torch.utils.data._utils``): collation."""

from __future__ import annotations

from . import collate

__all__ = ["collate"]
