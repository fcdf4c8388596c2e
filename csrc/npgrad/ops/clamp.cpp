// clamp, clamp_min and clamp_max (clamp.h). One implementation for the
// three ops and their two overloads: the value is maximum(self, min), then
// minimum(that, max), in the promoted dtype (NumPy's maximum and minimum
// propagate a NaN of either operand, as torch's kernels do); the node is the
// number or the tensor overload's of the op (clamp_nodes.h).
#include "npgrad/ops/clamp.h"

#include <cmath>
#include <memory>
#include <optional>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/clamp_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using autograd::ClampSide;
using autograd::SavedVariable;

namespace {

bool is_number(const Tensor& t) {
  return t.defined() && t.impl()->is_wrapped_number;
}

// The node types of each op: the number overload's and the tensor
// overload's.
template <ClampSide S>
struct ClampNodes;
template <>
struct ClampNodes<ClampSide::Both> {
  using Number = autograd::ClampBackward1;
  using Tensors = autograd::ClampBackward0;
};
template <>
struct ClampNodes<ClampSide::Min> {
  using Number = autograd::ClampMinBackward0;
  using Tensors = autograd::ClampMinBackward1;
};
template <>
struct ClampNodes<ClampSide::Max> {
  using Number = autograd::ClampMaxBackward0;
  using Tensors = autograd::ClampMaxBackward1;
};

// What one call computes: its dtype and overload, checked as torch checks.
struct ClampCall {
  const Tensor& self;
  const Tensor& min;
  const Tensor& max;
  ScalarType dtype;
  bool numbers;  // torch's Number overload: no bound is a tensor

  template <ClampSide S>
  static ClampCall make(
      const Tensor& self, const Tensor& min, const Tensor& max);

  Tensor value() const {
    Tensor r = self;
    if (min.defined()) {
      r = kernels::binary(kernels::Binary::Maximum, r, min, dtype);
    }
    if (max.defined()) {
      r = kernels::binary(kernels::Binary::Minimum, r, max, dtype);
    }
    return r;
  }

  std::optional<double> number(const Tensor& bound) const {
    return bound.defined() ? std::optional<double>(kernels::item(bound))
                           : std::nullopt;
  }

  template <typename NodeT>
  void save_numbers(NodeT& node, SavedVariable self_saved) const {
    node.self_ = std::move(self_saved);
    node.min = number(min);
    node.max = number(max);
  }

  template <typename NodeT>
  void save_tensors(NodeT& node, SavedVariable self_saved) const {
    node.self_ = std::move(self_saved);
    if (min.defined()) {
      node.min_ = SavedVariable(min, false);
    }
    if (max.defined()) {
      node.max_ = SavedVariable(max, false);
    }
  }
};

template <ClampSide S>
ClampCall ClampCall::make(
    const Tensor& self, const Tensor& min, const Tensor& max) {
  NPGRAD_CHECK(
      min.defined() || max.defined(),
      "torch.clamp: At least one of 'min' or 'max' must not be None");
  ResultTypeState state;
  bool numbers = true;
  Shape shape = self.sizes();
  for (const Tensor* t : {&self, &min, &max}) {
    if (t->defined()) {
      state.add(t->dtype(), t->dim(), t->impl()->is_wrapped_number);
    }
    if (t != &self && t->defined() && !is_number(*t)) {
      numbers = false;
      shape = infer_size(shape, t->sizes());
    }
  }
  ScalarType dtype = state.result();
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      !(numbers && dtype == ScalarType::Bool),
      "\"",
      // clamp with one bound is torch's clamp_min or clamp_max kernel.
      S == ClampSide::Both && min.defined() && max.defined()
          ? "clamp_scalar_cpu"
          : (min.defined() ? "clamp_min_scalar_cpu" : "clamp_max_scalar_cpu"),
      "\" not implemented for 'Bool'");
  if (numbers) {
    // torch's Number overload converts each bound to the result's dtype.
    for (const Tensor* bound : {&min, &max}) {
      if (bound->defined()) {
        check_number_fits(kernels::item(*bound), dtype);
      }
    }
  }
  return ClampCall{self, min, max, dtype, numbers};
}

template <ClampSide S>
Tensor clamp_op(const Tensor& self, const Tensor& min, const Tensor& max) {
  ClampCall call = ClampCall::make<S>(self, min, max);
  Tensor out = call.value();
  if (call.numbers) {
    if (auto node = record<typename ClampNodes<S>::Number>(out, {&self})) {
      call.save_numbers(*node, SavedVariable(self, false));
    }
  } else if (S == ClampSide::Both) {
    if (auto node =
            record<typename ClampNodes<S>::Tensors>(out, {&self, &min, &max})) {
      call.save_tensors(*node, SavedVariable(self, false));
    }
  } else {
    const Tensor& bound = S == ClampSide::Min ? min : max;
    if (auto node =
            record<typename ClampNodes<S>::Tensors>(out, {&self, &bound})) {
      call.save_tensors(*node, SavedVariable(self, false));
    }
  }
  return out;
}

