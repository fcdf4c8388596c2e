#pragma once
// Backward nodes of reductions, softmax and log_softmax.

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

struct SumBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(SumBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape self_sizes;
};

struct SumBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(SumBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dim", dims);
    v.boolean("_saved_keepdim", keepdim);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape dims;
  bool keepdim = false;
  Shape self_sizes;
};

struct MeanBackward0 final : FormulaNode {
  NPGRAD_NODE_NAME(MeanBackward0)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_self_sym_numel", self_numel);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  int64_t self_numel = 0;
  Shape self_sizes;
};

struct MeanBackward1 final : FormulaNode {
  NPGRAD_NODE_NAME(MeanBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.int_list("_saved_dim", dims);
    v.boolean("_saved_keepdim", keepdim);
    v.integer("_saved_self_sym_numel", self_numel);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  Shape dims;
  bool keepdim = false;
  int64_t self_numel = 0;
  Shape self_sizes;
};

/// Full max/min: the gradient is spread evenly over ties.
template <bool kIsMax>
struct MaxMinBackward1 final : FormulaNode {
  std::string name() const override {
    return kIsMax ? "MaxBackward1" : "MinBackward1";
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, result_;
};
using MaxBackward1 = MaxMinBackward1<true>;
using MinBackward1 = MaxMinBackward1<false>;

/// max/min along a dim: the gradient goes to the selected index.
template <bool kIsMax>
struct MaxMinBackward0 final : FormulaNode {
  std::string name() const override {
    return kIsMax ? "MaxBackward0" : "MinBackward0";
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_indices", indices_);
    v.boolean("_saved_keepdim", keepdim);
    v.int_list("_saved_self_sym_sizes", self_sizes);
  }
  int64_t dim = 0;
  bool keepdim = false;
  Shape self_sizes;
  SavedVariable indices_;
};
using MaxBackward0 = MaxMinBackward0<true>;
using MinBackward0 = MaxMinBackward0<false>;

struct SoftmaxBackward0Base : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_result", result_);
  }
  int64_t dim = 0;
  SavedVariable result_;
};

struct SoftmaxBackward0 final : SoftmaxBackward0Base {
  NPGRAD_NODE_NAME(SoftmaxBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct LogSoftmaxBackward0 final : SoftmaxBackward0Base {
  NPGRAD_NODE_NAME(LogSoftmaxBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

}  // namespace npgrad::autograd
