#pragma once
// Backward nodes of reductions, softmax and log_softmax.
//
// Nodes save dims as the caller gave them (negative ones too), as torch does;
// the formulas wrap them.

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// A node that saves its input and its result (`_saved_self`,
/// `_saved_result`): full max/min and median.
struct SelfResultNode : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_result", result_);
    v.tensor("_saved_self", self_);
  }
  SavedVariable self_, result_;
};

/// Full max/min and median: the gradient is spread evenly over the elements
/// equal to the result (over the NaNs when the result is NaN).
struct EvenlyDistributeNode : SelfResultNode {
  void compute(const variable_list& g, variable_list& out) override;
};
struct MaxBackward1 final : EvenlyDistributeNode {
  NPGRAD_NODE_NAME(MaxBackward1)
};
struct MinBackward1 final : EvenlyDistributeNode {
  NPGRAD_NODE_NAME(MinBackward1)
};
struct MedianBackward0 final : EvenlyDistributeNode {
  NPGRAD_NODE_NAME(MedianBackward0)
};

/// max/min/median/kthvalue along a dim: the gradient goes to the selected
/// index.
struct SelectAlongDimNode : FormulaNode {
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
struct MaxBackward0 final : SelectAlongDimNode {
  NPGRAD_NODE_NAME(MaxBackward0)
};
struct MinBackward0 final : SelectAlongDimNode {
  NPGRAD_NODE_NAME(MinBackward0)
};
struct MedianBackward1 final : SelectAlongDimNode {
  NPGRAD_NODE_NAME(MedianBackward1)
};
struct KthvalueBackward0 final : SelectAlongDimNode {
  NPGRAD_NODE_NAME(KthvalueBackward0)
};

/// var_mean and std_mean (kStd): the pair (var or std, mean); torch saves
/// the std as `result0`. `dim` and `correction` are None when not given (all
/// dims; 1). The formulas are the reduction table's var/std and mean.
template <bool kStd>
struct VarMeanBackward final : FormulaNode {
  std::string name() const override {
    return kStd ? "StdMeanBackward0" : "VarMeanBackward0";
  }
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if (correction) {
      v.real("_saved_correction", *correction);
    } else {
      v.none("_saved_correction");
    }
    if (dims) {
      v.int_list("_saved_dim", *dims);
    } else {
      v.none("_saved_dim");
    }
    v.boolean("_saved_keepdim", keepdim);
    if (kStd) {
      v.tensor("_saved_result0", result_);
    }
    v.tensor("_saved_self", self_);
  }
  std::optional<Shape> dims;
  std::optional<double> correction;
  bool keepdim = false;
  SavedVariable self_;
  SavedVariable result_;  // the std (kStd only)
};
using VarMeanBackward0 = VarMeanBackward<false>;
using StdMeanBackward0 = VarMeanBackward<true>;

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

/// The nodes of _softmax_backward_data and _log_softmax_backward_data
/// (softmax's and log_softmax's gradients as ops of their own, as torch's):
/// what a double backward through softmax records. input_dtype is an
/// argument torch's node keeps but does not show.
struct SoftmaxBackwardDataBase : FormulaNode {
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.tensor("_saved_grad_output", grad_output_);
    v.tensor("_saved_output", output_);
  }
  int64_t dim = 0;
  ScalarType input_dtype = ScalarType::Float32;
  SavedVariable grad_output_, output_;
};

struct SoftmaxBackwardDataBackward0 final : SoftmaxBackwardDataBase {
  NPGRAD_NODE_NAME(SoftmaxBackwardDataBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

struct LogSoftmaxBackwardDataBackward0 final : SoftmaxBackwardDataBase {
  NPGRAD_NODE_NAME(LogSoftmaxBackwardDataBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

}  // namespace npgrad::autograd
