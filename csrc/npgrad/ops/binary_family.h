#pragma once
// The machinery behind the pointwise binary op table (binary_ops.h). From one
// entry come the forward op, its backward node type, the in-place form, and
// in the bindings the function, the method, the in-place method, the node
// class, the docstrings and (through _C._op_table) the stubs.
//
// An entry is a struct with these members:
//   name       torch's function and method name; the in-place method is
//              name + "_" when `inplace` is true
//   ufunc      `static constexpr kernels::Binary ufunc`: the NumPy ufunc; or
//   kernel     `static Tensor kernel(const Tensor& self, const Tensor& other,
//              ScalarType compute)`, run in no-grad mode (a composite of
//              kernels, or of ops whose graph the op's own node replaces)
//   promotes   Promotes::ToFloat: integer operands compute in float32 (div);
//              Promotes::No: torch's result_type of the two operands
//   inplace    whether torch has the in-place form
//   numbers    whether `other` may be a Python number (mul(t, 2)); when
//              false a number gets torch's "must be Tensor" error
//   alpha      whether the op takes torch's keyword `alpha` (other is
//              scaled by it: add, sub); the node then saves `_saved_alpha`
//   doc        `static constexpr OpDoc doc`, with example_other
//   check      optional `static void check(const Tensor&, const Tensor&)`
//   self_name, other_name  optional: torch's names of the two operands when
//              they are not `self` and `other` (`_saved_<name>`)
//   exposed    optional, false for an op torch has only in its backward
//              formulas (tanh_backward): no function or method, only the node
//   number_overload  optional, true when torch declares `other: Number` as
//              an overload of its own (the comparisons): a bad operand then
//              gets torch's "invalid combination of arguments" error
//   inplace_node, inplace_number_node  optional, for a comparison whose
//              in-place form torch differentiates (eq_, lt_, ...): its nodes
//              when `other` is a tensor and a Python number (EqBackward1,
//              EqBackward0). They give zero gradients; the in-place form
//              writes the bool result converted to self's dtype. A bool
//              entry without them (logical_and_) writes and bumps the
//              version only: no leaf check, no history
//   number_self  optional: torch's forward name of its overload
//              (Number self, Tensor other), which torch does not
//              differentiate (remainder's "aten::remainder"): the function
//              takes a Python number as `input` and records torch's
//              NotImplemented node
//   number_node  optional: torch's node when `other` is a Python number and
//              its overload has a node of its own (fmod's FmodBackward0, where
//              a tensor records FmodBackward1): it saves nothing, has one edge
//              (self) and passes the gradient through, as torch's formulas
//              `self: grad` of those overloads do
// A differentiable entry also has
//   node            torch's name of the backward node
//   self_reads      what grad_self reads: a mask of Operand::Self, ::Other,
//   other_reads     ::Result; likewise grad_other. The node saves an operand
//                   only when a gradient that reads it is needed, as torch's
//                   generated code does (`_saved_<operand>` is undefined
//                   otherwise)
//   grad_self       `static Tensor grad_self(const Tensor& grad,
//   grad_other      const BinaryOperands& saved)`: written with npgrad ops so
//                   that create_graph records them. They may write into
//                   `grad` (the *_reusing helpers): the node hands it to the
//                   first only while the second does not need it
// A comparison (no node) computes a bool tensor and records nothing.
// The entry is added to BinaryOps at the end of binary_ops.h.

#include <memory>
#include <string>
#include <type_traits>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/ops/ops.h"

