#pragma once
// The reduction op table: one entry per op that reduces over `dim` with
// `keepdim` (fields described at the top of reduction_family.h). Each entry
// is the op's one home: kernel, dtype rule, node, saved state, backward
// formula, docstring.
//
// Not here: prod (its `dim` is one int, not a tuple; two nodes with other
// saved state), var/std (unbiased/correction), the norms (ord), nanmean
// (torch records it as a composite, DivBackward0), max/min (namedtuples).

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "npgrad/ops/reduction_family.h"

namespace npgrad::ops::reduction_ops {

using autograd::scalar;

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
    double n = static_cast<double>(a.numel()) /
               static_cast<double>(std::max<int64_t>(out.numel(), 1));
    kernels::binary_out(
        kernels::Binary::Div, out, wrapped_scalar(n, ScalarType::Float64), out);
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
  static void check(
      const Tensor& a,
      const std::vector<int64_t>& given,
      const std::vector<int64_t>& wrapped) {
    check_nonempty_dims(kIsMax ? "amax" : "amin", a, given, wrapped);
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
  static void check(
      const Tensor& a,
      const std::vector<int64_t>& given,
      const std::vector<int64_t>&) {
    if (given.empty() && a.dim() > 0) {
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
      static const kernels::UnaryUfunc& abs = kernels::unary_ufunc("absolute");
      Tensor inf = wrapped_scalar(std::numeric_limits<double>::infinity(), dt);
      auto finite_max = [&](bool keep) {
        Tensor m = kernels::amax(x, dims, keep, true);
        Tensor is_inf = kernels::binary(
            kernels::Binary::Eq, kernels::unary(abs, m, dt), inf, dt);
        return kernels::where(is_inf, wrapped_scalar(0, dt), m, dt);
      };
      Tensor e = kernels::binary(kernels::Binary::Sub, x, finite_max(true), dt);
      kernels::unary_out(exp, e, e);
      out = kernels::sum(e, dims, keepdim, dt);
      kernels::unary_out(log, out, out);
      kernels::binary_out(kernels::Binary::Add, out, finite_max(keepdim), out);
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

// One op per line, so that adding one is a one-line change here.
// clang-format off
using ReductionOps = OpList<
    Sum,
    Mean,
    Amax,
    Amin,
    Logsumexp,
    Nansum>;
// clang-format on

}  // namespace npgrad::ops::reduction_ops
