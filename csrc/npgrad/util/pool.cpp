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

// One per thread, on the heap (made when the thread first keeps a block):
// only a pointer to it is thread-local, see tl_pool.
struct ThreadPool {
  FreeBlock* head[kClasses];
  std::size_t kept_bytes;
};

// This thread's pool, null until the thread keeps a block and again after
// its exit. In a shared library a thread_local of the default model costs a
// call to __tls_get_addr on every access (about 13 instructions, twice per
// allocate/free pair); the initial-exec model makes it one %fs-relative load.
// That puts this library's whole TLS block (a few hundred bytes: the pool
// itself lives on the heap to keep it small) in the static TLS space glibc
// reserves for libraries loaded with dlopen.
__attribute__((tls_model("initial-exec"))) thread_local ThreadPool* tl_pool =
    nullptr;
thread_local bool tl_exited = false;

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
    ThreadPool* p = tl_pool;
    // Blocks freed later in this thread's teardown go straight to free.
    tl_pool = nullptr;
    tl_exited = true;
    if (p != nullptr) {
      drain(*p);
      delete p;
    }
  }
};

// The first block a thread keeps makes its pool and registers the drain at
// thread exit.
[[gnu::noinline]] void keep_first(void* ptr, std::size_t c) noexcept {
  if (tl_exited) {
    ::operator delete(ptr);
    return;
  }
  auto* p = new (std::nothrow) ThreadPool{};
  if (p == nullptr) {
    ::operator delete(ptr);
    return;
  }
  thread_local ThreadExit exit;
  (void)exit;
  tl_pool = p;
  auto* b = static_cast<FreeBlock*>(ptr);
  b->next = nullptr;
  p->head[c] = b;
  p->kept_bytes = (c + 1) * kGranule;
}

}  // namespace

void* allocate(std::size_t bytes) {
#ifndef NPGRAD_POOL_DISABLED
  if (bytes - 1 < kMaxPooledBytes) {
    std::size_t c = (bytes - 1) / kGranule;
    // Null until the thread keeps a block (nothing to pop before).
    if (ThreadPool* p = tl_pool) {
      if (FreeBlock* b = p->head[c]) {
        p->head[c] = b->next;
        p->kept_bytes -= (c + 1) * kGranule;
        return b;
      }
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
    if (ThreadPool* p = tl_pool) {
      std::size_t kept = p->kept_bytes + (c + 1) * kGranule;
      if (kept <= kMaxKeptBytes) {
        auto* b = static_cast<FreeBlock*>(ptr);
        b->next = p->head[c];
        p->head[c] = b;
        p->kept_bytes = kept;
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
  return tl_pool != nullptr ? tl_pool->kept_bytes : 0;
}

bool enabled() {
#ifdef NPGRAD_POOL_DISABLED
  return false;
#else
  return true;
#endif
}

}  // namespace npgrad::pool
