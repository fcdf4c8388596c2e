#pragma once
// The reduction op table: one entry per op that reduces over `dim` with
// `keepdim` (fields described at the top of reduction_family.h). Each entry
// is the op's one home: kernel, dtype rule, node, saved state, backward
// formula, docstring.
//
// Not here: var_mean/std_mean (two outputs; their op and node share Var's
// and Mean's kernels and formulas), nanmean (torch records it as a
// composite, DivBackward0), max/min (namedtuples), linalg.matrix_norm (npgrad
// has none: norm's matrix orders raise torch's errors).

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/ops/reduction_family.h"
#include "npgrad/tensor/shape.h"

namespace npgrad::ops::reduction_ops {

using autograd::scalar;

// t /= n, in place, as torch's reductions divide.
inline void divide_in_place(const Tensor& t, double n) {
  kernels::binary_out(
      kernels::Binary::Div, t, wrapped_scalar(n, ScalarType::Float64), t);
}

struct Sum {
  static constexpr const char* name = "sum";
  static constexpr const char* node = "SumBackward1";
  static constexpr const char* full_node = "SumBackward0";
  static constexpr Dim dim = Dim::Optional;
  static constexpr Dtype dtype = Dtype::IntegersToInt64;
  static constexpr bool takes_dtype = true;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::SelfSizes;
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    return a.dim() == 0 ? kernels::cast(a, dtype)
                        : kernels::sum(a, dims, keepdim, dtype);
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    return expand(s.unreduced(grad), s.self_sizes);
  }
  static constexpr OpDoc doc = {
      "The sum over ``dim`` (all dims by default); integer and bool tensors "
      "sum to int64",
      "[[1.0, 2.0], [3.0, 4.0]]",
      "tensor([3., 7.])",
      "1"};
};

struct Mean {
  static constexpr const char* name = "mean";
  static constexpr const char* node = "MeanBackward1";
  static constexpr const char* full_node = "MeanBackward0";
  static constexpr Dim dim = Dim::Optional;
  static constexpr Dtype dtype = Dtype::FloatOnly;
  static constexpr bool takes_dtype = true;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::SelfNumel | Saved::SelfSizes;
  // sum / n. torch's CPU mean divides a reduced-float sum while it is still
  // in float32 and rounds once (see Note [Reduced floats compute in float32
  // where torch does]).
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    Tensor out = kernels::sum(a, dims, keepdim, opmath_type(dtype));
    divide_in_place(
        out,
        static_cast<double>(a.numel()) /
            static_cast<double>(std::max<int64_t>(out.numel(), 1)));
    return is_reduced_float(dtype) ? kernels::cast(out, dtype) : out;
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    double n = static_cast<double>(s.self_numel) /
               static_cast<double>(std::max<int64_t>(grad.numel(), 1));
    return div(expand(s.unreduced(grad), s.self_sizes), scalar(n));
  }
  static constexpr OpDoc doc = {
      "The mean over ``dim`` (all dims by default) of a floating tensor",
      "[[1.0, 2.0], [3.0, 4.0]]",
      "tensor([2., 3.])",
      "0"};
};

// torch's check that every reduced dim is non-empty, naming the dim as the
// caller wrote it.
inline void check_nonempty_dims(
    const char* fn,
    const Tensor& a,
    const std::vector<int64_t>& given,
    const std::vector<int64_t>& wrapped) {
  if (a.numel() > 0) {
    return;
  }
  NPGRAD_CHECK(
      !given.empty(),
      fn,
      "(): Expected reduction dim to be specified for input.numel() == 0. "
      "Specify the reduction dim with the 'dim' argument.");
  for (std::size_t i = 0; i < wrapped.size(); ++i) {
    NPGRAD_CHECK_INDEX(
        a.sizes()[wrapped[i]] > 0,
        fn,
        "(): Expected reduction dim ",
        given[i],
        " to have non-zero size.");
  }
}

