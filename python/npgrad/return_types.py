"""Named results of reductions, like ``torch.return_types``."""

from __future__ import annotations

from collections import namedtuple

max = namedtuple("max", ["values", "indices"])  # noqa: A001
min = namedtuple("min", ["values", "indices"])  # noqa: A001
