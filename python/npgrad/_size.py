"""``Size``: the shape of a tensor, a tuple that prints like torch's."""

from __future__ import annotations

from typing import Any, SupportsIndex, overload


class Size(tuple):  # type: ignore[type-arg]
    """A tuple of ints; ``repr`` is ``torch.Size([2, 3])`` as in torch. Slices,
    concatenations and repetitions are ``Size`` too, as torch's.

    >>> import npgrad as torch
    >>> s = torch.ones(2, 3, 4).shape
    >>> s[1:], s + (5,), (1,) + s, s[:1] * 2
    (torch.Size([3, 4]), torch.Size([2, 3, 4, 5]), torch.Size([1, 2, 3, 4]), torch.Size([2, 2]))
    """

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    @overload
    def __getitem__(self, index: SupportsIndex) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> Size: ...

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other: Any) -> Any:
        result = super().__add__(other)
        return Size(result) if isinstance(result, tuple) else result

    def __radd__(self, other: Any) -> Any:
        return Size(other + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def __mul__(self, count: SupportsIndex) -> Size:
        return Size(super().__mul__(count))

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
