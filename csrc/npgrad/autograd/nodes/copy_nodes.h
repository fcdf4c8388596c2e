#pragma once
// Backward nodes of ops that copy: clone, cat, stack, advanced indexing,
// copy_, and the in-place fills.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct CloneBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CloneBackward0)
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

struct CatBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(CatBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
  }
  int64_t dim = 0;
  std::vector<int64_t> sizes_along_dim;
};

struct StackBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(StackBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
  }
  int64_t dim = 0;
};

struct IndexBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(IndexBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor_list("_saved_indices", indices_);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  SavedVariableList indices_;
  Shape self_sizes;
};

/// The backward of index_backward, torch's `zeros.index_put_(indices, grad,
/// accumulate=true)`: edges (self, values); the zeros never require grad, the
/// values get the gradient gathered again.
struct IndexPutImplBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(IndexPutImplBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.boolean("_saved_accumulate", true);
    v.tensor_list("_saved_indices", indices_);
  }
  SavedVariableList indices_;
};

struct FillBackward3 final : FormulaNode {
  NPGRAD_NODE_NAME(FillBackward3)
  void compute(const variable_list& g, variable_list& out) override;
};

struct CopyBackwards final : FormulaNode {
  std::string name() const override { return "torch::autograd::CopyBackwards"; }
  void compute(const variable_list& g, variable_list& out) override;
};

/// zero_() (ZeroBackward0) and fill_(number) (FillBackward2): no gradient
/// flows to the overwritten values.
template <bool kIsZero>
struct FillBackward final : FormulaNode {
  std::string name() const override {
    return kIsZero ? "ZeroBackward0" : "FillBackward2";
  }
  void compute(const variable_list& g, variable_list& out) override;
};
using ZeroBackward0 = FillBackward<true>;
using FillBackward2 = FillBackward<false>;

}  // namespace npgrad::autograd

#include "npgrad/autograd/nodes/view_nodes.h"

namespace npgrad::autograd {

/// The base's grad_fn after an in-place op wrote through one of its views
/// (torch's CopySlices): runs the op's node on the view's region of the
/// base's gradient and passes the rest of the gradient through.
struct CopySlices final : FormulaNode {
  CopySlices(const Tensor& base, ViewGeometry view, std::shared_ptr<Node> fn);
  std::string name() const override { return "torch::autograd::CopySlices"; }
  void compute(const variable_list& g, variable_list& out) override;
  // As torch: drop fn (its saved tensors go with it unless a graph built
  // with create_graph still uses fn as a node of its own).
  void release_variables() override { fn.reset(); }
  void visit_strong_refs(StrongRefVisitor& v) override;
  int traverse_python(PyVisitProc visit, void* arg) const override;
  void clear_python() override;
  ViewGeometry view;
  std::shared_ptr<Node> fn;
};

/// x[index_tensor] = values on a tensor that requires grad.
struct IndexPutBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(IndexPutBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.boolean("_saved_accumulate", false);
    v.tensor_list("_saved_indices", indices_);
  }
  SavedVariableList indices_;
};

}  // namespace npgrad::autograd
