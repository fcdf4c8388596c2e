#pragma once
// PyNode: the backward node of a Python autograd.Function
// (torch/csrc/autograd/python_function.h). The Python-visible node is the
// ctx object (an instance of <Name>Backward, a BackwardCFunction); PyNode
// holds it strongly, and the ctx holds PyNode weakly, so there is no cycle.
// The saved tensors live on the ctx (FunctionBase), as torch keeps them on
// THPFunction: a ctx the user keeps still reads them after the node is gone.

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
  /// One flag per forward argument: was it a tensor (has a next edge)?
  std::vector<bool> is_tensor_arg;
  /// Shape and dtype of each forward output that was a tensor (to
  /// materialize missing gradients as zeros).
  std::vector<std::optional<OutputInfo>> output_info;
};

/// The ctx base class's C++ state (torch's THPFunction fields).
struct FunctionBase {
  std::weak_ptr<PyNode> cdata;
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
