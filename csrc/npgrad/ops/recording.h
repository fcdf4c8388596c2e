#pragma once
// Recording an out-of-place op's node (the in-place ops record through the
// mutation path, mutation.h).

#include <initializer_list>
#include <memory>

#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/node.h"

namespace npgrad::ops {

/// When an input requires grad (and grad mode is on): a new NodeT with edges
/// to `inputs`, already out's grad_fn, for the caller to fill its saved state;
/// otherwise null.
template <typename NodeT>
std::shared_ptr<NodeT> record(
    const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  if (!autograd::compute_requires_grad(inputs)) {
    return nullptr;
  }
  auto node = autograd::make_node<NodeT>();
  node->set_next_edges(autograd::collect_next_edges(inputs));
  autograd::set_history(out, node);
  return node;
}

}  // namespace npgrad::ops
