// npgrad._C: the native module. A list of bind_*() calls in dependency order.
#include "bindings.h"
#include "npgrad/kernels/kernels.h"
#include "python_function.h"

PYBIND11_MODULE(_C, m) {
  m.doc() =
      "npgrad's native core: tensors on NumPy, the Node hierarchy, the engine";
  npgrad::kernels::init();
  using namespace npgrad::bindings;
  bind_errors(m);
  bind_tensor(m);
  bind_nodes(m);
  bind_ops(m);
  bind_op_tables(m);
  bind_function(m);
  bind_engine(m);
  bind_modes(m);
  bind_gc(m);
  bind_docstrings(m);
  bind_normalization(m);
  install_argument_errors(m);
}
