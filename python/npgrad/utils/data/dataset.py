"""Datasets (torch's ``torch/utils/data/dataset.py``).

A map-style dataset (``Dataset``) has ``__getitem__`` and usually ``__len__``;
an iterable one (``IterableDataset``) has ``__iter__``. ``TensorDataset``,
``ConcatDataset``, ``ChainDataset`` and ``Subset`` build datasets from others,
and ``random_split`` splits one into random ``Subset``s.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ..._generator import Generator, default_generator
from ..._sampling import randperm

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (a key, usually an
    index, to a sample) and usually ``__len__``, which ``DataLoader``'s
    default samplers need. ``a + b`` concatenates two datasets.

    >>> from npgrad.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> both = Squares() + Squares()
    >>> len(both), both[5]
    (8, 1)
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset of samples produced by ``__iter__`` (a stream), for data that
    cannot be indexed; an abstract class (a subclass without ``__iter__``
    cannot be instantiated). A ``DataLoader`` over it takes no sampler and no
    shuffle; ``a + b`` chains two of them.

    >>> from npgrad.utils.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    >>> list(DataLoader(Count(5), batch_size=2))
    [tensor([0, 1]), tensor([2, 3]), tensor([4])]
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Any, ...]]):
    """A dataset of tensors indexed along their first dimension: sample ``i``
    is the tuple of each tensor's row ``i``. The tensors must have the same
    size in their first dimension (``AssertionError`` otherwise, as torch).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import TensorDataset
    >>> ds = TensorDataset(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([3., 4.]), tensor(1)))
    """

    def __init__(self, *tensors: Any) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].size(0))


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets: index ``i`` runs through the
    first dataset, then the second, and so on (``cumulative_sizes`` holds the
    running lengths). A negative index counts from the end.

    >>> from npgrad.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[10, 11], [20, 21, 22]])
    >>> len(ds), ds[2], ds[-1], ds.cumulative_sizes
    (5, 20, 22, [2, 5])
    """

    datasets: list[Dataset[T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return self.datasets[dataset_idx][idx - start]  # type: ignore[index]


class ChainDataset(IterableDataset[Any]):
    """The chaining of ``IterableDataset``s: their samples one stream after the
    other (what ``a + b`` of two of them gives). Anything else in
    ``datasets`` raises ``AssertionError`` when reached.

    >>> from npgrad.utils.data import ChainDataset, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    ...     def __len__(self):
    ...         return self.n
    >>> chained = ChainDataset([Count(2), Count(3)])
    >>> list(chained), len(chained)
    ([0, 1, 0, 1, 2], 5)
    """

    def __init__(self, datasets: Iterable[Dataset[Any]]) -> None:
        self.datasets = datasets

    def _each(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self) -> Iterator[Any]:
        for d in self._each():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._each())


class StackDataset(Dataset[Any]):
    """Datasets of equal length side by side: sample ``i`` is the tuple of
    their samples ``i`` (datasets given as arguments) or the dict of them
    (given as keywords).

    >>> from npgrad.utils.data import StackDataset
    >>> StackDataset([1, 2], ["a", "b"])[1], StackDataset(x=[1, 2], y=["a", "b"])[0]
    ((2, 'b'), {'x': 1, 'y': 'a'})
    """

    datasets: tuple[Any, ...] | dict[str, Any]

    def __init__(self, *args: Dataset[Any], **kwargs: Dataset[Any]) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/output, "
                "but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])  # type: ignore[arg-type]
        if any(len(d) != self._length for d in parts):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list[int]) -> list[Any]:
        # Each part fetched as a batch when it can be (its __getitems__).
        named = self.datasets.items() if isinstance(self.datasets, dict) else enumerate(self.datasets)
        columns = {}
        for key, d in named:
            getitems = getattr(d, "__getitems__", None)
            column = getitems(indices) if callable(getitems) else [d[i] for i in indices]
            if len(column) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(column)}")
            columns[key] = column
        rows = [{k: c[j] for k, c in columns.items()} for j in range(len(indices))]
        return rows if isinstance(self.datasets, dict) else [tuple(r.values()) for r in rows]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order: ``subset[i]``
    is ``dataset[indices[i]]``.

    >>> from npgrad.utils.data import Subset
    >>> s = Subset(["a", "b", "c", "d"], [3, 0])
    >>> len(s), s[0], s[1]
    (2, 'd', 'a')
    """

    dataset: Dataset[T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            # The DataLoader would fetch batches through the inherited
            # __getitems__, bypassing the subclass's __getitem__ (torch's check).
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        # The batch in one call when the dataset can fetch one (DataLoader
        # calls __getitems__ when a dataset has it, as torch's does).
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems([self.indices[i] for i in indices])  # type: ignore[no-any-return]
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset[T], lengths: Sequence[int | float], generator: Generator | None = default_generator
) -> list[Subset[T]]:
    """Splits ``dataset`` into non-overlapping ``Subset``s of the given lengths,
    drawn from one random permutation (``randperm`` on ``generator``).
    ``lengths`` are sizes that add up to ``len(dataset)``, or fractions that
    add up to 1: each split then gets ``floor(len(dataset) * fraction)``
    items and the remainder is given out one by one from the first split on
    (a split of length 0 warns). The same generator state gives the same split
    (npgrad's random numbers are not torch's, so not torch's split).

    >>> import npgrad as torch
    >>> from npgrad.utils.data import random_split
    >>> a, b = random_split(range(10), [0.7, 0.3], generator=torch.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))  # type: ignore[arg-type]
        for i in range(len(dataset) - sum(sizes)):  # type: ignore[arg-type]
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=2
                )
        lengths = sizes
    if sum(lengths) != len(dataset):  # type: ignore[arg-type]
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()  # type: ignore[arg-type]
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, indices[end - n : end]) for end, n in zip(ends, lengths)]  # type: ignore[misc]
