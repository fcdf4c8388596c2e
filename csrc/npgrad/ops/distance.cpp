// torch.bilinear's _trilinear and torch.cdist's _cdist_forward,
// _cdist_backward and _euclidean_dist, with torch's checks and messages. The
// values are computed without a graph (cdist's by the loops of
// kernels/distance.h, the others with npgrad ops in no-grad mode); the node is
// recorded after, saving what torch's saves.
#include "npgrad/ops/distance.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/distance_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/distance.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/clamp.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/ops/reduction_ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using autograd::AutoGradMode;
using autograd::SavedVariable;

namespace {

Tensor number(double v) {
  return wrapped_scalar(v, ScalarType::Float64);
}

Shape to_shape(const std::vector<int64_t>& v) {
  return Shape(v.begin(), v.end());
}

// torch's dim_list_to_bitset: which of ndim dims the list names.
std::vector<bool> dim_set(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> seen(static_cast<std::size_t>(ndim), false);
  for (int64_t d : dims) {
    auto w = static_cast<std::size_t>(maybe_wrap_dim(d, ndim));
    NPGRAD_CHECK(
        !seen[w], "dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
  return seen;
}

Tensor unsqueeze_at(Tensor t, const std::vector<bool>& dims) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i]) {
      t = unsqueeze(t, static_cast<int64_t>(i));
    }
  }
  return t;
}

// torch's sumproduct_pair: left * right (of one rank, broadcast) summed over
// the `summed` dims, which the result keeps with size 1, by one bmm of the
// dims both have (batch) x left's x summed and batch x summed x right's.
Tensor sumproduct_pair(
    Tensor left, Tensor right, const std::vector<bool>& summed) {
  int64_t ndim = left.dim();
  std::vector<int64_t> lro, lo, ro, sums, ones;
  int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
  Shape out_sizes;
  for (int64_t i = 0; i < ndim; ++i) {
    bool sl = left.size(i) > 1;
    bool sr = right.size(i) > 1;
    if (summed[static_cast<std::size_t>(i)]) {
      if (sl && sr) {
        sums.push_back(i);
        sum_size *= left.size(i);
        continue;
      }
      if (sl) {
        left = sum(left, {i}, true);
      } else if (sr) {
        right = sum(right, {i}, true);
      }
      ones.push_back(i);
    } else if (sl && sr) {
      lro.push_back(i);
      lro_size *= left.size(i);
    } else if (sl) {
      lo.push_back(i);
      lo_size *= left.size(i);
    } else if (sr) {
      ro.push_back(i);
      ro_size *= right.size(i);
    } else {
      ones.push_back(i);
    }
  }
  auto joined = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> out;
    for (const auto* part : parts) {
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  };
  // Each side's dims in bmm order, then the dims of size 1 on that side.
  std::vector<int64_t> left_order = joined({&lro, &lo, &sums, &ro, &ones});
  std::vector<int64_t> right_order = joined({&lro, &sums, &ro, &lo, &ones});
  Tensor l =
      reshape(permute(left, left_order), Shape{lro_size, lo_size, sum_size});
  Tensor r =
      reshape(permute(right, right_order), Shape{lro_size, sum_size, ro_size});
  Tensor product = bmm(l, r);
  // Back to the dims' order: (lro, lo, ro, the size-1 and summed dims).
  std::vector<int64_t> order = joined({&lro, &lo, &ro, &sums, &ones});
  Shape sizes;
  for (int64_t d : order) {
    bool in_left = std::find(lo.begin(), lo.end(), d) != lo.end() ||
                   std::find(lro.begin(), lro.end(), d) != lro.end();
    bool in_right = std::find(ro.begin(), ro.end(), d) != ro.end();
    sizes.push_back(in_left ? left.size(d) : in_right ? right.size(d) : 1);
  }
  std::vector<int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    inverse[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(i);
  }
  return permute(reshape(product, sizes), inverse);
}

// The batch dims of a cdist operand: all but the last two.
Shape batch_of(const Tensor& t) {
  return Shape(t.sizes().begin(), t.sizes().end() - 2);
}

Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

