"""npgrad.utils.data against torch.utils.data: datasets, samplers, collation,
DataLoader (batching, drop_last, len, iterable datasets, errors).

Random orders are compared by their semantics (a permutation, the same order
for the same generator state), never with torch's numbers: npgrad's random
numbers come from another generator.
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

from oracle import AGAINST_TORCH, dtype_name


def plain(x):
    """A batch as plain data: tensors as ("T", dtype, values), containers by type."""
    if hasattr(x, "detach") and hasattr(x, "dtype"):
        return ("T", dtype_name(x.dtype), x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *(plain(v) for v in x))
    if isinstance(x, dict):
        return (type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


def both(ng, torch_ref, fn):
    """fn(lib) run on the library under test and on torch, as plain data."""
    return plain(fn(ng)), plain(fn(torch_ref))


def data(lib):
    return __import__(f"{lib.__name__}.utils.data", fromlist=["x"])


def expect(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == message


Point = collections.namedtuple("Point", "x y")

COLLATE_BATCHES = {
    "ints": [0, 1, 2],
    "bools": [True, False],
    "floats": [0.5, 1.5],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "tensors": lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    "numpy arrays": [np.arange(3, dtype=np.int32), np.ones(3, dtype=np.int32)],
    "numpy scalars": [np.float32(1.5), np.float32(2.5)],
    "numpy int16": [np.int16(3)],
    "tuples": [(1, "a", 0.5), (2, "b", 1.5)],
    "lists": [[1, 2], [3, 4]],
    "namedtuples": [Point(1, "a"), Point(2, "b")],
    "dicts": lambda lib: [{"x": lib.ones(2), "y": 1}, {"x": lib.zeros(2), "y": 2}],
    "ordered dicts": [collections.OrderedDict(a=1), collections.OrderedDict(a=2)],
    "nested": [{"a": [(1, 2.0)]}, {"a": [(3, 4.0)]}],
}


@pytest.mark.parametrize("name", list(COLLATE_BATCHES))
def test_default_collate_gives_torchs_types_and_values(ng, torch_ref, name):
    batch = COLLATE_BATCHES[name]
    got, want = both(ng, torch_ref, lambda lib: data(lib).default_collate(batch(lib) if callable(batch) else batch))
    assert got == want


def test_default_convert_gives_torchs_types_and_values(ng, torch_ref):
    sample = (np.int32(1), "x", np.array([1.0]), [np.zeros(2, np.float32)], {"k": np.int64(2)}, Point(np.ones(1), 3))
    got, want = both(ng, torch_ref, lambda lib: data(lib).default_convert(sample))
    assert got == want
    assert isinstance(data(ng).default_convert(np.array(["s"])), np.ndarray)  # strings stay arrays


def test_default_collate_errors(ng):
    collate = data(ng).default_collate
    prefix = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
    expect(TypeError, prefix + "<class 'object'>", collate, [object()])
    expect(TypeError, prefix + "<U1", collate, [np.array(["a"])])
    expect(RuntimeError, "each element in list of batch should be of equal size", collate, [[1], [1, 2]])


def test_tensor_dataset(ng):
    d = data(ng)
    ds = d.TensorDataset(ng.arange(6.0).reshape(3, 2), ng.tensor([7, 8, 9]))
    assert len(ds) == 3
    x, y = ds[-1]
    assert x.tolist() == [4.0, 5.0] and y.item() == 9
    assert [t.tolist() for t in ds[1:]] == [[[2.0, 3.0], [4.0, 5.0]], [8, 9]]
    expect(AssertionError, "Size mismatch between tensors", d.TensorDataset, ng.zeros(2), ng.zeros(3))


def test_concat_dataset_and_subset(ng):
    d = data(ng)
    ds = d.ConcatDataset([[0, 1], [], [2, 3, 4]])
    assert (len(ds), ds.cumulative_sizes) == (5, [2, 2, 5])
    assert [ds[i] for i in range(5)] == [0, 1, 2, 3, 4] and ds[-1] == 4 and ds[-5] == 0
    expect(ValueError, "absolute value of index should not exceed dataset length", ds.__getitem__, -6)
    with pytest.raises(IndexError):
        ds[5]
    expect(AssertionError, "datasets should not be an empty iterable", d.ConcatDataset, [])

    class Stream(d.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    expect(AssertionError, "ConcatDataset does not support IterableDataset", d.ConcatDataset, [[1], Stream()])
    assert list(Stream() + Stream()) == [0, 1, 2, 0, 1, 2]

    class Squares(d.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * i

    both_ = Squares() + Squares()
    assert isinstance(both_, d.ConcatDataset) and [both_[i] for i in range(6)] == [0, 1, 4, 0, 1, 4]
    expect(NotImplementedError, "Subclasses of Dataset should implement __getitem__.", d.Dataset().__getitem__, 0)

    with pytest.raises(TypeError, match="abstract"):
        d.IterableDataset()
    assert isinstance(Stream() + d.TensorDataset(ng.ones(1)), d.ChainDataset)
    chained = d.ChainDataset([d.TensorDataset(ng.ones(1))])
    expect(AssertionError, "ChainDataset only supports IterableDataset", list, chained)
    expect(AssertionError, "ChainDataset only supports IterableDataset", len, chained)

    sub = d.Subset(["a", "b", "c", "d"], [3, 1])
    assert (len(sub), sub[0], sub[-1]) == (2, "d", "b")
    tensor_sub = d.Subset(d.TensorDataset(ng.arange(4)), [2, 0])
    assert tensor_sub[[0, 1]][0].tolist() == [2, 0]  # a list of indices indexes the dataset once
    assert [b[0].tolist() for b in d.DataLoader(tensor_sub, batch_size=2)] == [[2, 0]]


def test_subset_subclass_must_override_getitems(ng):
    d = data(ng)

    class Doubled(d.Subset):
        def __getitem__(self, idx):
            return 2 * super().__getitem__(idx)

    with pytest.raises(NotImplementedError, match=r"^Doubled overrides __getitem__ but not __getitems__\. "):
        Doubled([1, 2], [0])


def test_stack_dataset(ng, torch_ref):
    def run(lib):
        d = data(lib)
        pairs = d.StackDataset(d.TensorDataset(lib.arange(3)), ["a", "b", "c"])
        named = d.StackDataset(x=d.Subset([5, 6, 7], [2, 1, 0]), y=[0.5, 1.5, 2.5])
        return (
            pairs[1],
            named[0],
            len(named),
            list(d.DataLoader(pairs, batch_size=2)),
            list(d.DataLoader(named, batch_size=3)),
        )

    got, want = both(ng, torch_ref, run)
    assert got == want
    d = data(ng)
    expect(ValueError, "Size mismatch between datasets", d.StackDataset, [1], [1, 2])
    expect(ValueError, "At least one dataset should be passed", d.StackDataset)
    with pytest.raises(ValueError, match="but both types are given"):
        d.StackDataset([1], y=[1])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1.0], [0.1, 0.1, 0.8]])
def test_random_split_sizes_as_torch(ng, torch_ref, lengths):
    got, want = both(ng, torch_ref, lambda lib: [len(s) for s in data(lib).random_split(range(10), lengths)])
    assert got == want


def test_random_split_order_and_errors(ng):
    d = data(ng)
    split = d.random_split(range(10), [4, 6], generator=ng.Generator().manual_seed(3))
    again = d.random_split(range(10), [4, 6], generator=ng.Generator().manual_seed(3))
    assert [list(s) for s in split] == [list(s) for s in again]
    assert sorted(list(split[0]) + list(split[1])) == list(range(10))
    assert all(isinstance(s, d.Subset) for s in split)
    with pytest.warns(
        UserWarning, match=r"^Length of split at index 1 is 0\. This might result in an empty dataset\.$"
    ):
        assert [len(s) for s in d.random_split(range(3), [0.1, 0.1, 0.8])] == [1, 0, 2]
    message = "Sum of input lengths does not equal the length of the input dataset!"
    expect(ValueError, message, d.random_split, range(10), [3, 3])
    expect(ValueError, message, d.random_split, range(10), [0.5, 0.6])
    expect(ValueError, "Fraction at index 0 is not between 0 and 1", d.random_split, range(10), [1.5, -0.5])


def test_sequential_and_random_samplers(ng):
    d = data(ng)
    assert list(d.SequentialSampler("abc")) == [0, 1, 2] and len(d.SequentialSampler("abc")) == 3
    g = ng.Generator().manual_seed(5)
    order = list(d.RandomSampler(range(20), generator=g))
    assert sorted(order) == list(range(20)) and order != list(range(20))
    assert order == list(d.RandomSampler(range(20), generator=ng.Generator().manual_seed(5)))
    assert list(d.RandomSampler(range(20), generator=g)) != order  # the generator moved on
    long = list(d.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3] and len(set(long[8:])) == 2
    drawn = list(d.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2}
    assert len(d.RandomSampler(range(4), replacement=True, num_samples=7)) == 7
    assert len(d.RandomSampler(range(4))) == 4
    expect(TypeError, "replacement should be a boolean value, but got replacement=1", d.RandomSampler, [1], 1)
    for bad in (0, -1, 2.5):
        expect(
            ValueError,
            f"num_samples should be a positive integer value, but got num_samples={bad}",
            d.RandomSampler,
            [1],
            num_samples=bad,
        )
    expect(ValueError, "num_samples should be a positive integer value, but got num_samples=0", d.RandomSampler, [])
    subset = list(d.SubsetRandomSampler([5, 8, 13, 21], generator=ng.Generator().manual_seed(1)))
    assert sorted(subset) == [5, 8, 13, 21] and len(d.SubsetRandomSampler([5, 8])) == 2
    assert subset == list(d.SubsetRandomSampler([5, 8, 13, 21], generator=ng.Generator().manual_seed(1)))
    weighted = list(d.WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 6, generator=g))
    assert len(weighted) == 6 and set(weighted) <= {1, 3}
    assert sorted(d.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g)) == [0, 1, 2]


@pytest.mark.parametrize(
    "n,size,drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)]
)
def test_batch_sampler_as_torch(ng, torch_ref, n, size, drop_last):
    def run(lib):
        sampler = data(lib).BatchSampler(data(lib).SequentialSampler(range(n)), size, drop_last)
        return list(sampler), len(sampler)

    got, want = both(ng, torch_ref, run)
    assert got == want


def test_batch_sampler_errors(ng):
    d = data(ng)
    for bad in (0, -1, True, 1.0):
        expect(
            ValueError,
            f"batch_size should be a positive integer value, but got batch_size={bad}",
            d.BatchSampler,
            [1],
            bad,
            False,
        )
    expect(ValueError, "drop_last should be a boolean value, but got drop_last=1", d.BatchSampler, [1], 2, 1)


LOADER_CASES = {
    "default": {},
    "batches of 2": {"batch_size": 2},
    "drop_last": {"batch_size": 2, "drop_last": True},
    "no batching": {"batch_size": None},
    "sampler": {"batch_size": 2, "sampler": [4, 0, 2]},
    "batch_sampler": {"batch_sampler": [[1, 3], [0], [2, 4]]},
    "collate_fn": {"batch_size": 2, "collate_fn": lambda batch: len(batch)},
}


@pytest.mark.parametrize("case", list(LOADER_CASES))
def test_dataloader_batches_and_len_as_torch(ng, torch_ref, case):
    def run(lib):
        ds = data(lib).TensorDataset(lib.arange(10.0).reshape(5, 2), lib.tensor([0, 1, 0, 1, 1]))
        loader = data(lib).DataLoader(ds, **LOADER_CASES[case])
        return list(loader), len(loader)

    got, want = both(ng, torch_ref, run)
    assert got == want


def test_dataloader_of_plain_samples_as_torch(ng, torch_ref):
    samples = [{"x": np.full(2, i, np.float32), "label": i, "name": f"s{i}"} for i in range(5)]
    got, want = both(ng, torch_ref, lambda lib: list(data(lib).DataLoader(samples, batch_size=2)))
    assert got == want


@pytest.mark.parametrize("batch_size,drop_last", [(2, False), (2, True), (None, False), (5, False)])
def test_dataloader_over_an_iterable_dataset_as_torch(ng, torch_ref, batch_size, drop_last):
    def run(lib):
        class Stream(data(lib).IterableDataset):
            def __iter__(self):
                return iter(range(5))

            def __len__(self):
                return 5

        loader = data(lib).DataLoader(Stream(), batch_size=batch_size, drop_last=drop_last)
        return list(loader), len(loader)

    got, want = both(ng, torch_ref, run)
    assert got == want


def test_dataloader_shuffle_order_semantics(ng):
    d = data(ng)
    ds = d.TensorDataset(ng.arange(12))

    def epoch(loader):
        return [v for (batch,) in loader for v in batch.tolist()]

    loader = d.DataLoader(ds, batch_size=5, shuffle=True, generator=ng.Generator().manual_seed(7))
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(12)) and first != second and len(loader) == 3
    again = d.DataLoader(ds, batch_size=5, shuffle=True, generator=ng.Generator().manual_seed(7))
    assert epoch(again) == first and epoch(again) == second
    assert isinstance(loader.sampler, d.RandomSampler) and isinstance(loader.batch_sampler, d.BatchSampler)
    assert isinstance(d.DataLoader(ds).sampler, d.SequentialSampler)
    ng.manual_seed(0)
    unseeded = epoch(d.DataLoader(ds, shuffle=True))
    ng.manual_seed(0)
    assert epoch(d.DataLoader(ds, shuffle=True)) == unseeded  # from the default generator


def test_dataloader_errors_as_torch(ng):
    d = data(ng)
    ds = d.TensorDataset(ng.arange(4))

    class Stream(d.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    cases = [
        (
            {"num_workers": -1},
            "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.",
        ),
        ({"timeout": -1}, "timeout option should be non-negative"),
        (
            {"prefetch_factor": 2},
            "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
            "multiprocessing, otherwise set prefetch_factor to None.",
        ),
        ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
        ({"sampler": [0, 1], "shuffle": True}, "sampler option is mutually exclusive with shuffle"),
        (
            {"batch_sampler": [[0]], "batch_size": 2},
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
        ),
        (
            {"batch_sampler": [[0]], "drop_last": True},
            "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
        ),
        (
            {"batch_size": None, "drop_last": True},
            "batch_size=None option disables auto-batching and is mutually exclusive with drop_last",
        ),
    ]
    for kwargs, message in cases:
        expect(ValueError, message, d.DataLoader, ds, **kwargs)
    stream = Stream()
    prefix = "DataLoader with IterableDataset: expected unspecified "
    expect(ValueError, prefix + "shuffle option, but got shuffle=True", d.DataLoader, stream, shuffle=True)
    expect(ValueError, prefix + "sampler option, but got sampler=[0]", d.DataLoader, stream, sampler=[0])
    expect(
        ValueError,
        prefix + "batch_sampler option, but got batch_sampler=[[0]]",
        d.DataLoader,
        stream,
        batch_sampler=[[0]],
    )
    with pytest.raises(TypeError):
        len(d.DataLoader(stream))  # the stream has no len
    loader = d.DataLoader(ds)
    for attr in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        expect(
            ValueError, f"{attr} attribute should not be set after DataLoader is initialized", setattr, loader, attr, 1
        )
    loader.collate_fn = len  # other attributes may be set
    assert list(loader) == [1, 1, 1, 1]


def test_dataloader_pin_memory_warns_and_worker_info_is_none(ng):
    d = data(ng)
    loader = d.DataLoader(d.TensorDataset(ng.arange(2)), pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        batches = list(loader)
    assert [b[0].tolist() for b in batches] == [[0], [1]]
    assert d.get_worker_info() is None


@pytest.mark.skipif(AGAINST_TORCH, reason="npgrad's own limit: torch has worker processes")
def test_dataloader_refuses_worker_processes(ng):
    d = data(ng)
    with pytest.raises(NotImplementedError, match=r"num_workers=2 needs worker processes, which npgrad does not have"):
        d.DataLoader(d.TensorDataset(ng.arange(2)), num_workers=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(d.DataLoader(d.TensorDataset(ng.arange(2)), num_workers=0)) == 2
