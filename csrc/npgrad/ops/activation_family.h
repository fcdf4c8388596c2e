#pragma once
// The machinery behind the activation op table (activation_ops.h): pointwise
// ops of one tensor with scalar parameters (leaky_relu's negative_slope,
// elu's alpha, gelu's approximate). From one entry come the forward op, its
// backward node type (and the in-place form's), the in-place form, and in
// the bindings the functions where torch has them (torch._C._nn, torch,
// Tensor), the node classes and _C._activation_table (docstrings, stubs).
//
// An entry is a struct with these members:
//   name       torch's function name; the in-place form is name + "_"
//   binding    Where::Nn (torch._C._nn.<name>, what torch.nn.functional
//              calls), Where::Torch (torch.<name>) or Where::TorchAndMethod
//              (torch.<name> and Tensor.<name>)
//   node       torch's name of the backward node; it saves the input
//              (`_saved_self`) and each parameter marked `saved`
//   params     `static constexpr std::array<Param, N> params`: the scalar
//              parameters in torch's order, with torch's defaults
//              (kRequired: none); a Param of kind Choice is a string from
//              `choices` (saved and shown as that string), refused with
//              `choice_error`
//   inplace    Inplace::None, Inplace::SavesSelf (the in-place form's node
//              is `inplace_node`, default `node`, saving the original input)
//              or Inplace::SavesResult (`inplace_node` saves `_saved_result`
//              and differentiates with backward_from_result)
//   forward    `static Tensor forward(const Tensor& self, const
//              ParamValues& p)`: npgrad ops run in no-grad mode, in the
//              input's dtype (a reduced float computes in float32, rounded
//              once);
//              the result has the input's dtype
//   backward   `static Tensor backward(const Tensor& grad, const Tensor&
//              self, const ParamValues& p)`, written with npgrad ops so that
//              create_graph records it; backward_from_result likewise, from
//              the result (Inplace::SavesResult only)
//   cpu_kernel optional: the name in torch's error for an integer or bool
//              input ("elu_cpu"); without it integers are accepted
//   check      optional `static void check(const Tensor&, const ParamValues&)`
//   buffer     optional `static Tensor buffer(const Tensor& self)`: a value
//              the forward computes and the node saves as `_saved_buffer`
//   doc        `static constexpr OpDoc doc`
// The entry is added to ActivationOps at the end of activation_ops.h.

#include <array>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

enum class Where { Nn, Torch, TorchAndMethod };
enum class Inplace { None, SavesSelf, SavesResult };
enum class ParamKind { Real, Choice };

/// A parameter's default when torch's signature has none.
constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

struct Param {
  const char* name;
  double default_value;  // for a Choice: the index into `choices`
  bool saved = true;
  ParamKind kind = ParamKind::Real;
  constexpr bool required() const { return default_value != default_value; }
};

/// The values of an entry's parameters, in its order (a Choice as its index).
using ParamValues = std::array<double, 3>;

namespace detail {
template <typename Op, typename = void>
struct HasCpuKernel : std::false_type {};
template <typename Op>
struct HasCpuKernel<Op, std::void_t<decltype(Op::cpu_kernel)>>
    : std::true_type {};
template <typename Op, typename = void>
struct HasBuffer : std::false_type {};
template <typename Op>
struct HasBuffer<Op, std::void_t<decltype(&Op::buffer)>> : std::true_type {};
template <typename Op, typename = void>
struct HasChoices : std::false_type {};
template <typename Op>
struct HasChoices<Op, std::void_t<decltype(Op::choices)>> : std::true_type {};

/// The string of a Choice parameter's value (its index).
template <typename Op>
const char* choice_name(double index) {
  if constexpr (HasChoices<Op>::value) {
    return Op::choices[static_cast<std::size_t>(index)];
  } else {
    return "";
  }
}

template <typename Op>
void check_activation(const Tensor& input, const ParamValues& p) {
  if constexpr (HasCpuKernel<Op>::value) {
    NPGRAD_CHECK_TYPED(
        NotImplementedError,
        is_floating(input.dtype()),
        '"',
        Op::cpu_kernel,
        "\" not implemented for '",
        scalar_type_name(input.dtype()),
        "'");
  }
  if constexpr (HasCheck<Op>::value) {
    Op::check(input, p);
  }
}

// The forward's value: a reduced float computes in float32 and rounds once,
// as torch's kernels do; the result keeps the input's dtype.
template <typename Op>
Tensor run_activation(const Tensor& input, const ParamValues& p) {
  autograd::AutoGradMode no_grad(false);
  ScalarType dtype = input.dtype();
  Tensor out = is_reduced_float(dtype)
                   ? Op::forward(kernels::cast(input, ScalarType::Float32), p)
                   : Op::forward(input, p);
  return out.dtype() == dtype ? out : kernels::cast(out, dtype);
}

// "_saved_" + a parameter's name, made once per entry.
template <typename Op>
const std::array<std::string, 3>& saved_param_names() {
  static const std::array<std::string, 3> names = [] {
    std::array<std::string, 3> n;
    for (std::size_t i = 0; i < Op::params.size(); ++i) {
      n[i] = std::string("_saved_") + Op::params[i].name;
    }
    return n;
  }();
  return names;
}
}  // namespace detail