namespace npgrad::ops {

/// The operands a binary formula can read, as bits of a mask.
struct Operand {
  static constexpr unsigned Self = 1, Other = 2, Result = 4;
};

/// What a binary node's formulas see: the saved operands they read (others
/// are undefined) and alpha.
struct BinaryOperands {
  Tensor self, other, result;
  double alpha = 1;
};

namespace detail {
template <typename Op, typename = void>
struct HasNumberOverload : std::false_type {};
template <typename Op>
struct HasNumberOverload<Op, std::void_t<decltype(Op::number_overload)>>
    : std::bool_constant<Op::number_overload> {};

template <typename Op, typename = void>
struct HasNumberNode : std::false_type {};
template <typename Op>
struct HasNumberNode<Op, std::void_t<decltype(Op::number_node)>>
    : std::true_type {};

template <typename Op, typename = void>
struct HasNumberSelf : std::false_type {};
template <typename Op>
struct HasNumberSelf<Op, std::void_t<decltype(Op::number_self)>>
    : std::true_type {};

template <typename Op, typename = void>
struct HasBinaryKernel : std::false_type {};
template <typename Op>
struct HasBinaryKernel<Op, std::void_t<decltype(&Op::kernel)>>
    : std::true_type {};

template <typename Op, typename = void>
struct OperandNames {
  static constexpr const char* self = "self";
  static constexpr const char* other = "other";
};
template <typename Op>
struct OperandNames<Op, std::void_t<decltype(Op::self_name)>> {
  static constexpr const char* self = Op::self_name;
  static constexpr const char* other = Op::other_name;
};

// "_saved_" + the operand's name, made once.
template <typename Op>
const char* saved_self_attribute() {
  static const std::string name =
      std::string("_saved_") + OperandNames<Op>::self;
  return name.c_str();
}
template <typename Op>
const char* saved_other_attribute() {
  static const std::string name =
      std::string("_saved_") + OperandNames<Op>::other;
  return name.c_str();
}

template <typename Op>
ScalarType binary_compute_dtype(const Tensor& self, const Tensor& other) {
  ScalarType common = result_type(self, other);
  return Op::promotes == Promotes::ToFloat && !is_floating(common)
             ? ScalarType::Float32
             : common;
}

template <typename Op>
constexpr unsigned all_reads() {
  if constexpr (IsDifferentiable<Op>::value) {
    return Op::self_reads | Op::other_reads;
  } else {
    return 0;
  }
}
}  // namespace detail

/// The backward node of a binary table op: one C++ type per entry, so each
/// has its own Python class under torch's node name.
template <typename Op>
struct BinaryBackward final : autograd::FormulaNode {
  std::string name() const override { return Op::node; }

  /// The operands the needed gradients read (at record time: the edges'
  /// should_compute_output; the saved ones are those).
  unsigned reads_for(bool need_self, bool need_other) const {
    return (need_self ? Op::self_reads : 0u) |
           (need_other ? Op::other_reads : 0u);
  }

  void compute(const variable_list& g, variable_list& out) override {
    bool need_self = task_should_compute_output(0);
    bool need_other = task_should_compute_output(1);
    BinaryOperands saved;
    unsigned reads = reads_for(need_self, need_other);
    // Inputs unpack as torch's formulas do (without the node: an input
    // detached in place since is an error); the output is rebuilt with this
    // node as its history.
    // torch's order: other, self, result (saved hooks see it).
    if (reads & Operand::Other) {
      saved.other = other_.unpack();
    }
    if (reads & Operand::Self) {
      saved.self = self_.unpack();
    }
    if (reads & Operand::Result) {
      saved.result = result_.unpack(self_ptr());
    }
    saved.alpha = alpha;
    if (need_other) {
      // While grad_self still needs g[0], a second reference keeps
      // grad_other from writing into it.
      Tensor held = need_self ? g[0] : Tensor();
      out[1] = Op::grad_other(g[0], saved);
    }
    if (need_self) {
      out[0] = Op::grad_self(g[0], saved);
    }
  }

  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    constexpr unsigned reads = Op::self_reads | Op::other_reads;
    if constexpr (Op::alpha) {
      v.real("_saved_alpha", alpha);
    }
    if constexpr ((reads & Operand::Other) != 0) {
      v.tensor(detail::saved_other_attribute<Op>(), other_);
    }
    if constexpr ((reads & Operand::Result) != 0) {
      v.tensor("_saved_result", result_);
    }
    if constexpr ((reads & Operand::Self) != 0) {
      v.tensor(detail::saved_self_attribute<Op>(), self_);
    }
  }

