#pragma once
// The machinery behind the pointwise unary op table (unary_ops.h). From one
// entry of the table come the forward op, its backward node type, the
// in-place form, and in the bindings the function, the method, the node
// class, the docstrings and (through _C._op_table) the stubs.
//
// An entry is a struct with these members:
//   name       torch's function and method name; the in-place method is
//              name + "_" when `inplace` is true
//   node       torch's name of the backward node (grad_fn.name())
//   saves      what the node keeps for its formula: Saves::Self (the input,
//              `_saved_self`), Saves::Result (the output, `_saved_result`) or
//              Saves::Nothing
//   promotes   Promotes::ToFloat: integer and bool inputs compute in the
//              default float dtype (float32), as torch's exp or sin do;
//              Promotes::No: the input's own dtype (abs, neg)
//   inplace    whether torch has the in-place form
//   kernel     `static constexpr const char* ufunc`: the NumPy ufunc
//              (numpy.<ufunc>) that computes it; or a function
//              `static Tensor kernel(const Tensor& input, ScalarType compute)`
//   backward   `static Tensor backward(const Tensor& grad, const Tensor&
//              saved)`: the gradient w.r.t. the input, written with npgrad
//              ops so that create_graph records it
//   doc        `static constexpr OpDoc doc`: a summary and an example
//   check      optional `static void check(const Tensor& input)`: torch's
//              errors for inputs it refuses
// An entry without `node` (and then without saves, promotes and backward) is
// not differentiable: its ufunc or kernel computes a bool tensor from the
// input's own dtype (logical_not, isnan), it records nothing, and its
// in-place form writes the result converted to self's dtype, as torch's
// logical_not_ does (no leaf check, no history: only the version moves).
// The entry is added to UnaryOps at the end of unary_ops.h.

#include <memory>
#include <string>
#include <type_traits>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"

namespace npgrad::ops {

enum class Saves { Nothing, Self, Result };

namespace detail {
template <typename Op, typename = void>
struct HasUfunc : std::false_type {};
template <typename Op>
struct HasUfunc<Op, std::void_t<decltype(Op::ufunc)>> : std::true_type {};

// The NumPy ufunc of Op, found once.
template <typename Op>
const kernels::UnaryUfunc& ufunc_of() {
  static const kernels::UnaryUfunc& ufunc = kernels::unary_ufunc(Op::ufunc);
  return ufunc;
}

template <typename Op>
ScalarType compute_dtype(ScalarType input) {
  if constexpr (IsDifferentiable<Op>::value) {
    return Op::promotes == Promotes::ToFloat && !is_floating(input)
               ? ScalarType::Float32
               : input;
  } else {
    return input;
  }
}

template <typename Op>
Tensor run_kernel(const Tensor& input, ScalarType compute) {
  if constexpr (HasUfunc<Op>::value) {
    return kernels::unary(ufunc_of<Op>(), input, compute);
  } else {
    return Op::kernel(input, compute);
  }
}

template <typename Op>
const char* saved_attribute() {
  return Op::saves == Saves::Result ? "_saved_result" : "_saved_self";
}
}  // namespace detail

/// The backward node of a table op: one C++ type per entry, so each has its
/// own Python class under torch's node name.
template <typename Op>
struct UnaryBackward final : autograd::FormulaNode {
  std::string name() const override { return Op::node; }
  void compute(const variable_list& g, variable_list& out) override {
    // A saved output is rebuilt with this node as its history; a saved input
    // is unpacked as torch's formulas do (without the node: an input
    // detached in place since is an error).
    Tensor saved;
    if constexpr (Op::saves == Saves::Result) {
      saved = saved_.unpack(self_ptr());
    } else if constexpr (Op::saves == Saves::Self) {
      saved = saved_.unpack();
    }
    out[0] = Op::backward(g[0], saved);
  }
  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    if constexpr (Op::saves != Saves::Nothing) {
      v.tensor(detail::saved_attribute<Op>(), saved_);
    }
  }
  autograd::SavedVariable saved_;
};

/// The forward op of a table entry: the kernel, then the node when the input
/// requires grad.
template <typename Op>
Tensor unary(const Tensor& input) {
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(input);
  }
  Tensor out =
      detail::run_kernel<Op>(input, detail::compute_dtype<Op>(input.dtype()));
  if constexpr (detail::IsDifferentiable<Op>::value) {
    if (autograd::compute_requires_grad({&input})) {
      auto node = autograd::make_node<UnaryBackward<Op>>();
      node->set_next_edges(autograd::collect_next_edges({&input}));
      // The output is saved once its history is set (it is then the node's
      // own output, saved without a reference cycle).
      autograd::set_history(out, node);
      if constexpr (Op::saves == Saves::Result) {
        node->saved_ = autograd::SavedVariable(out, true);
      } else if constexpr (Op::saves == Saves::Self) {
        node->saved_ = autograd::SavedVariable(input, false);
      }
    }
  }
  return out;
}

/// The in-place form `name_` through Note [The mutation path].
template <typename Op>
void unary_(const Tensor& self) {
  static_assert(Op::inplace, "torch has no in-place form of this op");
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(self);
  }
  constexpr bool differentiable = detail::IsDifferentiable<Op>::value;
  bool requires_grad =
      differentiable && autograd::compute_requires_grad({&self});
  check_inplace(self, requires_grad);
  check_castable(detail::compute_dtype<Op>(self.dtype()), self.dtype());
  std::shared_ptr<autograd::Node> node;
  if constexpr (differentiable) {
    if (requires_grad) {
      auto n = autograd::make_node<UnaryBackward<Op>>();
      n->set_next_edges(autograd::collect_next_edges({&self}));
      if constexpr (Op::saves == Saves::Self) {
        n->saved_ = save_original(self);
      }
      node = n;
    }
  }
  if constexpr (detail::HasUfunc<Op>::value) {
    kernels::unary_out(detail::ufunc_of<Op>(), self, self);
  } else {
    kernels::copy_into(self, Op::kernel(self, self.dtype()));
  }
  finish_inplace(self, node, inplace_name<Op>());
  if constexpr (differentiable) {
    if constexpr (Op::saves == Saves::Result) {
      if (node) {
        static_cast<UnaryBackward<Op>&>(*node).saved_ =
            autograd::SavedVariable(self, true, self.is_view());
      }
    }
  }
}

}  // namespace npgrad::ops
