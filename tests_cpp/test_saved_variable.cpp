#include <catch2/catch.hpp>

#include "npgrad/autograd/engine.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_tensor_context.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/ops/binary_ops.h"
#include "npgrad/util/error_messages.h"
#include "test_helpers.h"

using namespace npgrad;
using namespace npgrad::autograd;
using npgrad::testing::tensor;

namespace {
void backward_for_test(const Tensor& out) {
  Engine::execute(
      {gradient_edge(out)}, {ops::ones_like(out)}, false, false, true, {});
}
}  // namespace

TEST_CASE(
    "a saved tensor modified in place is rejected on unpack",
    "[saved_variable]") {
  Tensor x = tensor({1, 2, 3});
  SavedVariable saved(x, false);
  REQUIRE(saved.unpack().is_same(x));
  ops::binary_<ops::binary_ops::Add>(
      x, ops::wrapped_scalar(1, ScalarType::Int64));
  REQUIRE_THROWS_WITH(
      saved.unpack(),
      Catch::StartsWith(
          std::string(messages::kModifiedByInplace) +
          "[torch.DoubleTensor [3]] is at version 1; expected version 0 "
          "instead."));
}

TEST_CASE(
    "a saved output names its node and op in the version message",
    "[saved_variable]") {
  Tensor x = tensor({1, 2, 3}, true);
  Tensor y = ops::tanh(x);
  ops::binary_<ops::binary_ops::Add>(
      y, ops::wrapped_scalar(1, ScalarType::Int64));
  Tensor out = ops::sum(y);
  REQUIRE_THROWS_WITH(
      backward_for_test(out),
      Catch::Contains("which is output 0 of Tanh, is at version 1; expected "
                      "version 0 instead."));
}

TEST_CASE(
    "a released saved variable raises the backward-twice error",
    "[saved_variable]") {
  Tensor x = tensor({1, 2});
  SavedVariable saved(x, false);
  saved.reset_data();
  REQUIRE(saved.has_been_released());
  REQUIRE_THROWS_WITH(
      saved.unpack(), Catch::Contains(messages::kBackwardTwice));
}

TEST_CASE(
    "an output saved by its own node does not keep the node alive",
    "[saved_variable]") {
  int64_t before = live_node_count();
  {
    Tensor x = tensor({1, 2}, true);
    Tensor y = ops::exp(x);  // ExpBackward0 saves its own output
    REQUIRE(live_node_count() == before + 2);  // ExpBackward0 + AccumulateGrad
  }
  REQUIRE(live_node_count() == before);
}

TEST_CASE(
    "an unpacked saved output is rebuilt with its node as grad_fn",
    "[saved_variable]") {
  Tensor x = tensor({1, 2}, true);
  Tensor y = ops::exp(x);
  std::shared_ptr<Node> fn = grad_fn(y);
  SavedVariable saved(y, true);
  Tensor unpacked = saved.unpack(fn);
  REQUIRE_FALSE(unpacked.is_same(y));
  REQUIRE(unpacked.data_ptr() == y.data_ptr());
  REQUIRE(grad_fn(unpacked) == fn);
}

namespace {
// Default hooks that record the pack-hook context (Note [Pack-hook context]).
struct RecordingHooks final : SavedVariableHooks {
  explicit RecordingHooks(std::vector<std::string>* log) : log(log) {}
  void call_pack_hook(const Tensor& t) override {
    const SavedTensorContext* ctx = current_saved_tensor_context();
    REQUIRE(ctx != nullptr);
    REQUIRE(ctx->tensor->is_same(t));
    log->push_back(
        (ctx->node ? ctx->node->name() : std::string("?")) + "." + ctx->name +
        (ctx->is_output ? " output" : "") + (ctx->is_leaf ? " leaf" : ""));
    packed = t;
  }
  Tensor call_unpack_hook() override { return packed; }
  int traverse_python(PyVisitProc, void*) const override { return 0; }
  void clear_python() override {}
  std::vector<std::string>* log;
  Tensor packed;
};
}  // namespace

TEST_CASE(
    "a save under default hooks packs in its place, told its node and name",
    "[saved_variable]") {
  std::vector<std::string> log;
  Tensor x = tensor({1, 2, 3}, true);
  SavedTensorDefaultHooks::push(
      [&log] { return std::make_unique<RecordingHooks>(&log); });
  Tensor y = ops::mul(ops::tanh(x), x);
  SavedTensorDefaultHooks::pop();
  REQUIRE(current_saved_tensor_context() == nullptr);
  REQUIRE(
      log == std::vector<std::string>{
                 "TanhBackward0.result output",
                 "MulBackward0.other leaf",
                 "MulBackward0.self"});
  // Outside hooks nothing waits: the saved values read as usual.
  backward_for_test(ops::sum(y));
}
