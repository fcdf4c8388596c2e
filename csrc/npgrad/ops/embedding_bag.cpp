// embedding_bag: torch's checks, the bags (sum, mean, max over rows of
// weight, skipping padding_idx, with per_sample_weights in sum mode), the
// gradients (rows scattered back into weight; per-sample dot products), and
// the nodes. The loops run over contiguous float or double buffers: float16
// computes in float32 and rounds once.
#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/nodes/embedding_bag_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

void check_index_dtype(const Tensor& t, const char* arg) {
  NPGRAD_CHECK(
      t.dtype() == ScalarType::Int64 || t.dtype() == ScalarType::Int32,
      "Expected tensor for argument #1 '",
      arg,
      "' to have one of the following scalar types: Long, Int; but got ",
      legacy_type_name(t.dtype()),
      " instead (while checking arguments for embedding_bag)");
}

// A contiguous copy (or the tensor itself) in dtype, with grad mode off.
Tensor dense_as(const Tensor& t, ScalarType dtype) {
  AutoGradMode no_grad(false);
  return contiguous(to_dtype(t, dtype));
}

Tensor new_int64(const Shape& sizes) {
  return zeros(sizes, ScalarType::Int64);
}

template <typename T>
void bag_forward(
    const T* w,
    const int64_t* idx,
    const int64_t* bag_of,
    const T* psw,
    int64_t n,
    int64_t dim,
    int64_t mode,
    int64_t padding_idx,
    T* out,
    int64_t* bag_size,
    int64_t* max_idx) {
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] == padding_idx) {
      continue;
    }
    int64_t b = bag_of[i];
    const T* row = w + idx[i] * dim;
    T* o = out + b * dim;
    bool first = bag_size[b] == 0;
    ++bag_size[b];
    if (mode == kMax) {
      for (int64_t d = 0; d < dim; ++d) {
        if (first || row[d] > o[d]) {
          o[d] = row[d];
          max_idx[b * dim + d] = idx[i];
        }
      }
    } else {
      T s = psw ? psw[i] : T(1);
      for (int64_t d = 0; d < dim; ++d) {
        o[d] += psw ? row[d] * s : row[d];
      }
    }
  }
}

template <typename T>
void bag_mean(T* out, const int64_t* bag_size, int64_t bags, int64_t dim) {
  for (int64_t b = 0; b < bags; ++b) {
    if (bag_size[b] > 0) {
      for (int64_t d = 0; d < dim; ++d) {
        out[b * dim + d] /= static_cast<T>(bag_size[b]);
      }
    }
  }
}

template <typename T>
void bag_backward(
    const T* g,
    const EmbeddingBagSaved& s,
    const int64_t* bag_of,
    const T* psw,
    const std::vector<int64_t>& counts,
    int64_t dim,
    T* gw) {
  const auto* idx = static_cast<const int64_t*>(s.indices.data_ptr());
  const auto* bag_size = static_cast<const int64_t*>(s.bag_size.data_ptr());
  int64_t n = s.indices.numel();
  if (s.mode == kMax) {
    const auto* max_idx = static_cast<const int64_t*>(s.max_indices.data_ptr());
    for (int64_t b = 0; b < s.bag_size.numel(); ++b) {
      if (bag_size[b] == 0) {
        continue;
      }
      for (int64_t d = 0; d < dim; ++d) {
        gw[max_idx[b * dim + d] * dim + d] += g[b * dim + d];
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] == s.padding_idx) {
      continue;
    }
    int64_t b = bag_of[i];
    T scale = psw ? psw[i] : T(1);
    if (s.mode == kMean) {
      scale /= static_cast<T>(bag_size[b]);
    }
    if (!counts.empty()) {
      scale /= static_cast<T>(counts[static_cast<std::size_t>(idx[i])]);
    }
    for (int64_t d = 0; d < dim; ++d) {
      gw[idx[i] * dim + d] += g[b * dim + d] * scale;
    }
  }
}

