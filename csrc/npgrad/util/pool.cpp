#include "npgrad/util/pool.h"

#include <cstdint>

// See Note [Pooled small objects] in pool.h.
#if defined(__SANITIZE_ADDRESS__)
#define NPGRAD_POOL_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPGRAD_POOL_DISABLED 1
#endif
#endif

namespace npgrad::pool {

namespace {

constexpr std::size_t kGranule = 16;
constexpr std::size_t kMaxPooledBytes = 1024;
constexpr std::size_t kClasses = kMaxPooledBytes / kGranule;
// A chain of a few thousand ops keeps its blocks; a graph of 10^5 nodes gives
// most of its blocks back to malloc, as before the pool.
constexpr std::size_t kMaxKeptBytes = std::size_t{8} << 20;

struct FreeBlock {
  FreeBlock* next;
};

// Trivially constructible and destructible, so a thread_local access needs
// no initialisation guard; ThreadExit returns the blocks.
struct ThreadPool {
  FreeBlock* head[kClasses];
  std::size_t kept_bytes;
  bool exit_registered;
  bool exited;
};

thread_local ThreadPool tl_pool{};

void drain(ThreadPool& p) noexcept {
  for (auto& head : p.head) {
    while (head != nullptr) {
      FreeBlock* b = head;
      head = b->next;
      ::operator delete(b);
    }
  }
  p.kept_bytes = 0;
}

struct ThreadExit {
  ~ThreadExit() {
    drain(tl_pool);
    // Blocks freed later in this thread's teardown go straight to free.
    tl_pool.exit_registered = false;
    tl_pool.exited = true;
  }
};

// The first block a thread keeps registers the drain at thread exit.
[[gnu::noinline]] void keep_first(void* ptr, std::size_t c) noexcept {
  ThreadPool& p = tl_pool;
  if (p.exited) {
    ::operator delete(ptr);
    return;
  }
  thread_local ThreadExit exit;
  (void)exit;
  p.exit_registered = true;
  auto* b = static_cast<FreeBlock*>(ptr);
  b->next = p.head[c];
  p.head[c] = b;
  p.kept_bytes += (c + 1) * kGranule;
}

}  // namespace

void* allocate(std::size_t bytes) {
#ifndef NPGRAD_POOL_DISABLED
  if (bytes - 1 < kMaxPooledBytes) {
    std::size_t c = (bytes - 1) / kGranule;
    ThreadPool& p = tl_pool;
    if (FreeBlock* b = p.head[c]) {
      p.head[c] = b->next;
      p.kept_bytes -= (c + 1) * kGranule;
      return b;
    }
    return ::operator new((c + 1) * kGranule);
  }
#endif
  return ::operator new(bytes);
}

void deallocate(void* ptr, std::size_t bytes) noexcept {
#ifndef NPGRAD_POOL_DISABLED
  if (bytes - 1 < kMaxPooledBytes) {
    std::size_t c = (bytes - 1) / kGranule;
    ThreadPool& p = tl_pool;
    std::size_t kept = p.kept_bytes + (c + 1) * kGranule;
    if (p.exit_registered) {
      if (kept <= kMaxKeptBytes) {
        auto* b = static_cast<FreeBlock*>(ptr);
        b->next = p.head[c];
        p.head[c] = b;
        p.kept_bytes = kept;
        return;
      }
    } else {
      keep_first(ptr, c);
      return;
    }
  }
#endif
  ::operator delete(ptr);
}

std::size_t kept_bytes() {
  return tl_pool.kept_bytes;
}

bool enabled() {
#ifdef NPGRAD_POOL_DISABLED
  return false;
#else
  return true;
#endif
}

}  // namespace npgrad::pool
