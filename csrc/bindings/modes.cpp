// Grad mode, the private engine-state helpers torch's Python code calls, and
// the error phrases exported for the tests.
#include "bindings.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/autograd/node.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::bindings {

void bind_modes(py::module_& m) {
  using autograd::GradMode;
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled);
  m.def("_current_graph_task_id", []() -> int64_t {
    auto* task = autograd::current_graph_task();
    return task ? task->id : -1;
  });
  m.def("_current_autograd_node", []() -> py::object {
    autograd::Node* node = autograd::current_node();
    if (node == nullptr) {
      return py::none();
    }
    return py::cast(node->shared_from_this());
  });
  m.def("_live_node_count", &autograd::live_node_count);

  py::dict msgs;
  namespace msg = npgrad::messages;
  msgs["backward_twice"] = msg::kBackwardTwice;
  msgs["modified_by_inplace"] = msg::kModifiedByInplace;
  msgs["leaf_inplace"] = msg::kLeafInplace;
  msgs["view_of_leaf_inplace"] = msg::kViewOfLeafInplace;
  msgs["implicit_grad_scalar"] = msg::kImplicitGradScalar;
  msgs["no_grad_fn"] = msg::kNoGradFn;
  msgs["differentiated_no_grad"] = msg::kDifferentiatedNoGrad;
  msgs["unused_input"] = msg::kUnusedInput;
  msgs["requires_grad_float"] = msg::kRequiresGradFloat;
  msgs["numpy_requires_grad"] = msg::kNumpyRequiresGrad;
  msgs["retain_grad_no_grad"] = msg::kRetainGradNoGrad;
  m.attr("_error_messages") = msgs;
}

}  // namespace npgrad::bindings
