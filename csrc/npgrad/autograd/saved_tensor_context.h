#pragma once
// Note [Pack-hook context]
// npgrad.autograd.graph.current_saved_tensor(): inside a pack hook, which
// node saves the tensor and under which name (`_saved_<name>`). torch's pack
// hook sees only the tensor; npgrad tells it more without per-node code:
//
// - A SavedVariable made while default hooks are active does not pack at
//   once: it keeps the tensor and waits until it is moved into its place
//   (`node->self_ = SavedVariable(self, false)`, a list assigned as a whole,
//   or a custom Function's ctx), which is the same statement for every op, so
//   the hooks still run in save order and before any later in-place write.
// - There, its owner is found by address: the nodes made on this thread while
//   hooks were active (a short ring, filled by make_node) are asked for their
//   saved state through visit_saved, the one declaration of it, and the slot
//   at that address gives the name ("indices[1]" for an element of a list).
// - The pack hook runs inside a SavedTensorContext, which the bindings read.
//   It lives on the stack of the packing call, so nothing outlives the hook.

#include <functional>
#include <memory>
#include <string>

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;
class SavedVariable;

/// What a pack hook is packing.
struct SavedTensorContext {
  std::shared_ptr<Node> node;  // null if the owner was not found
  std::string name;            // "self", "indices[0]", "saved_tensors[1]"
  const Tensor* tensor = nullptr;
  bool is_output = false;
  bool is_leaf = false;
  bool requires_grad = false;
};

/// The innermost pack hook running on this thread, or null.
const SavedTensorContext* current_saved_tensor_context();

/// Makes `ctx` current for its lifetime (a pack hook's call).
class SavedTensorContextScope {
 public:
  explicit SavedTensorContextScope(const SavedTensorContext& ctx);
  ~SavedTensorContextScope();
  SavedTensorContextScope(const SavedTensorContextScope&) = delete;
  SavedTensorContextScope& operator=(const SavedTensorContextScope&) = delete;

 private:
  const SavedTensorContext* previous_;
};

/// The name of a saved tensor attribute as the context gives it: "self" for
/// visit_saved's "_saved_self".
std::string saved_tensor_name(const char* attribute);

/// Calls fn(name, saved) for each saved tensor the node declares
/// (visit_saved), the items of a list named "indices[0]", "indices[1]"...
void for_each_named_saved_tensor(
    Node& node,
    const std::function<void(const std::string&, SavedVariable&)>& fn);

/// Called by make_node: while default hooks are active on this thread, the
/// node may own the saved tensors packed next.
void note_new_node(Node& node);

/// The node (among those noted recently on this thread) holding the
/// SavedVariable at `saved`, and its saved name; false if none does.
bool find_saved_owner(
    const SavedVariable* saved, std::shared_ptr<Node>& node, std::string& name);

}  // namespace npgrad::autograd
