// Grad mode, the private engine-state helpers torch's Python code calls, and
// the error phrases exported for the tests.
#include "bindings.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_function.h"
#include "python_hooks.h"

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
    return node_to_py(node->shared_from_this());
  });
  m.def("_live_node_count", &autograd::live_node_count);
  m.def("_will_engine_execute_node", [](py::handle obj) {
    auto node = node_from_py(obj);
    NPGRAD_CHECK(
        node != nullptr,
        "_will_engine_execute_node expects an grad_fn, but got ",
        py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>());
    return autograd::will_engine_execute_node(node.get());
  });
  m.def("_will_engine_reach_node", [](py::handle obj) {
    auto node = node_from_py(obj);
    return node != nullptr && autograd::will_engine_reach_node(node.get());
  });
  m.def("_increment_version", [](py::iterable tensors) {
    for (py::handle t : tensors) {
      t.cast<Tensor>().bump_version();
    }
  });
  m.def("_set_inplace_observer", [](py::object fn) {
    if (fn.is_none()) {
      ops::set_inplace_observer(nullptr);
      return;
    }
    ops::set_inplace_observer([fn](const Tensor& t) { fn(t); });
  });

  using autograd::SavedTensorDefaultHooks;
  py::module_ am = m.attr("_autograd");
  am.def(
      "_push_saved_tensors_default_hooks",
      [](py::object pack, py::object unpack) {
        SavedTensorDefaultHooks::push([pack, unpack]() {
          return std::make_unique<PySavedVariableHooks>(pack, unpack);
        });
      },
      py::arg("pack_hook"),
      py::arg("unpack_hook"));
  am.def("_pop_saved_tensors_default_hooks", &SavedTensorDefaultHooks::pop);
  am.def(
      "_saved_tensors_hooks_disable",
      &SavedTensorDefaultHooks::disable,
      py::arg("error_message"));
  am.def("_saved_tensors_hooks_enable", &SavedTensorDefaultHooks::enable);
  am.def(
      "_saved_tensors_hooks_get_disabled_error_message",
      &SavedTensorDefaultHooks::disabled_error_message);
  am.def("_saved_tensors_hooks_is_enabled", []() {
    return !SavedTensorDefaultHooks::disabled_error_message().has_value();
  });

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
