#pragma once
// GraphRoot, Identity, and FormulaNode: the base of every generated-style
// node (torch/csrc/autograd/functions/basic_ops.h).

#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable.h"

namespace npgrad::autograd {

/// The root of a backward with several outputs: hands each its gradient.
class GraphRoot final : public Node {
 public:
  GraphRoot(edge_list roots, variable_list grads)
      : Node(next_sequence_nr(), std::move(roots)), grads_(std::move(grads)) {}
  variable_list apply(variable_list&&) override { return grads_; }
  std::string name() const override { return "torch::autograd::GraphRoot"; }
  void visit_strong_refs(StrongRefVisitor& v) override;

 private:
  variable_list grads_;
};

/// A node never executed: the placeholder edge for an input that cannot be
/// reached (a leaf with no live accumulator).
class Identity final : public Node {
 public:
  Identity() = default;
  variable_list apply(variable_list&& grads) override {
    return std::move(grads);
  }
  std::string name() const override { return "torch::autograd::Identity"; }
};

/// torch's NotImplemented: the node of an op whose derivative torch does not
/// implement (bernoulli(input, p)); a backward through it raises.
class NotImplemented final : public Node {
 public:
  explicit NotImplemented(const std::string& forward_name)
      : msg_("derivative for " + forward_name + " is not implemented") {}
  variable_list apply(variable_list&&) override;
  std::string name() const override {
    return "torch::autograd::NotImplemented";
  }

 private:
  std::string msg_;
};

/// A node whose results are all undefined when no incoming gradient is
/// defined (torch's generated nodes' `any_grad_defined`).
class FormulaNode : public Node {
 public:
  using Node::Node;
  variable_list apply(variable_list&& grads) final;

 protected:
  /// Fills out[i] for the outputs that should_compute_output(i).
  virtual void compute(const variable_list& grads, variable_list& out) = 0;
  /// The node as the owner of saved outputs (for SavedVariable::unpack).
  std::shared_ptr<Node> self_ptr() { return shared_from_this(); }
};

/// A node whose formula needs its two tensor operands: `_saved_self` and the
/// second one under torch's name for it (`other` for mul and div, `tensor`
/// for dot, `vec` for mv, `mat2` for bmm).
class TwoOperandNode : public FormulaNode {
 public:
  explicit TwoOperandNode(const char* other_attribute = "_saved_other")
      : other_attribute_(other_attribute) {}
  void visit_saved(SavedAttributeVisitor& v) override {
    v.tensor("_saved_self", self_);
    v.tensor(other_attribute_, other_);
  }
  SavedVariable self_, other_;

 private:
  const char* other_attribute_;
};

}  // namespace npgrad::autograd

#define NPGRAD_NODE_NAME(N)           \
  std::string name() const override { \
    return #N;                        \
  }
