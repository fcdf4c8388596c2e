#include <catch2/catch.hpp>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/accumulate_grad.h"
#include "npgrad/util/error_messages.h"
#include "test_helpers.h"

using namespace npgrad;
using namespace npgrad::autograd;
using npgrad::testing::RecordingNode;
using npgrad::testing::tensor;

TEST_CASE(
    "a leaf's AccumulateGrad has topological_nr 0 and sequence_nr UINT64_MAX",
    "[node]") {
  Tensor x = tensor({1, 2}, true);
  auto acc = grad_accumulator(x);
  REQUIRE(acc->topological_nr() == 0);
  REQUIRE(acc->sequence_nr() == UINT64_MAX);
  REQUIRE(acc->name() == "torch::autograd::AccumulateGrad");
}

TEST_CASE(
    "topological_nr is one more than the longest path below the node",
    "[node]") {
  Tensor x = tensor({1, 2}, true);
  Tensor a = ops::sin(x);            // 1
  Tensor b = ops::exp(ops::cos(a));  // 3
  Tensor c = ops::mul(a, b);         // 4 = 1 + max(1, 3)
  REQUIRE(grad_fn(a)->topological_nr() == 1);
  REQUIRE(grad_fn(b)->topological_nr() == 3);
  REQUIRE(grad_fn(c)->topological_nr() == 4);
}

TEST_CASE(
    "a node's topological_nr cannot grow once it has a parent", "[node]") {
  std::vector<std::string> log;
  auto child = make_node<RecordingNode>("child", &log, edge_list{});
  auto parent =
      make_node<RecordingNode>("parent", &log, edge_list{Edge(child, 0)});
  REQUIRE(parent->topological_nr() == 1);
  auto grandchild = make_node<RecordingNode>("grandchild", &log, edge_list{});
  auto deeper =
      make_node<RecordingNode>("deeper", &log, edge_list{Edge(grandchild, 0)});
  REQUIRE_THROWS_WITH(
      child->add_next_edge(Edge(deeper, 0)),
      Catch::Contains("Cannot update a node's topological_nr"));
}

TEST_CASE(
    "sequence numbers increase with creation order on a thread", "[node]") {
  Tensor x = tensor({1, 2}, true);
  Tensor a = ops::sin(x);
  Tensor b = ops::cos(x);
  REQUIRE(grad_fn(b)->sequence_nr() > grad_fn(a)->sequence_nr());
}

TEST_CASE(
    "next edges follow the forward inputs, invalid for inputs without grad",
    "[node]") {
  Tensor x = tensor({1, 2}, true);
  Tensor c = tensor({3, 4}, false);
  Tensor y = ops::mul(x, c);
  const auto& edges = grad_fn(y)->next_edges();
  REQUIRE(edges.size() == 2);
  REQUIRE(edges[0].function == grad_accumulator(x));
  REQUIRE_FALSE(edges[1].is_valid());
  REQUIRE(grad_fn(y)->num_inputs() == 1);
  REQUIRE(grad_fn(y)->input_metadata(0).shape == Shape{2});
}

TEST_CASE(
    "the grad accumulator is cached while a graph uses it and recreated after",
    "[node]") {
  Tensor x = tensor({1, 2}, true);
  Node* first;
  {
    Tensor y = ops::sin(x);
    first = grad_fn(y)->next_edge(0).function.get();
    Tensor z = ops::cos(x);
    REQUIRE(grad_fn(z)->next_edge(0).function.get() == first);
  }
  REQUIRE(try_get_grad_accumulator(x) == nullptr);
  Tensor w = ops::sin(x);
  REQUIRE(grad_fn(w)->next_edge(0).function != nullptr);
}

TEST_CASE("no graph is recorded with grad mode off", "[node]") {
  Tensor x = tensor({1, 2}, true);
  AutoGradMode off(false);
  Tensor y = ops::sin(x);
  REQUIRE(grad_fn(y) == nullptr);
  REQUIRE_FALSE(requires_grad(y));
}

TEST_CASE("a million-node chain is freed without recursion", "[node][deep]") {
  int64_t before = live_node_count();
  std::vector<std::string> log;
  {
    auto head = make_node<RecordingNode>("n", &log, edge_list{});
    for (int i = 0; i < 1000000; ++i) {
      head = make_node<RecordingNode>("n", &log, edge_list{Edge(head, 0)});
    }
    REQUIRE(live_node_count() - before == 1000001);
  }
  REQUIRE(live_node_count() == before);
}

TEST_CASE(
    "a long chain of ops with saved tensors is freed without recursion",
    "[node][deep]") {
  int64_t before = live_node_count();
  {
    Tensor x = tensor({0.5}, true);
    Tensor y = x;
    for (int i = 0; i < 200000; ++i) {
      y = ops::sin(
          y);  // each node saves its input, which holds the previous node
    }
  }
  REQUIRE(live_node_count() == before);
}