  autograd::SavedVariable self_, other_, result_;
  double alpha = 1;
};

/// The node of an entry's `number_node`: the gradient passes through to self.
template <typename Op>
struct BinaryNumberBackward final : autograd::FormulaNode {
  std::string name() const override { return Op::number_node; }
  void compute(const variable_list& g, variable_list& out) override {
    out[0] = g[0];
  }
};

/// The node an in-place comparison records (`Number`: other was a Python
/// number): zero gradients, as torch's `self: zeros_like(self)`.
template <typename Op, bool Number>
struct ComparisonInplaceBackward final : autograd::ZeroGradientNode {
  std::string name() const override {
    return Number ? Op::inplace_number_node : Op::inplace_node;
  }
};

namespace detail {
// Whether the call records the entry's number_node (other is a Python
// number); then the node, with self's edge.
template <typename Op>
bool records_number_node(const Tensor& other) {
  if constexpr (HasNumberNode<Op>::value) {
    return other.impl()->is_wrapped_number;
  } else {
    return false;
  }
}
template <typename Op>
std::shared_ptr<autograd::Node> make_number_node(const Tensor& self) {
  if constexpr (HasNumberNode<Op>::value) {
    auto node = autograd::make_node<BinaryNumberBackward<Op>>();
    node->set_next_edges(autograd::collect_next_edges({&self}));
    return node;
  } else {
    return nullptr;
  }
}

template <typename Op>
Tensor run_binary_kernel(
    const Tensor& self, const Tensor& other, double alpha, ScalarType compute) {
  if constexpr (HasBinaryKernel<Op>::value) {
    autograd::AutoGradMode no_grad(false);
    return Op::kernel(self, other, compute);
  } else if constexpr (Op::alpha) {
    return kernels::binary_with_alpha(Op::ufunc, self, other, alpha, compute);
  } else {
    return kernels::binary(Op::ufunc, self, other, compute);
  }
}

// The node of a call whose inputs require grad, with its edges; the inputs
// it reads are saved by the caller (forward and in-place differ).
template <typename Op>
std::shared_ptr<BinaryBackward<Op>> make_binary_node(
    const Tensor& self, const Tensor& other, double alpha) {
  auto node = autograd::make_node<BinaryBackward<Op>>();
  node->set_next_edges(autograd::collect_next_edges({&self, &other}));
  node->alpha = alpha;
  return node;
}
}  // namespace detail

/// The forward op of a binary table entry: the kernel, then the node when an
/// input requires grad. `alpha` is used only by entries that take it.
template <typename Op>
Tensor binary(const Tensor& self, const Tensor& other, double alpha = 1) {
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(self, other);
  }
  Tensor out = detail::run_binary_kernel<Op>(
      self, other, alpha, detail::binary_compute_dtype<Op>(self, other));
  if constexpr (detail::IsDifferentiable<Op>::value) {
    if (detail::records_number_node<Op>(other)) {
      if (autograd::compute_requires_grad({&self})) {
        autograd::set_history(out, detail::make_number_node<Op>(self));
      }
      return out;
    }
    if (autograd::compute_requires_grad({&self, &other})) {
      auto node = detail::make_binary_node<Op>(self, other, alpha);
      // The output is saved once its history is set (it is then the node's
      // own output, saved without a reference cycle).
      autograd::set_history(out, node);
      unsigned reads = node->reads_for(
          node->should_compute_output(0), node->should_compute_output(1));
      // torch's order (pack hooks see it): other, self, result.
      if (reads & Operand::Other) {
        node->other_ = autograd::SavedVariable(other, false);
      }
      if (reads & Operand::Self) {
        node->self_ = autograd::SavedVariable(self, false);
      }
      if (reads & Operand::Result) {
        node->result_ = autograd::SavedVariable(out, true);
      }
    }
  }
  return out;
}

