// The matrix products (mm, addmm, bmm, baddbmm, dot, mv, addmv, outer) and
// matmul, which dispatches to them through views as torch's _matmul_impl
// does, so that it records torch's graph.
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/linalg_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/ops/unary_ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

template <typename NodeT>
std::shared_ptr<NodeT> make_product_node(
    std::initializer_list<const Tensor*> inputs) {
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges(inputs));
  return node;
}

/// beta * self + alpha * (a @ b) through NumPy's matmul; a reduced float
/// computes in float32 and rounds once, as torch's CPU kernels accumulate in
/// float. With beta == 0 self is not read (a NaN in it does not propagate), as
/// in torch.
Tensor scaled_product(
    const Tensor* self,
    const Tensor& a,
    const Tensor& b,
    double beta,
    double alpha) {
  ScalarType dtype = a.dtype();
  ScalarType compute = opmath_type(dtype);
  auto in = [compute](const Tensor& x) {
    return x.dtype() == compute ? x : kernels::cast(x, compute);
  };
  Tensor out = kernels::matmul(in(a), in(b));
  if (alpha != 1) {
    out = kernels::binary(
        kernels::Binary::Mul,
        out,
        wrapped_scalar(alpha, ScalarType::Float64),
        compute);
  }
  if (self != nullptr && beta != 0) {
    Tensor s = in(*self);
    if (beta != 1) {
      s = kernels::binary(
          kernels::Binary::Mul,
          s,
          wrapped_scalar(beta, ScalarType::Float64),
          compute);
    }
    out = kernels::binary(kernels::Binary::Add, s, out, compute);
  }
  return out.dtype() == dtype ? out : kernels::cast(out, dtype);
}

/// torch's error when self cannot broadcast to the result's shape (the
/// message of expand).
void check_expands_to(const Tensor& self, const Shape& sizes) {
  AutoGradMode no_grad(false);
  expand(self, sizes);
}

/// An in-place product writes a result of self's exact shape.
void check_inplace_shape(const Tensor& self, const Shape& result) {
  NPGRAD_CHECK(
      self.sizes() == result,
      "Bad in-place call: input tensor size ",
      shape_str(self.sizes()),
      " and output tensor size ",
      shape_str(result),
      " should match");
}

void check_mm_dtypes(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dtype() == b.dtype(),
      "expected m1 and m2 to have the same dtype, but got: ",
      type_meta_name(a.dtype()),
      " != ",
      type_meta_name(b.dtype()));
}

void check_mm_shapes(const Tensor& m1, const Tensor& m2) {
  NPGRAD_CHECK(
      m1.sizes()[1] == m2.sizes()[0],
      "mat1 and mat2 shapes cannot be multiplied (",
      m1.sizes()[0],
      "x",
      m1.sizes()[1],
      " and ",
      m2.sizes()[0],
      "x",
      m2.sizes()[1],
      ")");
}

// ---- addmm ----

