// Binds every op of the op tables from its entry: the function (npgrad.<name>
// through `from ._C import *`), the Tensor method,
// the in-place method, the backward node class, and _C._op_table, from which
// the docstrings (_torch_docs.py, _tensor_docs.py) and the stubs
// (scripts/update_op_stubs.py) are made.
#include <string_view>
#include <utility>

#include "bindings.h"
#include "npgrad/ops/activation_ops.h"
#include "npgrad/ops/binary_ops.h"
#include "npgrad/ops/reduction_ops.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

// The node's name of a table entry; None for a bool-valued one.
template <typename Op>
py::object node_name() {
  if constexpr (ops::detail::IsDifferentiable<Op>::value) {
    return py::str(Op::node);
  } else {
    return py::none();
  }
}

template <typename Op>
py::object unary_saves() {
  if constexpr (ops::detail::IsDifferentiable<Op>::value) {
    switch (Op::saves) {
      case ops::Saves::Self:
        return py::str("self");
      case ops::Saves::Result:
        return py::str("result");
      case ops::Saves::Nothing:
        break;
    }
  }
  return py::none();
}

template <typename Op>
bool unary_promotes_to_float() {
  if constexpr (ops::detail::IsDifferentiable<Op>::value) {
    return Op::promotes == ops::Promotes::ToFloat;
  } else {
    return false;
  }
}

// torch's overloads of the ops that declare a Number `other` apart from the
// Tensor one (the comparisons), listed in its "invalid combination" errors.
constexpr const char* kNumberOverloadFunction =
    " * (Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Tensor input, Number other, *, Tensor out = None)\n";
constexpr const char* kNumberOverloadMethod =
    " * (Tensor other)\n * (Number other)\n";

// torch's overload list of an op with a (Number self, Tensor other) form
// (remainder), its "didn't match" line naming the arguments given.
std::string number_self_overloads(const std::vector<py::handle>& args) {
  std::string marked;
  for (std::size_t i = 0; i < args.size(); ++i) {
    marked += (i ? ", !" : "!") + python_type_name(args[i]) + "!";
  }
  return std::string(
             " * (Tensor input, Tensor other, *, Tensor out = None)\n") +
         " * (Number self, Tensor other)\n" +
         "      didn't match because some of the arguments have invalid "
         "types: (" +
         marked + ")\n" +
         " * (Tensor input, Number other, *, Tensor out = None)\n";
}

// `other` of a binary table op: a Tensor, or a Python number when the op
// takes one; torch's argument-parser error otherwise. `position` is 2 for
// the function (after input) and 1 for a method.
template <typename Op>
Tensor binary_operand(
    const Tensor& input, py::handle obj, const char* fn, int position) {
  Tensor t = Op::numbers      ? as_operand(obj)
             : is_tensor(obj) ? obj.cast<Tensor>()
                              : Tensor();
  if (t.defined()) {
    return t;
  }
  if constexpr (ops::detail::HasNumberOverload<Op>::value) {
    if (position == 2) {
      std::vector<py::handle> args = {py::cast(input), obj};
      if constexpr (ops::detail::HasNumberSelf<Op>::value) {
        throw_invalid_combination(
            fn, args, number_self_overloads(args).c_str());
      }
      throw_invalid_combination(fn, args, kNumberOverloadFunction);
    }
    throw_invalid_combination(fn, {obj}, kNumberOverloadMethod);
  }
  NPGRAD_CHECK_TYPE(
      false,
      fn,
      "(): argument 'other' (position ",
      position,
      ") must be Tensor, not ",
      python_type_name(obj));
  return t;
}

template <typename Op>
py::object binary_number_node() {
  if constexpr (ops::detail::HasNumberNode<Op>::value) {
    return py::str(Op::number_node);
  } else {
    return py::none();
  }
}

// The nodes of a comparison's in-place form: (tensor other, number other).
template <typename Op>
py::object binary_inplace_nodes() {
  if constexpr (ops::detail::HasInplaceNode<Op>::value) {
    return py::make_tuple(Op::inplace_node, Op::inplace_number_node);
  } else {
    return py::none();
  }
}

