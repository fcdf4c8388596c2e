#pragma once
// SavedVariable: a tensor a node keeps for its backward formula
// (torch/csrc/autograd/saved_variable.h). It records the version at save time
// and refuses to unpack if the tensor was modified in place since; it is
// released after backward. An output saved by its own node keeps only the
// data (no autograd state), so node -> saved output -> node is no cycle; the
// node is supplied again at unpack time (`saved_for`).

#include <memory>
#include <vector>

#include "npgrad/autograd/edge.h"
#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;
struct StrongRefVisitor;

class SavedVariable {
 public:
  SavedVariable() = default;
  /// is_inplace_on_view: t is a view written in place, saved as an output;
  /// it unpacks with the view's grad_fn at save time (weakly held, as in
  /// torch) rather than with the node it is saved for.
  SavedVariable(
      const Tensor& t, bool is_output, bool is_inplace_on_view = false);
  SavedVariable(SavedVariable&&) = default;
  SavedVariable& operator=(SavedVariable&&) = default;

  /// The saved tensor, checked against its version. Throws kBackwardTwice
  /// after release.
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  /// grad_fn._raw_saved_x.register_hooks(pack, unpack): packs now, unpacks
  /// through the hooks from then on.
  void register_hooks(std::unique_ptr<SavedVariableHooks> hooks);
  /// Calls the hooks' prefetch hook, if any (Note [Prefetching saved
  /// tensors]; nothing once released); whether there was one.
  bool prefetch() const {
    if (hooks_ && hooks_->has_prefetch_hook()) {
      hooks_->call_prefetch_hook();
      return true;
    }
    return false;
  }
  bool defined() const { return was_defined_; }
  bool has_been_released() const {
    return was_defined_ && !data_.defined() && !hooks_;
  }

  /// The hooks' Python objects, and the saved tensor's own when this is its
  /// only owner (Note [GC visibility]).
  int traverse_python(PyVisitProc visit, void* arg) const;
  void clear_python();
  /// The strong references held, for the cycle collector.
  void visit_strong_refs(StrongRefVisitor& v) const;

 private:
  Tensor data_;
  bool was_defined_ = false;
  bool saved_original_ = false;
  bool is_leaf_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  // With hooks (the tensor is not kept): the history to rebuild at unpack.
  std::shared_ptr<Node> grad_fn_;
  std::shared_ptr<Node> grad_accumulator_;
  std::weak_ptr<Node> weak_grad_fn_;  // is_inplace_on_view only
  bool is_inplace_on_view_ = false;
  std::unique_ptr<SavedVariableHooks> hooks_;

  void save_metadata(const Tensor& t);
  std::shared_ptr<Node> output_grad_fn(
      const std::shared_ptr<Node>& saved_for) const;
  void set_hooks_and_pack_data(
      std::unique_ptr<SavedVariableHooks> hooks, const Tensor& data);
};

/// A saved list of tensors (torch's `std::vector<SavedVariable> x_` with its
/// `x_released_` flag): after release the list itself is gone, so reading it
/// raises even when it was empty.
struct SavedVariableList {
  std::vector<SavedVariable> items;
  bool released = false;
};

}  // namespace npgrad::autograd
