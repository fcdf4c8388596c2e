// npgrad._C: the native module. A list of bind_*() calls in dependency order.
#include "bindings.h"
#include "npgrad/kernels/kernels.h"
#include "python_function.h"

namespace npgrad::bindings {
/// lerp, addcmul, addcdiv, glu and the losses (loss.cpp); after
/// bind_op_tables, which makes npgrad._C._nn.
void bind_losses(py::module_& m);
/// clamp, clip, clamp_min, clamp_max (clamp.cpp).
void bind_clamp(py::module_& m);
/// The pack-hook context and the saved-tensor inventory (saved_tensors.cpp).
void bind_saved_tensors(py::module_& m);
}  // namespace npgrad::bindings

PYBIND11_MODULE(_C, m) {
  m.doc() =
      "npgrad's native core: tensors on NumPy, the Node hierarchy, the engine";
  npgrad::kernels::init();
  using namespace npgrad::bindings;
  bind_errors(m);
  bind_tensor(m);
  bind_tensor_subclass(m);
  bind_nodes(m);
  bind_ops(m);
  bind_clamp(m);
  bind_op_tables(m);
  bind_losses(m);
  bind_pooling(m);
  bind_upsample(m);
  bind_function(m);
  bind_saved_tensors(m);
  bind_engine(m);
  bind_modes(m);
  bind_gc(m);
  bind_conv(m);
  bind_normalization(m);
  bind_distance(m);
  bind_docstrings(m);
  install_argument_errors(m);
}