template <typename Op>
py::tuple binary_saves() {
  if constexpr (ops::detail::IsDifferentiable<Op>::value) {
    constexpr unsigned reads = Op::self_reads | Op::other_reads;
    py::list names;
    if (reads & ops::Operand::Self) {
      names.append("self");
    }
    if (reads & ops::Operand::Other) {
      names.append("other");
    }
    if (reads & ops::Operand::Result) {
      names.append("result");
    }
    return py::tuple(names);
  } else {
    return py::tuple();
  }
}

// The function of a binary entry without alpha; `input` may be a Python
// number when the entry has torch's (Number self, Tensor other) overload.
template <typename Op>
void bind_binary_function(py::module_& m) {
  if constexpr (ops::detail::HasNumberSelf<Op>::value) {
    m.def(
        Op::name,
        [](py::handle a, py::handle b) {
          if (is_tensor(a)) {
            Tensor input = a.cast<Tensor>();
            return ops::binary<Op>(
                input, binary_operand<Op>(input, b, Op::name, 2));
          }
          Tensor number = as_operand(a);
          if (!number.defined() || !is_tensor(b)) {
            throw_invalid_combination(
                Op::name, {a, b}, number_self_overloads({a, b}).c_str());
          }
          return ops::binary_number_self<Op>(number, b.cast<Tensor>());
        },
        "input"_a,
        "other"_a);
  } else {
    m.def(
        Op::name,
        [](const Tensor& a, py::handle b) {
          return ops::binary<Op>(a, binary_operand<Op>(a, b, Op::name, 2));
        },
        "input"_a,
        "other"_a);
  }
}

// The function, method and in-place method of a binary entry; with
// torch's keyword-only alpha when the entry takes one.
template <typename Op, typename Cls>
void bind_binary_callables(py::module_& m, Cls& cls) {
  std::string inplace_name = std::string(Op::name) + "_";
  if constexpr (Op::alpha) {
    m.def(
        Op::name,
        [](const Tensor& a, py::handle b, double alpha) {
          return ops::binary<Op>(
              a, binary_operand<Op>(a, b, Op::name, 2), alpha);
        },
        "input"_a,
        "other"_a,
        py::kw_only(),
        "alpha"_a = 1);
    cls.def(
        Op::name,
        [](const Tensor& a, py::handle b, double alpha) {
          return ops::binary<Op>(
              a, binary_operand<Op>(a, b, Op::name, 1), alpha);
        },
        "other"_a,
        py::kw_only(),
        "alpha"_a = 1);
    if constexpr (Op::inplace) {
      cls.def(
          inplace_name.c_str(),
          [inplace_name](py::object self, py::handle b, double alpha) {
            Tensor a = self.cast<Tensor>();
            ops::binary_<Op>(
                a, binary_operand<Op>(a, b, inplace_name.c_str(), 1), alpha);
            return self;
          },
          "other"_a,
          py::kw_only(),
          "alpha"_a = 1);
    }
  } else {
    bind_binary_function<Op>(m);
    cls.def(
        Op::name,
        [](const Tensor& a, py::handle b) {
          return ops::binary<Op>(a, binary_operand<Op>(a, b, Op::name, 1));
        },
        "other"_a);
    if constexpr (Op::inplace) {
      cls.def(
          inplace_name.c_str(),
          [inplace_name](py::object self, py::handle b) {
            Tensor a = self.cast<Tensor>();
            ops::binary_<Op>(
                a, binary_operand<Op>(a, b, inplace_name.c_str(), 1));
            return self;
          },
          "other"_a);
    }
  }
}

// ---- The activation table ----

// The Python type of an activation parameter: a number, or a string for a
// Choice (gelu's approximate).
template <typename Op, std::size_t I>
using ActivationArg = std::conditional_t<
    Op::params[I].kind == ops::ParamKind::Choice,
    std::string,
    double>;

template <typename Op, std::size_t I>
double activation_param(const ActivationArg<Op, I>& value) {
  if constexpr (Op::params[I].kind == ops::ParamKind::Choice) {
    for (std::size_t c = 0; c < Op::choices.size(); ++c) {
      if (value == Op::choices[c]) {
        return static_cast<double>(c);
      }
    }
    NPGRAD_CHECK(false, Op::choice_error);
    return 0;
  } else {
    return value;
  }
}