template <typename T>
void psw_backward(
    const T* g,
    const T* w,
    const int64_t* idx,
    const int64_t* bag_of,
    int64_t n,
    int64_t dim,
    int64_t padding_idx,
    T* out) {
  for (int64_t i = 0; i < n; ++i) {
    T acc = 0;
    if (idx[i] != padding_idx) {
      for (int64_t d = 0; d < dim; ++d) {
        acc += g[bag_of[i] * dim + d] * w[idx[i] * dim + d];
      }
    }
    out[i] = acc;
  }
}

// Each sample's bag: bag b holds samples offsets[b] .. offsets[b + 1] - 1,
// the last bag runs to the end of the input (as torch's CPU kernel reads
// it, also with include_last_offset).
std::vector<int64_t> bags_of(const int64_t* offsets, int64_t bags, int64_t n) {
  std::vector<int64_t> bag_of(static_cast<std::size_t>(n), 0);
  for (int64_t b = 0; b < bags; ++b) {
    int64_t end = b + 1 < bags ? offsets[b + 1] : n;
    for (int64_t i = offsets[b]; i < end; ++i) {
      bag_of[static_cast<std::size_t>(i)] = b;
    }
  }
  return bag_of;
}

// The divisor of each index's gradient under scale_grad_by_freq, as torch's
// CPU kernel computes it: it walks the distinct indices in ascending order
// and divides the k-th one's gradient by the count of the k-th element of
// the sorted indices (not by its own count; the two differ once an index
// repeats before it). The values are torch's.
std::vector<int64_t> frequency_divisors(
    const int64_t* idx, int64_t n, int64_t num_weights) {
  std::vector<int64_t> counts(static_cast<std::size_t>(num_weights), 0);
  for (int64_t i = 0; i < n; ++i) {
    ++counts[static_cast<std::size_t>(idx[i])];
  }
  std::vector<int64_t> sorted(idx, idx + n);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> divisors(static_cast<std::size_t>(num_weights), 1);
  std::size_t k = 0;
  for (std::size_t i = 0; i < sorted.size(); ++k) {
    auto v = static_cast<std::size_t>(sorted[i]);
    divisors[v] = counts[static_cast<std::size_t>(sorted[k])];
    i += static_cast<std::size_t>(counts[v]);
  }
  return divisors;
}

