#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/util/error.h"

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

variable_list NotImplemented::apply(variable_list&&) {
  throw Error(msg_);
}

}  // namespace npgrad::autograd

namespace npgrad::autograd {

void GraphRoot::visit_strong_refs(StrongRefVisitor& v) {
  Node::visit_strong_refs(v);
  for (const auto& g : grads_) {
    if (g.defined()) {
      v.tensor(g.impl_ptr());
    }
  }
}

}  // namespace npgrad::autograd
