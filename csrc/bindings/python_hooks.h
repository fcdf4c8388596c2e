#pragma once
// The core's hook interfaces implemented with Python callables
// (torch/csrc/autograd/python_hook.h): each hook object holds the OrderedDict
// of user hooks, so hooks added later to the same dict are seen, and a hook
// may remove itself while running (the values are snapshotted per call).

#include "bindings.h"
#include "npgrad/autograd/node_hooks.h"
#include "npgrad/autograd/saved_variable_hooks.h"

namespace npgrad::bindings {

/// Tensor hooks: see the gradient of one input slot of a node.
struct PyFunctionTensorPreHook final : autograd::FunctionPreHook {
  PyFunctionTensorPreHook(py::object dict, uint32_t value_idx)
      : dict(std::move(dict)), value_idx(value_idx) {}
  variable_list operator()(const variable_list& values) override;
  py::object dict;
  uint32_t value_idx;
};

/// Node pre-hooks: hook(grad_outputs) -> tuple or None.
struct PyFunctionPreHook final : autograd::FunctionPreHook {
  explicit PyFunctionPreHook(py::object dict) : dict(std::move(dict)) {}
  variable_list operator()(const variable_list& values) override;
  py::object dict;
};

/// Node post-hooks: hook(grad_inputs, grad_outputs) -> tuple or None.
struct PyFunctionPostHook final : autograd::FunctionPostHook {
  explicit PyFunctionPostHook(py::object dict) : dict(std::move(dict)) {}
  variable_list operator()(
      const variable_list& outputs, const variable_list& inputs) override;
  py::object dict;
};

/// hook(param) after AccumulateGrad wrote param.grad; must return None.
struct PyPostAccumulateGradHooks final : autograd::PostAccumulateGradHook {
  explicit PyPostAccumulateGradHooks(py::object dict) : dict(std::move(dict)) {}
  void operator()(const Tensor& param) override;
  py::object dict;
};

/// A (pack, unpack) pair for one saved tensor; holds the packed object.
struct PySavedVariableHooks final : autograd::SavedVariableHooks {
  PySavedVariableHooks(py::object pack, py::object unpack)
      : pack(std::move(pack)), unpack(std::move(unpack)) {}
  void call_pack_hook(const Tensor& t) override;
  Tensor call_unpack_hook() override;
  py::object pack, unpack, packed;
};

/// One tensor hook per tensor for register_multi_grad_hook, sharing the
/// per-graph-task state; `nodes` are the tensors' grad_fns or accumulators.
py::list multi_grad_hooks(
    py::list nodes, py::object fn, const std::string& mode, std::size_t count);

/// A RemovableHandle for `dict` (npgrad.utils.hooks).
py::object make_handle(const py::object& dict);
/// A new OrderedDict.
py::object new_hook_dict();

}  // namespace npgrad::bindings
