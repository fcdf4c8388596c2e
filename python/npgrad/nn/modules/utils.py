"""Argument helpers of the layers (torch's ``torch/nn/modules/utils.py``): an
int or a sequence as a tuple of ``n`` ints, and a padding reversed for ``F.pad``.

>>> from npgrad.nn.modules.utils import _pair, _reverse_repeat_tuple
>>> _pair(3), _pair((1, 2))
((3, 3), (1, 2))
>>> _reverse_repeat_tuple((1, 2), 2)
(2, 2, 1, 1)
"""

from __future__ import annotations

import collections.abc
from collections.abc import Callable
from itertools import repeat
from typing import Any

__all__: list[str] = []


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple[Any, ...]]:
    def parse(x: Any) -> tuple[Any, ...]:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: Any, n: int) -> tuple[Any, ...]:
    """``t`` reversed, each element repeated ``n`` times: a module's per-dim
    padding as ``F.pad`` takes it (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))