// amax and amin: the gradient is split evenly among the elements equal to
// the result along the reduced dims (where(), not mask * (g / count): no NaN
// when nothing matches a result modified through hooks).
template <bool kIsMax>
struct Extremum {
  static constexpr Dim dim = Dim::All;
  static constexpr Dtype dtype = Dtype::Input;
  static constexpr bool takes_dtype = false;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::Self | Saved::Result;
  static void check(const Tensor& a, const ReductionArgs& args) {
    check_nonempty_dims(kIsMax ? "amax" : "amin", a, args.given, args.wrapped);
  }
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    return a.dim() == 0 ? kernels::cast(a, dtype)
                        : kernels::amax(a, dims, keepdim, kIsMax);
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    Tensor hit = eq(s.self, s.unreduced(s.result));
    Tensor count = sum(to_dtype(hit, grad.dtype()), s.reduced(), true);
    return where(hit, div(s.unreduced(grad), count), scalar(0));
  }
};

struct Amax : Extremum<true> {
  static constexpr const char* name = "amax";
  static constexpr const char* node = "AmaxBackward0";
  static constexpr OpDoc doc = {
      "The largest element over ``dim`` (all dims by default); ties share "
      "the gradient evenly",
      "[[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]",
      "tensor([5., 4.])",
      "1"};
};

struct Amin : Extremum<false> {
  static constexpr const char* name = "amin";
  static constexpr const char* node = "AminBackward0";
  static constexpr OpDoc doc = {
      "The smallest element over ``dim`` (all dims by default); ties share "
      "the gradient evenly",
      "[[1.0, 5.0, 5.0], [3.0, 4.0, 2.0]]",
      "tensor([1., 4., 2.])",
      "0"};
};

struct Logsumexp {
  static constexpr const char* name = "logsumexp";
  static constexpr const char* node = "LogsumexpBackward0";
  static constexpr Dim dim = Dim::Required;
  static constexpr Dtype dtype = Dtype::IntegersToFloat;
  static constexpr bool takes_dtype = false;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::Self | Saved::Result;
  static void check(const Tensor& a, const ReductionArgs& args) {
    if (args.given.empty() && a.dim() > 0) {
      // torch resizes a 0-dim output to the reduced shape and fails.
      std::string shape;
      for (int64_t i = 0; i < a.dim(); ++i) {
        shape += i ? ", 1" : "1";
      }
      NPGRAD_CHECK(
          false,
          "output with shape [] doesn't match the broadcast shape [",
          shape,
          "]");
    }
  }
  // max + log(sum(exp(x - max))), with an infinite max taken as 0; a reduced
  // float computes in float32 and rounds once.
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    ScalarType dt = opmath_type(dtype);
    Tensor x = a.dtype() == dt ? a : kernels::cast(a, dt);
    Tensor out;
    if (a.dim() == 0) {
      out = kernels::cast(x, dt);
    } else if (x.numel() == 0) {
      out = kernels::sum(x, dims, keepdim, dt);
      kernels::fill(out, -std::numeric_limits<double>::infinity());
    } else {
      static const kernels::UnaryUfunc& exp = kernels::unary_ufunc("exp");
      static const kernels::UnaryUfunc& log = kernels::unary_ufunc("log");
      // The max over dims (kept), fresh and contiguous: an infinite one
      // becomes 0, in one loop (not abs, eq and where: on small tensors each
      // NumPy call costs more than the loop).
      Tensor m = kernels::amax(x, dims, true, true);
      kernels::dispatch_floating(dt, [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        T* p = static_cast<T*>(m.data_ptr());
        for (int64_t i = 0, n = m.numel(); i < n; ++i) {
          p[i] = std::isinf(p[i]) ? T(0) : p[i];
        }
      });
      Tensor e = kernels::binary(kernels::Binary::Sub, x, m, dt);
      kernels::unary_out(exp, e, e);
      out = kernels::sum(e, dims, true, dt);
      kernels::unary_out(log, out, out);
      kernels::binary_out(kernels::Binary::Add, out, m, out);
      if (!keepdim) {
        // Dropping the reduced dims (all of size 1) keeps it contiguous.
        Shape sizes;
        for (int64_t d = 0; d < out.dim(); ++d) {
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
            sizes.push_back(out.sizes()[d]);
          }
        }
        out =
            kernels::view_as_strided(out, sizes, contiguous_strides(sizes), 0);
      }
    }
    return dt == dtype ? out : kernels::cast(out, dtype);
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    return mul(s.unreduced(grad), exp(sub(s.self, s.unreduced(s.result))));
  }
  static constexpr OpDoc doc = {
      "``log(exp(input).sum(dim))``, computed stably",
      "[[0.0, 1.0], [2.0, 3.0]]",
      "tensor([1.3133, 3.3133])",
      "1"};
};

