"""``Size``: the shape of a tensor, a tuple that prints like torch's."""

from __future__ import annotations


class Size(tuple):  # type: ignore[type-arg]
    """A tuple of ints; ``repr`` is ``torch.Size([2, 3])`` as in torch."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        # A slice of a Size is a Size, as in torch.
        item = super().__getitem__(key)
        return Size(item) if isinstance(key, slice) else item

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n
