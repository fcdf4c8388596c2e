"""Samplers (torch's ``torch/utils/data/sampler.py``): the order in which a
``DataLoader`` visits the indices of a map-style dataset, and how it groups
them into batches.

Random samplers draw from npgrad's generators: the same generator state gives
the same order within npgrad, not the order torch gives (npgrad's random
numbers come from PCG64, torch's from a Mersenne Twister).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ..._C import float64, int64
from ..._creation import as_tensor, empty
from ..._generator import Generator
from ..._sampling import multinomial, randint, randperm

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


class Sampler(Generic[T_co]):
    """The base of samplers: subclasses define ``__iter__`` (the indices, or
    batches of indices, to visit) and, when they know it, ``__len__``.

    >>> from npgrad.utils.data import DataLoader, Sampler
    >>> class Backwards(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> list(DataLoader([10, 20, 30], sampler=Backwards(3), batch_size=2))
    [tensor([30, 20]), tensor([10])]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass  # torch accepts (and ignores) data_source here

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """The indices ``0, 1, ..., len(data_source) - 1`` in order.

    >>> from npgrad.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc")), len(SequentialSampler("abc"))
    ([0, 1, 2], 3)
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator() -> Generator:
    # A generator seeded from the default one, as torch's RandomSampler makes
    # when given none: each pass draws a new order.
    seed = int(empty((), dtype=int64).random_().item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler[int]):
    """The indices of ``data_source`` in random order: a permutation of them
    (repeated when ``num_samples`` exceeds the dataset's length), or, with
    ``replacement=True``, ``num_samples`` indices drawn independently.
    ``generator`` gives the randomness (by default each pass seeds a new
    generator from npgrad's default one).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import RandomSampler
    >>> order = list(RandomSampler(range(5), generator=torch.Generator().manual_seed(1)))
    >>> sorted(order)
    [0, 1, 2, 3, 4]
    >>> order == list(RandomSampler(range(5), generator=torch.Generator().manual_seed(1)))
    True
    >>> len(RandomSampler(range(5), replacement=True, num_samples=8))
    8
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # Read each time: the dataset's size may change.
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            # In chunks of 32, as torch draws them.
            for _ in range(self.num_samples // 32):
                yield from randint(high=n, size=(32,), dtype=int64, generator=generator).tolist()
            yield from randint(high=n, size=(self.num_samples % 32,), dtype=int64, generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in random order (without replacement).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([3, 7, 9], generator=torch.Generator().manual_seed(0)))
    [3, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """``num_samples`` indices in ``[0, len(weights))`` drawn with the given
    probabilities (``weights``, not necessarily summing to one), with or
    without replacement (``multinomial``).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3, generator=torch.Generator().manual_seed(0)))
    [1, 1, 1]
    """

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                f"weights should be a 1d sequence but given weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``; the last,
    shorter batch is kept unless ``drop_last``.

    >>> from npgrad.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), batch_size=2, drop_last=True))
    2
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        batch = list(itertools.islice(indices, self.batch_size))
        while batch and (len(batch) == self.batch_size or not self.drop_last):
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self) -> int:
        n: Any = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size  # type: ignore[no-any-return]
        return (n + self.batch_size - 1) // self.batch_size  # type: ignore[no-any-return]
