"""Large tensor buffers are kept for reuse (Note [Large buffers are cached] in
kernels/buffer_cache.h): what the cache promises and what it must never do."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import npgrad as ng
from oracle import child_env

LARGE = 1 << 19  # float32 elements: 2 MiB, above the 1 MiB threshold
SMALL = 1000


def handler_name(a: np.ndarray) -> str:
    """The allocator of the array that owns a's data (Tensor.numpy() is a view)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return np._core.multiarray.get_handler_name(a)


def stats() -> dict:
    return ng._C._buffer_cache_stats()


def test_large_results_use_the_cache_and_small_ones_do_not():
    x = ng.ones(LARGE)
    assert handler_name((x * 2).numpy()) == "npgrad_buffer_cache"
    assert handler_name((ng.ones(SMALL) * 2).numpy()) == "default_allocator"
    # The user's own NumPy arrays keep NumPy's allocator, before and after.
    assert handler_name(np.ones(LARGE, dtype=np.float32)) == "default_allocator"


def test_a_freed_block_is_reused_for_the_same_size():
    ng._C._empty_buffer_cache()
    x = ng.ones(LARGE)
    y = x * 2
    ptr = y.data_ptr()
    del y
    assert stats()["cached_blocks"] >= 1
    hits = stats()["hits"]
    z = x * 3
    assert z.data_ptr() == ptr
    assert stats()["hits"] == hits + 1
    np.testing.assert_array_equal(z.numpy(), np.full(LARGE, 3, dtype=np.float32))


def test_the_block_freed_last_is_reused_first():
    """LIFO, as malloc: the block freed last is the one likely still in the CPU's
    caches (taking the oldest made the 50-op chain over 10^6 floats 10% slower)."""
    ng._C._empty_buffer_cache()
    x = ng.ones(LARGE)
    a, b, c = x * 2, x * 3, x * 4
    ptrs = [a.data_ptr(), b.data_ptr(), c.data_ptr()]
    del b
    del a
    del c  # freed last
    p, q, r = x * 5, x * 6, x * 7
    assert [p.data_ptr(), q.data_ptr(), r.data_ptr()] == [ptrs[2], ptrs[0], ptrs[1]]


def test_reused_blocks_carry_no_stale_values():
    x = ng.full((LARGE,), 7.0)
    y = x * 5
    del y
    z = ng.zeros(LARGE)
    np.testing.assert_array_equal(z.numpy(), np.zeros(LARGE, dtype=np.float32))
    e = ng.empty(LARGE)  # uninitialised by contract, but the right size and dtype
    assert e.shape == (LARGE,) and e.dtype == ng.float32


def test_backward_of_a_large_chain_recycles_buffers():
    ng._C._empty_buffer_cache()
    x = ng.rand(LARGE, requires_grad=True)

    def run():
        y = x
        for _ in range(10):
            y = ng.sin(y) * 1.5 + 0.1
        y.sum().backward()

    run()
    before = stats()
    x.grad = None
    run()
    after = stats()
    assert after["misses"] == before["misses"], (before, after)  # all served by the cache
    assert after["hits"] > before["hits"]


def test_empty_buffer_cache_frees_every_kept_block():
    x = ng.ones(LARGE)
    for k in range(4):
        y = x * k
        del y
    assert stats()["cached_bytes"] > 0
    ng._C._empty_buffer_cache()
    assert stats()["cached_bytes"] == 0 and stats()["cached_blocks"] == 0


def test_the_cache_never_keeps_more_than_its_limit():
    ng._C._empty_buffer_cache()
    limit = stats()["limit_bytes"]
    x = ng.ones(LARGE)
    n = limit // (LARGE * 4) + 8
    ys = [x * i for i in range(n)]
    del ys
    assert stats()["cached_bytes"] <= limit
    ng._C._empty_buffer_cache()


def test_a_user_held_array_outlives_the_tensor_and_stays_valid():
    x = ng.ones(LARGE)
    arr = (x * 4).numpy()  # the tensor dies; the array keeps the block
    z = x * 9  # must not receive arr's block
    assert not np.shares_memory(arr, z.numpy())
    np.testing.assert_array_equal(arr, np.full(LARGE, 4, dtype=np.float32))
    del arr  # freed through the cache's handler


@pytest.mark.parametrize("setting, expected", [("0", "default_allocator"), ("64", "npgrad_buffer_cache")])
def test_npgrad_buffer_cache_mb_sets_the_limit(setting, expected):
    code = (
        "import npgrad as ng, numpy as np\n"
        f"a = (ng.ones({LARGE}) * 2).numpy()\n"
        "while isinstance(a.base, np.ndarray):\n"
        "    a = a.base\n"
        "print(np._core.multiarray.get_handler_name(a), ng._C._buffer_cache_stats()['limit_bytes'])\n"
    )
    env = child_env()
    env["NPGRAD_BUFFER_CACHE_MB"] = setting
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    name, limit = out.stdout.split()
    assert name == expected
    assert int(limit) == int(setting) << 20


def test_a_miss_gives_back_at_least_what_it_takes():
    """The cache never adds to a peak: a request of a size it does not hold first
    frees kept blocks of at least its own size."""
    ng._C._empty_buffer_cache()
    x = ng.ones(LARGE)
    ys = [x * i for i in range(4)]
    del ys
    kept = stats()["cached_bytes"]
    assert kept == 4 * LARGE * 4
    z = ng.ones(3 * LARGE // 2) * 2  # 3 MiB: no block of that size is kept
    assert stats()["cached_bytes"] <= kept - z.numel() * 4
    ng._C._empty_buffer_cache()


def test_numpys_own_large_results_come_from_the_cache_too():
    """matmul's output is allocated by NumPy: under the cache as well, so the blocks
    freed by one layer's activations serve the next layer's products."""
    a = ng.ones(1024, 512)
    b = ng.ones(512, 512)
    assert handler_name((a @ b).numpy()) == "npgrad_buffer_cache"
    assert (
        handler_name(np.ones((1024, 512), dtype=np.float32) @ np.ones((512, 512), dtype=np.float32))
        == "default_allocator"
    )
