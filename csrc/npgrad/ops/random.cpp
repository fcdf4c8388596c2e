// The random ops' graph recording. The values are drawn in Python from the
// generator's NumPy bit generator (npgrad/_generator.py); here they are
// written into a tensor (the in-place fills, through the mutation path) or
// wrapped as a result, under torch's zero-gradient nodes (copy_nodes.h).
#include <cctype>
#include <string>

#include "npgrad/autograd/anomaly_mode.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

// The fill's op name from its node's ("NormalBackward0" -> "normal_"), for
// Note [Mutation provenance]; only needed under anomaly mode.
std::string random_fill_op(const std::string& node_name) {
  if (!AnomalyMode::is_enabled()) {
    return {};
  }
  std::string op = node_name.substr(0, node_name.find("Backward"));
  for (char& c : op) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return op + "_";
}

}  // namespace

void random_fill_(
    const Tensor& self,
    const Tensor& values,
    const std::string& node_name,
    const Tensor& p) {
  bool rg = compute_requires_grad({&self, &p});
  check_inplace(self, rg);
  std::shared_ptr<Node> node;
  if (rg) {
    auto n = make_zero_gradient_node(node_name);
    n->set_next_edges(
        p.defined() ? collect_next_edges({&self, &p})
                    : collect_next_edges({&self}));
    node = n;
  }
  kernels::copy_into(self, values);
  finish_inplace(self, node, random_fill_op(node_name).c_str());
}

Tensor record_random(
    const Tensor& result,
    const std::string& node_name,
    const std::vector<Tensor>& inputs,
    const std::vector<std::string>& size_attributes) {
  if (!compute_requires_grad(inputs)) {
    return result;
  }
  auto node = make_zero_gradient_node(node_name);
  node->set_next_edges(collect_next_edges(inputs));
  for (std::size_t i = 0; i < size_attributes.size(); ++i) {
    node->sizes.emplace_back(size_attributes[i], inputs[i].sizes());
  }
  set_history(result, node);
  return result;
}

Tensor record_not_implemented(
    const Tensor& result,
    const std::string& forward_name,
    const std::vector<Tensor>& inputs) {
  if (!compute_requires_grad(inputs)) {
    return result;
  }
  auto node = make_node<NotImplemented>(forward_name);
  node->set_next_edges(collect_next_edges(inputs));
  set_history(result, node);
  return result;
}

}  // namespace npgrad::ops
