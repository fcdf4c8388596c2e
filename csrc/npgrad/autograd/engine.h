#pragma once
// Engine: runs a backward pass (torch/csrc/autograd/engine.h). Iterative,
// on the calling thread; nested (reentrant) calls run their own GraphTask
// to completion before returning.

#include <functional>
#include <string>

#include "npgrad/autograd/edge.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

struct Engine {
  /// Runs backward from `roots` (seeded with `grads`). With `outputs` given,
  /// only what they need is run, and the gradients reaching them are
  /// returned (grad()); accumulate_grad writes leaves' .grad (backward()).
  static variable_list execute(
      const edge_list& roots,
      variable_list grads,
      bool keep_graph,
      bool create_graph,
      bool accumulate_grad,
      const edge_list& outputs);

  /// Queues a callback to run when the current graph task finishes.
  static void queue_callback(std::function<void()> callback);
};

/// torch's validate_outputs: count, shape (reducing broadcast gradients) and
/// dtype of grads against the metadata of the nodes they flow into.
/// Errors name the producer ("Function X returned an ...") when there is one.
void validate_outputs(
    const edge_list& edges, variable_list& grads, const Node* producer);

}  // namespace npgrad::autograd
