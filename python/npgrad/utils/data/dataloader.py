"""``DataLoader`` (torch's ``torch/utils/data/dataloader.py``), in one process.

npgrad has no worker processes: ``num_workers`` must be 0 (the default), and
``get_worker_info`` is always ``None``. Everything else follows torch's
single-process loader: the samplers it builds from ``batch_size``/``shuffle``/
``drop_last``, the errors for options that exclude each other, ``len()``, the
collate functions, map-style and iterable datasets.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ..._C import int64
from ..._creation import empty
from ..._generator import Generator
from ._utils.collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_NO_WORKERS = (
    "npgrad's DataLoader loads in the calling process only: num_workers={} needs worker processes, "
    "which npgrad does not have (use num_workers=0)"
)


def get_worker_info() -> None:
    """Information about the current ``DataLoader`` worker process: always
    ``None`` in npgrad, whose loader has no worker processes (torch also
    returns ``None`` in the main process).

    >>> from npgrad.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return None


class _InfiniteConstantSampler(Sampler[None]):
    # The "indices" of an iterable dataset: None forever (the dataset decides).
    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterates over ``dataset`` in batches, as ``torch.utils.data.DataLoader``
    with ``num_workers=0``.

    A map-style dataset is visited in the order of ``sampler`` (by default
    ``SequentialSampler``, or ``RandomSampler(dataset, generator=generator)``
    with ``shuffle=True``); indices are grouped by ``BatchSampler(sampler,
    batch_size, drop_last)`` unless ``batch_sampler`` is given, and each batch
    of samples goes through ``collate_fn`` (``default_collate``).
    ``batch_size=None`` turns batching off (``default_convert`` per sample).
    An ``IterableDataset`` is iterated as it is, its samples grouped by
    ``batch_size``. ``len(loader)`` is the number of batches.

    Each pass draws one number from ``generator`` (as torch's loader draws its
    base seed), so the same generator state gives the same order within
    npgrad; npgrad's random numbers differ from torch's, so the order does
    not equal torch's.

    ``num_workers > 0`` raises ``NotImplementedError``: npgrad loads in the
    calling process only (it has no worker processes); ``timeout``,
    ``worker_init_fn``, ``multiprocessing_context``, ``prefetch_factor`` and
    ``persistent_workers`` are checked as torch checks them with no workers.
    ``pin_memory=True`` warns as torch without an accelerator does, and does
    nothing.

    >>> import npgrad as torch
    >>> from npgrad.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(5.0), torch.tensor([0, 1, 0, 1, 0]))
    >>> for x, y in DataLoader(ds, batch_size=2):
    ...     print(x, y)
    tensor([0., 1.]) tensor([0, 1])
    tensor([2., 3.]) tensor([0, 1])
    tensor([4.]) tensor([0])
    >>> len(DataLoader(ds, batch_size=2, drop_last=True))
    2
    """

    dataset: Dataset[T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler[Any] | Iterable[Any]
    prefetch_factor: int | None
    _initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[list[Any]] | Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if num_workers > 0:
            raise NotImplementedError(_NO_WORKERS.format(num_workers))
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                f"but got num_workers={num_workers}"
            )
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified "
                    f"batch_sampler option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in (
            "batch_size",
            "batch_sampler",
            "sampler",
            "drop_last",
            "dataset",
            "persistent_workers",
        ):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator[Any]:
        if self.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=2,
            )
        # The base seed torch's loader draws for its workers: drawn here too, so
        # that a generator advances by a pass as it does in torch.
        empty((), dtype=int64).random_(generator=self.generator)
        indices = iter(self._index_sampler)
        if self._iterable:
            return self._iterate_stream(indices)
        return self._iterate_map(indices)

    def _iterate_map(self, indices: Iterator[Any]) -> Iterator[Any]:
        dataset: Any = self.dataset
        getitems = getattr(dataset, "__getitems__", None)
        for index in indices:
            if not self._auto_collation:
                data = dataset[index]
            elif getitems:
                data = getitems(index)
            else:
                data = [dataset[i] for i in index]
            yield self.collate_fn(data)

    def _iterate_stream(self, indices: Iterator[Any]) -> Iterator[Any]:
        stream = iter(self.dataset)  # type: ignore[call-overload]
        for index in indices:
            if not self._auto_collation:
                try:
                    sample = next(stream)
                except StopIteration:
                    return
                yield self.collate_fn(sample)
                continue
            data = []
            for _ in index:
                try:
                    data.append(next(stream))
                except StopIteration:
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                return
            yield self.collate_fn(data)
            if len(data) < len(index):
                return

    def __len__(self) -> int:
        if self._iterable:
            length: int = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)