struct Nansum {
  static constexpr const char* name = "nansum";
  static constexpr const char* node = "NansumBackward0";
  static constexpr Dim dim = Dim::Optional;
  static constexpr Dtype dtype = Dtype::IntegersToInt64;
  static constexpr bool takes_dtype = true;
  static constexpr unsigned saves = Saved::Dim | Saved::Keepdim | Saved::Self;
  // sum with NaN read as 0 (integers have none).
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    if (!is_floating(a.dtype())) {
      return Sum::kernel(a, dims, keepdim, dtype);
    }
    Tensor nan = kernels::binary(kernels::Binary::Ne, a, a, a.dtype());
    Tensor zeroed =
        kernels::where(nan, wrapped_scalar(0, a.dtype()), a, a.dtype());
    return Sum::kernel(zeroed, dims, keepdim, dtype);
  }
  // The gradient of the elements that are not NaN, as torch's
  // nansum_backward (grad in self's dtype).
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    return mul(
        s.unreduced(to_dtype(grad, s.self.dtype())),
        logical_not(isnan(s.self)));
  }
  static constexpr OpDoc doc = {
      "The sum over ``dim`` (all dims by default) with NaN counted as zero",
      "[[1.0, float('nan')], [3.0, 4.0]]",
      "tensor([1., 7.])",
      "1"};
};

struct Prod {
  static constexpr const char* name = "prod";
  static constexpr const char* node = "ProdBackward1";
  static constexpr const char* full_node = "ProdBackward0";
  static constexpr Dim dim = Dim::One;
  static constexpr Dtype dtype = Dtype::IntegersToInt64;
  static constexpr bool takes_dtype = true;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::Self | Saved::Result;
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype) {
    return a.dim() == 0 ? kernels::cast(a, dtype)
                        : kernels::prod(a, dims, keepdim, dtype);
  }
  // grad times the derivative of the product along dim d (grad and result
  // keep d as size 1). Without zeros in self that is result / self, as torch
  // computes it; with zeros, each element's product of the others, from an
  // n x n layout that replaces one element by 1 per row, so that higher
  // orders stay exact.
  static Tensor along(
      const Tensor& grad, const Tensor& self, const Tensor& result, int64_t d) {
    Tensor x = to_dtype(self, result.dtype());
    Tensor has_zero = any(eq(x, scalar(0)), std::nullopt, false, true);
    if (kernels::item(has_zero) == 0) {
      return to_dtype(mul(grad, div(result, x)), self.dtype());
    }
    int64_t n = x.sizes()[d];
    int64_t ndim = x.dim() + 1;
    Shape rows = x.sizes();
    rows.insert(rows.begin() + d, n);
    Tensor eye =
        eq(autograd::arange_along(n, ndim, d),
           autograd::arange_along(n, ndim, d + 1));
    Tensor others = reduction<Prod>(
        where(eye, scalar(1), expand(unsqueeze(x, d), rows)),
        std::vector<int64_t>{d + 1});
    return to_dtype(mul(grad, others), self.dtype());
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    if (!s.dims) {  // prod(): along the one dim of the flattened input
      Tensor flat = reshape(s.self, {s.self.numel()});
      return reshape(along(grad, flat, s.result, 0), s.self.sizes());
    }
    if (s.ndim == 0) {
      return to_dtype(grad, s.self.dtype());
    }
    return along(
        s.unreduced(grad),
        s.self,
        s.unreduced(s.result),
        maybe_wrap_dim(s.dims->front(), s.ndim));
  }
  static constexpr OpDoc doc = {
      "The product of all elements, or along ``dim`` (one int); integer and "
      "bool tensors give int64, zeros get their exact gradient",
      "[[1.0, 2.0], [3.0, 4.0]]",
      "tensor([ 2., 12.])",
      "1"};
};

