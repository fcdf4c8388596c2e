// Upsampling: the functions of npgrad._C._nn that
// npgrad.nn.functional.interpolate calls (torch._C._nn's
// upsample_nearest{1,2}d, _upsample_nearest_exact{1,2}d, upsample_linear1d,
// upsample_bilinear2d, with torch's vec signatures: output_size or
// scale_factors, the other None) and the node classes.
#include "bindings.h"
#include "npgrad/autograd/nodes/upsample_nodes.h"
#include "npgrad/ops/ops.h"

namespace npgrad::bindings {

using namespace pybind11::literals;

namespace {
using OptSizes = std::optional<Shape>;
using OptScales = std::optional<std::vector<double>>;

void def_nearest(py::module_& nn, const char* name, ops::UpsampleMode mode) {
  nn.def(
      name,
      [mode](const Tensor& input, const OptSizes& size, const OptScales& s) {
        return ops::upsample(
            input, ops::upsample_args(input, mode, size, s, false));
      },
      "input"_a,
      "output_size"_a,
      "scale_factors"_a);
}

void def_linear(py::module_& nn, const char* name) {
  nn.def(
      name,
      [](const Tensor& input,
         const OptSizes& size,
         bool align_corners,
         const OptScales& s) {
        return ops::upsample(
            input,
            ops::upsample_args(
                input, ops::UpsampleMode::Linear, size, s, align_corners));
      },
      "input"_a,
      "output_size"_a,
      "align_corners"_a,
      "scale_factors"_a);
}
}  // namespace

void bind_upsample(py::module_& m) {
  py::module_ fm = m.attr("_functions");
#define NPGRAD_BIND_UPSAMPLE_NODE(N, Base)                               \
  py::class_<autograd::N, autograd::Node, std::shared_ptr<autograd::N>>( \
      fm, #N, py::custom_type_setup(setup_node_type_gc));
  NPGRAD_FORALL_UPSAMPLE_NODES(NPGRAD_BIND_UPSAMPLE_NODE)
#undef NPGRAD_BIND_UPSAMPLE_NODE

  py::module_ nn = m.attr("_nn");
  using ops::UpsampleMode;
  def_nearest(nn, "upsample_nearest1d", UpsampleMode::Nearest);
  def_nearest(nn, "upsample_nearest2d", UpsampleMode::Nearest);
  def_nearest(nn, "_upsample_nearest_exact1d", UpsampleMode::NearestExact);
  def_nearest(nn, "_upsample_nearest_exact2d", UpsampleMode::NearestExact);
  def_linear(nn, "upsample_linear1d");
  def_linear(nn, "upsample_bilinear2d");
}

}  // namespace npgrad::bindings
