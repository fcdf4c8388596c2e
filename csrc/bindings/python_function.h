#pragma once
// PyNode: the backward node of a Python autograd.Function
// (torch/csrc/autograd/python_function.h). The Python-visible node is the
// ctx object (an instance of <Name>Backward, a BackwardCFunction); PyNode
// holds it strongly, and the ctx holds PyNode weakly, so there is no cycle
// while the graph owns the node. The saved tensors live on the ctx
// (FunctionBase), as torch keeps them on THPFunction.
//
// Note [A ctx keeps its node]
// In torch a ctx the user keeps keeps its node alive: after the outputs are
// gone, ctx.next_functions still answers and a saved output read through
// ctx.saved_tensors has the ctx as its grad_fn. A shared_ptr cannot be
// revived, so when the graph lets go of a PyNode whose ctx Python still
// holds, the node hands its place in the graph (edges, hooks, numbers) over
// to a new PyNode that the ctx owns (FunctionBase::owner); that heir holds
// the ctx too, a cycle the ctx's tp_traverse reports to Python's GC while
// the ctx alone owns the heir. So such a pair is freed by the GC, where
// torch frees it at once; a ctx nobody keeps goes with its node as before.

#include <optional>
#include <vector>

#include "bindings.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable.h"

namespace npgrad::bindings {

struct OutputInfo {
  Shape shape;
  ScalarType dtype;
};

class PyNode final : public autograd::Node {
 public:
  explicit PyNode(py::object ctx) : ctx(std::move(ctx)) {}
  ~PyNode() override;
  variable_list apply(variable_list&& grads) override;
  std::string name() const override;
  void release_variables() override;
  void release_for_destruction() override;
  void visit_strong_refs(autograd::StrongRefVisitor& v) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override;
  void clear_python() override;
  bool prefetch_saved_variables() override;

  py::object ctx;
  /// Set on the heir of Note [A ctx keeps its node]: it goes with its ctx.
  bool owned_by_ctx = false;
  /// One flag per forward argument: was it a tensor (has a next edge)?
  std::vector<bool> is_tensor_arg;
  /// Shape and dtype of each forward output that was a tensor (to
  /// materialize missing gradients as zeros).
  std::vector<std::optional<OutputInfo>> output_info;
};

/// The ctx base class's C++ state (torch's THPFunction fields).
struct FunctionBase {
  std::weak_ptr<PyNode> cdata;
  /// The node this ctx keeps alive (Note [A ctx keeps its node]), if any.
  std::shared_ptr<autograd::Node> owner;
  /// Set when Python's GC clears the ctx (it is garbage): its node then
  /// goes without an heir, whatever references the GC holds meanwhile.
  bool cleared_by_gc = false;
  /// save_for_backward's tensors (only when a backward node was recorded).
  std::vector<autograd::SavedVariable> saved_variables;
  /// Set when the node released them after a backward without retain_graph.
  bool has_freed_buffers = false;
};

/// The ctx type's GC support: its __dict__ and the saved tensors' Python
/// objects (Note [GC visibility]).
void setup_function_base_type_gc(PyHeapTypeObject* heap_type);

/// The node's `metadata` dict (created on first use; lives on the node).
py::dict& node_metadata(autograd::Node& node);

/// A node as Python sees it: the ctx object for a PyNode, else its wrapper.
py::object node_to_py(const std::shared_ptr<autograd::Node>& node);
/// The node behind a Python node object (wrapper or ctx), or null.
std::shared_ptr<autograd::Node> node_from_py(py::handle obj);

void bind_function(py::module_& m);

}  // namespace npgrad::bindings
