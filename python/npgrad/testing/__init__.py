"""``npgrad.testing``: ``assert_close`` and ``make_tensor``, as in ``torch.testing``.

>>> import npgrad as torch
>>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
"""

from __future__ import annotations

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
