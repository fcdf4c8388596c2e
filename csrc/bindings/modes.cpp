// Grad mode, the private engine-state helpers torch's Python code calls, and
// the error phrases exported for the tests.
#include "bindings.h"
#include "npgrad/autograd/anomaly_mode.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_tensor_lock.h"
#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_function.h"
#include "python_hooks.h"

namespace npgrad::bindings {

namespace {

void warn(const std::string& msg) {
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) {
    PyErr_Clear();  // the original error is what propagates
  }
}

std::string joined_stack(py::handle stack) {
  return py::str("").attr("join")(stack).cast<std::string>();
}

// torch's PyAnomalyMetadata: the forward stack goes to metadata["traceback_"],
// the node running when this one was created (during a backward) to
// metadata["parent_"]; on error, the stacks are reported as warnings.
struct PyAnomalyHandler final : autograd::AnomalyHandler {
  void store_stack(autograd::Node& node) override {
    py::gil_scoped_acquire gil;
    py::dict& meta = node_metadata(node);
    meta["traceback_"] =
        py::module_::import("traceback").attr("format_stack")();
    if (autograd::Node* parent = autograd::current_node()) {
      meta["parent_"] = node_to_py(parent->shared_from_this());
    }
  }
  void print_stack(autograd::Node& node) override {
    py::gil_scoped_acquire gil;
    py::dict& meta = node_metadata(node);
    if (!meta.contains("traceback_")) {
      warn(
          "Error detected in " + node.name() +
          ". No forward pass information available. Enable detect anomaly "
          "during forward pass for more information.");
      return;
    }
    warn(
        "Error detected in " + node.name() +
        ". Traceback of forward call that caused the error:\n" +
        joined_stack(meta["traceback_"]));
    py::object parent =
        meta.contains("parent_") ? py::object(meta["parent_"]) : py::object();
    while (parent && !parent.is_none()) {
      auto parent_node = node_from_py(parent);
      if (!parent_node) {
        break;
      }
      py::dict& pmeta = node_metadata(*parent_node);
      if (!pmeta.contains("traceback_")) {
        break;
      }
      warn(
          "\n\nPrevious calculation was induced by " + parent_node->name() +
          ". Traceback of forward call that induced the previous "
          "calculation:\n" +
          joined_stack(pmeta["traceback_"]));
      parent = pmeta.contains("parent_") ? py::object(pmeta["parent_"])
                                         : py::object();
    }
  }
  std::string user_frame() override {
    py::gil_scoped_acquire gil;
    PyObject* current = reinterpret_cast<PyObject*>(PyEval_GetFrame());
    py::object frame = current ? py::reinterpret_borrow<py::object>(current)
                               : py::object(py::none());
    while (!frame.is_none()) {
      std::string module =
          py::str(frame.attr("f_globals").attr("get")("__name__", ""));
      if (module != "npgrad" && module.rfind("npgrad.", 0) != 0) {
        py::object code = frame.attr("f_code");
        return "File \"" +
               py::str(code.attr("co_filename")).cast<std::string>() +
               "\", line " +
               py::str(frame.attr("f_lineno")).cast<std::string>() + ", in " +
               py::str(code.attr("co_name")).cast<std::string>();
      }
      frame = frame.attr("f_back");
    }
    return {};
  }
};

// torch's argument parser on a bool argument: only True and False.
bool bool_argument(
    const char* fn, const char* arg, int position, py::handle value) {
  NPGRAD_CHECK_TYPE(
      PyBool_Check(value.ptr()),
      fn,
      "(): argument '",
      arg,
      "' (position ",
      position,
      ") must be bool, not ",
      python_type_name(value));
  return value.ptr() == Py_True;
}

}  // namespace