/// The backward node of an activation entry; InplaceNode: the in-place
/// form's node of an entry with an `inplace_node` of its own (which saves
/// the result when the entry is Inplace::SavesResult).
template <typename Op, bool InplaceNode = false>
struct ActivationBackward final : autograd::FormulaNode {
  static constexpr bool FromResult =
      InplaceNode && Op::inplace == Inplace::SavesResult;
  std::string name() const override {
    if constexpr (InplaceNode) {
      return Op::inplace_node;
    } else {
      return Op::node;
    }
  }
  void compute(const variable_list& g, variable_list& out) override {
    if constexpr (FromResult) {
      out[0] = Op::backward_from_result(g[0], saved_.unpack(self_ptr()), p);
    } else {
      out[0] = Op::backward(g[0], saved_.unpack(), p);
    }
  }
  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    v.tensor(FromResult ? "_saved_result" : "_saved_self", saved_);
    if constexpr (detail::HasBuffer<Op>::value) {
      v.tensor("_saved_buffer", buffer_);
    }
    const auto& names = detail::saved_param_names<Op>();
    for (std::size_t i = 0; i < Op::params.size(); ++i) {
      const Param& param = Op::params[i];
      if (!param.saved) {
        continue;
      }
      if (param.kind == ParamKind::Choice) {
        v.text(names[i].c_str(), detail::choice_name<Op>(p[i]));
      } else {
        v.real(names[i].c_str(), p[i]);
      }
    }
  }
  autograd::SavedVariable saved_, buffer_;
  ParamValues p{};
};

/// The forward op of an activation entry: the kernel, then the node when the
/// input requires grad.
template <typename Op>
Tensor activation(const Tensor& input, const ParamValues& p) {
  detail::check_activation<Op>(input, p);
  Tensor out = detail::run_activation<Op>(input, p);
  if (autograd::compute_requires_grad({&input})) {
    auto node = autograd::make_node<ActivationBackward<Op>>();
    node->set_next_edges(autograd::collect_next_edges({&input}));
    node->p = p;
    autograd::set_history(out, node);
    node->saved_ = autograd::SavedVariable(input, false);
    if constexpr (detail::HasBuffer<Op>::value) {
      autograd::AutoGradMode no_grad(false);
      node->buffer_ = autograd::SavedVariable(Op::buffer(input), false);
    }
  }
  return out;
}

/// The in-place form `name_` through Note [The mutation path].
template <typename Op>
void activation_(const Tensor& self, const ParamValues& p) {
  static_assert(Op::inplace != Inplace::None, "torch has no in-place form");
  detail::check_activation<Op>(self, p);
  bool requires_grad = autograd::compute_requires_grad({&self});
  check_inplace(self, requires_grad);
  using NodeType = ActivationBackward<Op, detail::HasInplaceNode<Op>::value>;
  constexpr bool from_result = NodeType::FromResult;
  std::shared_ptr<NodeType> node;
  if (requires_grad) {
    node = autograd::make_node<NodeType>();
    node->set_next_edges(autograd::collect_next_edges({&self}));
    node->p = p;
    if constexpr (!from_result) {
      node->saved_ = save_original(self);
    }
  }
  kernels::copy_into(self, detail::run_activation<Op>(self, p));
  finish_inplace(self, node, inplace_name<Op>());
  if constexpr (from_result) {
    if (node) {
      node->saved_ = autograd::SavedVariable(self, true, self.is_view());
    }
  }
}

}  // namespace npgrad::ops