/// The entry's (Number self, Tensor other) overload: `self` is a wrapped
/// number. torch records NotImplemented (its backward raises).
template <typename Op>
Tensor binary_number_self(const Tensor& self, const Tensor& other) {
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(self, other);
  }
  Tensor out = detail::run_binary_kernel<Op>(
      self, other, 1, detail::binary_compute_dtype<Op>(self, other));
  return record_not_implemented(out, Op::number_self, {other});
}

/// The in-place form of a bool-valued entry (eq_, logical_and_): the bool
/// result written in self's dtype.
template <typename Op>
void bool_binary_(const Tensor& self, const Tensor& other) {
  constexpr bool records = detail::HasInplaceNode<Op>::value;
  bool requires_grad =
      records && autograd::compute_requires_grad({&self, &other});
  check_inplace(self, requires_grad);
  check_no_partial_overlap(self, other);
  check_broadcasts_to_self(self, other);
  Tensor values = kernels::binary(
      Op::ufunc, self, other, detail::binary_compute_dtype<Op>(self, other));
  std::shared_ptr<autograd::Node> node;
  if constexpr (records) {
    if (requires_grad && other.impl()->is_wrapped_number) {
      node = autograd::make_node<ComparisonInplaceBackward<Op, true>>();
      node->set_next_edges(autograd::collect_next_edges({&self}));
    } else if (requires_grad) {
      node = autograd::make_node<ComparisonInplaceBackward<Op, false>>();
      node->set_next_edges(autograd::collect_next_edges({&self, &other}));
    }
  }
  kernels::copy_into(self, values);
  finish_inplace(self, node, inplace_name<Op>());
}

/// The in-place form of a differentiable entry.
template <typename Op>
void differentiable_binary_(
    const Tensor& self, const Tensor& other, double alpha) {
  bool requires_grad = autograd::compute_requires_grad({&self, &other});
  check_inplace(self, requires_grad);
  check_no_partial_overlap(self, other);
  ScalarType compute = detail::binary_compute_dtype<Op>(self, other);
  check_castable(compute, self.dtype());
  check_broadcasts_to_self(self, other);
  std::shared_ptr<BinaryBackward<Op>> node;
  std::shared_ptr<autograd::Node> number_node;
  unsigned reads = 0;
  if constexpr (detail::IsDifferentiable<Op>::value) {
    if (requires_grad && detail::records_number_node<Op>(other)) {
      number_node = detail::make_number_node<Op>(self);
    } else if (requires_grad) {
      node = detail::make_binary_node<Op>(self, other, alpha);
      reads = node->reads_for(
          node->should_compute_output(0), node->should_compute_output(1));
      if (reads & Operand::Other) {
        node->other_ = autograd::SavedVariable(other, false);
      }
      if (reads & Operand::Self) {
        node->self_ = save_original(self);
      }
    }
  }
  if (Op::alpha && alpha != 1 && is_reduced_float(compute)) {
    // A reduced float with alpha rounds once, through float32 (kernels'
    // binary_with_alpha); NumPy's out= would round twice.
    kernels::copy_into(
        self, detail::run_binary_kernel<Op>(self, other, alpha, compute));
  } else {
    Tensor operand = alpha == 1
                         ? other
                         : kernels::binary(
                               kernels::Binary::Mul,
                               other,
                               wrapped_scalar(alpha, ScalarType::Float64),
                               compute);
    kernels::binary_out(Op::ufunc, self, operand, self);
  }
  if (number_node) {
    finish_inplace(self, number_node, inplace_name<Op>());
    return;
  }
  finish_inplace(self, node, inplace_name<Op>());
  if (reads & Operand::Result) {
    node->result_ = autograd::SavedVariable(self, true, self.is_view());
  }
}

/// The in-place form `name_` through Note [The mutation path].
template <typename Op>
void binary_(const Tensor& self, const Tensor& other, double alpha = 1) {
  static_assert(Op::inplace, "torch has no in-place form of this op");
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(self, other);
  }
  if constexpr (detail::IsDifferentiable<Op>::value) {
    differentiable_binary_<Op>(self, other, alpha);
  } else {
    bool_binary_<Op>(self, other);
  }
}

}  // namespace npgrad::ops