template <ClampSide S>
void clamp_op_(const Tensor& self, const Tensor& min, const Tensor& max) {
  ClampCall call = ClampCall::make<S>(self, min, max);
  bool requires_grad = autograd::compute_requires_grad({&self, &min, &max});
  check_inplace(self, requires_grad);
  // torch's Number overload names the dtype by its C++ type ("long int").
  check_castable(call.dtype, self.dtype(), call.numbers);
  for (const Tensor* bound : {&min, &max}) {
    if (bound->defined()) {
      check_broadcasts_to_self(self, *bound);
    }
  }
  std::shared_ptr<autograd::Node> node;
  if (requires_grad && call.numbers) {
    auto n = autograd::make_node<typename ClampNodes<S>::Number>();
    n->set_next_edges(autograd::collect_next_edges({&self}));
    call.save_numbers(*n, save_original(self));
    node = n;
  } else if (requires_grad) {
    auto n = autograd::make_node<typename ClampNodes<S>::Tensors>();
    const Tensor& bound = S == ClampSide::Max ? max : min;
    n->set_next_edges(
        S == ClampSide::Both ? autograd::collect_next_edges({&self, &min, &max})
                             : autograd::collect_next_edges({&self, &bound}));
    call.save_tensors(*n, save_original(self));
    node = n;
  }
  kernels::copy_into(self, call.value());
  finish_inplace(
      self,
      node,
      S == ClampSide::Both  ? "clamp_"
      : S == ClampSide::Min ? "clamp_min_"
                            : "clamp_max_");
}

// A bound given as a C++ double: an integral value is an int, as the Python
// number it stands for would be.
Tensor number_bound(std::optional<double> v) {
  if (!v) {
    return Tensor();
  }
  bool integral = std::trunc(*v) == *v && std::abs(*v) < 9.0e18;
  return wrapped_scalar(*v, integral ? ScalarType::Int64 : ScalarType::Float64);
}

}  // namespace

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max) {
  return clamp_op<ClampSide::Both>(self, min, max);
}

void clamp_(const Tensor& self, const Tensor& min, const Tensor& max) {
  clamp_op_<ClampSide::Both>(self, min, max);
}

Tensor clamp(
    const Tensor& a, std::optional<double> min, std::optional<double> max) {
  return clamp(a, number_bound(min), number_bound(max));
}

void clamp_(
    const Tensor& self, std::optional<double> min, std::optional<double> max) {
  clamp_(self, number_bound(min), number_bound(max));
}

Tensor clamp_min(const Tensor& self, const Tensor& min) {
  return clamp_op<ClampSide::Min>(self, min, Tensor());
}

void clamp_min_(const Tensor& self, const Tensor& min) {
  clamp_op_<ClampSide::Min>(self, min, Tensor());
}

Tensor clamp_max(const Tensor& self, const Tensor& max) {
  return clamp_op<ClampSide::Max>(self, Tensor(), max);
}

void clamp_max_(const Tensor& self, const Tensor& max) {
  clamp_op_<ClampSide::Max>(self, Tensor(), max);
}

// Note [Small clamp backward in one loop]
// The tensor overloads' backward (torch's clamp_backward_min_max) is three
// masks of two or three comparisons each and a where per gradient: a dozen
// NumPy calls of a microsecond each on a small tensor. Without a graph to
// record, one loop over grad's shape computes the same masks element by
// element (the same comparisons, so a nan self passes no gradient, and
// where min > max, max gets the gradient and min none).
bool clamp_backward_loop(
    const Tensor& grad,
    const Tensor& self,
    const Tensor& min,
    const Tensor& max,
    std::array<bool, 3> want,
    std::array<Tensor, 3>& out) {
  ScalarType dtype = grad.dtype();
  if (autograd::GradMode::is_enabled() ||
      (dtype != ScalarType::Float32 && dtype != ScalarType::Float64) ||
      grad.numel() == 0 || grad.numel() > kSmallClampBackward) {
    return false;
  }
  const Shape& shape = grad.sizes();
  // Each operand's element steps along grad's dims (0 where it broadcasts;
  // an absent bound is not read).
  std::array<Shape, 4> steps;
  const Tensor* operands[4] = {&grad, &self, &min, &max};
  for (int i = 0; i < 4; ++i) {
    const Tensor& t = *operands[i];
    if (!t.defined()) {
      steps[i] = Shape(shape.size(), 0);
      continue;
    }
    if (t.dtype() != dtype || t.dim() > grad.dim()) {
      return false;
    }
    for (int64_t d = 0, lead = grad.dim() - t.dim(); d < t.dim(); ++d) {
      if (t.sizes()[d] != 1 && t.sizes()[d] != shape[lead + d]) {
        return false;
      }
    }
    steps[i] = broadcast_steps(t.sizes(), t.strides(), shape);
  }
  for (int i = 0; i < 3; ++i) {
    if (want[i]) {
      out[i] = kernels::empty(shape, dtype);
    }
  }
  kernels::dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    auto data = [](const Tensor& t) {
      return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
    };
    const T* pg = data(grad);
    const T* ps = data(self);
    const T* plo = data(min);
    const T* phi = data(max);
    T* po[3];
    for (int i = 0; i < 3; ++i) {
      po[i] = want[i] ? static_cast<T*>(out[i].data_ptr()) : nullptr;
    }
    bool has_min = plo != nullptr, has_max = phi != nullptr;
    StridedWalk<4> walk(shape, steps);
    for (int64_t e = 0, n = grad.numel(); e < n; ++e, walk.next()) {
      T g = pg[walk[0]];
      T x = ps[walk[1]];
      T lo = has_min ? plo[walk[2]] : T(0);
      T hi = has_max ? phi[walk[3]] : T(0);
      if (po[0] != nullptr) {
        bool keep = (!has_min || x >= lo) && (!has_max || x <= hi);
        po[0][e] = keep ? g : T(0);
      }
      if (po[1] != nullptr) {
        bool keep = x < lo && (!has_max || lo < hi);
        po[1][e] = keep ? g : T(0);
      }
      if (po[2] != nullptr) {
        bool keep = x > hi || (has_min && hi < lo);
        po[2][e] = keep ? g : T(0);
      }
    }
  });
  return true;
}

}  // namespace npgrad::ops
