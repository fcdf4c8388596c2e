#pragma once
// Wiring a new node into the graph (torch/csrc/autograd/functions/utils.h):
// which inputs need grad, the node's next edges, and the history of outputs.

#include <initializer_list>
#include <memory>

#include "npgrad/autograd/edge.h"
#include "npgrad/autograd/node.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;

/// Grad mode is on and some input requires grad.
bool compute_requires_grad(std::initializer_list<const Tensor*> inputs);
bool compute_requires_grad(const std::vector<Tensor>& inputs);
/// One edge per input, in order; invalid for inputs that need no grad.
edge_list collect_next_edges(std::initializer_list<const Tensor*> inputs);
edge_list collect_next_edges(const std::vector<Tensor>& inputs);
/// Makes fn the grad_fn of out (output_nr = fn's next input slot).
void set_history(const Tensor& out, const std::shared_ptr<Node>& fn);
/// Makes fn the history of self after an in-place change (torch's
/// rebase_history): for a view, the base's history becomes CopySlices around
/// fn and the view's grad_fn is regenerated.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn);
/// A new view of base's data: shares the version counter, records the root
/// base. `data` holds the view's geometry.
Tensor make_view(const Tensor& base, Tensor data);

/// A new NodeT as out's grad_fn, with the edge to the op's one input `a`,
/// when grad mode is on and `a` requires grad (else nullptr); the op then
/// sets what the node saves.
template <typename NodeT>
std::shared_ptr<NodeT> record_node(const Tensor& out, const Tensor& a) {
  if (!compute_requires_grad({&a})) {
    return nullptr;
  }
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges({&a}));
  set_history(out, node);
  return node;
}

}  // namespace npgrad::autograd
