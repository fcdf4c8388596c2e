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
//              self, const ParamValues& p)`, written with npgrad ops;
//              backward_from_result likewise, from the result
//              (Inplace::SavesResult only). Without `backward_node`,
//              create_graph records its ops
//   backward_node  optional: torch's name of the node of the entry's
//              backward op (gelu_backward: "GeluBackwardBackward0"). The
//              backward then runs in no-grad mode as that op's kernel (a
//              reduced float through float32, rounded once) and create_graph
//              records the one node, which saves `_saved_self` (or, with
//              `backward_is_result_arg`, `_saved_self_or_result` and
//              `_saved_is_result`), the buffer and the saved parameters.
//              Its gradient in grad_output is the backward op itself (the
//              backward is linear in grad); in self, `double_backward`
//   double_backward  optional `static Tensor double_backward(const Tensor&
//              grad, const Tensor& grad_output, const Tensor& self, const
//              ParamValues& p, bool is_result)`: torch's derivative of the
//              backward op in self, written with npgrad ops (the node then
//              saves `_saved_grad_output`); without it that derivative is
//              zero (a piecewise-linear activation)
//   backward_is_result_arg  optional, true when torch's backward op takes
//              `is_result, self_or_result` (elu_backward)
//   cpu_kernel optional: the name in torch's error for an integer or bool
//              input ("elu_cpu"); without it integers are accepted
//   check      optional `static void check(const Tensor&, const ParamValues&)`
//   buffer     optional `static Tensor buffer(const Tensor& self)`: a value
//              the forward computes and the node saves as `_saved_buffer`
//   value      optional `template <typename T> static T value(T x, const
//              ParamValues& p)`: the forward of one element, with the
//              arithmetic of `forward` (Note [Small activations in one loop])
//   derivative optional `template <typename T> static T derivative(T grad,
//              T self, const ParamValues& p)`: the backward op's, from self,
//              of one element
//   doc        `static constexpr OpDoc doc`
// The entry is added to ActivationOps at the end of activation_ops.h.
//
// Note [Small activations in one loop]
// An activation's forward and backward are each a few NumPy passes (elu's:
// a multiply, expm1, a multiply, a compare and a where), and on a small
// tensor each pass costs about a microsecond whatever its size. An entry's
// `value` runs the forward of a float32/float64 input of at most
// kSmallActivation elements as one loop instead, and its `derivative` the
// backward op's kernel (from self, not from the result; with or without
// create_graph, which records the op's one node either way). The
// element formulas are the passes' own, in the input's dtype (the
// parameters rounded to it, as the passes' wrapped numbers are); only the
// libm functions differ from NumPy's SIMD ones, by an ulp at most.

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
#include "npgrad/autograd/nodes/reduced_float_formulas.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/ops/ops.h"
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

template <typename Op, typename = void>
struct HasElementValue : std::false_type {};
template <typename Op>
struct HasElementValue<Op, std::void_t<decltype(&Op::template value<float>)>>
    : std::true_type {};
template <typename Op, typename = void>
struct HasElementDerivative : std::false_type {};
template <typename Op>
struct HasElementDerivative<
    Op,
    std::void_t<decltype(&Op::template derivative<float>)>> : std::true_type {};

/// Up to this many elements an entry with an element loop runs it (Note
/// [Small activations in one loop]).
constexpr int64_t kSmallActivation = 128;

// Whether t takes the element loop: float32/float64, small, not empty.
inline bool small_float(const Tensor& t) {
  ScalarType dtype = t.dtype();
  return (dtype == ScalarType::Float32 || dtype == ScalarType::Float64) &&
         t.numel() > 0 && t.numel() <= kSmallActivation;
}

// t as a contiguous buffer (t itself when it is one).
inline Tensor contiguous_buffer(const Tensor& t) {
  return t.is_contiguous() ? t : kernels::cast(t, t.dtype());
}

// out[i] = fn(a[i], b[i]...) over contiguous buffers of T, into a new
// tensor of a's sizes.
template <typename Fn, typename... Ts>
Tensor element_loop(Fn&& fn, const Tensor& a, const Ts&... rest) {
  Tensor out = kernels::empty(a.sizes(), a.dtype());
  kernels::dispatch_floating(a.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* o = static_cast<T*>(out.data_ptr());
    const T* x = static_cast<const T*>(a.data_ptr());
    std::array<const T*, sizeof...(Ts)> others = {
        static_cast<const T*>(rest.data_ptr())...};
    for (int64_t i = 0, n = a.numel(); i < n; ++i) {
      if constexpr (sizeof...(Ts) == 0) {
        o[i] = fn(x[i]);
      } else {
        o[i] = fn(x[i], others[0][i]);
      }
    }
  });
  return out;
}

