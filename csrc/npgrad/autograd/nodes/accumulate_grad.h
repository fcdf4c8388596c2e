#pragma once
// AccumulateGrad: the sink of a leaf's gradients; writes `.grad`
// (torch/csrc/autograd/functions/accumulate_grad.h). Its tensor pre-hooks
// are the leaf's own hooks, so they survive the accumulator being recreated.

#include "npgrad/autograd/node.h"

namespace npgrad::autograd {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override {
    return "torch::autograd::AccumulateGrad";
  }
  std::vector<std::shared_ptr<FunctionPreHook>>& tensor_pre_hooks() override;
  const Tensor& variable() const { return variable_; }
  void visit_strong_refs(StrongRefVisitor& v) override;
  int traverse_python(PyVisitProc visit, void* arg) const override;
  void clear_python() override;

 private:
  Tensor variable_;
};

/// Adds new_grad into variable's .grad the way AccumulateGrad does: steal or
/// clone when empty; in place when no graph is recorded; else out of place.
void accumulate_grad(const Tensor& variable, Tensor new_grad);

}  // namespace npgrad::autograd
