#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

variable_list FormulaNode::apply(variable_list&& grads) {
  variable_list out(num_outputs());
  for (const auto& g : grads) {
    if (g.defined()) {
      compute(grads, out);
      break;
    }
  }
  return out;
}

}  // namespace npgrad::autograd
