// The native ops behind torch.bilinear and torch.cdist, as private functions
// of _C (torch._trilinear, torch._VF.cdist): npgrad.nn.functional.bilinear
// and npgrad.cdist check the Python-level arguments and call these, as
// does nn.functional.cosine_similarity its composite.
#include "npgrad/ops/distance.h"

#include "bindings.h"

namespace npgrad::bindings {

using namespace py::literals;

void bind_distance(py::module_& m) {
  m.def(
      "_trilinear",
      &ops::trilinear,
      "i1"_a,
      "i2"_a,
      "i3"_a,
      "expand1"_a,
      "expand2"_a,
      "expand3"_a,
      "sumdim"_a,
      "unroll_dim"_a = 1);
  m.def(
      "_cosine_similarity",
      &ops::cosine_similarity,
      "x1"_a,
      "x2"_a,
      "dim"_a,
      "eps"_a);
  m.def(
      "_cdist",
      &ops::cdist,
      "x1"_a,
      "x2"_a,
      "p"_a,
      "compute_mode"_a = py::none());
}

}  // namespace npgrad::bindings