// var and std: the mean of the squared deviations over dim, divided by
// N - correction (N the number of elements reduced; correction 1 when not
// given, as torch's), and its square root. A reduced float computes in
// float32 and rounds once.
template <bool kStd>
struct VarStd {
  static constexpr Dim dim = Dim::Optional;
  static constexpr Dtype dtype = Dtype::Input;
  static constexpr bool takes_dtype = false;
  static constexpr ScalarArg scalar = {
      ScalarArg::Correction, "_saved_correction"};
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::Self | (kStd ? Saved::Result : 0U);
  // torch's error for an integer or bool input, naming `fn`.
  static void check_floating(const Tensor& a, const char* fn) {
    NPGRAD_CHECK(
        is_floating(a.dtype()),
        fn,
        " only support floating point and complex dtypes");
  }
  static void check(const Tensor& a, const ReductionArgs&) {
    check_floating(a, "std and var");
  }
  static Tensor kernel(
      const Tensor& a,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType,
      std::optional<double> correction) {
    bool reduced = is_reduced_float(a.dtype());
    ScalarType dt = opmath_type(a.dtype());
    Tensor x = reduced ? kernels::cast(a, dt) : a;
    double n = reduced_numel(a.sizes(), dims);
    Tensor centre = kernels::sum(x, dims, true, dt);
    divide_in_place(centre, n);
    Tensor dev = kernels::binary(kernels::Binary::Sub, x, centre, dt);
    kernels::binary_out(kernels::Binary::Mul, dev, dev, dev);
    Tensor out = kernels::sum(dev, dims, keepdim, dt);
    divide_in_place(out, std::max(0.0, n - correction.value_or(1)));
    if constexpr (kStd) {
      static const kernels::UnaryUfunc& sqrt = kernels::unary_ufunc("sqrt");
      kernels::unary_out(sqrt, out, out);
    }
    return reduced ? kernels::cast(out, a.dtype()) : out;
  }
  static Tensor backward(const Tensor& grad, const ReductionSaved& s) {
    Tensor grad_var = grad;
    if constexpr (kStd) {
      // d std = d var / (2 std); 0 where the std is 0, as torch's
      // masked_fill.
      grad_var = where(
          eq(s.result, autograd::scalar(0)),
          autograd::scalar(0),
          div(grad, mul(s.result, autograd::scalar(2))));
    }
    // N - correction unclamped, as torch's formula (the forward clamps it at
    // 0): past the count the variance is inf but its gradient finite.
    double dof =
        reduced_numel(s.self.sizes(), s.reduced()) - s.scalar.value_or(1);
    return mul(
        mul(s.unreduced(grad_var), autograd::scalar(2 / dof)),
        sub(s.self, mean(s.self, s.reduced(), true)));
  }
};

struct Var : VarStd<false> {
  static constexpr const char* name = "var";
  static constexpr const char* node = "VarBackward0";
  static constexpr OpDoc doc = {
      "The variance over ``dim`` (all dims by default), divided by ``N - "
      "correction`` (``correction=1`` by default; ``unbiased=False`` means "
      "``correction=0``)",
      "[1.0, 2.0, 3.0, 4.0]",
      "tensor(1.2500)",
      "correction=0"};
};