// _cdist_forward: CdistBackward0.
Tensor cdist_forward(
    const Tensor& x1, const Tensor& x2, double p, const Shape& out_shape) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      x1.dtype() == ScalarType::Float32 || x1.dtype() == ScalarType::Float64,
      "\"cdist\" not implemented for '",
      scalar_type_name(x1.dtype()),
      "'");
  NPGRAD_CHECK(
      x1.dtype() == x2.dtype(),
      "expected scalar type ",
      scalar_type_name(x1.dtype()),
      " but found ",
      scalar_type_name(x2.dtype()));
  Tensor out;
  {
    AutoGradMode no_grad(false);
    if (x1.numel() == 0 || x2.numel() == 0) {
      out = zeros(out_shape, x1.dtype());
    } else {
      // See kernels/distance.h: the rows of both operands with the
      // result's batch dims, one loop per pair of rows.
      Shape batch(out_shape.begin(), out_shape.end() - 2);
      Tensor a =
          contiguous(expand(x1, with_matrix(batch, x1.size(-2), x1.size(-1))));
      Tensor b =
          contiguous(expand(x2, with_matrix(batch, x2.size(-2), x2.size(-1))));
      out = kernels::empty(out_shape, x1.dtype());
      kernels::cdist_forward(a, b, p, out);
    }
  }
  if (auto node = record<autograd::CdistBackward0>(out, {&x1, &x2})) {
    node->p = p;
    node->x1_ = SavedVariable(x1, false);
    node->x2_ = SavedVariable(x2, false);
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

// _euclidean_dist: the distances from one matrix product (torch's padding
// of each side with its squared norms), clamped at 0 before the root.
Tensor euclidean_dist(const Tensor& x1, const Tensor& x2) {
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Tensor x1_norm = sum(pow(x1, 2.0), {-1}, true);
    Tensor x2_norm = sum(pow(x2, 2.0), {-1}, true);
    Tensor x1_ = cat({mul(x1, number(-2)), x1_norm, ones_like(x1_norm)}, -1);
    Tensor x2_ = cat({x2, ones_like(x2_norm), x2_norm}, -1);
    out = sqrt(clamp(matmul(x1_, transpose(x2_, -2, -1)), 0.0, std::nullopt));
  }
  if (auto node = record<autograd::EuclideanDistBackward0>(out, {&x1, &x2})) {
    node->x1_ = SavedVariable(x1, false);
    node->x2_ = SavedVariable(x2, false);
    node->result_ = SavedVariable(out, true);
  }
  return out;
}

}  // namespace

Tensor cosine_similarity(
    const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  // infer_size raises torch's error for shapes that do not broadcast.
  Shape shape = infer_size(x1.sizes(), x2.sizes());
  bool same = x1.sizes() == x2.sizes();
  Tensor a = same ? x1 : expand(x1, shape);
  Tensor b = same ? x2 : expand(x2, shape);
  auto clamped_norm = [&](const Tensor& t) {
    Tensor n = clone(reduction<reduction_ops::Norm>(
        t, std::vector<int64_t>{dim}, true, std::nullopt, false, 2.0));
    AutoGradMode no_grad(false);
    clamp_(n, eps, std::nullopt);
    return n;
  };
  Tensor na = clamped_norm(a);
  Tensor nb = clamped_norm(b);
  return sum(mul(div(a, na), div(b, nb)), std::vector<int64_t>{dim}, false);
}

Tensor trilinear(
    const Tensor& i1,
    const Tensor& i2,
    const Tensor& i3,
    const std::vector<int64_t>& expand1,
    const std::vector<int64_t>& expand2,
    const std::vector<int64_t>& expand3,
    const std::vector<int64_t>& sumdim,
    int64_t unroll_dim) {
  int64_t total = i1.dim() + static_cast<int64_t>(expand1.size());
  NPGRAD_CHECK(
      i2.dim() + static_cast<int64_t>(expand2.size()) == total &&
          i3.dim() + static_cast<int64_t>(expand3.size()) == total,
      "number of dimensions must match");
  NPGRAD_CHECK(
      unroll_dim >= 0 && unroll_dim < total,
      "unroll_dim must be in [0,",
      total - 1,
      "]");
  std::vector<bool> e1 = dim_set(expand1, total);
  std::vector<bool> e2 = dim_set(expand2, total);
  std::vector<bool> e3 = dim_set(expand3, total);
  std::vector<bool> summed = dim_set(sumdim, total);
  Tensor out;
  {
    AutoGradMode no_grad(false);
    // torch's order: the summed dims i3 lacks come from i1 and i2 alone, the
    // others from that product and i3; each pair is one bmm.
    std::vector<bool> first(summed.size()), second(summed.size());
    std::vector<int64_t> all;
    for (std::size_t i = 0; i < summed.size(); ++i) {
      first[i] = summed[i] && e3[i];
      second[i] = summed[i] && !e3[i];
      if (summed[i]) {
        all.push_back(static_cast<int64_t>(i));
      }
    }
    Tensor a = unsqueeze_at(i1, e1);
    Tensor b = unsqueeze_at(i2, e2);
    Tensor c = unsqueeze_at(i3, e3);
    Shape shape = infer_size(infer_size(a.sizes(), b.sizes()), c.sizes());
    if (i1.numel() == 0 || i2.numel() == 0 || i3.numel() == 0) {
      // Nothing to multiply (a size-0 dim would pass for a broadcast one).
      out = mul(mul(a, b), c);
      out = all.empty() ? out : sum(out, all, false);
    } else {
      Shape sizes;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (!summed[i]) {
          sizes.push_back(shape[i]);
        }
      }
      if (kernels::trilinear_loop_fits(a, b, c, shape)) {
        // Note [Small trilinear in one loop] (kernels/distance.h).
        out = zeros(sizes, a.dtype());
        kernels::trilinear_loop(a, b, c, shape, summed, out);
      } else {
        Tensor ab = sumproduct_pair(a, b, first);
        Tensor abc = sumproduct_pair(ab, c, second);
        out = clone(reshape(abc, sizes));
      }
    }
  }
  if (auto node = record<autograd::TrilinearBackward0>(out, {&i1, &i2, &i3})) {
    bool r1 = autograd::requires_grad(i1);
    bool r2 = autograd::requires_grad(i2);
    bool r3 = autograd::requires_grad(i3);
    node->expand1 = to_shape(expand1);
    node->expand2 = to_shape(expand2);
    node->expand3 = to_shape(expand3);
    node->sumdim = to_shape(sumdim);
    if (r2 || r3) {
      node->i1_ = SavedVariable(i1, false);
    }
    if (r1 || r3) {
      node->i2_ = SavedVariable(i2, false);
    }
    if (r1 || r2) {
      node->i3_ = SavedVariable(i3, false);
    }
  }
  return out;
}

