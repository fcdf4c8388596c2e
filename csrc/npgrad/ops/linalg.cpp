// The composites of the matrix product table's ops (linalg_ops.h) and views:
// outer, tensordot, kron, and matmul, which dispatches to them as torch's
// _matmul_impl does, so that it records torch's graph.
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/ops/linalg_ops.h"
#include "npgrad/ops/ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

/// torch's should_fold: whether matmul of a >= 3-D operand and a 1-D or 2-D
/// one folds the larger one's batch into mm/mv rather than expanding to bmm.
/// It folds when the smaller operand requires grad (the bmm gradient would
/// be batch-sized, then summed), or when the fold is a view.
bool should_fold(const Tensor& a, const Tensor& b) {
  bool a_larger = a.dim() >= b.dim();
  const Tensor& larger = a_larger ? a : b;
  const Tensor& smaller = a_larger ? b : a;
  if (!(larger.dim() >= 3 && smaller.dim() <= 2)) {
    return false;
  }
  if (autograd::requires_grad(smaller)) {
    return true;
  }
  if (a.dim() == 2) {
    return false;
  }
  if (larger.numel() == 0) {
    return true;
  }
  // The larger operand as the fold sees it (b transposed in its last two).
  Shape sizes = larger.sizes();
  Shape strides = larger.strides();
  if (!a_larger) {
    std::swap(sizes[sizes.size() - 1], sizes[sizes.size() - 2]);
    std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  }
  for (size_t i = 0; i + 2 < sizes.size(); ++i) {
    if (strides[i] != strides[i + 1] * sizes[i + 1]) {
      return false;
    }
  }
  return true;
}

int64_t product(const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    n *= s;
  }
  return n;
}

/// ND @ 1-D or 2-D (or the reverse, transposed): the larger operand's leading
/// dims folded into one, then mm or mv and an unsafe view back.
Tensor folded_matmul(const Tensor& a, const Tensor& b) {
  bool transposed = b.dim() > a.dim();
  Tensor t1 = transposed ? transpose(b, -2, -1) : a;
  Tensor t2 = !transposed ? b : (a.dim() == 2 ? t(a) : a);
  Shape out_sizes(t1.sizes().begin(), t1.sizes().end() - 1);
  int64_t folded = product(out_sizes);
  Tensor t1_folded = reshape(t1, {folded, t1.sizes().back()});
  if (t2.dim() == 1) {
    return unsafe_view(mv(t1_folded, t2), out_sizes);
  }
  out_sizes.push_back(t2.sizes()[1]);
  Tensor out = unsafe_view(mm(t1_folded, t2), out_sizes);
  return transposed ? contiguous(transpose(out, -2, -1)) : out;
}

/// Batched matmul: batch dims broadcast and flattened into one, then bmm.
Tensor batched_matmul(const Tensor& a, const Tensor& b) {
  int64_t n = a.dim() > 1 ? a.sizes()[a.dim() - 2] : 1;
  int64_t m1 = a.sizes().back();
  Shape batch1(
      a.sizes().begin(), a.sizes().end() - std::min<int64_t>(a.dim(), 2));
  int64_t m2 = b.dim() > 1 ? b.sizes()[b.dim() - 2] : b.sizes()[0];
  int64_t p = b.dim() > 1 ? b.sizes().back() : 1;
  Shape batch2(
      b.sizes().begin(), b.sizes().end() - std::min<int64_t>(b.dim(), 2));
  // A batch of one that requires grad is squeezed, so that the fold above
  // avoids a batch-sized gradient (torch's same optimization).
  if (a.dim() == 3 && b.dim() == 3 && batch1[0] != batch2[0]) {
    if (batch1[0] == 1 && autograd::requires_grad(a)) {
      return matmul(squeeze(a, 0), b);
    }
    if (batch2[0] == 1 && autograd::requires_grad(b)) {
      return matmul(a, squeeze(b, 0));
    }
  }
  Shape out_sizes = infer_size(batch1, batch2);
  int64_t batch = product(out_sizes);
  Shape a_sizes = out_sizes;
  a_sizes.push_back(n);
  a_sizes.push_back(m1);
  Tensor a3 = reshape(expand(a, a_sizes), {batch, n, m1});
  Shape b_sizes = out_sizes;
  b_sizes.push_back(m2);
  bool vector_rhs = b.dim() == 1;
  Tensor b3;
  if (vector_rhs) {
    b3 = unsqueeze(reshape(expand(b, b_sizes), {batch, m2}), 2);
  } else {
    b_sizes.push_back(p);
    b3 = reshape(expand(b, b_sizes), {batch, m2, p});
  }
  if (a.dim() > 1) {
    out_sizes.push_back(n);
  }
  if (b.dim() > 1) {
    out_sizes.push_back(p);
  }
  Tensor out = bmm(a3, b3);
  return unsafe_view(vector_rhs ? squeeze(out, -1) : out, out_sizes);
}

}  // namespace

