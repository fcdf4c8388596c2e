#include "python_hooks.h"

#include <unordered_map>
#include <unordered_set>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/util/error.h"
#include "python_function.h"

namespace npgrad::bindings {

namespace {

std::string hook_name(py::handle hook) {
  if (py::hasattr(hook, "__name__")) {
    return py::str(hook.attr("__name__")).cast<std::string>();
  }
  return "<unknown>";
}

// torch's check_single_result: a hook may return None (no change) or a
// tensor of the same type and size as what it was given.
void check_single_result(
    py::handle original, py::handle result, py::handle hook) {
  if (result.is_none()) {
    return;
  }
  NPGRAD_CHECK(
      !original.is_none(),
      "can't replace a None gradient with a non-None value");
  NPGRAD_CHECK_TYPE(
      is_tensor(result),
      "expected Variable, but hook returned '",
      python_type_name(result),
      "'");
  Tensor o = original.cast<Tensor>();
  Tensor r = result.cast<Tensor>();
  NPGRAD_CHECK(
      o.dtype() == r.dtype(),
      "hook '",
      hook_name(hook),
      "' has changed the type of value (was ",
      type_string(o.dtype()),
      " got ",
      type_string(r.dtype()),
      ")");
  NPGRAD_CHECK(
      o.sizes() == r.sizes(),
      "hook '",
      hook_name(hook),
      "' has changed the size of value");
}

void check_result(py::handle prev, py::handle result, py::handle hook) {
  NPGRAD_CHECK_TYPE(
      PyTuple_Check(result.ptr()),
      "expected tuple, but hook returned '",
      python_type_name(result),
      "'");
  auto prev_size = PyTuple_GET_SIZE(prev.ptr());
  auto result_size = PyTuple_GET_SIZE(result.ptr());
  NPGRAD_CHECK(
      prev_size == result_size,
      "hook '",
      hook_name(hook),
      "' has returned an incorrect number of values (got ",
      result_size,
      ", but expected ",
      prev_size,
      ")");
  for (Py_ssize_t i = 0; i < prev_size; ++i) {
    check_single_result(
        PyTuple_GET_ITEM(prev.ptr(), i),
        PyTuple_GET_ITEM(result.ptr(), i),
        hook);
  }
}

// Calls every hook in dict with *args; a result that is not None replaces
// args[0] after it is checked. Returns whether args[0] changed.
bool call_hooks(const py::object& dict, py::tuple& args) {
  bool modified = false;
  if (!dict) {  // cleared by the GC (Note [GC visibility])
    return false;
  }
  py::list hooks(dict.attr("values")());  // snapshot: a hook may remove itself
  for (py::handle hook : hooks) {
    py::object res = hook(*args);
    if (res.is_none()) {
      continue;
    }
    py::object first = args[0];
    if (res.is(first)) {
      continue;
    }
    if (PyTuple_CheckExact(first.ptr())) {
      check_result(first, res, hook);
    } else {
      check_single_result(first, res, hook);
    }
    py::list items(args);
    items[0] = res;
    args = py::tuple(items);
    modified = true;
  }
  return modified;
}

py::tuple to_tuple(const variable_list& values) {
  py::tuple t(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    t[i] = py::cast(values[i]);
  }
  return t;
}

variable_list from_tuple(py::handle tuple) {
  variable_list out;
  for (py::handle item : tuple) {
    out.push_back(tensor_or_undefined(item));
  }
  return out;
}

}  // namespace

variable_list PyFunctionTensorPreHook::operator()(const variable_list& values) {
  py::gil_scoped_acquire gil;
  py::tuple args = py::make_tuple(values.at(value_idx));
  if (!call_hooks(dict, args)) {
    return values;
  }
  variable_list results(values);
  results[value_idx] = tensor_or_undefined(args[0]);
  return results;
}

variable_list PyFunctionPreHook::operator()(const variable_list& values) {
  py::gil_scoped_acquire gil;
  py::tuple args = py::make_tuple(to_tuple(values));
  if (!call_hooks(dict, args)) {
    return values;
  }
  return from_tuple(args[0]);
}

variable_list PyFunctionPostHook::operator()(
    const variable_list& outputs, const variable_list& inputs) {
  py::gil_scoped_acquire gil;
  py::tuple args = py::make_tuple(to_tuple(outputs), to_tuple(inputs));
  if (!call_hooks(dict, args)) {
    return outputs;
  }
  return from_tuple(args[0]);
}

// Results are checked like a tensor hook's; returning None or the tensor
// itself is fine, any other (valid) replacement is an error, as in torch.
void PyPostAccumulateGradHooks::operator()(const Tensor& param) {
  py::gil_scoped_acquire gil;
  py::tuple args = py::make_tuple(param);
  NPGRAD_CHECK(
      !call_hooks(dict, args),
      "Tensor post accumulate grad hooks should return None.");
}

namespace {
// A composed pair's pack result goes on to the enclosing pack hook, which
// takes tensors only (Note [Composed saved tensor hooks]).
void check_composed_pack_result(const py::object& r) {
  NPGRAD_CHECK_TYPE(
      is_tensor(r),
      "saved_tensors_hooks(compose=True): the pack hook must return a Tensor "
      "(it is passed on to the enclosing pack hook) but got result of type ",
      python_type_name(r));
}

Tensor unpack_result(const py::object& r) {
  NPGRAD_CHECK_TYPE(
      is_tensor(r),
      "Output of saved tensor unpack_hook expected to be a Tensor but got "
      "result of type ",
      python_type_name(r));
  return r.cast<Tensor>();
}
}  // namespace

void PySavedVariableHooks::call_pack_hook(const Tensor& t) {
  py::gil_scoped_acquire gil;
  py::object r = pack(py::cast(t));
  if (compose) {
    check_composed_pack_result(r);
  }
  packed = std::move(r);
}

Tensor PySavedVariableHooks::call_unpack_hook() {
  py::gil_scoped_acquire gil;
  NPGRAD_INTERNAL_ASSERT(unpack, "unpack hook cleared by the GC");
  return unpack_result(unpack(packed));
}

Tensor PySavedVariableHooks::call_pack_hook_to_tensor(const Tensor& t) {
  py::gil_scoped_acquire gil;
  py::object r = pack(py::cast(t));
  check_composed_pack_result(r);
  return r.cast<Tensor>();
}

Tensor PySavedVariableHooks::call_unpack_hook_from_tensor(
    const Tensor& packed_tensor) {
  py::gil_scoped_acquire gil;
  NPGRAD_INTERNAL_ASSERT(unpack, "unpack hook cleared by the GC");
  return unpack_result(unpack(py::cast(packed_tensor)));
}

void PySavedVariableHooks::call_prefetch_hook() {
  py::gil_scoped_acquire gil;
  if (prefetch && packed) {  // both are gone once the GC cleared the hooks
    prefetch(packed);
  }
}

py::object make_handle(const py::object& dict) {
  return py::module_::import("npgrad.utils.hooks")
      .attr("RemovableHandle")(dict);
}

py::object new_hook_dict() {
  return py::module_::import("collections").attr("OrderedDict")();
}

}  // namespace npgrad::bindings

