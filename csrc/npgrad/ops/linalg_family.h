#pragma once
// The machinery behind the matrix product table (linalg_ops.h): the ops that
// multiply two factors (mm, bmm, dot, mv) and those that add the product to
// an input, `beta * input + alpha * product` (addmm, baddbmm, addmv). From
// one entry come the forward op, its in-place form, its backward node type,
// and in the bindings the function, the method, the in-place method, the
// node class, the docstrings and (through _C._op_table) the stubs.
//
// Every entry computes with the family's kernel, scaled_product below
// (NumPy's matmul through the kernels tier, which takes matrices, vectors
// and batches alike). An entry is a struct with these members:
//   name       torch's function and method name
//   node       torch's name of the backward node
//   adds_input whether the op is `beta * input + alpha * (first @ second)`
//              (beta and alpha keyword-only, saved as `_saved_beta` and
//              `_saved_alpha`; `input` broadcasts to the product's shape).
//              Such an op also has torch's in-place method name + "_",
//              which writes into input (of exactly the product's shape)
//   first, second  torch's names of the two factors: the node's
//              `_saved_<name>`, and the arguments after `input`. Without
//              adds_input the first factor is `input` itself ("self")
//   saves_layout  whether the node also keeps `_saved_<factor>_sym_sizes`
//              of both factors and `_saved_<factor>_sym_strides` of each
//              factor whose gradient is needed (mm, addmm)
//   second_saved_first  torch's order of the two saved factors (which
//              pack hooks see): true when torch packs the second factor
//              first (mm, bmm)
//   check      `static void check(const Tensor& first, const Tensor&
//              second)`, or with adds_input `check(input, first, second)`:
//              torch's dim, shape and dtype errors, in torch's order (then
//              the family's: input broadcasts to the product, or an in-place
//              input has its exact shape)
//   sizes      `static Shape sizes(const Tensor& first, const Tensor&
//              second)`: the product's shape (the factors checked)
//   grad_first   `static Tensor grad_first(const Tensor& grad, const Tensor&
//              second)`: the gradient of `first @ second` in the first
//              factor, which reads only the second
//   grad_second  `static Tensor grad_second(const Tensor& grad, const
//              Tensor& first)`: likewise in the second factor. Both are
//              written with npgrad ops so that create_graph records them;
//              the node scales them by alpha (and input's gradient by beta)
//   doc        `static constexpr OpDoc doc`; its example_other is the example
//              call's arguments after the input ("torch.tensor([[1.0]])")
// Each factor is saved only when the other one's gradient is needed, as
// torch's derivatives.yaml formulas read them. The entry is added to
// LinalgOps at the end of linalg_ops.h; the op is linalg_product<Op>(first,
// second), or linalg_add_product<Op>(input, first, second, beta, alpha) and
// its in-place form linalg_add_product<Op, true>.

#include <memory>
#include <string>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/ops/ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

namespace detail {

/// beta * self + alpha * (a @ b) through NumPy's matmul (self null: the
/// product alone); a reduced float computes in float32 and rounds once, as
/// torch's CPU kernels accumulate in float. With beta == 0 self is not read
/// (a NaN in it does not propagate), as in torch.
inline Tensor scaled_product(
    const Tensor* self,
    const Tensor& a,
    const Tensor& b,
    double beta,
    double alpha) {
  ScalarType dtype = a.dtype();
  ScalarType compute = opmath_type(dtype);
  auto in = [compute](const Tensor& x) {
    return x.dtype() == compute ? x : kernels::cast(x, compute);
  };
  Tensor out = kernels::matmul(in(a), in(b));
  auto scaled = [compute](const Tensor& x, double factor) {
    return factor == 1 ? x
                       : kernels::binary(
                             kernels::Binary::Mul,
                             x,
                             wrapped_scalar(factor, ScalarType::Float64),
                             compute);
  };
  out = scaled(out, alpha);
  if (self != nullptr && beta != 0) {
    out = kernels::binary(
        kernels::Binary::Add, scaled(in(*self), beta), out, compute);
  }
  return out.dtype() == dtype ? out : kernels::cast(out, dtype);
}

}  // namespace detail

/// The backward node of a matrix product table entry. Its inputs are
/// (input,) first, second with adds_input, else first, second.
template <typename Op>
struct LinalgBackward final : autograd::FormulaNode {
  static constexpr int kFirst = Op::adds_input ? 1 : 0;

  std::string name() const override { return Op::node; }

