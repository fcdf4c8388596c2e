// Binds every op of the view table (view_ops.h) from its entry: the
// function and/or method torch has, the in-place view method, the node
// classes of every form, and a row of _C._op_table (family "view"), from
// which the docstrings and the stubs are made.
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "bindings.h"
#include "npgrad/ops/view_ops.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

// How an argument of an entry's Args comes from Python: its bound type, the
// conversion, and its type in the table row's params.
template <typename T>
struct PyParam;
template <>
struct PyParam<int64_t> {
  using type = int64_t;
  static constexpr const char* kind = "int";
  static int64_t from(int64_t value) { return value; }
};
template <>
struct PyParam<Shape> {
  using type = Shape;
  static constexpr const char* kind = "int_list";
  static Shape from(const Shape& value) { return value; }
};
// squeeze's dim: None, an int, or a sequence of ints (each its own torch
// overload). A typed parameter, so that another type is torch's "invalid
// combination" error (mark_torch_overloaded).
template <>
struct PyParam<ops::SqueezeDims> {
  using type = std::optional<std::variant<int64_t, Shape>>;
  static constexpr const char* kind = "dims";
  static ops::SqueezeDims from(const type& dim) {
    if (!dim) {
      return {};
    }
    if (const auto* one = std::get_if<int64_t>(&*dim)) {
      return {Shape{*one}, false};
    }
    return {std::get<Shape>(*dim), true};
  }
};

template <typename Op, std::size_t I>
using ArgType = std::tuple_element_t<I, typename Op::Args>;

// The pybind11 argument of parameter I, with its default.
template <typename Op, std::size_t I>
auto param_arg() {
  constexpr ops::ViewParam p = Op::params[I];
  if constexpr (std::is_same_v<ArgType<Op, I>, ops::SqueezeDims>) {
    return py::arg(p.name) = py::none();
  } else if constexpr (p.has_default) {
    return py::arg(p.name) = p.default_value;
  } else {
    return py::arg(p.name);
  }
}

// A method whose only argument is a shape also takes it unpacked
// (`x.view(2, 3)`), as torch's do.
template <typename Op>
constexpr bool kVarargsMethod =
    std::is_same_v<typename Op::Args, std::tuple<Shape>>;

// Binds `Op::name(<input>, params...)` on `scope` (the module with `input`,
// or the Tensor class).
template <typename Op, typename Scope, std::size_t... I, typename... Input>
void def_view(Scope& scope, std::index_sequence<I...>, const Input&... input) {
  scope.def(
      Op::name,
      [](const Tensor& a, typename PyParam<ArgType<Op, I>>::type... args) {
        typename Op::Args parsed{PyParam<ArgType<Op, I>>::from(args)...};
        ops::detail::check_view_args<Op>(a, parsed, Op::name);
        return ops::view_op<Op>(a, parsed);
      },
      input...,
      param_arg<Op, I>()...);
}

// The in-place view method: returns self (Note [In-place view ops]).
template <typename Op, typename Cls, std::size_t... I>
void def_view_inplace(Cls& cls, std::index_sequence<I...>) {
  cls.def(
      Op::inplace,
      [](py::object self, typename PyParam<ArgType<Op, I>>::type... args) {
        Tensor t = self.cast<Tensor>();
        typename Op::Args parsed{PyParam<ArgType<Op, I>>::from(args)...};
        ops::detail::check_view_args<Op>(t, parsed, Op::inplace);
        ops::view_op_<Op>(t, parsed);
        return self;
      },
      param_arg<Op, I>()...);
}

template <typename Op, bool Inplace, std::size_t... F>
void bind_view_nodes(py::module_& nodes, std::index_sequence<F...>) {
  auto bind = [&](auto form) {
    using Node = ops::ViewOpBackward<Op, decltype(form)::value, Inplace>;
    const char* name = nullptr;
    if constexpr (Inplace) {
      name = Op::inplace_nodes[decltype(form)::value];
    } else {
      name = Op::nodes[decltype(form)::value];
    }
    py::class_<Node, autograd::Node, std::shared_ptr<Node>>(
        nodes, name, py::custom_type_setup(setup_node_type_gc));
  };
  (bind(std::integral_constant<int, static_cast<int>(F)>{}), ...);
}