template <typename Op, std::size_t I>
py::arg_v activation_arg() {
  constexpr ops::Param param = Op::params[I];
  if constexpr (param.kind == ops::ParamKind::Choice) {
    return py::arg(param.name) =
               std::string(ops::detail::choice_name<Op>(param.default_value));
  } else {
    // A required parameter is bound without a default (see below).
    return py::arg(param.name) = param.default_value;
  }
}

template <typename Op>
constexpr bool all_params_have_defaults() {
  for (const auto& param : Op::params) {
    if (param.required()) {
      return false;
    }
  }
  return true;
}

// Binds `fn(input, <params>)` as `name` on `scope` (a module, or the Tensor
// class). InPlace: the in-place form, returning self.
template <typename Op, bool InPlace, typename Scope, std::size_t... I>
void bind_activation_callable(
    Scope& scope, const char* name, std::index_sequence<I...>) {
  auto fn = [](const Tensor& input, const ActivationArg<Op, I>&... args) {
    ops::ParamValues p{};
    ((p[I] = activation_param<Op, I>(args)), ...);
    if constexpr (InPlace) {
      ops::activation_<Op>(input, p);
      return input;
    } else {
      return ops::activation<Op>(input, p);
    }
  };
  // torch's signatures here: every parameter has a default, or none has.
  // A method's self is not annotated (pybind11 adds it).
  if constexpr (std::is_same_v<Scope, py::module_>) {
    if constexpr (all_params_have_defaults<Op>()) {
      scope.def(name, fn, py::arg("input"), activation_arg<Op, I>()...);
    } else {
      scope.def(name, fn, py::arg("input"), py::arg(Op::params[I].name)...);
    }
  } else {
    if constexpr (all_params_have_defaults<Op>()) {
      scope.def(name, fn, activation_arg<Op, I>()...);
    } else {
      scope.def(name, fn, py::arg(Op::params[I].name)...);
    }
  }
}

template <typename Op>
void bind_activation(py::module_& m, py::module_& nn, py::object cls) {
  constexpr auto indices = std::make_index_sequence<Op::params.size()>();
  py::module_ scope = Op::binding == ops::Where::Nn ? nn : m;
  std::string inplace_name = std::string(Op::name) + "_";
  bind_activation_callable<Op, false>(scope, Op::name, indices);
  if constexpr (Op::inplace != ops::Inplace::None) {
    bind_activation_callable<Op, true>(scope, inplace_name.c_str(), indices);
  }
  if constexpr (Op::binding == ops::Where::TorchAndMethod) {
    auto tensor_cls = py::reinterpret_borrow<
        py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(cls);
    bind_activation_callable<Op, false>(tensor_cls, Op::name, indices);
  }
}

template <typename Op>
py::tuple activation_params() {
  py::list params;
  for (const auto& param : Op::params) {
    py::object default_value =
        param.required() ? py::object(py::none())
        : param.kind == ops::ParamKind::Choice
            ? py::object(
                  py::str(ops::detail::choice_name<Op>(param.default_value)))
            : py::object(py::float_(param.default_value));
    params.append(
        py::dict(
            "name"_a = param.name,
            "default"_a = default_value,
            "required"_a = param.required(),
            "choice"_a = param.kind == ops::ParamKind::Choice));
  }
  return py::tuple(params);
}

template <typename Op>
py::object activation_inplace_node() {
  if constexpr (Op::inplace == ops::Inplace::None) {
    return py::none();
  } else if constexpr (ops::detail::HasInplaceNode<Op>::value) {
    return py::str(Op::inplace_node);
  } else {
    return py::str(Op::node);
  }
}