  void compute(const variable_list& g, variable_list& out) override {
    if constexpr (Op::adds_input) {
      if (task_should_compute_output(0)) {
        out[0] = autograd::times(g[0], beta);
      }
    }
    if (task_should_compute_output(kFirst)) {
      out[kFirst] =
          autograd::times(Op::grad_first(g[0], second_.unpack()), alpha);
    }
    if (task_should_compute_output(kFirst + 1)) {
      out[kFirst + 1] =
          autograd::times(Op::grad_second(g[0], first_.unpack()), alpha);
    }
  }

  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    static const Attributes first(Op::first), second(Op::second);
    if constexpr (Op::adds_input) {
      v.real("_saved_alpha", alpha);
      v.real("_saved_beta", beta);
    }
    v.tensor(first.saved.c_str(), first_);
    v.tensor(second.saved.c_str(), second_);
    if constexpr (Op::saves_layout) {
      v.int_list(first.sizes.c_str(), first_sizes);
      v.int_list(first.strides.c_str(), first_strides);
      v.int_list(second.sizes.c_str(), second_sizes);
      v.int_list(second.strides.c_str(), second_strides);
    }
  }

  autograd::SavedVariable first_, second_;
  double alpha = 1, beta = 1;
  Shape first_sizes, first_strides, second_sizes, second_strides;

 private:
  // A factor's attribute names.
  struct Attributes {
    explicit Attributes(const std::string& factor)
        : saved("_saved_" + factor),
          sizes(saved + "_sym_sizes"),
          strides(saved + "_sym_strides") {}
    std::string saved, sizes, strides;
  };
};

namespace detail {

/// The node of an entry (input null without adds_input), with its saved
/// state: each factor only when the other one's gradient is needed.
template <typename Op>
std::shared_ptr<LinalgBackward<Op>> linalg_node(
    const Tensor* input,
    const Tensor& first,
    const Tensor& second,
    double beta,
    double alpha) {
  using Node = LinalgBackward<Op>;
  auto node = autograd::make_node<Node>();
  node->set_next_edges(
      input != nullptr ? autograd::collect_next_edges({input, &first, &second})
                       : autograd::collect_next_edges({&first, &second}));
  node->alpha = alpha;
  node->beta = beta;
  bool first_grad = node->should_compute_output(Node::kFirst);
  bool second_grad = node->should_compute_output(Node::kFirst + 1);
  auto save_first = [&] {
    if (second_grad) {
      node->first_ = autograd::SavedVariable(first, false);
    }
  };
  auto save_second = [&] {
    if (first_grad) {
      node->second_ = autograd::SavedVariable(second, false);
    }
  };
  if constexpr (Op::second_saved_first) {
    save_second();
    save_first();
  } else {
    save_first();
    save_second();
  }
  if constexpr (Op::saves_layout) {
    // A factor's strides go with its own gradient; the sizes always.
    if (first_grad) {
      node->first_strides = first.strides();
    }
    if (second_grad) {
      node->second_strides = second.strides();
    }
    node->first_sizes = first.sizes();
    node->second_sizes = second.sizes();
  }
  return node;
}

}  // namespace detail

/// The forward op of an entry without adds_input: first @ second, then the
/// node when a factor requires grad.
template <typename Op>
Tensor linalg_product(const Tensor& first, const Tensor& second) {
  Op::check(first, second);
  Tensor out = detail::scaled_product(nullptr, first, second, 0, 1);
  if (autograd::compute_requires_grad({&first, &second})) {
    autograd::set_history(
        out, detail::linalg_node<Op>(nullptr, first, second, 0, 1));
  }
  return out;
}

/// The forward op of an adds_input entry: beta * input + alpha * (first @
/// second), input broadcast to the product's shape (torch's expand error).
/// InPlace: the in-place form through Note [The mutation path], which
/// writes into input (of exactly the product's shape) and returns it.
template <typename Op, bool InPlace = false>
Tensor linalg_add_product(
    const Tensor& input,
    const Tensor& first,
    const Tensor& second,
    double beta,
    double alpha) {
  Op::check(input, first, second);
  Shape sizes = Op::sizes(first, second);
  if constexpr (InPlace) {
    NPGRAD_CHECK(
        input.sizes() == sizes,
        "Bad in-place call: input tensor size ",
        shape_str(input.sizes()),
        " and output tensor size ",
        shape_str(sizes),
        " should match");
  } else {
    autograd::AutoGradMode no_grad(false);
    expand(input, sizes);
  }
  bool requires_grad =
      autograd::compute_requires_grad({&input, &first, &second});
  if constexpr (InPlace) {
    check_inplace(input, requires_grad);
  }
  std::shared_ptr<LinalgBackward<Op>> node;
  if (requires_grad) {
    node = detail::linalg_node<Op>(&input, first, second, beta, alpha);
  }
  Tensor out = detail::scaled_product(&input, first, second, beta, alpha);
  if constexpr (InPlace) {
    kernels::copy_into(input, out);
    finish_inplace(input, node, inplace_name<Op>());
    return input;
  } else {
    if (node) {
      autograd::set_history(out, node);
    }
    return out;
  }
}

}  // namespace npgrad::ops
