"""Datasets, samplers and the data loader, as ``torch.utils.data``.

``DataLoader`` loads in the calling process only: npgrad has no worker
processes, so ``num_workers`` must be 0 and ``get_worker_info()`` is ``None``.

>>> import npgrad as torch
>>> from npgrad.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(torch.arange(4.0)), batch_size=3)
>>> [batch[0].tolist() for batch in loader]
[[0.0, 1.0, 2.0], [3.0]]
"""

from __future__ import annotations

from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