void bind_activation_table(py::module_& m, py::module_& nodes, py::object cls) {
  py::module_ nn =
      m.def_submodule("_nn", "The activations torch keeps in torch._C._nn");
  py::list table;
  ops::activation_ops::ActivationOps::for_each([&](auto op) {
    using Op = decltype(op);
    py::class_<
        ops::ActivationBackward<Op>,
        autograd::Node,
        std::shared_ptr<ops::ActivationBackward<Op>>>(
        nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
    if constexpr (ops::detail::HasInplaceNode<Op>::value) {
      py::class_<
          ops::ActivationBackward<Op, true>,
          autograd::Node,
          std::shared_ptr<ops::ActivationBackward<Op, true>>>(
          nodes, Op::inplace_node, py::custom_type_setup(setup_node_type_gc));
    }
    py::object backward_node = py::none();
    if constexpr (ops::detail::HasBackwardNode<Op>::value) {
      py::class_<
          ops::ActivationBackwardBackward<Op>,
          autograd::Node,
          std::shared_ptr<ops::ActivationBackwardBackward<Op>>>(
          nodes, Op::backward_node, py::custom_type_setup(setup_node_type_gc));
      backward_node = py::str(Op::backward_node);
    }
    bind_activation<Op>(m, nn, cls);
    constexpr const char* where = Op::binding == ops::Where::Nn ? "nn"
                                  : Op::binding == ops::Where::Torch
                                      ? "torch"
                                      : "torch_and_method";
    table.append(py::dict(
        "family"_a = "activation",
        "name"_a = Op::name,
        "binding"_a = where,
        "inplace"_a = Op::inplace != ops::Inplace::None
                          ? py::object(py::str(std::string(Op::name) + "_"))
                          : py::object(py::none()),
        "node"_a = Op::node,
        "inplace_node"_a = activation_inplace_node<Op>(),
        "backward_node"_a = backward_node,
        "params"_a = activation_params<Op>(),
        "summary"_a = Op::doc.summary,
        "example_input"_a = Op::doc.example_input,
        "example_output"_a = Op::doc.example_output));
  });
  m.attr("_activation_table") = py::tuple(table);

  // torch's selu: elu with SELU's constants, recorded as EluBackward0.
  using ops::activation_ops::Elu;
  constexpr ops::ParamValues selu = {
      1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1};
  m.def(
      "selu",
      [selu](const Tensor& input) { return ops::activation<Elu>(input, selu); },
      "input"_a);
  m.def(
      "selu_",
      [selu](const Tensor& input) {
        ops::activation_<Elu>(input, selu);
        return input;
      },
      "input"_a);
}

// ---- The reduction table ----

// `dim` of a reduction: None means all dims (saved as None, or () for an
// entry whose default is ()); a required dim goes through dims_from, which
// gives torch's error for None.
// The default of `dim` for the entries with a full_node, which have torch's
// two overloads (`sum()` records SumBackward0, `sum(None)` SumBackward1 and
// honours keepdim): an object no caller has, shown as None in signatures.
py::handle dim_not_given() {
  static PyObject* sentinel =
      PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return sentinel;
}

template <typename Op>
std::optional<std::vector<int64_t>> reduction_dims(py::handle dim) {
  if (dim.is(dim_not_given())) {
    return std::nullopt;
  }
  if constexpr (Op::dim != ops::Dim::Required) {
    if (dim.is_none()) {
      if constexpr (Op::dim == ops::Dim::All) {
        return std::vector<int64_t>{};
      } else {
        return std::nullopt;
      }
    }
  }
  return dims_from(dim, Op::name, ops::detail::HasFullNode<Op>::value);
}

template <typename Op>
auto reduction_dim_arg() {
  if constexpr (Op::dim == ops::Dim::Required) {
    return py::arg("dim");
  } else if constexpr (Op::dim == ops::Dim::All) {
    return py::arg("dim") = py::tuple();
  } else if constexpr (ops::detail::HasFullNode<Op>::value) {
    return py::arg_v(
        "dim", py::reinterpret_borrow<py::object>(dim_not_given()), "None");
  } else {
    return py::arg("dim") = py::none();
  }
}

// var's correction (ScalarArg::Correction): torch's overloads
// `var(input, dim=None, *, correction=None, keepdim=False)`,
// `var(input, unbiased=True)` and `var(input, dim, unbiased, keepdim=False)`
// as one signature `(input, dim=None, unbiased=None, keepdim=False, *,
// correction=None)`, saved as torch saves them (correction None when neither
// it nor unbiased nor a dim was given).
ops::VarArgs var_args(
    const char* fn,
    py::handle dim,
    py::handle unbiased,
    bool keepdim,
    py::handle correction) {
  ops::VarArgs args;
  if (PyBool_Check(dim.ptr())) {
    // var(True): torch's overload (bool unbiased = True).
    NPGRAD_CHECK_TYPE(
        unbiased.is_none(),
        fn,
        "(): argument 'dim' must be tuple of ints, not bool");
    unbiased = dim;
    dim = py::none();
  }
  if (!dim.is_none()) {
    args.dims = dims_from(dim, fn, false);
  }
  args.keepdim = keepdim;
  if (!unbiased.is_none() && !correction.is_none()) {
    throw TypeError(detail::str_cat(
        fn,
        "(): the arguments 'unbiased' and 'correction' cannot be given "
        "together"));
  }
  if (!correction.is_none()) {
    args.correction = correction.cast<double>();
  } else if (!unbiased.is_none()) {
    args.correction = unbiased.cast<bool>() ? 1 : 0;
  } else if (args.dims) {
    args.correction = 1;
  }
  return args;
}

// torch's warning when the divisor N - correction of var is not positive
// (the result is inf or nan); called after the op checked the dims.
void warn_if_no_dof(const char* fn, const Tensor& a, const ops::VarArgs& args) {
  double n = ops::reduced_numel(a.sizes(), args.dims.value_or(Shape{}));
  if (n - args.correction.value_or(1) > 0) {
    return;
  }
  std::string msg = detail::str_cat(
      fn,
      "(): degrees of freedom is <= 0. Correction should be strictly less "
      "than the reduction factor (input numel divided by output numel).");
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) {
    throw py::error_already_set();  // warnings turned into errors
  }
}

