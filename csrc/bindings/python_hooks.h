#pragma once
// The core's hook interfaces implemented with Python callables
// (torch/csrc/autograd/python_hook.h): each hook object holds the OrderedDict
// of user hooks, so hooks added later to the same dict are seen, and a hook
// may remove itself while running (the values are snapshotted per call).

#include "bindings.h"
#include "npgrad/autograd/node_hooks.h"
#include "npgrad/autograd/saved_variable_hooks.h"

namespace npgrad::bindings {

/// Note [GC visibility]: reports one Python reference held by C++.
inline int visit_object(
    const py::object& o, autograd::PyVisitProc visit, void* arg) {
  return o ? visit(o.ptr(), arg) : 0;
}
/// Drops it the way Py_CLEAR does: the field is empty before the object's
/// finalizers can run.
inline void clear_object(py::object& o) {
  py::object gone = std::move(o);
}

/// Tensor hooks: see the gradient of one input slot of a node.
struct PyFunctionTensorPreHook final : autograd::FunctionPreHook {
  PyFunctionTensorPreHook(py::object dict, uint32_t value_idx)
      : dict(std::move(dict)), value_idx(value_idx) {}
  variable_list operator()(const variable_list& values) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    return visit_object(dict, visit, arg);
  }
  void clear_python() override { clear_object(dict); }
  py::object dict;
  uint32_t value_idx;
};

/// Node pre-hooks: hook(grad_outputs) -> tuple or None.
struct PyFunctionPreHook final : autograd::FunctionPreHook {
  explicit PyFunctionPreHook(py::object dict) : dict(std::move(dict)) {}
  variable_list operator()(const variable_list& values) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    return visit_object(dict, visit, arg);
  }
  void clear_python() override { clear_object(dict); }
  py::object dict;
};

/// Node post-hooks: hook(grad_inputs, grad_outputs) -> tuple or None.
struct PyFunctionPostHook final : autograd::FunctionPostHook {
  explicit PyFunctionPostHook(py::object dict) : dict(std::move(dict)) {}
  variable_list operator()(
      const variable_list& outputs, const variable_list& inputs) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    return visit_object(dict, visit, arg);
  }
  void clear_python() override { clear_object(dict); }
  py::object dict;
};

/// hook(param) after AccumulateGrad wrote param.grad; must return None.
struct PyPostAccumulateGradHooks final : autograd::PostAccumulateGradHook {
  explicit PyPostAccumulateGradHooks(py::object dict) : dict(std::move(dict)) {}
  void operator()(const Tensor& param) override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    return visit_object(dict, visit, arg);
  }
  void clear_python() override { clear_object(dict); }
  py::object dict;
};

/// A (pack, unpack) pair for one saved tensor; holds the packed object.
/// compose: the pack hook must return a tensor (Note [Composed saved tensor
/// hooks]); prefetch: called with the packed object ahead of unpack (Note
/// [Prefetching saved tensors]), or null.
struct PySavedVariableHooks final : autograd::SavedVariableHooks {
  PySavedVariableHooks(
      py::object pack,
      py::object unpack,
      bool compose = false,
      py::object prefetch = py::object())
      : pack(std::move(pack)),
        unpack(std::move(unpack)),
        prefetch(std::move(prefetch)),
        compose(compose),
        registration(static_cast<bool>(this->prefetch)) {}
  void call_pack_hook(const Tensor& t) override;
  Tensor call_unpack_hook() override;
  Tensor call_pack_hook_to_tensor(const Tensor& t) override;
  Tensor call_unpack_hook_from_tensor(const Tensor& packed) override;
  bool has_prefetch_hook() const override {
    return static_cast<bool>(prefetch);
  }
  void call_prefetch_hook() override;
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    for (const py::object* o : {&pack, &unpack, &prefetch, &packed}) {
      if (int r = visit_object(*o, visit, arg)) {
        return r;
      }
    }
    return 0;
  }
  void clear_python() override {
    clear_object(pack);
    clear_object(unpack);
    clear_object(prefetch);
    clear_object(packed);
  }
  py::object pack, unpack, prefetch, packed;
  bool compose;
  autograd::PrefetchRegistration registration;
};

/// _C._MultiGradState: register_multi_grad_hook's per-graph-task counting.
void bind_multi_grad_state(py::module_& m);

/// A RemovableHandle for `dict` (npgrad.utils.hooks).
py::object make_handle(const py::object& dict);
/// A new OrderedDict.
py::object new_hook_dict();

}  // namespace npgrad::bindings
