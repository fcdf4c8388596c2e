#pragma once
// Backward nodes of reductions, softmax and log_softmax.
//
// Nodes save dims as the caller gave them (negative ones too), as torch does;
// the formulas wrap them.

#include <optional>

#include "npgrad/autograd/nodes/basic_nodes.h"

namespace npgrad::autograd {

/// A node that saves its input and its result (`_saved_self`,
/// `_saved_result`): full max/min, prod, and the base of the
/// dim reductions.
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

/// var, std, var_mean and std_mean: kStd for the std (torch saves it as
/// `result`, or `result0` of the pair), kMean for the pair's second output, the
/// mean. `dim` and `correction` are None when not given (all dims; 1).
template <bool kStd, bool kMean>
struct VarStdBackward final : FormulaNode {
  std::string name() const override {
    if (kMean) {
      return kStd ? "StdMeanBackward0" : "VarMeanBackward0";
    }
    return kStd ? "StdBackward0" : "VarBackward0";
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
      v.tensor(kMean ? "_saved_result0" : "_saved_result", result_);
    }
    v.tensor("_saved_self", self_);
  }
  std::optional<Shape> dims;
  std::optional<double> correction;
  bool keepdim = false;
  SavedVariable self_;
  SavedVariable result_;  // the std (kStd only)
};
using VarBackward0 = VarStdBackward<false, false>;
using StdBackward0 = VarStdBackward<true, false>;
using VarMeanBackward0 = VarStdBackward<false, true>;
using StdMeanBackward0 = VarStdBackward<true, true>;

/// prod of all elements.
struct ProdBackward0 final : SelfResultNode {
  NPGRAD_NODE_NAME(ProdBackward0)
  void compute(const variable_list& g, variable_list& out) override;
};

/// prod along one dim (saved as given).
struct ProdBackward1 final : SelfResultNode {
  NPGRAD_NODE_NAME(ProdBackward1)
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    v.integer("_saved_dim", dim);
    v.boolean("_saved_keepdim", keepdim);
    SelfResultNode::visit_saved(v);
  }
  int64_t dim = 0;
  bool keepdim = false;
};

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

/// The p-norm over dims: linalg.vector_norm (and torch.norm, which calls it)
/// saves p as `_saved_ord`, ATen's norm (pairwise_distance) as `_saved_p`.
/// `dim` is None when not given (all dims); `ord` shows as an int or a float,
/// as it was given.
struct VectorNormBackward : SelfResultNode {
  void compute(const variable_list& g, variable_list& out) override;
  void visit_saved(SavedAttributeVisitor& v) override {
    if (dims) {
      v.int_list("_saved_dim", *dims);
    } else {
      v.none("_saved_dim");
    }
    v.boolean("_saved_keepdim", keepdim);
    if (ord_is_int && ord >= 0) {
      v.integer(ord_attribute(), static_cast<int64_t>(ord));
    } else {
      v.real(ord_attribute(), ord);
    }
    SelfResultNode::visit_saved(v);
  }
  virtual const char* ord_attribute() const = 0;
  std::optional<Shape> dims;
  bool keepdim = false;
  double ord = 2;
  bool ord_is_int = false;
};

struct LinalgVectorNormBackward0 final : VectorNormBackward {
  NPGRAD_NODE_NAME(LinalgVectorNormBackward0)
  const char* ord_attribute() const override { return "_saved_ord"; }
};

struct NormBackward1 final : VectorNormBackward {
  NPGRAD_NODE_NAME(NormBackward1)
  const char* ord_attribute() const override { return "_saved_p"; }
};

}  // namespace npgrad::autograd
