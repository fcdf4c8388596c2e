// mm and matmul (dot, mv, mm, batched), as torch dispatches them.
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/linalg_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {
void check_same_dtype(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dtype() == b.dtype(),
      "expected m1 and m2 to have the same dtype, but got: ",
      type_meta_name(a.dtype()),
      " != ",
      type_meta_name(b.dtype()));
}

template <typename NodeT>
std::shared_ptr<NodeT> record(
    const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!compute_requires_grad({&a, &b})) {
    return nullptr;
  }
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges({&a, &b}));
  set_history(out, node);
  return node;
}
}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(a.dim() == 2, "self must be a matrix");
  NPGRAD_CHECK(b.dim() == 2, "mat2 must be a matrix");
  NPGRAD_CHECK(
      a.sizes()[1] == b.sizes()[0],
      "mat1 and mat2 shapes cannot be multiplied (",
      a.sizes()[0],
      "x",
      a.sizes()[1],
      " and ",
      b.sizes()[0],
      "x",
      b.sizes()[1],
      ")");
  check_same_dtype(a, b);
  Tensor out = kernels::matmul(a, b);
  if (auto node = record<MmBackward0>(out, a, b)) {
    // As torch's derivatives.yaml: each operand's strides (like the other
    // operand) only when its own gradient is needed; the sizes always.
    if (node->should_compute_output(0)) {
      node->other_ = SavedVariable(b, false);
      node->self_strides = a.strides();
    }
    if (node->should_compute_output(1)) {
      node->self_ = SavedVariable(a, false);
      node->mat2_strides = b.strides();
    }
    node->self_sizes = a.sizes();
    node->mat2_sizes = b.sizes();
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dim() > 0 && b.dim() > 0,
      "both arguments to matmul need to be at least 1D, but they are ",
      a.dim(),
      "D and ",
      b.dim(),
      "D");
  if (a.dim() == 2 && b.dim() == 2) {
    return mm(a, b);
  }
  if (a.dim() == 1 && b.dim() == 2) {
    return squeeze_matmul_dim(mm(unsqueeze(a, 0), b), 0);
  }
  check_same_dtype(a, b);
  if (a.dim() == 1 && b.dim() == 1) {
    NPGRAD_CHECK(
        a.numel() == b.numel(),
        "inconsistent tensor size, expected tensor [",
        a.numel(),
        "] and src [",
        b.numel(),
        "] to have the same number of elements, but got ",
        a.numel(),
        " and ",
        b.numel(),
        " elements respectively");
    Tensor out = kernels::matmul(a, b);
    if (auto node = record<DotBackward0>(out, a, b)) {
      if (node->should_compute_output(1)) {
        node->self_ = SavedVariable(a, false);
      }
      if (node->should_compute_output(0)) {
        node->other_ = SavedVariable(b, false);
      }
    }
    return out;
  }
  if (a.dim() == 2 && b.dim() == 1) {
    NPGRAD_CHECK(
        a.sizes()[1] == b.sizes()[0],
        "size mismatch, got input (",
        a.sizes()[0],
        "), mat (",
        a.sizes()[0],
        "x",
        a.sizes()[1],
        "), vec (",
        b.sizes()[0],
        ")");
    Tensor out = kernels::matmul(a, b);
    if (auto node = record<MvBackward0>(out, a, b)) {
      if (node->should_compute_output(1)) {
        node->self_ = SavedVariable(a, false);
      }
      if (node->should_compute_output(0)) {
        node->other_ = SavedVariable(b, false);
      }
    }
    return out;
  }
  Tensor out = kernels::matmul(a, b);
  if (auto node = record<BmmBackward0>(out, a, b)) {
    // Each operand only when the other's gradient is needed, as torch's bmm.
    if (node->should_compute_output(1)) {
      node->self_ = SavedVariable(a, false);
    }
    if (node->should_compute_output(0)) {
      node->other_ = SavedVariable(b, false);
    }
    node->self_sizes = a.sizes();
    node->mat2_sizes = b.sizes();
  }
  return out;
}

}  // namespace npgrad::ops
