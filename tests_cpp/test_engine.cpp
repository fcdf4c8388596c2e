#include <catch2/catch.hpp>

#include "npgrad/autograd/engine.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/accumulate_grad.h"
#include "npgrad/util/error_messages.h"
#include "test_helpers.h"

using namespace npgrad;
using namespace npgrad::autograd;
using npgrad::testing::grad_of;
using npgrad::testing::numerical_grad;
using npgrad::testing::RecordingNode;
using npgrad::testing::tensor;
using npgrad::testing::values;

namespace {
variable_list backward(const Tensor& out, bool keep_graph = false) {
  return Engine::execute(
      {gradient_edge(out)}, {ops::ones_like(out)}, keep_graph, false, true, {});
}
}  // namespace

TEST_CASE("ready nodes run newest first", "[engine]") {
  std::vector<std::string> log;
  auto older = make_node<RecordingNode>("older", &log, edge_list{});
  auto newer = make_node<RecordingNode>("newer", &log, edge_list{});
  auto root = make_node<RecordingNode>(
      "root", &log, edge_list{Edge(older, 0), Edge(newer, 0)});
  older->add_input_metadata(tensor({1}));
  newer->add_input_metadata(tensor({1}));
  root->add_input_metadata(tensor({1}));
  Engine::execute({Edge(root, 0)}, {tensor({1})}, false, false, true, {});
  REQUIRE(log == std::vector<std::string>{"root", "newer", "older"});
}

TEST_CASE(
    "a node with two consumers runs once, after both, with the summed gradient",
    "[engine]") {
  std::vector<std::string> log;
  auto shared = make_node<RecordingNode>("shared", &log, edge_list{});
  auto left =
      make_node<RecordingNode>("left", &log, edge_list{Edge(shared, 0)});
  auto right =
      make_node<RecordingNode>("right", &log, edge_list{Edge(shared, 0)});
  auto root = make_node<RecordingNode>(
      "root", &log, edge_list{Edge(left, 0), Edge(right, 0)});
  for (auto* n : {shared.get(), left.get(), right.get(), root.get()}) {
    n->add_input_metadata(tensor({1}));
  }
  Engine::execute({Edge(root, 0)}, {tensor({2})}, false, false, true, {});
  REQUIRE(log == std::vector<std::string>{"root", "right", "left", "shared"});
  REQUIRE(values(shared->seen[0]) == std::vector<double>{4});
}

TEST_CASE("AccumulateGrad runs before other ready nodes", "[engine]") {
  Tensor x = tensor({1, 2}, true);
  Tensor y = ops::add(ops::sin(x), x);
  // After AddBackward0 both SinBackward0 and x's accumulator hold a pending
  // gradient; the accumulator is ready only after Sin, but x.grad must end
  // with both contributions.
  backward(ops::sum(y));
  auto g = values(grad_of(x));
  REQUIRE(g[0] == Approx(std::cos(1.0) + 1));
  REQUIRE(g[1] == Approx(std::cos(2.0) + 1));
}

TEST_CASE(
    "gradients match finite differences through several ops",
    "[engine][gradcheck]") {
  Tensor x = tensor({0.3, -1.2, 2.0}, true);
  auto f = [](const Tensor& t) {
    AutoGradMode no_grad(false);
    Tensor y = ops::sum(ops::mul(
        ops::tanh(t),
        ops::exp(ops::div(t, ops::wrapped_scalar(3, ScalarType::Float64)))));
    return kernels::item(y);
  };
  Tensor out = ops::sum(ops::mul(
      ops::tanh(x),
      ops::exp(ops::div(x, ops::wrapped_scalar(3, ScalarType::Float64)))));
  backward(out);
  auto expected = numerical_grad(f, x);
  auto got = values(grad_of(x));
  for (std::size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i] == Approx(expected[i]).epsilon(1e-6));
  }
}

TEST_CASE(
    "grad() with inputs prunes the graph and leaves .grad alone",
    "[engine][pruning]") {
  Tensor x = tensor({1, 2}, true);
  Tensor w = tensor({3, 4}, true);
  Tensor out = ops::sum(ops::add(ops::mul(x, x), ops::sin(w)));
  variable_list g = Engine::execute(
      {gradient_edge(out)},
      {ops::ones_like(out)},
      false,
      false,
      false,
      {gradient_edge(x)});
  REQUIRE(values(g[0]) == std::vector<double>{2, 4});
  REQUIRE_FALSE(grad_of(x).defined());
  REQUIRE_FALSE(grad_of(w).defined());
}

TEST_CASE(
    "a second backward through freed saved tensors fails with torch's message",
    "[engine][saved]") {
  Tensor x = tensor({1, 2}, true);
  Tensor out = ops::sum(ops::sin(x));
  backward(out);
  REQUIRE_THROWS_WITH(backward(out), Catch::Contains(messages::kBackwardTwice));
}

TEST_CASE(
    "retain_graph keeps saved tensors and gradients accumulate",
    "[engine][saved]") {
  Tensor x = tensor({1, 2}, true);
  Tensor out = ops::sum(ops::mul(x, x));
  backward(out, true);
  backward(out, true);
  REQUIRE(values(grad_of(x)) == std::vector<double>{4, 8});
}

TEST_CASE(
    "create_graph records the backward formulas (second derivative)",
    "[engine][higher-order]") {
  Tensor x = tensor({1, -2, 0.5}, true);
  Tensor y = ops::sum(ops::pow(x, 3));
  variable_list g1 = Engine::execute(
      {gradient_edge(y)},
      {ops::ones_like(y)},
      true,
      true,
      false,
      {gradient_edge(x)});
  REQUIRE(requires_grad(g1[0]));
  Tensor s = ops::sum(g1[0]);
  variable_list g2 = Engine::execute(
      {gradient_edge(s)},
      {ops::ones_like(s)},
      false,
      false,
      false,
      {gradient_edge(x)});
  REQUIRE(values(g2[0]) == std::vector<double>{6, -12, 3});
}

TEST_CASE(
    "a node's result of the wrong shape is rejected with the node's name",
    "[engine]") {
  Tensor x = tensor({1, 2}, true);
  std::vector<std::string> log;
  auto bad = make_node<RecordingNode>(
      "BadBackward", &log, edge_list{gradient_edge(x)});
  bad->add_input_metadata(tensor({1, 2, 3}));
  REQUIRE_THROWS_WITH(
      Engine::execute(
          {Edge(bad, 0)}, {tensor({1, 1, 1})}, false, false, true, {}),
      Catch::Contains(
          "Function BadBackward returned an invalid gradient at index 0 - got "
          "[3] but expected shape compatible with [2]"));
}

TEST_CASE(
    "a broadcast gradient is summed down to the input's shape", "[engine]") {
  Tensor x = tensor({1, 2}, true);
  Tensor big = kernels::full({3, 2}, 1.0, ScalarType::Float64);
  Tensor out = ops::sum(ops::mul(x, big));
  backward(out);
  REQUIRE(values(grad_of(x)) == std::vector<double>{3, 3});
}
