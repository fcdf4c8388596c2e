// lerp, addcmul, addcdiv (functions and methods, with their in-place forms),
// glu and the native losses (torch._C._nn, and torch for
// binary_cross_entropy_with_logits), with their node classes. The Python
// side, npgrad.nn.functional, turns torch's `reduction` strings into the
// enum these take (0 none, 1 mean, 2 sum).
#include "npgrad/ops/loss.h"
#include "bindings.h"
#include "npgrad/autograd/nodes/loss_nodes.h"
#include "npgrad/autograd/nodes/ternary_nodes.h"
#include "npgrad/ops/ternary.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

template <typename NodeT>
void bind_node_class(py::module_& nodes, const char* name) {
  py::class_<NodeT, autograd::Node, std::shared_ptr<NodeT>>(
      nodes, name, py::custom_type_setup(setup_node_type_gc));
}

Tensor or_undefined(const std::optional<Tensor>& t) {
  return t ? *t : Tensor();
}

void bind_ternary(py::module_& m, py::object cls_object) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(cls_object);
  using LerpTensor = Tensor (*)(const Tensor&, const Tensor&, const Tensor&);
  using LerpNumber = Tensor (*)(const Tensor&, const Tensor&, double);
  m.def(
      "lerp",
      static_cast<LerpTensor>(&ops::lerp),
      "input"_a,
      "end"_a,
      "weight"_a);
  m.def(
      "lerp",
      static_cast<LerpNumber>(&ops::lerp),
      "input"_a,
      "end"_a,
      "weight"_a);
  cls.def("lerp", static_cast<LerpTensor>(&ops::lerp), "end"_a, "weight"_a);
  cls.def("lerp", static_cast<LerpNumber>(&ops::lerp), "end"_a, "weight"_a);
  cls.def(
      "lerp_",
      [](py::object self, const Tensor& end, const Tensor& weight) {
        ops::lerp_(self.cast<Tensor>(), end, weight);
        return self;
      },
      "end"_a,
      "weight"_a);
  cls.def(
      "lerp_",
      [](py::object self, const Tensor& end, double weight) {
        ops::lerp_(self.cast<Tensor>(), end, weight);
        return self;
      },
      "end"_a,
      "weight"_a);
  for (bool divide : {false, true}) {
    const char* name = divide ? "addcdiv" : "addcmul";
    auto op = divide ? &ops::addcdiv : &ops::addcmul;
    auto op_ = divide ? &ops::addcdiv_ : &ops::addcmul_;
    m.def(
        name,
        op,
        "input"_a,
        "tensor1"_a,
        "tensor2"_a,
        py::kw_only(),
        "value"_a = 1.0);
    cls.def(name, op, "tensor1"_a, "tensor2"_a, py::kw_only(), "value"_a = 1.0);
    cls.def(
        (std::string(name) + "_").c_str(),
        [op_](
            py::object self,
            const Tensor& tensor1,
            const Tensor& tensor2,
            double value) {
          op_(self.cast<Tensor>(), tensor1, tensor2, value);
          return self;
        },
        "tensor1"_a,
        "tensor2"_a,
        py::kw_only(),
        "value"_a = 1.0);
  }
}

void bind_loss_functions(py::module_& m, py::module_& nn) {
  nn.def("glu", &ops::glu, "input"_a, "dim"_a = -1);
  nn.def("mse_loss", &ops::mse_loss, "input"_a, "target"_a, "reduction"_a = 1);
  nn.def(
      "smooth_l1_loss",
      &ops::smooth_l1_loss,
      "input"_a,
      "target"_a,
      "reduction"_a = 1,
      "beta"_a = 1.0);
  nn.def(
      "huber_loss",
      &ops::huber_loss,
      "input"_a,
      "target"_a,
      "reduction"_a = 1,
      "delta"_a = 1.0);
  nn.def(
      "soft_margin_loss",
      &ops::soft_margin_loss,
      "input"_a,
      "target"_a,
      "reduction"_a = 1);
  nn.def(
      "binary_cross_entropy",
      [](const Tensor& input,
         const Tensor& target,
         const std::optional<Tensor>& weight,
         int64_t reduction) {
        return ops::binary_cross_entropy(
            input, target, or_undefined(weight), reduction);
      },
      "input"_a,
      "target"_a,
      "weight"_a = py::none(),
      "reduction"_a = 1);
  for (bool two_d : {false, true}) {
    nn.def(
        two_d ? "nll_loss2d" : "nll_loss",
        [two_d](
            const Tensor& input,
            const Tensor& target,
            const std::optional<Tensor>& weight,
            int64_t reduction,
            int64_t ignore_index) {
          return ops::nll_loss(
              input,
              target,
              or_undefined(weight),
              reduction,
              ignore_index,
              two_d);
        },
        "input"_a,
        "target"_a,
        "weight"_a = py::none(),
        "reduction"_a = 1,
        "ignore_index"_a = -100);
  }
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input,
         const Tensor& target,
         const std::optional<Tensor>& weight,
         const std::optional<Tensor>& pos_weight,
         int64_t reduction) {
        return ops::binary_cross_entropy_with_logits(
            input,
            target,
            or_undefined(weight),
            or_undefined(pos_weight),
            reduction);
      },
      "input"_a,
      "target"_a,
      "weight"_a = py::none(),
      "pos_weight"_a = py::none(),
      "reduction"_a = 1);
}

}  // namespace

void bind_losses(py::module_& m) {
  py::module_ nodes = m.attr("_functions");
  py::module_ nn = m.attr("_nn");
  using namespace autograd;
  bind_node_class<LerpBackward0>(nodes, "LerpBackward0");
  bind_node_class<LerpBackward1>(nodes, "LerpBackward1");
  bind_node_class<AddcmulBackward0>(nodes, "AddcmulBackward0");
  bind_node_class<AddcdivBackward0>(nodes, "AddcdivBackward0");
  bind_node_class<GluBackward0>(nodes, "GluBackward0");
  bind_node_class<MseLossBackward0>(nodes, "MseLossBackward0");
  bind_node_class<SmoothL1LossBackward0>(nodes, "SmoothL1LossBackward0");
  bind_node_class<HuberLossBackward0>(nodes, "HuberLossBackward0");
  bind_node_class<MseLossBackwardBackward0>(nodes, "MseLossBackwardBackward0");
  bind_node_class<SmoothL1LossBackwardBackward0>(
      nodes, "SmoothL1LossBackwardBackward0");
  bind_node_class<HuberLossBackwardBackward0>(
      nodes, "HuberLossBackwardBackward0");
  bind_node_class<SoftMarginLossBackward0>(nodes, "SoftMarginLossBackward0");
  bind_node_class<BinaryCrossEntropyBackward0>(
      nodes, "BinaryCrossEntropyBackward0");
  bind_node_class<BinaryCrossEntropyWithLogitsBackward0>(
      nodes, "BinaryCrossEntropyWithLogitsBackward0");
  bind_node_class<NllLossBackward0>(nodes, "NllLossBackward0");
  bind_node_class<NllLoss2DBackward0>(nodes, "NllLoss2DBackward0");
  bind_node_class<NllLossBackwardBackward0>(nodes, "NllLossBackwardBackward0");
  bind_node_class<BinaryCrossEntropyBackwardBackward0>(
      nodes, "BinaryCrossEntropyBackwardBackward0");
  bind_node_class<NllLoss2DBackwardBackward0>(
      nodes, "NllLoss2DBackwardBackward0");
  bind_ternary(m, m.attr("Tensor"));
  bind_loss_functions(m, nn);
}

}  // namespace npgrad::bindings
