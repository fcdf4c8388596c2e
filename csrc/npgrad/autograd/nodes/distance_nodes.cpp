#include "npgrad/autograd/nodes/distance_nodes.h"

#include <vector>

#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/ops/distance.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::autograd {

using namespace npgrad::ops;

namespace {

std::vector<int64_t> dims(const Shape& s) {
  return std::vector<int64_t>(s.begin(), s.end());
}

}  // namespace

// torch's _trilinear_backward: the gradient of each input is the _trilinear
// of the incoming gradient with the two others, the roles of that input's
// expanded dims and the summed dims exchanged.
void TrilinearBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor i1 = should_compute_output(1) || should_compute_output(2)
                  ? i1_.unpack()
                  : Tensor();
  Tensor i2 = should_compute_output(0) || should_compute_output(2)
                  ? i2_.unpack()
                  : Tensor();
  Tensor i3 = should_compute_output(0) || should_compute_output(1)
                  ? i3_.unpack()
                  : Tensor();
  if (should_compute_output(0)) {
    out[0] = trilinear(
        g[0],
        i2,
        i3,
        dims(sumdim),
        dims(expand2),
        dims(expand3),
        dims(expand1),
        0);
  }
  if (should_compute_output(1)) {
    out[1] = trilinear(
        i1,
        g[0],
        i3,
        dims(expand1),
        dims(sumdim),
        dims(expand3),
        dims(expand2),
        0);
  }
  if (should_compute_output(2)) {
    out[2] = trilinear(
        i1,
        i2,
        g[0],
        dims(expand1),
        dims(expand2),
        dims(sumdim),
        dims(expand3),
        0);
  }
}

// torch's formulas: x1 from _cdist_backward(grad, x1, x2, p, result), x2
// from the same with the operands and the result's last two dims swapped.
// _cdist_backward gives the broadcast batch shape; each sums to its input.
void CdistBackward0::compute(const variable_list& g, variable_list& out) {
  Tensor x1 = x1_.unpack();
  Tensor x2 = x2_.unpack();
  Tensor result = result_.unpack(self_ptr());
  if (should_compute_output(0)) {
    out[0] =
        sum_to(cdist_backward(contiguous(g[0]), x1, x2, p, result), x1.sizes());
  }
  if (should_compute_output(1)) {
    out[1] = sum_to(
        cdist_backward(
            contiguous(transpose(g[0], -2, -1)),
            x2,
            x1,
            p,
            contiguous(transpose(result, -2, -1))),
        x2.sizes());
  }
}

void CdistBackwardBackward0::compute(const variable_list&, variable_list&) {
  throw NotImplementedError(
      "the derivative for '_cdist_backward' is not implemented.");
}

// torch's _euclidean_dist_backward: grad / result, 0 where the distance is 0
// (a subgradient there).
void EuclideanDistBackward0::compute(
    const variable_list& g, variable_list& out) {
  Tensor x1 = x1_.unpack();
  Tensor x2 = x2_.unpack();
  Tensor result = result_.unpack(self_ptr());
  Tensor ratio = div(g[0], result);
  ratio = masked_fill(ratio, eq(result, scalar(0)), scalar(0));
  if (should_compute_output(0)) {
    out[0] = sub(mul(x1, sum(ratio, {-1}, true)), matmul(ratio, x2));
  }
  if (should_compute_output(1)) {
    out[1] =
        sub(mul(x2, unsqueeze(sum(ratio, {-2}, false), -1)),
            matmul(transpose(ratio, -2, -1), x1));
  }
}

}  // namespace npgrad::autograd
