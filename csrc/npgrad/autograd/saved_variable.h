#pragma once
// SavedVariable: a tensor a node keeps for its backward formula
// (torch/csrc/autograd/saved_variable.h). It records the version at save time
// and refuses to unpack if the tensor was modified in place since; it is
// released after backward. An output saved by its own node keeps only the
// data (no autograd state), so node -> saved output -> node is no cycle; the
// node is supplied again at unpack time (`saved_for`).

#include <memory>
#include <string>
#include <vector>

#include "npgrad/autograd/edge.h"
#include "npgrad/autograd/saved_tensor_lock.h"
#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;
struct StrongRefVisitor;

// SavedVariable's fields, moved as a whole (SavedVariable adds what a move
// does to a save still waiting for its pack hook).
struct SavedVariableFields {
  Tensor data_;
  bool was_defined_ = false;
  bool saved_original_ = false;
  bool is_leaf_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  // Default hooks were active at save time and the pack hook has not run
  // yet: data_ holds the tensor until the SavedVariable is in its place
  // (Note [Pack-hook context]).
  bool pack_pending_ = false;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  // With hooks (the tensor is not kept): the history to rebuild at unpack.
  std::shared_ptr<Node> grad_fn_;
  std::shared_ptr<Node> grad_accumulator_;
  std::weak_ptr<Node> weak_grad_fn_;  // is_inplace_on_view only
  bool is_inplace_on_view_ = false;
  std::unique_ptr<SavedVariableHooks> hooks_;
  // Saved under lock_saved_tensors(): holds data_'s storage locked
  // (Note [lock_saved_tensors]).
  std::unique_ptr<SavedLock> lock_;
};

/// A saved tensor as saved_tensors() describes it, read without unpacking.
struct SavedTensorDescription {
  Shape sizes;
  ScalarType dtype = ScalarType::Float32;
  const VersionCounter* storage = nullptr;  // shared by the data's aliases
  bool is_output = false;
  bool is_leaf = false;
  bool requires_grad = false;
  bool packed = false;  // went through a pack hook
};

class SavedVariable : private SavedVariableFields {
 public:
  SavedVariable() = default;
  /// is_inplace_on_view: t is a view written in place, saved as an output;
  /// it unpacks with the view's grad_fn at save time (weakly held, as in
  /// torch) rather than with the node it is saved for.
  SavedVariable(
      const Tensor& t, bool is_output, bool is_inplace_on_view = false);
  SavedVariable(SavedVariable&& other) noexcept;
  /// Moving a save that waits for its pack hook into its place runs the
  /// hook (Note [Pack-hook context]); it throws what the hook throws.
  SavedVariable& operator=(SavedVariable&& other);
  ~SavedVariable() = default;

  /// The saved tensor, checked against its version. Throws kBackwardTwice
  /// after release.
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const;
  void reset_data();
  /// grad_fn._raw_saved_x.register_hooks(pack, unpack): packs now, unpacks
  /// through the hooks from then on. `node` and `name` are the pack hook's
  /// context.
  void register_hooks(
      std::unique_ptr<SavedVariableHooks> hooks,
      std::shared_ptr<Node> node = nullptr,
      std::string name = {});
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
  /// A save waiting for its pack hook: runs it now, with `node` and `name`
  /// as its context. On error the SavedVariable is left undefined.
  void pack_pending(std::shared_ptr<Node> node, std::string name);
  bool pack_is_pending() const { return pack_pending_; }
  /// Names the node holding a save made under lock_saved_tensors(), where
  /// the owner is known without looking (a custom Function's ctx).
  void name_lock(const std::string& node_name) {
    if (lock_) {
      lock_->set_node_name(node_name);
    }
  }
  /// What saved_tensors() reports; false when nothing is held (undefined,
  /// released) or the value is a Python number, never packed nor a tensor
  /// in torch's saved state.
  bool describe(SavedTensorDescription& out) const;

  /// The dedup payload this saved tensor shares, if any (its holder reports
  /// it: SharedBufferTally).
  const std::shared_ptr<SavedBuffer>* shared_buffer() const {
    return hooks_ ? hooks_->shared_buffer() : nullptr;
  }
  /// The hooks' Python objects, and the saved tensor's own when this is its
  /// only owner (Note [GC visibility]).
  int traverse_python(PyVisitProc visit, void* arg) const;
  void clear_python();
  /// The strong references held, for the cycle collector.
  void visit_strong_refs(StrongRefVisitor& v) const;

 private:
  void save_metadata(const Tensor& t);
  /// torch's "modified by an inplace operation" error for this tensor, with
  /// the write that broke it under anomaly mode (mutation_provenance.h).
  [[noreturn]] void throw_modified_by_inplace(
      ScalarType dtype,
      const Shape& sizes,
      const VersionCounter& counter,
      const Node* fn) const;
  std::shared_ptr<Node> output_grad_fn(
      const std::shared_ptr<Node>& saved_for) const;
  void set_hooks_and_pack_data(
      std::unique_ptr<SavedVariableHooks> hooks,
      const Tensor& data,
      std::shared_ptr<Node> node,
      std::string name);
  /// After a move into its place: packs with the owner found there.
  void pack_where_placed();
  /// After a move into its place: tells the lock the owner's name.
  void name_lock_where_placed();

  friend struct SavedVariableList;
};

/// A saved list of tensors (torch's `std::vector<SavedVariable> x_` with its
/// `x_released_` flag): after release the list itself is gone, so reading it
/// raises even when it was empty.
struct SavedVariableList {
  SavedVariableList() = default;
  /// Saves each tensor (an undefined one as None).
  SavedVariableList(const std::vector<Tensor>& tensors, bool is_output);
  SavedVariableList(SavedVariableList&&) noexcept = default;
  /// As SavedVariable's: the items' pack hooks run once the list is in its
  /// place (the items keep their addresses).
  SavedVariableList& operator=(SavedVariableList&& other);

  std::vector<SavedVariable> items;
  bool released = false;
};

}  // namespace npgrad::autograd