template <std::size_t N>
py::tuple names(const char* const (&list)[N]) {
  py::list out;
  for (const char* name : list) {
    out.append(name);
  }
  return py::tuple(out);
}

template <typename Op, std::size_t... I>
py::tuple params_row(std::index_sequence<I...>) {
  py::list out;
  [[maybe_unused]] auto add = [&](auto i) {
    constexpr ops::ViewParam p = Op::params[decltype(i)::value];
    using Arg = ArgType<Op, decltype(i)::value>;
    out.append(py::dict(
        "name"_a = p.name,
        "type"_a = PyParam<Arg>::kind,
        "default"_a = p.has_default ? py::object(py::int_(p.default_value))
                                    : py::object(py::none()),
        "required"_a =
            !p.has_default && !std::is_same_v<Arg, ops::SqueezeDims>));
  };
  (add(std::integral_constant<std::size_t, I>{}), ...);
  return py::tuple(out);
}

template <typename Op>
py::tuple view_saves() {
  py::list out;
  if constexpr ((Op::saves & ops::ViewSaves::Args) != 0) {
    for (const auto& p : Op::params) {
      out.append(p.name);
    }
  }
  if constexpr ((Op::saves & ops::ViewSaves::SelfSizes) != 0) {
    out.append("self_sym_sizes");
  }
  return py::tuple(out);
}

}  // namespace

void bind_view_table(py::module_& m, py::module_& nodes, py::list& table) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  ops::view_ops::ViewOps::for_each([&](auto op) {
    using Op = decltype(op);
    constexpr auto params = std::make_index_sequence<Op::params.size()>{};
    constexpr auto forms =
        std::make_index_sequence<ops::detail::num_forms<Op>>{};
    bind_view_nodes<Op, false>(nodes, forms);
    if constexpr (Op::function) {
      def_view<Op>(m, params, "input"_a);
      if constexpr (std::size(Op::nodes) > 1) {
        // squeeze(input, dim): torch has an overload for each form of dim.
        mark_torch_overloaded(m.attr(Op::name), 1 + Op::params.size());
      }
    }
    if constexpr (Op::method && kVarargsMethod<Op>) {
      cls.def(Op::name, [](const Tensor& a, const py::args& shape) {
        return ops::view_op<Op>(
            a, {shape_from_args(shape, Op::name, Op::params[0].name)});
      });
    } else if constexpr (Op::method) {
      def_view<Op>(cls, params);
      if constexpr (std::size(Op::nodes) > 1) {
        mark_torch_overloaded(cls.attr(Op::name), Op::params.size());
      }
    }
    py::object inplace = py::none();
    py::tuple inplace_nodes;
    if constexpr (ops::detail::HasInplaceView<Op>::value) {
      bind_view_nodes<Op, true>(nodes, forms);
      def_view_inplace<Op>(cls, params);
      if constexpr (std::size(Op::nodes) > 1) {
        mark_torch_overloaded(cls.attr(Op::inplace), Op::params.size());
      }
      inplace = py::str(Op::inplace);
      inplace_nodes = names(Op::inplace_nodes);
    }
    table.append(py::dict(
        "family"_a = "view",
        // The elementwise and reduction families' calling convention (both
        // npgrad.<name>(input, ...) and Tensor.<name>) is theirs: a view row
        // says which of the two torch has in `function` and `method`.
        "public"_a = false,
        "function"_a = Op::function,
        "method"_a = Op::method,
        "varargs_method"_a = kVarargsMethod<Op>,
        "name"_a = Op::name,
        "inplace"_a = inplace,
        "node"_a = Op::nodes[0],
        "nodes"_a = names(Op::nodes),
        "inplace_view_nodes"_a = inplace_nodes,
        "params"_a = params_row<Op>(params),
        "saves"_a = view_saves<Op>(),
        "summary"_a = Op::doc.summary,
        "example_input"_a = Op::doc.example_input,
        "example_other"_a = Op::doc.example_other,
        "example_output"_a = Op::doc.example_output));
  });
}

}  // namespace npgrad::bindings
