#pragma once
// Note [Large buffers are cached]
// A large tensor's data is fresh pages from the OS: glibc hands big blocks
// back to the kernel (munmap, or trimming the heap top) as soon as they are
// freed, so the next array of that size page-faults on every 4 KiB it
// touches. An autograd graph frees its saved activations one node at a time
// during backward and allocates gradients of the same sizes right after, the
// worst case for that policy: on a 50-op chain of 10^6 floats, page faults
// were half of npgrad's time. The arrays the kernels make of at least
// kMinCachedBytes are allocated through this cache (a NumPy memory handler,
// so they stay ordinary arrays that own their data); freed blocks are kept,
// up to a byte limit, and handed out again for a request of the same size.
// A request that finds no block of its size first frees kept blocks of at
// least its own size: the cache holds on to memory only while the workload
// keeps asking for the sizes it holds, and never raises a peak.
// The limit is NPGRAD_BUFFER_CACHE_MB (default 256; 0 turns caching off), and
// npgrad._C._empty_buffer_cache() releases every kept block.

#include <cstddef>
#include <cstdint>

namespace npgrad::kernels::buffer_cache {

constexpr std::size_t kMinCachedBytes = std::size_t{1} << 20;

/// A block of at least `bytes`: a kept one of exactly that size, or malloc's.
void* allocate(std::size_t bytes);
/// calloc's contract: zeroed.
void* allocate_zeroed(std::size_t count, std::size_t elsize);
void* reallocate(void* ptr, std::size_t bytes);
/// Keeps the block for reuse, or frees it when the cache is full.
void release(void* ptr, std::size_t bytes);

/// Frees every kept block.
void empty();
struct Stats {
  std::size_t cached_bytes;
  std::size_t cached_blocks;
  std::size_t limit_bytes;
  std::uint64_t hits;
  std::uint64_t misses;
};
Stats stats();

}  // namespace npgrad::kernels::buffer_cache
