#include <catch2/catch.hpp>

#include <thread>

#include "npgrad/util/pool.h"
#include "test_helpers.h"

using namespace npgrad;
using namespace npgrad::autograd;
using npgrad::testing::RecordingNode;
using npgrad::testing::tensor;

// Note [Pooled small objects]: only where memory comes from changes.

TEST_CASE("a freed pooled block is reused for the same size", "[pool]") {
  void* a = pool::allocate(200);
  pool::deallocate(a, 200);
  void* b = pool::allocate(193);  // same 16-byte class
  // Under ASan every block goes back to the heap, so a use after free is seen.
  CHECK((b == a) == pool::enabled());
  pool::deallocate(b, 193);
  void* big = pool::allocate(1 << 20);  // not pooled
  pool::deallocate(big, 1 << 20);
}

TEST_CASE("a thread keeps a bounded number of bytes", "[pool]") {
  std::thread([] {
    std::vector<void*> blocks;
    for (int i = 0; i < 200000; ++i) {
      blocks.push_back(pool::allocate(64));
    }
    for (void* p : blocks) {
      pool::deallocate(p, 64);
    }
    CHECK((pool::kept_bytes() > 0) == pool::enabled());
    CHECK(pool::kept_bytes() <= (std::size_t{8} << 20));
  }).join();
}

TEST_CASE(
    "a thread's pool is its own and is gone once the thread exits", "[pool]") {
  struct FreesLate {
    void* block = nullptr;
    std::size_t* kept_after = nullptr;
    ~FreesLate() {
      if (block != nullptr) {
        pool::deallocate(block, 64);  // after the pool's exit hook ran
        *kept_after = pool::kept_bytes();
      }
    }
  };
  std::size_t kept_after = 1;
  std::thread([&kept_after] {
    CHECK(pool::kept_bytes() == 0);  // a new thread keeps nothing yet
    // Made before the thread's pool, so destroyed after the pool is freed.
    thread_local FreesLate late;
    late.block = pool::allocate(64);
    late.kept_after = &kept_after;
    pool::deallocate(pool::allocate(64), 64);
    CHECK(pool::kept_bytes() == (pool::enabled() ? 64u : 0u));
  }).join();
  CHECK(kept_after == 0);  // went straight to free, not to a freed pool
}

TEST_CASE(
    "a node is destroyed with its last owner while weakly referenced",
    "[pool][node]") {
  int64_t before = live_node_count();
  std::vector<std::string> log;
  std::weak_ptr<Node> weak;
  {
    Tensor x = tensor({1.0, 2.0}, true);
    Tensor y = ops::exp(x);  // ExpBackward0 saves its output
    weak = grad_fn(y);
    REQUIRE(live_node_count() == before + 2);
  }
  // The node's memory lives on with the weak reference; the node does not.
  CHECK(weak.expired());
  CHECK(live_node_count() == before);
}

TEST_CASE(
    "a node freed on another thread is released normally", "[pool][node]") {
  int64_t before = live_node_count();
  std::vector<std::string> log;
  auto head = make_node<RecordingNode>("n", &log, edge_list{});
  for (int i = 0; i < 1000; ++i) {
    head = make_node<RecordingNode>("n", &log, edge_list{Edge(head, 0)});
  }
  std::thread([h = std::move(head)]() mutable { h.reset(); }).join();
  CHECK(live_node_count() == before);
}

TEST_CASE("detach and views still share one version counter", "[pool]") {
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor d = detach(x);
  Tensor v = ops::view(x, {3});
  uint32_t v0 = x.version();
  d.bump_version();
  CHECK(x.version() == v0 + 1);
  CHECK(v.version() == v0 + 1);
  v.bump_version();
  CHECK(d.version() == v0 + 2);
}
