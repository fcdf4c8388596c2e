#pragma once
// Hook interfaces a Node runs (torch/csrc/autograd/function_hook.h). The core
// only calls them; the bindings implement them with Python callables.

#include "npgrad/autograd/python_refs.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

/// A node pre-hook or tensor pre-hook: sees the gradients arriving at the
/// node and returns (possibly replaced) gradients.
struct FunctionPreHook : PythonRefHolder {
  virtual ~FunctionPreHook() = default;
  virtual variable_list operator()(const variable_list& grads) = 0;
};

/// A node post-hook: sees (grad_inputs = node results, grad_outputs = inputs).
struct FunctionPostHook : PythonRefHolder {
  virtual ~FunctionPostHook() = default;
  virtual variable_list operator()(
      const variable_list& outputs, const variable_list& inputs) = 0;
};

/// Runs after AccumulateGrad has written a leaf's .grad.
struct PostAccumulateGradHook : PythonRefHolder {
  virtual ~PostAccumulateGradHook() = default;
  virtual void operator()(const Tensor& param) = 0;
};

}  // namespace npgrad::autograd
