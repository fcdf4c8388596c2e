#pragma once
// SavedVariable: a tensor a node keeps for its backward formula
// (torch/csrc/autograd/saved_variable.h). It records the version at save time
// and refuses to unpack if the tensor was modified in place since; it is
// released after backward. An output saved by its own node keeps only the
// data (no autograd state), so node -> saved output -> node is no cycle; the
// node is supplied again at unpack time (`saved_for`).

#include <memory>

#include "npgrad/autograd/edge.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);

  /// The saved tensor, checked against its version. Throws kBackwardTwice
  /// after release.
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  bool defined() const { return was_defined_; }
  bool has_been_released() const { return was_defined_ && !data_.defined(); }

 private:
  Tensor data_;
  bool was_defined_ = false;
  bool saved_original_ = false;
  bool is_leaf_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  // For a saved leaf that is not kept as the original: where its gradients go.
  std::shared_ptr<Node> grad_accumulator_;
};

}  // namespace npgrad::autograd
