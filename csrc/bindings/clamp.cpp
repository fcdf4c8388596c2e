// clamp (and its alias clip), clamp_min and clamp_max: functions, methods
// and in-place methods. torch has a Tensor and a Number overload of each;
// its parser picks the Number one when a bound is a Python number, and then
// takes a 0-dim tensor that does not require grad as a number too.
#include <string>

#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/clamp.h"
#include "npgrad/ops/ops.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

enum class BoundKind { Absent, Number, Tensor, Invalid };

BoundKind bound_kind(py::handle bound) {
  if (bound.is_none()) {
    return BoundKind::Absent;
  }
  if (is_tensor(bound)) {
    return BoundKind::Tensor;
  }
  return as_operand(bound).defined() ? BoundKind::Number : BoundKind::Invalid;
}

// A 0-dim tensor read as torch's Scalar: its value, as a bool, an int or a
// float by its dtype's category.
Tensor tensor_as_number(const Tensor& t) {
  ScalarType kind = t.dtype() == ScalarType::Bool ? ScalarType::Bool
                    : is_floating(t.dtype())      ? ScalarType::Float64
                                                  : ScalarType::Int64;
  return ops::wrapped_scalar(kernels::item(t), kind);
}

// torch's overload list: "(Tensor input, Tensor min = None, ...)" for the
// function, "(Tensor min = None, ...)" for the method.
std::string signatures(bool method, bool both, const char* bound) {
  std::string out;
  for (const char* type : {"Tensor", "Number"}) {
    std::string params = method ? "" : "Tensor input, ";
    params += both ? std::string(type) + " min = None, " + type + " max = None"
                   : std::string(type) + " " + bound;
    out += " * (" + params + (method ? ")\n" : ", *, Tensor out = None)\n");
  }
  return out;
}

// The bounds as ops take them (clamp.h), or torch's "invalid combination"
// error. `args` are the call's arguments as torch lists them (trailing
// absent bounds left out).
std::pair<Tensor, Tensor> resolve_bounds(
    const char* fn,
    bool method,
    py::handle self,
    py::handle min,
    py::handle max,
    bool both,
    const char* bound_name) {
  BoundKind kinds[2] = {bound_kind(min), bound_kind(max)};
  bool any_number =
      kinds[0] == BoundKind::Number || kinds[1] == BoundKind::Number;
  bool ok = kinds[0] != BoundKind::Invalid && kinds[1] != BoundKind::Invalid &&
            (both || kinds[0] != BoundKind::Absent);
  Tensor bounds[2];
  py::handle given[2] = {min, max};
  for (int i = 0; ok && i < 2; ++i) {
    if (kinds[i] == BoundKind::Absent) {
      continue;
    }
    bounds[i] = as_operand(given[i]);
    if (any_number && kinds[i] == BoundKind::Tensor) {
      ok = bounds[i].dim() == 0 && !autograd::requires_grad(bounds[i]);
      bounds[i] = ok ? tensor_as_number(bounds[i]) : Tensor();
    }
  }
  if (!ok) {
    std::vector<py::handle> args;
    if (!method) {
      args.push_back(self);
    }
    int last = kinds[1] != BoundKind::Absent ? 2 : 1;
    for (int i = 0; i < (both ? last : 1); ++i) {
      args.push_back(given[i]);
    }
    std::string expected = signatures(method, both, bound_name);
    throw_invalid_combination(fn, args, expected.c_str());
  }
  return {bounds[0], bounds[1]};
}

void bind_clamp_both(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  // clip is torch's alias of clamp (the same nodes).
  for (const char* name : {"clamp", "clip"}) {
    m.def(
        name,
        [name](const Tensor& input, py::handle min, py::handle max) {
          auto [lo, hi] = resolve_bounds(
              name, false, py::cast(input), min, max, true, nullptr);
          return ops::clamp(input, lo, hi);
        },
        "input"_a,
        "min"_a = py::none(),
        "max"_a = py::none());
    mark_torch_overloaded(m.attr(name), 1);
    cls.def(
        name,
        [name](py::object self, py::handle min, py::handle max) {
          auto [lo, hi] =
              resolve_bounds(name, true, self, min, max, true, nullptr);
          return ops::clamp(self.cast<Tensor>(), lo, hi);
        },
        "min"_a = py::none(),
        "max"_a = py::none());
    std::string inplace = std::string(name) + "_";
    cls.def(
        inplace.c_str(),
        [inplace](py::object self, py::handle min, py::handle max) {
          auto [lo, hi] = resolve_bounds(
              inplace.c_str(), true, self, min, max, true, nullptr);
          ops::clamp_(self.cast<Tensor>(), lo, hi);
          return self;
        },
        "min"_a = py::none(),
        "max"_a = py::none());
  }
}

void bind_clamp_side(
    py::module_& m,
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    bool is_min) {
  const char* bound = is_min ? "min" : "max";
  std::string name = is_min ? "clamp_min" : "clamp_max";
  std::string inplace = name + "_";
  auto op = is_min ? &ops::clamp_min : &ops::clamp_max;
  auto op_ = is_min ? &ops::clamp_min_ : &ops::clamp_max_;
  m.def(
      name.c_str(),
      [name, bound, op](const Tensor& input, py::handle b) {
        Tensor t = resolve_bounds(
                       name.c_str(),
                       false,
                       py::cast(input),
                       b,
                       py::none(),
                       false,
                       bound)
                       .first;
        return op(input, t);
      },
      "input"_a,
      py::arg(bound));
  mark_torch_overloaded(m.attr(name.c_str()), 1);
  cls.def(
      name.c_str(),
      [name, bound, op](py::object self, py::handle b) {
        Tensor t = resolve_bounds(
                       name.c_str(), true, self, b, py::none(), false, bound)
                       .first;
        return op(self.cast<Tensor>(), t);
      },
      py::arg(bound));
  // A method called without its bound gets torch's "invalid combination".
  mark_torch_overloaded(cls.attr(name.c_str()), 0);
  cls.def(
      inplace.c_str(),
      [inplace, bound, op_](py::object self, py::handle b) {
        Tensor t = resolve_bounds(
                       inplace.c_str(), true, self, b, py::none(), false, bound)
                       .first;
        op_(self.cast<Tensor>(), t);
        return self;
      },
      py::arg(bound));
  mark_torch_overloaded(cls.attr(inplace.c_str()), 0);
}

}  // namespace

void bind_clamp(py::module_& m) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  bind_clamp_both(m, cls);
  bind_clamp_side(m, cls, true);
  bind_clamp_side(m, cls, false);
}

}  // namespace npgrad::bindings
