#include <catch2/catch.hpp>

#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/engine.h"
#include "npgrad/autograd/grad_mode.h"
#include "test_helpers.h"

using namespace npgrad;
using namespace npgrad::autograd;
using npgrad::testing::grad_of;
using npgrad::testing::tensor;
using npgrad::testing::values;

namespace {
// (x * x).sum().backward(create_graph=True): x.grad has a graph that holds x.
std::weak_ptr<TensorImpl> leaf_with_grad_graph() {
  Tensor x = tensor({1.0, 2.0, 3.0}, /*requires_grad=*/true);
  Tensor loss = ops::sum(ops::mul(x, x));
  Engine::execute(
      {gradient_edge(loss)}, {ops::ones_like(loss)}, true, true, true, {});
  REQUIRE(grad_fn(grad_of(x)) != nullptr);
  return x.impl_ptr();
}
}  // namespace

TEST_CASE(
    "a .grad whose graph references its own leaf is a collected cycle",
    "[cycles]") {
  int64_t nodes_before = live_node_count();
  std::weak_ptr<TensorImpl> x = leaf_with_grad_graph();
  // Only the cycle keeps x alive now.
  CHECK_FALSE(x.expired());
  CHECK(cycle_candidate_count() >= 1);
  CHECK(collect_autograd_cycles() >= 1);
  CHECK(x.expired());
  CHECK(live_node_count() == nodes_before);
  CHECK(collect_autograd_cycles() == 0);
}

TEST_CASE("an outside owner keeps the cycle alive", "[cycles]") {
  Tensor x = tensor({1.0, 2.0, 3.0}, true);
  Engine::execute(
      {gradient_edge(ops::sum(ops::mul(x, x)))},
      {tensor({1.0})},
      true,
      true,
      true,
      {});
  CHECK(collect_autograd_cycles() == 0);
  REQUIRE(grad_fn(grad_of(x)) != nullptr);
  CHECK(values(grad_of(x)) == std::vector<double>{2.0, 4.0, 6.0});

  // Holding only the gradient: its graph still reaches x, so nothing goes.
  Tensor g = grad_of(x);
  std::weak_ptr<TensorImpl> weak_x = x.impl_ptr();
  x = Tensor();
  CHECK(collect_autograd_cycles() == 0);
  CHECK_FALSE(weak_x.expired());
  CHECK(grad_fn(g) != nullptr);
  g = Tensor();
  CHECK(collect_autograd_cycles() >= 1);
  CHECK(weak_x.expired());
}
