// Binds every op of the op tables from its entry: the function (npgrad.<name>
// through `from ._C import *`), the Tensor method,
// the in-place method, the backward node class, and _C._op_table, from which
// the docstrings (_torch_docs.py, _tensor_docs.py) and the stubs
// (scripts/update_op_stubs.py) are made.
#include "bindings.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

const char* saves_name(ops::Saves saves) {
  switch (saves) {
    case ops::Saves::Self:
      return "self";
    case ops::Saves::Result:
      return "result";
    case ops::Saves::Nothing:
      break;
  }
  return nullptr;
}

}  // namespace

void bind_op_tables(py::module_& m) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  py::module_ nodes = m.attr("_functions");
  py::list table;
  ops::unary_ops::UnaryOps::for_each([&](auto op) {
    using Op = decltype(op);
    py::class_<
        ops::UnaryBackward<Op>,
        autograd::Node,
        std::shared_ptr<ops::UnaryBackward<Op>>>(
        nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
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
            "name"_a = Op::name,
            "inplace"_a = Op::inplace ? py::object(py::str(inplace_name))
                                      : py::object(py::none()),
            "node"_a = Op::node,
            "saves"_a = saves_name(Op::saves),
            "promotes_to_float"_a = Op::promotes == ops::Promotes::ToFloat,
            "summary"_a = Op::doc.summary,
            "example_input"_a = Op::doc.example_input,
            "example_output"_a = Op::doc.example_output));
  });
  m.attr("_op_table") = py::tuple(table);
}

}  // namespace npgrad::bindings