// Binds `name(<input>, dim=None, unbiased=None, keepdim=False, *,
// correction=None)` on `scope`: `op(input, args)` (an entry, or var_mean)
// with var's arguments, then torch's warning.
template <typename Scope, typename Op, typename... Input>
void def_with_var_args(
    Scope& scope, const char* name, Op op, const Input&... input) {
  scope.def(
      name,
      [name, op](
          const Tensor& a,
          py::handle dim,
          py::handle unbiased,
          bool keepdim,
          py::handle correction) {
        ops::VarArgs args = var_args(name, dim, unbiased, keepdim, correction);
        auto out = op(a, args);
        warn_if_no_dof(name, a, args);
        return out;
      },
      input...,
      "dim"_a = py::none(),
      "unbiased"_a = py::none(),
      "keepdim"_a = false,
      py::kw_only(),
      "correction"_a = py::none());
}

// norm's p (ScalarArg::Ord): a number, None (2) or "fro" (2, over at most
// two dims); another string is a matrix norm, which npgrad does not have.
double norm_ord(
    const Tensor& a,
    py::handle p,
    const std::optional<std::vector<int64_t>>& dims) {
  if (p.is_none()) {
    return 2;
  }
  if (!py::isinstance<py::str>(p)) {
    NPGRAD_CHECK_TYPE(
        PyNumber_Check(p.ptr()) && !is_tensor(p),
        "norm(): argument 'p' must be a number or a string, not ",
        python_type_name(p));
    return p.cast<double>();
  }
  auto name = p.cast<std::string>();
  if (name == "fro" && (!dims || dims->size() <= 2)) {
    return 2;
  }
  Shape matrix_dims = dims.value_or(Shape{});
  if (!dims) {
    for (int64_t d = 0; d < a.dim(); ++d) {
      matrix_dims.push_back(d);
    }
  }
  NPGRAD_CHECK(
      name == "fro" || name == "nuc",
      "linalg.matrix_norm: Order ",
      name,
      " not supported.");
  std::string got;
  for (int64_t d : matrix_dims) {
    got += (got.empty() ? "" : " ") + std::to_string(d);
  }
  NPGRAD_CHECK(
      matrix_dims.size() == 2,
      "linalg.matrix_norm: dim must be a 2-tuple. Got ",
      got);
  throw NotImplementedError(
      "norm(): npgrad does not implement the nuclear norm (p='nuc')");
}

