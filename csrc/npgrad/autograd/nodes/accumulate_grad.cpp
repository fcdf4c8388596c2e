#include "npgrad/autograd/nodes/accumulate_grad.h"

#include <cstdint>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

// UINT64_MAX: among ready nodes an AccumulateGrad always runs first.
// See Note [Execution order of ready nodes] in engine.cpp.
AccumulateGrad::AccumulateGrad(Tensor variable)
    : Node(UINT64_MAX), variable_(std::move(variable)) {
  add_input_metadata(variable_);
}

std::vector<std::shared_ptr<FunctionPreHook>>&
AccumulateGrad::tensor_pre_hooks() {
  return materialize_autograd_meta(variable_).hooks;
}

void accumulate_grad(const Tensor& variable, Tensor new_grad) {
  AutogradMeta& meta = materialize_autograd_meta(variable);
  Tensor& grad = meta.grad;
  if (!grad.defined()) {
    // Steal the incoming gradient when nobody else can see it.
    if (!GradMode::is_enabled() && new_grad.is_contiguous() &&
        kernels::is_exclusively_owned(new_grad)) {
      grad = std::move(new_grad);
    } else {
      grad = ops::clone(new_grad);
    }
  } else if (
      !GradMode::is_enabled() &&
      grad.impl()->version_counter->saved_locks.load() == 0) {
    // A .grad saved under lock_saved_tensors() is replaced, not written
    // (Note [lock_saved_tensors]).
    kernels::binary_out(kernels::Binary::Add, grad, new_grad, grad);
    bump_version(grad, "AccumulateGrad");
  } else {
    grad = ops::add(grad, new_grad);
  }
  note_grad_assigned(variable);
}

void AccumulateGrad::visit_strong_refs(StrongRefVisitor& v) {
  Node::visit_strong_refs(v);
  v.tensor(variable_.impl_ptr());
}

// The leaf's hooks are reported here only when this accumulator is the
// leaf's only owner (Note [GC visibility]).
int AccumulateGrad::traverse_python(PyVisitProc visit, void* arg) const {
  return traverse_if_owned_alone(variable_.impl_ptr(), visit, arg);
}

void AccumulateGrad::clear_python() {
  clear_if_owned_alone(variable_.impl_ptr());
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  NPGRAD_INTERNAL_ASSERT(
      grads.size() == 1, "AccumulateGrad takes one gradient");
  Tensor new_grad = std::move(grads[0]);
  AutogradMeta& meta = materialize_autograd_meta(variable_);
  if (new_grad.defined()) {
    NPGRAD_CHECK(!grad_fn(variable_), messages::kLeafMovedIntoGraph);
  }
  if (new_grad.defined() && requires_grad(variable_)) {
    // The replaced gradient is freed after the mutex: its ~TensorImpl may run
    // Python code (Note [PyObject preservation]) that uses this leaf.
    Tensor old_grad;
    {
      kernels::lock_releasing_gil(meta.mutex);
      std::lock_guard<std::mutex> lock(meta.mutex, std::adopt_lock);
      old_grad = meta.grad;
      accumulate_grad(variable_, std::move(new_grad));
    }
  }
  // As in torch, the post-accumulate-grad hooks run whenever the node runs,
  // also when nothing was accumulated (an undefined gradient, or a leaf that
  // no longer requires grad). A copy: a hook may replace the leaf's hooks.
  auto hooks = meta.post_acc_grad_hooks;
  for (const auto& hook : hooks) {
    (*hook)(variable_);
  }
  return {};
}

}  // namespace npgrad::autograd