namespace npgrad::bindings {

namespace {

// register_multi_grad_hook's per-graph-task bookkeeping (DESIGN decision 10:
// the counting is native). The GIL is held for the whole of each hook call and
// nothing in it releases the GIL, so the GIL alone serialises the state even
// when several threads run backward passes.
//
// The state is a Python object, referenced by one small Python closure per
// tensor, so Python's GC sees fn (which may capture the tensors) through it
// (Note [GC visibility]). The tensors' nodes are held weakly: a strong
// reference would keep each leaf alive through its AccumulateGrad. A leaf is
// held through a weakref to its Python object, not to its TensorImpl: the
// object is the tensor's identity for as long as the tensor lives (Note
// [PyObject preservation]), also after its state moved to a fresh TensorImpl.
int64_t current_task_id_or_raise() {
  autograd::GraphTask* task = autograd::current_graph_task();
  if (task == nullptr) {
    PyErr_SetString(
        PyExc_AssertionError,
        "expected this hook to be called inside a backward call");
    throw py::error_already_set();
  }
  return task->id;
}

class MultiGradState {
 public:
  MultiGradState(py::sequence tensors, py::object fn, const std::string& mode)
      : fn_(std::move(fn)), mode_all_(mode == "all") {
    if (!mode_all_) {
      return;
    }
    for (py::handle obj : tensors) {
      Tensor t = obj.cast<Tensor>();
      Target target;
      if (autograd::requires_grad(t) && autograd::is_leaf(t)) {
        target.leaf = py::weakref(obj);
      } else if (const auto& fn = autograd::grad_fn(t)) {
        target.node = fn;
      } else {
        PyErr_SetString(
            PyExc_AssertionError, "Expected gradient function to be set");
        throw py::error_already_set();
      }
      targets_.push_back(std::move(target));
    }
  }