Tensor cdist(
    const Tensor& x1,
    const Tensor& x2,
    double p,
    std::optional<int64_t> compute_mode) {
  NPGRAD_CHECK(
      x1.dim() >= 2,
      "cdist only supports at least 2D tensors, X1 got: ",
      x1.dim(),
      "D");
  NPGRAD_CHECK(
      x2.dim() >= 2,
      "cdist only supports at least 2D tensors, X2 got: ",
      x2.dim(),
      "D");
  NPGRAD_CHECK(
      x1.size(-1) == x2.size(-1),
      "X1 and X2 must have the same number of columns. X1: ",
      x1.size(-1),
      " X2: ",
      x2.size(-1));
  NPGRAD_CHECK(
      is_floating(x1.dtype()),
      "cdist only supports floating-point dtypes, X1 got: ",
      scalar_type_name(x1.dtype()));
  NPGRAD_CHECK(
      is_floating(x2.dtype()),
      "cdist only supports floating-point dtypes, X2 got: ",
      scalar_type_name(x2.dtype()));
  NPGRAD_CHECK(p >= 0, "cdist only supports non-negative p values");
  int64_t mode = compute_mode.value_or(0);
  NPGRAD_CHECK(
      mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  int64_t r1 = x1.size(-2);
  int64_t r2 = x2.size(-2);
  int64_t cols = x1.size(-1);
  Shape batch = infer_size(batch_of(x1), batch_of(x2));
  Shape out_shape = with_matrix(batch, r1, r2);
  bool use_mm = p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
  if (!use_mm || x1.numel() == 0 || x2.numel() == 0) {
    return cdist_forward(x1, x2, p, out_shape);
  }
  // torch's cdist_impl: the batch dims broadcast and flattened into one.
  int64_t batch_numel = 1;
  for (int64_t s : batch) {
    batch_numel *= s;
  }
  Tensor result;
  if (batch_numel == 1) {
    result = euclidean_dist(x1, x2);
  } else {
    // As torch's reshape of an expanded tensor: a copy (CloneBackward0) when
    // the expand broadcast a dim, then a view.
    Tensor a = view(
        contiguous(expand(x1, with_matrix(batch, r1, cols))),
        with_matrix(Shape{batch_numel}, r1, cols));
    Tensor b = view(
        contiguous(expand(x2, with_matrix(batch, r2, cols))),
        with_matrix(Shape{batch_numel}, r2, cols));
    result = euclidean_dist(a, b);
  }
  return view(result, out_shape);
}

Tensor cdist_backward(
    const Tensor& grad,
    const Tensor& x1,
    const Tensor& x2,
    double p,
    const Tensor& cdist) {
  Tensor out;
  {
    AutoGradMode no_grad(false);
    Shape x1_shape = with_matrix(batch_of(cdist), x1.size(-2), x1.size(-1));
    if (p == 0 || grad.numel() == 0 || x1.numel() == 0 || x2.numel() == 0) {
      out = zeros(x1_shape, x1.dtype());
    } else {
      Shape batch = batch_of(cdist);
      Tensor a = contiguous(expand(x1, x1_shape));
      Tensor b =
          contiguous(expand(x2, with_matrix(batch, x2.size(-2), x2.size(-1))));
      out = kernels::empty(x1_shape, x1.dtype());
      kernels::cdist_backward(
          contiguous(grad), a, b, p, contiguous(cdist), out);
    }
  }
  record<autograd::CdistBackwardBackward0>(out, {&grad, &x1, &x2, &cdist});
  return out;
}

}  // namespace npgrad::ops