// Binds an entry on `scope` (the module with `input`, or the Tensor class):
// `name(<input>, dim, keepdim=False[, *, dtype=None])`, or the signature of
// its one-int dim or of its scalar's kind.
template <typename Op, typename Scope, typename... Input>
void def_reduction(Scope& scope, const Input&... input) {
  if constexpr (Op::dim == ops::Dim::One) {
    static_assert(Op::takes_dtype && ops::detail::HasFullNode<Op>::value);
    // prod(input, dim, keepdim=False, *, dtype=None); without dim (or None)
    // the full_node's overload.
    scope.def(
        Op::name,
        [](const Tensor& a,
           std::optional<int64_t> dim,
           bool keepdim,
           py::handle dtype) {
          std::optional<std::vector<int64_t>> dims;
          if (dim) {
            dims = std::vector<int64_t>{*dim};
          }
          return ops::reduction<Op>(a, dims, keepdim, optional_dtype(dtype));
        },
        input...,
        "dim"_a = py::none(),
        "keepdim"_a = false,
        py::kw_only(),
        "dtype"_a = py::none());
  } else if constexpr (ops::detail::HasScalar<Op>::value) {
    if constexpr (Op::scalar.kind == ops::ScalarArg::Correction) {
      def_with_var_args(
          scope,
          Op::name,
          [](const Tensor& a, const ops::VarArgs& args) {
            return ops::reduction<Op>(
                a,
                args.dims,
                args.keepdim,
                std::nullopt,
                false,
                args.correction);
          },
          input...);
    } else {
      // norm(input, p='fro', dim=None, keepdim=False, dtype=None)
      scope.def(
          Op::name,
          [](const Tensor& a,
             py::handle p,
             py::handle dim,
             bool keepdim,
             py::handle dtype) {
            auto dims = reduction_dims<Op>(dim);
            return ops::reduction<Op>(
                a,
                dims,
                keepdim,
                optional_dtype(dtype),
                false,
                norm_ord(a, p, dims));
          },
          input...,
          "p"_a = "fro",
          "dim"_a = py::none(),
          "keepdim"_a = false,
          "dtype"_a = py::none());
    }
  } else if constexpr (Op::takes_dtype) {
    scope.def(
        Op::name,
        [](const Tensor& a, py::handle dim, bool keepdim, py::handle dtype) {
          return ops::reduction<Op>(
              a,
              reduction_dims<Op>(dim),
              keepdim,
              optional_dtype(dtype),
              dim.is_none());
        },
        input...,
        reduction_dim_arg<Op>(),
        "keepdim"_a = false,
        py::kw_only(),
        "dtype"_a = py::none());
  } else {
    scope.def(
        Op::name,
        [](const Tensor& a, py::handle dim, bool keepdim) {
          return ops::reduction<Op>(
              a, reduction_dims<Op>(dim), keepdim, std::nullopt, dim.is_none());
        },
        input...,
        reduction_dim_arg<Op>(),
        "keepdim"_a = false);
  }
}

template <typename Op>
py::tuple reduction_saves() {
  constexpr std::pair<unsigned, const char*> names[] = {
      {ops::Saved::Dim, "dim"},
      {ops::Saved::Keepdim, "keepdim"},
      {ops::Saved::Result, "result"},
      {ops::Saved::Self, "self"},
      {ops::Saved::SelfNumel, "self_sym_numel"},
      {ops::Saved::SelfSizes, "self_sym_sizes"}};
  py::list saves;
  for (const auto& [bit, name] : names) {
    if ((Op::saves & bit) != 0) {
      saves.append(name);
    }
  }
  if constexpr (ops::detail::HasScalar<Op>::value) {
    constexpr std::string_view prefix = "_saved_";
    saves.append(std::string_view(Op::scalar.saved).substr(prefix.size()));
  }
  return py::tuple(saves);
}

