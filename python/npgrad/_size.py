"""``Size``: the shape of a tensor, a tuple that prints like torch's."""

from __future__ import annotations


class Size(tuple):  # type: ignore[type-arg]
    """A tuple of ints; ``repr`` is ``torch.Size([2, 3])`` as in torch."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