// Each sample's bag from the saved offsets: the gradient has one row per bag
// (torch recomputes offset2bag from the offsets too; sum mode saves none).
std::vector<int64_t> bags_from(const EmbeddingBagSaved& s, const Tensor& grad) {
  Tensor off = dense_as(s.offsets, ScalarType::Int64);
  return bags_of(
      static_cast<const int64_t*>(off.data_ptr()),
      grad.dim() == 2 ? grad.sizes()[0] : 0,
      s.indices.numel());
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight,
    const Tensor& indices,
    const Tensor& offsets,
    bool scale_grad_by_freq,
    int64_t mode,
    const Tensor& per_sample_weights,
    bool include_last_offset,
    int64_t padding_idx) {
  NPGRAD_CHECK(
      is_floating(weight.dtype()),
      "Expected tensor for argument #1 'weight' to have one of the following "
      "scalar types: Half, BFloat16, Float, Double; but got ",
      legacy_type_name(weight.dtype()),
      " instead (while checking arguments for embedding_bag)");
  check_index_dtype(indices, "indices");
  check_index_dtype(offsets, "offsets");
  NPGRAD_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor");
  NPGRAD_CHECK(indices.dim() == 1, "input has to be a 1D Tensor");
  NPGRAD_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor");
  NPGRAD_CHECK(
      mode >= kSum && mode <= kMax, "mode has to be one of sum, mean or max");
  bool has_psw = per_sample_weights.defined();
  if (has_psw) {
    NPGRAD_CHECK(
        mode == kSum,
        "embedding_bag: per_sample_weights was not None. per_sample_weights "
        "is only supported for mode='sum'");
    NPGRAD_CHECK(
        per_sample_weights.dtype() == weight.dtype(),
        "Expected tensor for argument #1 'weight' to have the same type as "
        "tensor for argument #1 'per_sample_weights'; but type ",
        legacy_type_name(weight.dtype()),
        " does not equal ",
        legacy_type_name(per_sample_weights.dtype()),
        " (while checking arguments for embedding_bag)");
    NPGRAD_CHECK(
        per_sample_weights.dim() == 1 &&
            per_sample_weights.numel() == indices.numel(),
        "embedding_bag: per_sample_weights must be 1-D with as many elements "
        "as the input");
  }
  int64_t n = indices.numel();
  int64_t num_weights = weight.sizes()[0];
  int64_t dim = weight.sizes()[1];
  Tensor idx = dense_as(indices, ScalarType::Int64);
  Tensor off = dense_as(offsets, ScalarType::Int64);
  const auto* ip = static_cast<const int64_t*>(idx.data_ptr());
  const auto* op = static_cast<const int64_t*>(off.data_ptr());
  // torch reads offsets[0] of an empty offsets (and crashes); npgrad refuses.
  NPGRAD_CHECK(
      off.numel() > 0,
      "embedding_bag: offsets has to be a non-empty 1D Tensor");
  NPGRAD_CHECK(
      op[0] == 0,
      "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
      "to start from position 0. However, got ",
      op[0],
      "\n[ ",
      legacy_type_name(ScalarType::Int64),
      "{} ]");
  int64_t last = op[off.numel() - 1];
  NPGRAD_CHECK(
      last <= n,
      "offsets[-1] can not be greater than input's length ",
      n,
      " but got offsets[-1] of ",
      last);
  for (int64_t b = 1; b < off.numel(); ++b) {
    // torch reads decreasing offsets out of bounds; npgrad refuses them.
    NPGRAD_CHECK(
        op[b] >= op[b - 1],
        "embedding_bag: offsets must be non-decreasing, but got offsets[",
        b - 1,
        "] = ",
        op[b - 1],
        " and offsets[",
        b,
        "] = ",
        op[b]);
  }
  for (int64_t i = 0; i < n; ++i) {
    NPGRAD_CHECK(
        ip[i] >= 0 && ip[i] < num_weights,
        "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
        "idx to be ",
        ip[i]);
  }
  int64_t bags = include_last_offset ? off.numel() - 1 : off.numel();
  std::vector<int64_t> bag_of = bags_of(op, bags, n);

  ScalarType dtype = opmath_type(weight.dtype());
  Tensor w = dense_as(weight, dtype);
  Tensor psw = has_psw ? dense_as(per_sample_weights, dtype) : Tensor();
  Tensor out = zeros({bags, dim}, dtype);
  Tensor bag_size = new_int64({bags});
  Tensor max_indices =
      mode == kMax ? new_int64({bags, dim}) : new_int64({bags});
  auto* bs = static_cast<int64_t*>(bag_size.data_ptr());
  auto* mi = static_cast<int64_t*>(max_indices.data_ptr());
  kernels::dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bag_forward<T>(
        static_cast<const T*>(w.data_ptr()),
        ip,
        bag_of.data(),
        has_psw ? static_cast<const T*>(psw.data_ptr()) : nullptr,
        n,
        dim,
        mode,
        padding_idx,
        static_cast<T*>(out.data_ptr()),
        bs,
        mi);
    if (mode == kMean) {
      bag_mean(static_cast<T*>(out.data_ptr()), bs, bags, dim);
    }
  });
  {
    AutoGradMode no_grad(false);
    out = to_dtype(out, weight.dtype());
  }
  // What torch returns besides the output: offset2bag (each sample's bag),
  // bag_size (zeros in sum mode) and max_indices (bag_size in mean mode,
  // zeros of the bags in sum mode).
  // torch's fast path (sum of float32/float16 rows with unit strides, no
  // padding_idx) returns offset2bag empty; every other path fills it.
  bool fast_path = mode == kSum && weight.dtype() != ScalarType::Float64 &&
                   padding_idx < 0 && weight.strides()[1] == 1 &&
                   (!has_psw || per_sample_weights.strides()[0] == 1);
  Tensor offset2bag = new_int64({fast_path ? 0 : n});
  if (!fast_path) {
    std::copy(
        bag_of.begin(),
        bag_of.end(),
        static_cast<int64_t*>(offset2bag.data_ptr()));
  }
  if (mode == kSum) {
    bag_size = new_int64({bags});
  } else if (mode == kMean) {
    max_indices = clone(bag_size);
  }
  if (auto node =
          record<EmbeddingBagBackward0>(out, {&weight, &per_sample_weights})) {
    node->indices_ = SavedVariable(indices, false);
    node->offsets_ = SavedVariable(offsets, false);
    node->offset2bag_ = SavedVariable(offset2bag, false);
    node->bag_size_ = SavedVariable(bag_size, false);
    node->max_indices_ = SavedVariable(max_indices, false);
    if (has_psw) {
      node->per_sample_weights_ = SavedVariable(per_sample_weights, false);
      if (compute_requires_grad({&per_sample_weights})) {
        node->weight_ = SavedVariable(weight, false);
      }
    }
    node->mode = mode;
    node->padding_idx = padding_idx;
    node->scale_grad_by_freq = scale_grad_by_freq;
    node->num_weights = num_weights;
    node->weight_dtype = weight.dtype();
  }
  return {out, offset2bag, bag_size, max_indices};
}