// The forward's value: a reduced float computes in float32 and rounds once,
// as torch's kernels do; the result keeps the input's dtype.
template <typename Op>
Tensor run_activation(const Tensor& input, const ParamValues& p) {
  autograd::AutoGradMode no_grad(false);
  if constexpr (HasElementValue<Op>::value) {
    if (small_float(input)) {
      return element_loop(
          [&](auto x) { return Op::value(x, p); }, contiguous_buffer(input));
    }
  }
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

template <typename Op, typename = void>
struct HasBackwardNode : std::false_type {};
template <typename Op>
struct HasBackwardNode<Op, std::void_t<decltype(Op::backward_node)>>
    : std::true_type {};
template <typename Op, typename = void>
struct HasDoubleBackward : std::false_type {};
template <typename Op>
struct HasDoubleBackward<Op, std::void_t<decltype(&Op::double_backward)>>
    : std::true_type {};
template <typename Op, typename = void>
struct BackwardIsResultArg : std::false_type {};
template <typename Op>
struct BackwardIsResultArg<
    Op,
    std::void_t<decltype(Op::backward_is_result_arg)>>
    : std::bool_constant<Op::backward_is_result_arg> {};

// The saved parameters, as the forward node and the backward op's node both
// show them.
template <typename Op>
void visit_saved_params(
    autograd::SavedAttributeVisitor& v, const ParamValues& p) {
  const auto& names = saved_param_names<Op>();
  for (std::size_t i = 0; i < Op::params.size(); ++i) {
    const Param& param = Op::params[i];
    if (!param.saved) {
      continue;
    }
    if (param.kind == ParamKind::Choice) {
      v.text(names[i].c_str(), choice_name<Op>(p[i]));
    } else {
      v.real(names[i].c_str(), p[i]);
    }
  }
}
}  // namespace detail

template <typename Op>
Tensor activation_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const ParamValues& p,
    bool is_result,
    const Tensor& buffer);

/// The node of an entry's backward op (GeluBackwardBackward0): inputs
/// grad_output and self (or the result).
template <typename Op>
struct ActivationBackwardBackward final : autograd::FormulaNode {
  std::string name() const override { return Op::backward_node; }
  void compute(const variable_list& g, variable_list& out) override {
    Tensor self = self_.unpack();
    if (task_should_compute_output(0)) {
      Tensor buffer;
      if constexpr (detail::HasBuffer<Op>::value) {
        buffer = buffer_.unpack();
      }
      out[0] = activation_backward<Op>(g[0], self, p, is_result, buffer);
    }
    if (task_should_compute_output(1)) {
      if constexpr (detail::HasDoubleBackward<Op>::value) {
        out[1] = Op::double_backward(
            g[0], grad_output_.unpack(), self, p, is_result);
      } else {
        out[1] = zeros_like(g[0]);
      }
    }
  }
  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    if constexpr (detail::HasDoubleBackward<Op>::value) {
      v.tensor("_saved_grad_output", grad_output_);
    }
    if constexpr (detail::BackwardIsResultArg<Op>::value) {
      v.boolean("_saved_is_result", is_result);
      v.tensor("_saved_self_or_result", self_);
    } else {
      v.tensor("_saved_self", self_);
    }
    if constexpr (detail::HasBuffer<Op>::value) {
      v.tensor("_saved_buffer", buffer_);
    }
    detail::visit_saved_params<Op>(v, p);
  }
  autograd::SavedVariable grad_output_, self_, buffer_;
  ParamValues p{};
  bool is_result = false;
};

/// An entry's backward op (torch's gelu_backward, elu_backward, ...): the
/// entry's backward formula run as a kernel, then its node when grad_output
/// or self requires grad. is_result: self is the result (the in-place
/// form's node), differentiated with backward_from_result.
template <typename Op>
Tensor activation_backward(
    const Tensor& grad_output,
    const Tensor& self,
    const ParamValues& p,
    bool is_result,
    const Tensor& buffer) {
  Tensor out;
  if constexpr (detail::HasElementDerivative<Op>::value) {
    if (!is_result && detail::small_float(self) &&
        grad_output.dtype() == self.dtype() &&
        grad_output.sizes() == self.sizes()) {
      // Note [Small activations in one loop].
      out = detail::element_loop(
          [&](auto g, auto x) { return Op::derivative(g, x, p); },
          detail::contiguous_buffer(grad_output),
          detail::contiguous_buffer(self));
    }
  }
  if (!out.defined()) {
    autograd::AutoGradMode no_grad(false);
    out = autograd::round_reduced_float_once(
        grad_output, self, [&](const Tensor& g, const Tensor& s) {
          if constexpr (Op::inplace == Inplace::SavesResult) {
            if (is_result) {
              return Op::backward_from_result(g, s, p);
            }
          }
          return Op::backward(g, s, p);
        });
  }
  if (autograd::compute_requires_grad({&grad_output, &self})) {
    auto node = autograd::make_node<ActivationBackwardBackward<Op>>();
    node->set_next_edges(autograd::collect_next_edges({&grad_output, &self}));
    autograd::set_history(out, node);
    node->p = p;
    node->is_result = is_result;
    if constexpr (detail::HasDoubleBackward<Op>::value) {
      node->grad_output_ = autograd::SavedVariable(grad_output, false);
    }
    node->self_ = autograd::SavedVariable(self, false);
    if constexpr (detail::HasBuffer<Op>::value) {
      node->buffer_ = autograd::SavedVariable(buffer, false);
    }
  }
  return out;
}

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
    Tensor saved = FromResult ? saved_.unpack(self_ptr()) : saved_.unpack();
    if constexpr (detail::HasBackwardNode<Op>::value) {
      Tensor buffer;
      if constexpr (detail::HasBuffer<Op>::value) {
        buffer = buffer_.unpack();
      }
      out[0] = activation_backward<Op>(g[0], saved, p, FromResult, buffer);
    } else if constexpr (FromResult) {
      out[0] = Op::backward_from_result(g[0], saved, p);
    } else {
      out[0] = Op::backward(g[0], saved, p);
    }
  }
  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    v.tensor(FromResult ? "_saved_result" : "_saved_self", saved_);
    if constexpr (detail::HasBuffer<Op>::value) {
      v.tensor("_saved_buffer", buffer_);
    }
    detail::visit_saved_params<Op>(v, p);
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
