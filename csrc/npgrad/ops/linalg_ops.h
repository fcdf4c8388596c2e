#pragma once
// The matrix product table: one entry per product of two factors, with or
// without an input added (fields described at the top of linalg_family.h).
// Each entry is the op's one home: checks, shape, node, saved state,
// backward formulas, docstring.
//
// Not here, because torch writes them as composites of these ops and of
// views, so that they record those ops' nodes (linalg.cpp): matmul (dot, mv,
// mm, a fold of the batch dims into mm/mv, or bmm over broadcast batches),
// outer and its alias ger (a broadcast mul), tensordot (permutes and
// reshapes around one mm), kron (a broadcast mul between unsafe views),
// einsum (einsum.cpp: permutes, reshapes and bmm).

#include "npgrad/ops/linalg_family.h"
#include "npgrad/ops/unary_ops.h"

namespace npgrad::ops::linalg_ops {

// ---- Matrices: mm and addmm ----

inline void check_mm_shapes(const Tensor& m1, const Tensor& m2) {
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

/// What mm and addmm share: the shape, the formulas and the saved layout.
struct MatrixProduct {
  static constexpr bool saves_layout = true;
  static Shape sizes(const Tensor& a, const Tensor& b) {
    return {a.sizes()[0], b.sizes()[1]};
  }
  static Tensor grad_first(const Tensor& grad, const Tensor& second) {
    return mm(grad, t(second));
  }
  static Tensor grad_second(const Tensor& grad, const Tensor& first) {
    return mm(t(first), grad);
  }
};

struct Mm : MatrixProduct {
  static constexpr const char* name = "mm";
  static constexpr const char* node = "MmBackward0";
  static constexpr bool adds_input = false;
  static constexpr const char* first = "self";
  static constexpr const char* second = "mat2";
  static constexpr bool second_saved_first = true;
  static void check(const Tensor& a, const Tensor& b) {
    NPGRAD_CHECK(a.dim() == 2, "self must be a matrix");
    NPGRAD_CHECK(b.dim() == 2, "mat2 must be a matrix");
    check_mm_shapes(a, b);
    NPGRAD_CHECK(
        a.dtype() == b.dtype(),
        "expected m1 and m2 to have the same dtype, but got: ",
        type_meta_name(a.dtype()),
        " != ",
        type_meta_name(b.dtype()));
    unary_ops::check_kernel_dtype(
        "addmm_impl_cpu_", a, a.dtype() != ScalarType::Bool);
  }
  static constexpr OpDoc doc = {
      "The product of two matrices",
      "[[1.0, 2.0], [3.0, 4.0]]",
      "tensor([[3.],\n        [7.]])",
      "torch.tensor([[1.0], [1.0]])"};
};

struct Addmm : MatrixProduct {
  static constexpr const char* name = "addmm";
  static constexpr const char* node = "AddmmBackward0";
  static constexpr bool adds_input = true;
  static constexpr const char* first = "mat1";
  static constexpr const char* second = "mat2";
  static constexpr bool second_saved_first = false;
  static void check(
      const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
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
        mat1.dim() == 2,
        "mat1 must be a matrix, got ",
        mat1.dim(),
        "-D tensor");
    NPGRAD_CHECK(
        mat2.dim() == 2,
        "mat2 must be a matrix, got ",
        mat2.dim(),
        "-D tensor");
    check_mm_shapes(mat1, mat2);
    unary_ops::check_kernel_dtype(
        "addmm_impl_cpu_", mat1, mat1.dtype() != ScalarType::Bool);
  }
  static constexpr OpDoc doc = {
      "``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the "
      "product's shape",
      "[[1.0, 1.0]]",
      "tensor([[3.5000, 3.5000]])",
      "torch.ones(1, 3), torch.ones(3, 2), beta=2, alpha=0.5"};
};

// ---- Batches of matrices: bmm and baddbmm ----

inline void check_batches(const Tensor& batch1, const Tensor& batch2) {
  NPGRAD_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  NPGRAD_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
}

inline void check_bmm(const Tensor& batch1, const Tensor& batch2) {
  check_batches(batch1, batch2);
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

/// What bmm and baddbmm share.
struct BatchProduct {
  static constexpr bool saves_layout = false;
  static Shape sizes(const Tensor& a, const Tensor& b) {
    return {a.sizes()[0], a.sizes()[1], b.sizes()[2]};
  }
  static Tensor grad_first(const Tensor& grad, const Tensor& second) {
    return bmm(grad, transpose(second, 1, 2));
  }
  static Tensor grad_second(const Tensor& grad, const Tensor& first) {
    return bmm(transpose(first, 1, 2), grad);
  }
};

struct Bmm : BatchProduct {
  static constexpr const char* name = "bmm";
  static constexpr const char* node = "BmmBackward0";
  static constexpr bool adds_input = false;
  static constexpr const char* first = "self";
  static constexpr const char* second = "mat2";
  static constexpr bool second_saved_first = true;
  static void check(const Tensor& a, const Tensor& b) {
    check_bmm(a, b);
    unary_ops::check_kernel_dtype("bmm", a, a.dtype() != ScalarType::Bool);
  }
  static constexpr OpDoc doc = {
      "The product of two batches of matrices: ``(b, n, m) @ (b, m, p)`` "
      "gives ``(b, n, p)``",
      "[[[1.0, 2.0]]]",
      "tensor([[[11.]]])",
      "torch.tensor([[[3.0], [4.0]]])"};
};

struct Baddbmm : BatchProduct {
  static constexpr const char* name = "baddbmm";
  static constexpr const char* node = "BaddbmmBackward0";
  static constexpr bool adds_input = true;
  static constexpr const char* first = "batch1";
  static constexpr const char* second = "batch2";
  static constexpr bool second_saved_first = false;
  static void check(
      const Tensor& self, const Tensor& batch1, const Tensor& batch2) {
    check_batches(batch1, batch2);
    {
      // torch checks that self broadcasts to the product before the dtypes.
      autograd::AutoGradMode no_grad(false);
      expand(self, sizes(batch1, batch2));
    }
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
  static constexpr OpDoc doc = {
      "``beta * input + alpha * bmm(batch1, batch2)``, ``input`` broadcast to "
      "the product's shape",
      "[[[1.0]]]",
      "tensor([[[7.]]])",
      "torch.ones(1, 1, 2), torch.ones(1, 2, 1), alpha=3"};
};

// ---- Vectors: dot, mv and addmv ----

struct Dot {
  static constexpr const char* name = "dot";
  static constexpr const char* node = "DotBackward0";
  static constexpr bool adds_input = false;
  static constexpr const char* first = "self";
  static constexpr const char* second = "tensor";
  static constexpr bool saves_layout = false;
  static constexpr bool second_saved_first = false;
  static void check(const Tensor& a, const Tensor& b) {
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
  }
  static Shape sizes(const Tensor&, const Tensor&) { return {}; }
  static Tensor grad_first(const Tensor& grad, const Tensor& second) {
    return mul(grad, second);
  }
  static Tensor grad_second(const Tensor& grad, const Tensor& first) {
    return mul(grad, first);
  }
  static constexpr OpDoc doc = {
      "The dot product of two vectors",
      "[1.0, 2.0, 3.0]",
      "tensor(32.)",
      "torch.tensor([4.0, 5.0, 6.0])"};
};

inline void check_addmv(
    const Tensor& self, const Tensor& mat, const Tensor& vec) {
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

/// What mv and addmv share.
struct MatrixVectorProduct {
  static constexpr bool saves_layout = false;
  static constexpr bool second_saved_first = false;
  static Shape sizes(const Tensor& mat, const Tensor&) {
    return {mat.sizes()[0]};
  }
  static Tensor grad_first(const Tensor& grad, const Tensor& vec) {
    return outer(grad, vec);
  }
  static Tensor grad_second(const Tensor& grad, const Tensor& mat) {
    return mv(t(mat), grad);
  }
};

struct Mv : MatrixVectorProduct {
  static constexpr const char* name = "mv";
  static constexpr const char* node = "MvBackward0";
  static constexpr bool adds_input = false;
  static constexpr const char* first = "self";
  static constexpr const char* second = "vec";
  // torch's mv is addmv into an empty result of vec's dtype.
  static void check(const Tensor& mat, const Tensor& vec) {
    NPGRAD_CHECK(
        mat.dim() == 2 && vec.dim() == 1,
        "vector + matrix @ vector expected, got 1, ",
        mat.dim(),
        ", ",
        vec.dim());
    check_addmv(zeros({mat.sizes()[0]}, vec.dtype()), mat, vec);
  }
  static constexpr OpDoc doc = {
      "The product of a matrix and a vector",
      "[[1.0, 2.0], [3.0, 4.0]]",
      "tensor([-1., -1.])",
      "torch.tensor([1.0, -1.0])"};
};

struct Addmv : MatrixVectorProduct {
  static constexpr const char* name = "addmv";
  static constexpr const char* node = "AddmvBackward0";
  static constexpr bool adds_input = true;
  static constexpr const char* first = "mat";
  static constexpr const char* second = "vec";
  static void check(const Tensor& self, const Tensor& mat, const Tensor& vec) {
    check_addmv(self, mat, vec);
  }
  static constexpr OpDoc doc = {
      "``beta * input + alpha * (mat @ vec)``, ``input`` broadcast to the "
      "product's shape",
      "[1.0, 2.0]",
      "tensor([3.5000, 4.0000])",
      "torch.ones(2, 3), torch.ones(3), beta=0.5"};
};

using LinalgOps = OpList<Mm, Addmm, Bmm, Baddbmm, Dot, Mv, Addmv>;

}  // namespace npgrad::ops::linalg_ops
