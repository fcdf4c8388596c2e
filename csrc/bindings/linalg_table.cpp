// Binds the matrix product table (linalg_ops.h) from its entries: the
// function npgrad.<name>(input, <factors>), the method Tensor.<name>, for an
// entry that adds the product to its input the in-place method with torch's
// keyword-only beta and alpha, the node class, and the rows of _C._op_table
// (family "linalg").
#include "bindings.h"
#include "npgrad/ops/linalg_ops.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

template <typename Op, typename Cls>
void bind_linalg_callables(py::module_& m, Cls& cls) {
  if constexpr (Op::adds_input) {
    auto def = [](auto& scope, const char* name, auto fn, auto... input) {
      scope.def(
          name,
          fn,
          input...,
          py::arg(Op::first),
          py::arg(Op::second),
          py::kw_only(),
          "beta"_a = 1.0,
          "alpha"_a = 1.0);
    };
    def(m, Op::name, &ops::linalg_add_product<Op>, "input"_a);
    def(cls, Op::name, &ops::linalg_add_product<Op>);
    def(cls,
        ops::inplace_name<Op>(),
        [](py::object self,
           const Tensor& first,
           const Tensor& second,
           double beta,
           double alpha) {
          ops::linalg_add_product<Op, true>(
              self.cast<Tensor>(), first, second, beta, alpha);
          return self;
        });
  } else {
    m.def(Op::name, &ops::linalg_product<Op>, "input"_a, py::arg(Op::second));
    cls.def(Op::name, &ops::linalg_product<Op>, py::arg(Op::second));
  }
}

template <typename Op>
py::tuple linalg_saves() {
  py::list saves;
  for (std::string factor : {Op::first, Op::second}) {
    saves.append(factor);
    if constexpr (Op::saves_layout) {
      saves.append(factor + "_sym_sizes");
      saves.append(factor + "_sym_strides");
    }
  }
  if constexpr (Op::adds_input) {
    saves.append("alpha");
    saves.append("beta");
  }
  return py::tuple(saves);
}

}  // namespace

void bind_linalg_table(py::module_& m, py::module_& nodes, py::list& table) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));
  ops::linalg_ops::LinalgOps::for_each([&](auto op) {
    using Op = decltype(op);
    py::class_<
        ops::LinalgBackward<Op>,
        autograd::Node,
        std::shared_ptr<ops::LinalgBackward<Op>>>(
        nodes, Op::node, py::custom_type_setup(setup_node_type_gc));
    bind_linalg_callables<Op>(m, cls);
    table.append(py::dict(
        "family"_a = "linalg",
        "public"_a = true,
        "name"_a = Op::name,
        "inplace"_a = Op::adds_input
                          ? py::object(py::str(ops::inplace_name<Op>()))
                          : py::object(py::none()),
        "node"_a = Op::node,
        "operands"_a = Op::adds_input
                           ? py::tuple(py::make_tuple(Op::first, Op::second))
                           : py::tuple(py::make_tuple(Op::second)),
        "adds_input"_a = Op::adds_input,
        "saves"_a = linalg_saves<Op>(),
        "summary"_a = Op::doc.summary,
        "example_input"_a = Op::doc.example_input,
        "example_other"_a = Op::doc.example_other,
        "example_output"_a = Op::doc.example_output));
  });
}

}  // namespace npgrad::bindings
