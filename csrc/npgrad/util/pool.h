#pragma once
// Note [Pooled small objects]
// Every op makes a TensorImpl, a version counter, a node and its autograd
// metadata, and the backward pass frees them all and makes the gradients'. A
// chain's forward allocates thousands of these before the backward frees any,
// so glibc's per-thread cache (7 blocks per size) never holds them and each
// malloc/free pair took its slow path: about 230 instructions, a fifth of a
// small op. Freed blocks of the hot types are kept on a per-thread free list
// per 16-byte size class instead, and the next allocation of that size pops
// one (a few instructions). Only the allocation changes: objects are built and
// destroyed exactly as before, so no ownership or lifetime rule moves.
// A block freed on another thread joins that thread's list (all blocks come
// from ::operator new). What a thread keeps is bounded (kMaxKeptBytes) and is
// returned when the thread exits. Under AddressSanitizer the pool is off, so
// a use after free is still reported.

#include <cstddef>
#include <new>

namespace npgrad {
namespace pool {

/// At least `bytes`, aligned for any type of alignment <= 16.
void* allocate(std::size_t bytes);
/// Frees a block of allocate(bytes) (the same `bytes`).
void deallocate(void* p, std::size_t bytes) noexcept;
/// Bytes this thread keeps for reuse (for tests).
std::size_t kept_bytes();
/// False under AddressSanitizer, where every block goes straight to the heap.
bool enabled();

}  // namespace pool

/// A std allocator over the pool (for std::allocate_shared and containers).
template <typename T>
struct PoolAllocator {
  static_assert(alignof(T) <= 16, "the pool aligns to 16 bytes");
  using value_type = T;
  PoolAllocator() noexcept = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    return static_cast<T*>(pool::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    pool::deallocate(p, n * sizeof(T));
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace npgrad
