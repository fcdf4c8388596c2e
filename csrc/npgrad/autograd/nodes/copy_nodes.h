#pragma once
// Backward nodes of ops that copy: clone, cat, stack, advanced indexing,
// copy_, and the in-place fills.

#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/view_nodes.h"

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

struct FlipBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(FlipBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dims", dims);
  }
  Shape dims;
};

struct RollBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(RollBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dims", dims);
    v.int_list("_saved_shifts", shifts);
  }
  Shape shifts, dims;
};

/// repeat and tile: each block of the gradient summed back onto the input.
struct RepeatBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(RepeatBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_repeats", repeats);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape repeats, self_sizes;
};

/// triu (kUpper) and tril, and their in-place forms.
template <bool kUpper>
struct TriangleBackward final : FormulaNode {
  std::string name() const override {
    return kUpper ? "TriuBackward0" : "TrilBackward0";
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_diagonal", diagonal);
  }
  int64_t diagonal = 0;
};
using TriuBackward0 = TriangleBackward<true>;
using TrilBackward0 = TriangleBackward<false>;

struct DiagEmbedBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(DiagEmbedBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override { args.visit(v); }
  DiagonalArgs args{0, -2, -1};
};

struct FillBackward3 final : FormulaNode {
  NPGRAD_NODE_NAME(FillBackward3)
  void compute(const variable_list& g, variable_list& out) override;
};

struct CopyBackwards final : FormulaNode {
  std::string name() const override { return "torch::autograd::CopyBackwards"; }
  void compute(const variable_list& g, variable_list& out) override;
};

/// The nodes of ops whose inputs get no gradient (torch's `self:
/// zeros_like(grad)`): the in-place fills and the random draws. Each input's
/// gradient is zeros (validate_outputs reduces them to its shape); `sizes`
/// are the `_saved_*_sym_sizes` torch's node shows (normal's mean and std).
struct ZeroGradientNode : FormulaNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    for (const auto& [attribute, shape] : sizes) {
      v.int_list(attribute.c_str(), shape);
    }
  }
  std::vector<std::pair<std::string, Shape>> sizes;
};

// Every zero-gradient node, by torch's name: zero_, fill_(number), and the
// random ops (normal_, normal(mean), normal(std), normal(mean, std),
// uniform_, bernoulli(p), bernoulli_(p tensor), bernoulli_(number),
// exponential_, random_(from, to), random_(to), random_()).
#define NPGRAD_FORALL_ZERO_GRADIENT_NODES(_) \
  _(ZeroBackward0)                           \
  _(FillBackward2)                           \
  _(NormalBackward0)                         \
  _(NormalBackward1)                         \
  _(NormalBackward2)                         \
  _(NormalBackward3)                         \
  _(UniformBackward0)                        \
  _(BernoulliBackward0)                      \
  _(BernoulliBackward1)                      \
  _(BernoulliBackward2)                      \
  _(ExponentialBackward0)                    \
  _(RandomBackward0)                         \
  _(RandomBackward1)                         \
  _(RandomBackward2)

#define NPGRAD_DEFINE_ZERO_GRADIENT_NODE(N) \
  struct N final : ZeroGradientNode {       \
    NPGRAD_NODE_NAME(N)                     \
  };
NPGRAD_FORALL_ZERO_GRADIENT_NODES(NPGRAD_DEFINE_ZERO_GRADIENT_NODE)
#undef NPGRAD_DEFINE_ZERO_GRADIENT_NODE

/// A new zero-gradient node of torch's name `name` (an error for another).
std::shared_ptr<ZeroGradientNode> make_zero_gradient_node(
    const std::string& name);

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

/// index_put (x[index_tensor] = values) on a tensor that requires grad.
struct IndexPutBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(IndexPutBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.boolean("_saved_accumulate", accumulate);
    v.tensor_list("_saved_indices", indices_);
  }
  bool accumulate = false;
  SavedVariableList indices_;
};

}  // namespace npgrad::autograd