  void on_grad(std::size_t idx, py::object grad) {
    int64_t id = current_task_id_or_raise();
    if (!mode_all_) {
      if (ran_.insert(id).second) {
        fn_(grad);
      }
      return;
    }
    auto& task = tasks_[id];
    if (task.count == 0) {
      // Tensors this pass reaches (their hooks run), leaves captured by
      // grad() included. Deviation from torch: torch counts with
      // _will_engine_execute_node, which raises for those leaves (#131753).
      for (const auto& target : targets_) {
        task.nb_calls += target.reached() ? 1 : 0;
      }
      task.buffer = py::list(targets_.size());
      for (std::size_t i = 0; i < targets_.size(); ++i) {
        task.buffer[i] = py::none();
      }
    }
    task.count++;
    task.buffer[idx] = std::move(grad);
    if (task.count == task.nb_calls) {
      py::list buffer = task.buffer;
      tasks_.erase(id);
      fn_(buffer);
    }
  }

  int traverse(visitproc visit, void* arg) const {
    Py_VISIT(fn_.ptr());
    for (const auto& [id, task] : tasks_) {
      Py_VISIT(task.buffer.ptr());
    }
    return 0;
  }
  void clear() {
    clear_object(fn_);
    tasks_.clear();
  }

 private:
  struct Target {
    std::weak_ptr<autograd::Node> node;
    py::object leaf;  // a weakref to a leaf's Python object; null otherwise
    bool reached() const {
      if (leaf) {
        py::object obj = leaf();
        if (obj.is_none()) {
          return false;
        }
        auto acc = autograd::try_get_grad_accumulator(obj.cast<Tensor>());
        return acc && autograd::will_engine_reach_node(acc.get());
      }
      auto fn = node.lock();
      return fn && autograd::will_engine_reach_node(fn.get());
    }
  };
  struct Task {
    std::size_t count = 0;
    std::size_t nb_calls = 0;
    py::list buffer;
  };
  py::object fn_;
  bool mode_all_;
  std::vector<Target> targets_;
  std::unordered_map<int64_t, Task> tasks_;
  std::unordered_set<int64_t> ran_;  // "any": graph tasks that already ran fn
};

}  // namespace

void bind_multi_grad_state(py::module_& m) {
  py::class_<MultiGradState>(
      m,
      "_MultiGradState",
      py::custom_type_setup([](PyHeapTypeObject* heap_type) {
        auto* type = &heap_type->ht_type;
        type->tp_flags |= Py_TPFLAGS_HAVE_GC;
        type->tp_traverse = [](PyObject* self, visitproc visit, void* arg) {
          Py_VISIT(Py_TYPE(self));
          if (!holder_constructed(self)) {
            return 0;
          }
          return py::handle(self).cast<MultiGradState&>().traverse(visit, arg);
        };
        type->tp_clear = [](PyObject* self) {
          if (holder_constructed(self)) {
            py::handle(self).cast<MultiGradState&>().clear();
          }
          return 0;
        };
      }))
      .def(
          py::init<py::sequence, py::object, const std::string&>(),
          py::arg("tensors"),
          py::arg("fn"),
          py::arg("mode"))
      .def("_on_grad", &MultiGradState::on_grad);
}

}  // namespace npgrad::bindings