struct Std : VarStd<true> {
  static constexpr const char* name = "std";
  static constexpr const char* node = "StdBackward0";
  static constexpr OpDoc doc = {
      "The standard deviation: the square root of ``var`` with the same "
      "arguments",
      "[1.0, 2.0, 3.0, 4.0]",
      "tensor(1.2910)",
      "0"};
};

// The p-norm (sum |x|^p)^(1/p) over dim, p the entry's scalar (2 when not
// given; inf and -inf the largest and smallest |x|, 0 the count of
// non-zeros), computed in `dtype=` when given: torch's linalg.vector_norm,
// which torch.norm calls, and ATen's norm, which torch's composites call.
struct VectorNorm {
  static constexpr Dim dim = Dim::Optional;
  static constexpr Dtype dtype = Dtype::Input;
  static constexpr bool takes_dtype = true;
  static constexpr unsigned saves =
      Saved::Dim | Saved::Keepdim | Saved::Self | Saved::Result;
  static std::string format_ord(double ord) {
    std::ostringstream s;
    s << ord;
    return s.str();
  }
  static void check(const Tensor& a, const ReductionArgs& args) {
    NPGRAD_CHECK(
        is_floating(a.dtype()),
        "linalg.vector_norm: Expected a floating point or complex tensor as "
        "input. Got ",
        scalar_type_name(a.dtype()));
    if (args.dtype) {
      NPGRAD_CHECK(
          is_floating(*args.dtype),
          "linalg.vector_norm: dtype should be floating point or complex, "
          "but got ",
          scalar_type_name(*args.dtype));
      NPGRAD_CHECK(
          promote_types(a.dtype(), *args.dtype) == *args.dtype,
          "linalg.vector_norm: the dtype of the input (",
          scalar_type_name(a.dtype()),
          ") should be convertible without narrowing to the specified dtype "
          "(",
          scalar_type_name(*args.dtype),
          ")");
    }
    double ord = args.scalar.value_or(2);
    if (a.numel() > 0 || (ord >= 0 && !std::isinf(ord))) {
      return;
    }
    NPGRAD_CHECK(
        !args.given.empty(),
        "linalg.vector_norm cannot compute the ",
        format_ord(ord),
        " norm on an empty tensor because the operation does not have an "
        "identity");
    for (int64_t d : args.wrapped) {
      NPGRAD_CHECK(
          a.sizes()[d] != 0,
          "linalg.vector_norm cannot compute the ",
          format_ord(ord),
          " norm on the dimension ",
          d,
          "because this dimension is empty and the operation does not have "
          "an identity");
    }
  }
  static Tensor kernel(
      const Tensor& input,
      const std::vector<int64_t>& dims,
      bool keepdim,
      ScalarType dtype,
      std::optional<double> p) {
    kernels::IgnoreFpErrors quiet;
    double ord = p.value_or(2);
    bool reduced = is_reduced_float(dtype);
    ScalarType dt = opmath_type(dtype);
    static const kernels::UnaryUfunc& abs_ = kernels::unary_ufunc("absolute");
    static const kernels::UnaryUfunc& sqrt_ = kernels::unary_ufunc("sqrt");
    Tensor a = kernels::unary(
        abs_, dtype == input.dtype() ? input : kernels::cast(input, dtype), dt);
    Tensor out;
    if (std::isinf(ord)) {
      out = a.dim() == 0 ? a : kernels::amax(a, dims, keepdim, ord > 0);
    } else if (ord == 0) {
      Tensor nonzero = kernels::binary(
          kernels::Binary::Ne, a, wrapped_scalar(0, ScalarType::Float64), dt);
      out = kernels::sum(nonzero, dims, keepdim, dt);
    } else if (ord == 1) {
      out = kernels::sum(a, dims, keepdim, dt);
    } else if (ord == 2) {
      kernels::binary_out(kernels::Binary::Mul, a, a, a);
      out = kernels::sum(a, dims, keepdim, dt);
      kernels::unary_out(sqrt_, out, out);
    } else {
      kernels::binary_out(
          kernels::Binary::Pow, a, wrapped_scalar(ord, ScalarType::Float64), a);
      out = kernels::sum(a, dims, keepdim, dt);
      kernels::binary_out(
          kernels::Binary::Pow,
          out,
          wrapped_scalar(1 / ord, ScalarType::Float64),
          out);
    }
    return reduced ? kernels::cast(out, dtype) : out;
  }
  static Tensor backward(const Tensor& grad_out, const ReductionSaved& s) {
    double ord = s.scalar.value_or(2);
    if (ord == 0) {
      return {};  // no gradient (undefined), as torch's formula gives
    }
    const Tensor& self = s.self;
    Tensor grad = s.unreduced(grad_out);
    Tensor norm = s.unreduced(s.result);
    Tensor zero_norm = eq(norm, scalar(0));
    Tensor r;
    if (ord == 1) {
      r = mul(sgn(self), grad);
    } else if (ord == 2) {
      r = mul(grad, where(zero_norm, scalar(0), div(self, norm)));
    } else if (std::isinf(ord)) {
      // Split evenly among the elements whose |x| is the norm.
      Tensor hit = to_dtype(eq(abs(self), norm), grad.dtype());
      r = mul(sgn(self), mul(div(grad, sum(hit, s.reduced(), true)), hit));
    } else if (ord < 1) {
      Tensor scaled =
          mul(sgn(self),
              where(eq(self, scalar(0)), scalar(0), pow(abs(self), ord - 1)));
      r = mul(mul(scaled, grad), pow(norm, 1 - ord));
    } else {
      Tensor scaled = ord < 2 ? where(
                                    eq(self, scalar(0)),
                                    scalar(0),
                                    mul(self, pow(abs(self), ord - 2)))
                              : mul(self, pow(abs(self), ord - 2));
      r = mul(
          scaled, where(zero_norm, scalar(0), div(grad, pow(norm, ord - 1))));
    }
    return to_dtype(r, self.dtype());
  }
};