// The kind of an entry's scalar; -1 for none.
template <typename Op>
constexpr int reduction_scalar() {
  if constexpr (ops::detail::HasScalar<Op>::value) {
    return Op::scalar.kind;
  } else {
    return -1;
  }
}

template <typename Op>
py::object reduction_full_node() {
  if constexpr (ops::detail::HasFullNode<Op>::value) {
    return py::str(Op::full_node);
  } else {
    return py::none();
  }
}

void bind_reduction_table(py::module_& m, py::module_& nodes, py::list& table) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  ops::reduction_ops::ReductionOps::for_each([&](auto op) {
    using Op = decltype(op);
    constexpr bool exposed = ops::detail::IsExposed<Op>::value;
    py::class_<
        ops::ReductionBackward<Op>,
        autograd::Node,
        std::shared_ptr<ops::ReductionBackward<Op>>>(
        nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
    if constexpr (ops::detail::HasFullNode<Op>::value) {
      py::class_<
          ops::ReductionBackward<Op, true>,
          autograd::Node,
          std::shared_ptr<ops::ReductionBackward<Op, true>>>(
          nodes, Op::full_node, py::custom_type_setup(setup_node_type_gc));
    }
    if constexpr (!exposed) {
      // ATen's positional form, as torch's composites call it:
      // `_C._norm(input, p, dim, keepdim=False)`.
      static_assert(Op::dim == ops::Dim::Required);
      m.def(
          Op::name,
          [](const Tensor& a,
             double p,
             std::vector<int64_t> dim,
             bool keepdim) {
            return ops::reduction<Op>(
                a, std::move(dim), keepdim, std::nullopt, false, p);
          },
          "input"_a,
          "p"_a,
          "dim"_a,
          "keepdim"_a = false);
    } else {
      def_reduction<Op>(m, "input"_a);
      def_reduction<Op>(cls);
    }
    if constexpr (ops::detail::HasFullNode<Op>::value) {
      // sum(input) and sum(input, dim, ...) are two torch overloads.
      mark_torch_overloaded(m.attr(Op::name), 2);
    }
    if constexpr (reduction_scalar<Op>() == ops::ScalarArg::Correction) {
      // var(input, dim | unbiased, ...): torch's overloads from one argument.
      mark_torch_overloaded(m.attr(Op::name), 1);
    }
    constexpr const char* dim = Op::dim == ops::Dim::Required ? "required"
                                : Op::dim == ops::Dim::All    ? "all"
                                : Op::dim == ops::Dim::One    ? "one"
                                                              : "optional";
    constexpr auto scalar = reduction_scalar<Op>();
    table.append(py::dict(
        "family"_a = "reduction",
        "public"_a = exposed,
        "scalar"_a = scalar == ops::ScalarArg::Correction
                         ? py::object(py::str("correction"))
                     : scalar == ops::ScalarArg::Ord ? py::object(py::str("p"))
                                                     : py::object(py::none()),
        "name"_a = Op::name,
        "inplace"_a = py::none(),
        "node"_a = Op::node,
        "full_node"_a = reduction_full_node<Op>(),
        "saves"_a = reduction_saves<Op>(),
        "dim"_a = dim,
        "dtype"_a = Op::takes_dtype,
        "summary"_a = Op::doc.summary,
        "example_input"_a = Op::doc.example_input,
        "example_other"_a = Op::doc.example_other,
        "example_output"_a = Op::doc.example_output));
  });
  // var_mean and std_mean: two outputs, hand-written (with var's arguments).
  for (bool take_sqrt : {false, true}) {
    const char* name = take_sqrt ? "std_mean" : "var_mean";
    def_with_var_args(
        m,
        name,
        [take_sqrt](const Tensor& a, const ops::VarArgs& args) {
          return ops::var_mean(a, args, take_sqrt);
        },
        "input"_a);
    mark_torch_overloaded(m.attr(name), 1);
  }
}

}  // namespace