void bind_modes(py::module_& m) {
  static PyAnomalyHandler anomaly_handler;  // trivially destructible state only
  autograd::set_anomaly_handler(&anomaly_handler);
  m.def("is_anomaly_enabled", &autograd::AnomalyMode::is_enabled);
  m.def(
      "is_anomaly_check_nan_enabled", &autograd::AnomalyMode::should_check_nan);
  m.def(
      "set_anomaly_enabled",
      [](py::handle enabled, py::handle check_nan) {
        autograd::AnomalyMode::set_enabled(
            bool_argument("set_anomaly_enabled", "enabled", 1, enabled),
            bool_argument("set_anomaly_enabled", "check_nan", 2, check_nan));
      },
      py::arg("enabled"),
      py::arg("check_nan") = true);
  // Note [lock_saved_tensors]; returns the previous state (thread-local).
  m.def("_set_lock_saved_tensors", [](bool enabled) {
    bool previous = autograd::LockSavedTensors::is_enabled();
    autograd::LockSavedTensors::set_enabled(enabled);
    return previous;
  });
  m.def(
      "_is_lock_saved_tensors_enabled",
      &autograd::LockSavedTensors::is_enabled);
  using autograd::GradMode;
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("is_inference_mode_enabled", &InferenceMode::is_enabled);
  m.def("_set_inference_mode", [](bool enabled) {
    InferenceMode::set_enabled(enabled);
  });
  m.def("_set_grad_enabled", [](py::handle enabled) {
    GradMode::set_enabled(
        bool_argument("set_grad_enabled", "enabled", 1, enabled));
  });
  m.def("_current_graph_task_id", []() -> int64_t {
    auto* task = autograd::current_graph_task();
    return task ? task->id : -1;
  });
  m.def("_is_checkpoint_valid", &autograd::is_checkpoint_valid);
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
        python_type_name(obj));
    return autograd::will_engine_execute_node(node.get());
  });
  m.def("_will_engine_reach_node", [](py::handle obj) {
    auto node = node_from_py(obj);
    return node != nullptr && autograd::will_engine_reach_node(node.get());
  });
  m.def("_increment_version", [](py::handle tensors) {
    NPGRAD_CHECK(
        py::isinstance<py::iterable>(tensors),
        "increment_version expect a Iterable[Tensor] as input");
    for (py::handle t : tensors) {
      NPGRAD_CHECK(
          is_tensor(t),
          "increment_version expects each element of the iterable to be a "
          "tensor");
      autograd::bump_version(t.cast<Tensor>(), "increment_version");
    }
  });
  bind_multi_grad_state(m);
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
      [](py::function pack, py::function unpack) {
        SavedTensorDefaultHooks::push([pack, unpack]() {
          return std::make_unique<PySavedVariableHooks>(pack, unpack);
        });
      },
      py::arg("pack_hook"),
      py::arg("unpack_hook"));
  // npgrad's own (Note [Composed saved tensor hooks], Note [Prefetching saved
  // tensors], Note [Storage dedup of saved tensors]); saved_tensors_hooks
  // uses it only when given compose/prefetch/dedup.
  am.def(
      "_push_saved_tensors_hooks_with_options",
      [](py::function pack,
         py::function unpack,
         bool compose,
         std::optional<py::function> prefetch,
         bool dedup) {
        py::object prefetch_fn =
            prefetch ? py::object(*prefetch) : py::object();
        bool prefetches = static_cast<bool>(prefetch_fn);
        SavedTensorDefaultHooks::push(
            [pack, unpack, compose, prefetch_fn]() {
              return std::make_unique<PySavedVariableHooks>(
                  pack, unpack, compose, prefetch_fn);
            },
            compose,
            prefetches,
            dedup);
      },
      py::arg("pack_hook"),
      py::arg("unpack_hook"),
      py::kw_only(),
      py::arg("compose") = false,
      py::arg("prefetch") = py::none(),
      py::arg("dedup") = false);
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
  msgs["inference_inplace"] = msg::kInferenceInplace;
  msgs["inference_saved"] = msg::kInferenceSaved;
  msgs["inference_requires_grad"] = msg::kInferenceRequiresGrad;
  msgs["inference_version"] = msg::kInferenceVersion;
  m.attr("_error_messages") = msgs;
}

}  // namespace npgrad::bindings