void check_addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  NPGRAD_CHECK(
      self.dtype() == mat2.dtype(),
      "self and mat2 must have the same dtype, but got ",
      scalar_type_name(self.dtype()),
      " and ",
      scalar_type_name(mat2.dtype()));
  NPGRAD_CHECK(
      mat1.dtype() == mat2.dtype(),
      "mat1 and mat2 must have the same dtype, but got ",
      scalar_type_name(mat1.dtype()),
      " and ",
      scalar_type_name(mat2.dtype()));
  NPGRAD_CHECK(
      mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  NPGRAD_CHECK(
      mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  check_mm_shapes(mat1, mat2);
  unary_ops::check_kernel_dtype(
      "addmm_impl_cpu_", mat1, mat1.dtype() != ScalarType::Bool);
}

// ---- bmm and baddbmm ----

void check_bmm(const Tensor& batch1, const Tensor& batch2) {
  NPGRAD_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  NPGRAD_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  int64_t bs = batch1.sizes()[0];
  int64_t k = batch1.sizes()[2];
  NPGRAD_CHECK(
      batch2.sizes()[0] == bs && batch2.sizes()[1] == k,
      "Expected size for first two dimensions of batch2 tensor to be: [",
      bs,
      ", ",
      k,
      "] but got: [",
      batch2.sizes()[0],
      ", ",
      batch2.sizes()[1],
      "].");
  NPGRAD_CHECK(
      batch1.dtype() == batch2.dtype(),
      "expected scalar type ",
      scalar_type_name(batch1.dtype()),
      " but found ",
      scalar_type_name(batch2.dtype()));
}

Shape bmm_sizes(const Tensor& batch1, const Tensor& batch2) {
  return {batch1.sizes()[0], batch1.sizes()[1], batch2.sizes()[2]};
}

void check_baddbmm(
    const Tensor& self, const Tensor& batch1, const Tensor& batch2) {
  NPGRAD_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  NPGRAD_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  check_expands_to(self, bmm_sizes(batch1, batch2));
  NPGRAD_CHECK(
      self.dtype() == batch1.dtype(),
      "Input dtypes must be the same, got: input ",
      type_meta_name(self.dtype()),
      ", batch1: ",
      type_meta_name(batch1.dtype()),
      ", batch2: ",
      type_meta_name(batch2.dtype()));
  check_bmm(batch1, batch2);
  unary_ops::check_kernel_dtype(
      "baddbmm", batch1, batch1.dtype() != ScalarType::Bool);
}

// ---- mv and addmv ----

void check_addmv(const Tensor& self, const Tensor& mat, const Tensor& vec) {
  NPGRAD_CHECK(
      mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1,
      "vector + matrix @ vector expected, got ",
      self.dim(),
      ", ",
      mat.dim(),
      ", ",
      vec.dim());
  NPGRAD_CHECK(
      mat.sizes()[1] == vec.sizes()[0] &&
          (self.dim() == 0 || self.sizes()[0] == mat.sizes()[0] ||
           self.sizes()[0] == 1),
      "size mismatch, got input (",
      self.dim() == 0 ? 1 : self.sizes()[0],
      "), mat (",
      mat.sizes()[0],
      "x",
      mat.sizes()[1],
      "), vec (",
      vec.sizes()[0],
      ")");
  NPGRAD_CHECK(
      self.dtype() == mat.dtype() && mat.dtype() == vec.dtype(),
      "addmv input tensors must have the same dtype, but got ",
      scalar_type_name(self.dtype()),
      ", ",
      scalar_type_name(mat.dtype()),
      ", and ",
      scalar_type_name(vec.dtype()));
  unary_ops::check_kernel_dtype(
      "addmv_impl_cpu", mat, mat.dtype() != ScalarType::Bool);
}

/// A product of two operands whose node saves each one only when the other's
/// gradient is needed (bmm, dot, mv).
template <typename NodeT>
Tensor product(const Tensor& a, const Tensor& b) {
  Tensor out = scaled_product(nullptr, a, b, 0, 1);
  if (auto node = record<NodeT>(out, {&a, &b})) {
    if (node->should_compute_output(1)) {
      node->self_ = SavedVariable(a, false);
    }
    if (node->should_compute_output(0)) {
      node->other_ = SavedVariable(b, false);
    }
  }
  return out;
}

// ---- The products with an input: beta * self + alpha * product ----
// One struct per op: its checks, the product's shape, its node and what the
// node saves (each operand only when the other one's gradient is needed, as
// torch's derivatives.yaml).

struct Addmm {
  using Node = AddmmBackward0;
  static void check(const Tensor& self, const Tensor& a, const Tensor& b) {
    check_addmm(self, a, b);
  }
  static Shape sizes(const Tensor& a, const Tensor& b) {
    return {a.sizes()[0], b.sizes()[1]};
  }
  static void save(Node& node, const Tensor& mat1, const Tensor& mat2) {
    // A matrix with the other's strides; the sizes always.
    if (node.should_compute_output(1)) {
      node.mat2_ = SavedVariable(mat2, false);
      node.mat1_strides = mat1.strides();
    }
    if (node.should_compute_output(2)) {
      node.mat1_ = SavedVariable(mat1, false);
      node.mat2_strides = mat2.strides();
    }
    node.mat1_sizes = mat1.sizes();
    node.mat2_sizes = mat2.sizes();
  }
};

struct Baddbmm {
  using Node = BaddbmmBackward0;
  static void check(const Tensor& self, const Tensor& a, const Tensor& b) {
    check_baddbmm(self, a, b);
  }
  static Shape sizes(const Tensor& a, const Tensor& b) {
    return bmm_sizes(a, b);
  }
  static void save(Node& node, const Tensor& batch1, const Tensor& batch2) {
    if (node.should_compute_output(2)) {
      node.batch1_ = SavedVariable(batch1, false);
    }
    if (node.should_compute_output(1)) {
      node.batch2_ = SavedVariable(batch2, false);
    }
  }
};

struct Addmv {
  using Node = AddmvBackward0;
  static void check(const Tensor& self, const Tensor& a, const Tensor& b) {
    check_addmv(self, a, b);
  }
  static Shape sizes(const Tensor& a, const Tensor& /*b*/) {
    return {a.sizes()[0]};
  }
  static void save(Node& node, const Tensor& mat, const Tensor& vec) {
    if (node.should_compute_output(2)) {
      node.mat_ = SavedVariable(mat, false);
    }
    if (node.should_compute_output(1)) {
      node.vec_ = SavedVariable(vec, false);
    }
  }
};

template <typename Op>
std::shared_ptr<typename Op::Node> product_node(
    const Tensor& self,
    const Tensor& a,
    const Tensor& b,
    double beta,
    double alpha) {
  auto node = make_product_node<typename Op::Node>({&self, &a, &b});
  node->alpha = alpha;
  node->beta = beta;
  Op::save(*node, a, b);
  return node;
}

template <typename Op>
Tensor add_product(
    const Tensor& self,
    const Tensor& a,
    const Tensor& b,
    double beta,
    double alpha) {
  Op::check(self, a, b);
  check_expands_to(self, Op::sizes(a, b));
  Tensor out = scaled_product(&self, a, b, beta, alpha);
  if (compute_requires_grad({&self, &a, &b})) {
    set_history(out, product_node<Op>(self, a, b, beta, alpha));
  }
  return out;
}

/// The in-place form through Note [The mutation path]: self keeps its shape.
template <typename Op>
void add_product_(
    const Tensor& self,
    const Tensor& a,
    const Tensor& b,
    double beta,
    double alpha,
    const char* op) {
  Op::check(self, a, b);
  check_inplace_shape(self, Op::sizes(a, b));
  bool requires_grad = compute_requires_grad({&self, &a, &b});
  check_inplace(self, requires_grad);
  std::shared_ptr<Node> node;
  if (requires_grad) {
    node = product_node<Op>(self, a, b, beta, alpha);
  }
  kernels::copy_into(self, scaled_product(&self, a, b, beta, alpha));
  finish_inplace(self, node, op);
}

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

Tensor mm(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(a.dim() == 2, "self must be a matrix");
  NPGRAD_CHECK(b.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(a, b);
  check_mm_dtypes(a, b);
  unary_ops::check_kernel_dtype(
      "addmm_impl_cpu_", a, a.dtype() != ScalarType::Bool);
  Tensor out = scaled_product(nullptr, a, b, 0, 1);
  if (auto node = record<MmBackward0>(out, {&a, &b})) {
    // As torch's derivatives.yaml: each operand's strides (like the other
    // operand) only when its own gradient is needed; the sizes always.
    if (node->should_compute_output(0)) {
      node->other_ = SavedVariable(b, false);
      node->self_strides = a.strides();
    }
    if (node->should_compute_output(1)) {
      node->self_ = SavedVariable(a, false);
      node->mat2_strides = b.strides();
    }
    node->self_sizes = a.sizes();
    node->mat2_sizes = b.sizes();
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  check_bmm(a, b);
  unary_ops::check_kernel_dtype("bmm", a, a.dtype() != ScalarType::Bool);
  return product<BmmBackward0>(a, b);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  NPGRAD_CHECK(
      a.dim() == 1 && b.dim() == 1,
      "1D tensors expected, but got ",
      a.dim(),
      "D and ",
      b.dim(),
      "D tensors");
  NPGRAD_CHECK(
      a.dtype() == b.dtype(),
      "dot : expected both vectors to have same dtype, but found ",
      scalar_type_name(a.dtype()),
      " and ",
      scalar_type_name(b.dtype()));
  NPGRAD_CHECK(
      a.numel() == b.numel(),
      "inconsistent tensor size, expected tensor [",
      a.numel(),
      "] and src [",
      b.numel(),
      "] to have the same number of elements, but got ",
      a.numel(),
      " and ",
      b.numel(),
      " elements respectively");
  unary_ops::check_kernel_dtype("dot", a, a.dtype() != ScalarType::Bool);
  return product<DotBackward0>(a, b);
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  // torch's mv is addmv into an empty result of vec's dtype.
  NPGRAD_CHECK(
      mat.dim() == 2 && vec.dim() == 1,
      "vector + matrix @ vector expected, got 1, ",
      mat.dim(),
      ", ",
      vec.dim());
  check_addmv(zeros({mat.sizes()[0]}, vec.dtype()), mat, vec);
  return product<MvBackward0>(mat, vec);
}

#define NPGRAD_PRODUCT_WITH_INPUT(name, Op)               \
  Tensor name(                                            \
      const Tensor& self,                                 \
      const Tensor& a,                                    \
      const Tensor& b,                                    \
      double beta,                                        \
      double alpha) {                                     \
    return add_product<Op>(self, a, b, beta, alpha);      \
  }                                                       \
  void name##_(                                           \
      const Tensor& self,                                 \
      const Tensor& a,                                    \
      const Tensor& b,                                    \
      double beta,                                        \
      double alpha) {                                     \
    add_product_<Op>(self, a, b, beta, alpha, #name "_"); \
  }
NPGRAD_PRODUCT_WITH_INPUT(addmm, Addmm)
NPGRAD_PRODUCT_WITH_INPUT(baddbmm, Baddbmm)
NPGRAD_PRODUCT_WITH_INPUT(addmv, Addmv)
#undef NPGRAD_PRODUCT_WITH_INPUT

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
