// Binds every op of the op tables from its entry: the function (npgrad.<name>
// through `from ._C import *`), the Tensor method,
// the in-place method, the backward node class, and _C._op_table, from which
// the docstrings (_torch_docs.py, _tensor_docs.py) and the stubs
// (scripts/update_op_stubs.py) are made.
#include "bindings.h"
#include "npgrad/ops/binary_ops.h"
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
      throw_invalid_combination(
          fn, {py::cast(input), obj}, kNumberOverloadFunction);
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
    m.def(
        Op::name,
        [](const Tensor& a, py::handle b) {
          return ops::binary<Op>(a, binary_operand<Op>(a, b, Op::name, 2));
        },
        "input"_a,
        "other"_a);
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
            "alpha"_a = Op::alpha,
            "summary"_a = Op::doc.summary,
            "example_input"_a = Op::doc.example_input,
            "example_other"_a = Op::doc.example_other,
            "example_output"_a = Op::doc.example_output));
  });
  m.attr("_op_table") = py::tuple(table);
}

}  // namespace npgrad::bindings