// The C++ names (ops.h) of the matrix product table's ops that other ops and
// formulas call.
Tensor mm(const Tensor& a, const Tensor& b) {
  return linalg_product<linalg_ops::Mm>(a, b);
}
Tensor bmm(const Tensor& a, const Tensor& b) {
  return linalg_product<linalg_ops::Bmm>(a, b);
}
Tensor dot(const Tensor& a, const Tensor& b) {
  return linalg_product<linalg_ops::Dot>(a, b);
}
Tensor mv(const Tensor& mat, const Tensor& vec) {
  return linalg_product<linalg_ops::Mv>(mat, vec);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dim() == 1,
      "outer: Expected 1-D argument self, but got ",
      a.dim(),
      "-D");
  NPGRAD_CHECK(
      b.dim() == 1,
      "outer: Expected 1-D argument vec2, but got ",
      b.dim(),
      "-D");
  // torch's composite: self.reshape({-1, 1}) * vec2.
  return mul(reshape(a, {-1, 1}), b);
}

Tensor tensordot(
    const Tensor& a,
    const Tensor& b,
    const std::vector<int64_t>& dims_a,
    const std::vector<int64_t>& dims_b) {
  NPGRAD_CHECK(
      dims_a.size() == dims_b.size(),
      "both dimension lists should have same length");
  NPGRAD_CHECK(a.dtype() == b.dtype(), "both inputs should have same dtype");
  // Contracted dims of size 1 against a larger one are summed first.
  Tensor ta = a;
  Tensor tb = b;
  int64_t contracted = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    int64_t da = maybe_wrap_dim(dims_a[i], a.dim());
    int64_t db = maybe_wrap_dim(dims_b[i], b.dim());
    int64_t sa = a.sizes()[da];
    int64_t sb = b.sizes()[db];
    if (sb == 1) {
      ta = sum(ta, {da}, true, ta.dtype());
    } else if (sa == 1) {
      tb = sum(tb, {db}, true, tb.dtype());
    } else {
      NPGRAD_CHECK(
          sa == sb,
          "contracted dimensions need to match, but first has size ",
          sa,
          " in dim ",
          dims_a[i],
          " and second has size ",
          sb,
          " in dim ",
          dims_b[i]);
      contracted *= sa;
    }
  }
  // Each operand permuted to (kept dims, contracted dims) and (contracted,
  // kept), then one mm.
  auto contracted_mask = [](const std::vector<int64_t>& dims, int64_t ndim) {
    std::vector<bool> mask(static_cast<size_t>(ndim));
    for (int64_t d : dims) {
      int64_t w = maybe_wrap_dim(d, ndim);
      NPGRAD_CHECK(
          !mask[w], "dim ", w, " appears multiple times in the list of dims");
      mask[w] = true;
    }
    return mask;
  };
  std::vector<bool> mask_a = contracted_mask(dims_a, a.dim());
  std::vector<bool> mask_b = contracted_mask(dims_b, b.dim());
  std::vector<int64_t> perm_a, perm_b;
  Shape out_sizes;
  int64_t kept_a = 1;
  int64_t kept_b = 1;
  for (int64_t i = 0; i < a.dim(); ++i) {
    if (!mask_a[i]) {
      perm_a.push_back(i);
      kept_a *= ta.sizes()[i];
      out_sizes.push_back(ta.sizes()[i]);
    }
  }
  perm_a.insert(perm_a.end(), dims_a.begin(), dims_a.end());
  perm_b.assign(dims_b.begin(), dims_b.end());
  for (int64_t i = 0; i < b.dim(); ++i) {
    if (!mask_b[i]) {
      perm_b.push_back(i);
      kept_b *= tb.sizes()[i];
      out_sizes.push_back(tb.sizes()[i]);
    }
  }
  Tensor ma = reshape(permute(ta, perm_a), {kept_a, contracted});
  Tensor mb = reshape(permute(tb, perm_b), {contracted, kept_b});
  return reshape(mm(ma, mb), out_sizes);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  // torch's composite: a's dims interleaved with size-1 dims, b's the other
  // way round, one broadcast mul, and an unsafe view that merges each pair.
  int64_t ndim = std::max(a.dim(), b.dim());
  int64_t pad_a = ndim - a.dim();
  int64_t pad_b = ndim - b.dim();
  Shape a_sizes, b_sizes, out_sizes;
  for (int64_t i = 0; i < ndim; ++i) {
    int64_t sa = i >= pad_a ? a.sizes()[i - pad_a] : 1;
    int64_t sb = i >= pad_b ? b.sizes()[i - pad_b] : 1;
    a_sizes.push_back(sa);
    a_sizes.push_back(1);
    b_sizes.push_back(1);
    b_sizes.push_back(sb);
    out_sizes.push_back(sa * sb);
  }
  return unsafe_view(
      mul(unsafe_view(a, a_sizes), unsafe_view(b, b_sizes)), out_sizes);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dim() > 0 && b.dim() > 0,
      "both arguments to matmul need to be at least 1D, but they are ",
      a.dim(),
      "D and ",
      b.dim(),
      "D");
  if (a.dim() == 1 && b.dim() == 1) {
    return dot(a, b);
  }
  if (a.dim() == 2 && b.dim() == 1) {
    return mv(a, b);
  }
  if (a.dim() == 1 && b.dim() == 2) {
    return squeeze_matmul_dim(mm(unsqueeze(a, 0), b), 0);
  }
  if (a.dim() == 2 && b.dim() == 2) {
    return mm(a, b);
  }
  if (should_fold(a, b)) {
    return folded_matmul(a, b);
  }
  return batched_matmul(a, b);
}

}  // namespace npgrad::ops
