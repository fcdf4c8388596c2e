#pragma once
// PyNode: the backward node of a Python autograd.Function
// (torch/csrc/autograd/python_function.h). The Python-visible node is the
// ctx object (an instance of <Name>Backward, a BackwardCFunction); PyNode
// holds it strongly, and the ctx holds PyNode weakly, so there is no cycle.

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
  void visit_strong_refs(autograd::StrongRefVisitor& v) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override;
  void clear_python() override;

  py::object ctx;
  /// One flag per forward argument: was it a tensor (has a next edge)?
  std::vector<bool> is_tensor_arg;
  std::vector<autograd::SavedVariable> saved_variables;
  /// Shape and dtype of each forward output that was a tensor (to
  /// materialize missing gradients as zeros).
  std::vector<std::optional<OutputInfo>> output_info;
  bool has_freed_buffers = false;
};

/// The ctx base class's C++ state.
struct FunctionBase {
  std::weak_ptr<PyNode> cdata;
};

/// The node's `metadata` dict (created on first use; lives on the node).
py::dict& node_metadata(autograd::Node& node);

/// A node as Python sees it: the ctx object for a PyNode, else its wrapper.
py::object node_to_py(const std::shared_ptr<autograd::Node>& node);
/// The node behind a Python node object (wrapper or ctx), or null.
std::shared_ptr<autograd::Node> node_from_py(py::handle obj);

void bind_function(py::module_& m);

}  // namespace npgrad::bindings
