#pragma once
// Edge: (node, input_nr), the link from a node to the node that receives one of
// its gradients. Mirrors torch/csrc/autograd/edge.h.

#include <cstdint>
#include <memory>
#include <vector>

#include "npgrad/util/pool.h"

namespace npgrad::autograd {

class Node;

struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr)
      : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }

  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};

// Pooled: every node has one (Note [Pooled small objects]).
using edge_list = std::vector<Edge, PoolAllocator<Edge>>;

}  // namespace npgrad::autograd