void bind_op_tables(py::module_& m) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  py::module_ nodes = m.attr("_functions");
  py::list table;
  ops::unary_ops::UnaryOps::for_each([&](auto op) {
    using Op = decltype(op);
    if constexpr (ops::detail::IsDifferentiable<Op>::value) {
      py::class_<
          ops::UnaryBackward<Op>,
          autograd::Node,
          std::shared_ptr<ops::UnaryBackward<Op>>>(
          nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
    }
    m.def(Op::name, &ops::unary<Op>, "input"_a);
    cls.def(Op::name, &ops::unary<Op>);
    std::string inplace_name = std::string(Op::name) + "_";
    if constexpr (Op::inplace) {
      cls.def(inplace_name.c_str(), [](py::object self) {
        ops::unary_<Op>(self.cast<Tensor>());
        return self;
      });
    }
    table.append(
        py::dict(
            "family"_a = "unary",
            "public"_a = true,
            "name"_a = Op::name,
            "inplace"_a = Op::inplace ? py::object(py::str(inplace_name))
                                      : py::object(py::none()),
            "node"_a = node_name<Op>(),
            "saves"_a = unary_saves<Op>(),
            "promotes_to_float"_a = unary_promotes_to_float<Op>(),
            "summary"_a = Op::doc.summary,
            "example_input"_a = Op::doc.example_input,
            "example_output"_a = Op::doc.example_output));
  });
  ops::binary_ops::BinaryOps::for_each([&](auto op) {
    using Op = decltype(op);
    if constexpr (ops::detail::IsDifferentiable<Op>::value) {
      py::class_<
          ops::BinaryBackward<Op>,
          autograd::Node,
          std::shared_ptr<ops::BinaryBackward<Op>>>(
          nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
    }
    if constexpr (ops::detail::HasNumberNode<Op>::value) {
      py::class_<
          ops::BinaryNumberBackward<Op>,
          autograd::Node,
          std::shared_ptr<ops::BinaryNumberBackward<Op>>>(
          nodes, Op::number_node, py::custom_type_setup(setup_node_type_gc));
    }
    if constexpr (ops::detail::HasInplaceNode<Op>::value) {
      py::class_<
          ops::ComparisonInplaceBackward<Op, false>,
          autograd::Node,
          std::shared_ptr<ops::ComparisonInplaceBackward<Op, false>>>(
          nodes, Op::inplace_node, py::custom_type_setup(setup_node_type_gc));
      py::class_<
          ops::ComparisonInplaceBackward<Op, true>,
          autograd::Node,
          std::shared_ptr<ops::ComparisonInplaceBackward<Op, true>>>(
          nodes,
          Op::inplace_number_node,
          py::custom_type_setup(setup_node_type_gc));
    }
    if constexpr (ops::detail::IsExposed<Op>::value) {
      bind_binary_callables<Op>(m, cls);
    }
    if constexpr (ops::detail::HasNumberOverload<Op>::value) {
      mark_torch_overloaded(m.attr(Op::name), 1);
    }
    std::string inplace_name = std::string(Op::name) + "_";
    table.append(
        py::dict(
            "family"_a = "binary",
            "public"_a = ops::detail::IsExposed<Op>::value,
            "name"_a = Op::name,
            "inplace"_a = Op::inplace ? py::object(py::str(inplace_name))
                                      : py::object(py::none()),
            "node"_a = node_name<Op>(),
            "saves"_a = binary_saves<Op>(),
            "promotes_to_float"_a = Op::promotes == ops::Promotes::ToFloat,
            "numbers"_a = Op::numbers,
            "number_overload"_a = ops::detail::HasNumberOverload<Op>::value,
            "number_node"_a = binary_number_node<Op>(),
            "inplace_nodes"_a = binary_inplace_nodes<Op>(),
            "number_self"_a = ops::detail::HasNumberSelf<Op>::value,
            "alpha"_a = Op::alpha,
            "summary"_a = Op::doc.summary,
            "example_input"_a = Op::doc.example_input,
            "example_other"_a = Op::doc.example_other,
            "example_output"_a = Op::doc.example_output));
  });
  bind_reduction_table(m, nodes, table);
  bind_view_table(m, nodes, table);
  bind_linalg_table(m, nodes, table);
  m.attr("_op_table") = py::tuple(table);
  bind_activation_table(m, nodes, cls);
}

}  // namespace npgrad::bindings