struct Norm : VectorNorm {
  static constexpr const char* name = "norm";
  static constexpr const char* node = "LinalgVectorNormBackward0";
  static constexpr ScalarArg scalar = {ScalarArg::Ord, "_saved_ord"};
  static constexpr OpDoc doc = {
      "The vector norm ``(sum |x|^p)^(1/p)`` over ``dim`` (all dims by "
      "default): ``p`` a number, ``inf``, ``-inf``, ``0`` (the count of "
      "non-zeros) or ``'fro'`` (2); torch records it as "
      "``linalg.vector_norm``",
      "[3.0, -4.0]",
      "tensor(7.)",
      "1"};
};

// ATen's norm.ScalarOpt_dim, which torch's composites call
// (pairwise_distance): `_C._norm(input, p, dim, keepdim=False)`.
struct AtenNorm : VectorNorm {
  static constexpr const char* name = "_norm";
  static constexpr const char* node = "NormBackward1";
  static constexpr Dim dim = Dim::Required;
  static constexpr bool takes_dtype = false;
  static constexpr bool exposed = false;
  static constexpr ScalarArg scalar = {ScalarArg::Ord, "_saved_p"};
  static constexpr OpDoc doc = {
      "ATen's p-norm over ``dim``, as torch's composites call it "
      "(``pairwise_distance``)",
      "[[3.0, 4.0]]",
      "tensor([5.])",
      "2.0, [1]"};
};

// One op per line, so that adding one is a one-line change here.
// clang-format off
using ReductionOps = OpList<
    Sum,
    Mean,
    Amax,
    Amin,
    Logsumexp,
    Nansum,
    Prod,
    Var,
    Std,
    Norm,
    AtenNorm>;
// clang-format on

}  // namespace npgrad::ops::reduction_ops