Tensor embedding_bag_backward(
    const Tensor& grad,
    const EmbeddingBagSaved& saved,
    const Tensor& per_sample_weights,
    int64_t num_weights,
    ScalarType weight_dtype,
    bool scale_grad_by_freq) {
  ScalarType dtype = opmath_type(weight_dtype);
  EmbeddingBagSaved s = saved;
  s.indices = dense_as(saved.indices, ScalarType::Int64);
  s.bag_size = dense_as(saved.bag_size, ScalarType::Int64);
  s.max_indices = dense_as(saved.max_indices, ScalarType::Int64);
  int64_t n = s.indices.numel();
  int64_t dim = grad.dim() == 2 ? grad.sizes()[1] : 0;
  std::vector<int64_t> bag_of = bags_from(s, grad);
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts = frequency_divisors(
        static_cast<const int64_t*>(s.indices.data_ptr()), n, num_weights);
  }
  Tensor g = dense_as(grad, dtype);
  Tensor psw = per_sample_weights.defined()
                   ? dense_as(per_sample_weights, dtype)
                   : Tensor();
  Tensor gw = zeros({num_weights, dim}, dtype);
  kernels::dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bag_backward<T>(
        static_cast<const T*>(g.data_ptr()),
        s,
        bag_of.data(),
        psw.defined() ? static_cast<const T*>(psw.data_ptr()) : nullptr,
        counts,
        dim,
        static_cast<T*>(gw.data_ptr()));
  });
  {
    AutoGradMode no_grad(false);
    gw = to_dtype(gw, weight_dtype);
  }
  record<EmbeddingBagBackwardBackward0>(gw, {&grad, &per_sample_weights});
  return gw;
}

Tensor embedding_bag_per_sample_weights_backward(
    const Tensor& grad, const Tensor& weight, const EmbeddingBagSaved& saved) {
  ScalarType dtype = opmath_type(weight.dtype());
  Tensor idx = dense_as(saved.indices, ScalarType::Int64);
  std::vector<int64_t> bag_of = bags_from(saved, grad);
  int64_t n = idx.numel();
  int64_t dim = weight.sizes()[1];
  Tensor g = dense_as(grad, dtype);
  Tensor w = dense_as(weight, dtype);
  Tensor out = zeros({n}, dtype);
  const auto* ip = static_cast<const int64_t*>(idx.data_ptr());
  kernels::dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    psw_backward<T>(
        static_cast<const T*>(g.data_ptr()),
        static_cast<const T*>(w.data_ptr()),
        ip,
        bag_of.data(),
        n,
        dim,
        saved.padding_idx,
        static_cast<T*>(out.data_ptr()));
  });
  {
    AutoGradMode no_grad(false);
    out = to_dtype(out, weight.dtype());
  }
  return record_not_implemented(
      out, "aten::_embedding_bag_per_sample_weights_backward", {grad, weight});
}

}  // namespace npgrad::ops
