// In-place ops, all through one mutation path.
//
// Note [The mutation path]
// Every in-place op (1) checks torch's leaf / view rules if its result needs
// grad, (2) builds its backward node and saves what the formula needs of the
// *original* values, (3) writes through the kernel, (4) bumps the shared
// version counter once, and (5) rebases the tensor's history onto the new
// node. Saved tensors of earlier nodes see the bump and refuse to unpack.
#include <cmath>
#include <optional>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/saved_tensor_lock.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {
thread_local InplaceObserver inplace_observer;
}  // namespace

void check_inplace(
    const Tensor& self, bool result_requires_grad, bool allow_overlap) {
  // torch's assert_no_internal_overlap: a stride-0 dim of size > 1 (an
  // expanded view) would have several elements written to one location.
  for (int64_t d = 0; d < self.dim(); ++d) {
    NPGRAD_CHECK(
        allow_overlap || !(self.sizes()[d] > 1 && self.strides()[d] == 0),
        "unsupported operation: more than one element of the written-to tensor "
        "refers to a single memory location. Please clone() the tensor before "
        "performing the operation.");
  }
  NPGRAD_CHECK(
      !self.impl()->is_inference || InferenceMode::is_enabled(),
      messages::kInferenceInplace);
  // Note [lock_saved_tensors]: before anything is written.
  check_not_locked(self);
  if (inplace_observer) {
    inplace_observer(self);
  }
  if (!result_requires_grad) {
    return;
  }
  if (self.is_view()) {
    check_view_rebase(self, false);
    Tensor base = self.base();
    NPGRAD_CHECK(
        !(is_leaf(base) && requires_grad(base)), messages::kViewOfLeafInplace);
    return;
  }
  NPGRAD_CHECK(!(is_leaf(self) && requires_grad(self)), messages::kLeafInplace);
}

namespace {

// torch's is_non_overlapping_and_dense: the strides are a permutation of a
// contiguous layout's (size-1 dims aside).
bool non_overlapping_and_dense(const Tensor& t) {
  const Shape& sizes = t.sizes();
  const Shape& strides = t.strides();
  SmallVector<int64_t, 6> dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (sizes[d] >= 2) {
      dims.push_back(d);
    }
  }
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (int64_t d : dims) {
    if (strides[d] != required) {
      return false;
    }
    required *= sizes[d];
  }
  return true;
}

}  // namespace

// torch's assert_no_partial_overlap (ATen/MemoryOverlap.cpp): an input that
// shares some, but not exactly all, of the written-to tensor's memory would
// be read after parts of it were overwritten. Layouts that are not
// non-overlapping and dense are "too hard" for torch, and pass.
void check_no_partial_overlap(const Tensor& self, const Tensor& input) {
  if (self.is_same(input) || input.impl()->is_wrapped_number ||
      self.numel() == 0 || input.numel() == 0) {
    return;
  }
  // The extent a dense layout spans; the layouts are checked only for
  // operands whose extents meet (the common case is disjoint memory).
  auto extent = [](const Tensor& t) {
    const char* begin = static_cast<const char*>(t.data_ptr());
    return std::make_pair(
        begin,
        begin + t.numel() * static_cast<int64_t>(element_size(t.dtype())));
  };
  auto [a_begin, a_end] = extent(self);
  auto [b_begin, b_end] = extent(input);
  bool partial = a_begin == b_begin && a_end == b_end
                     ? self.strides() != input.strides()
                     : a_begin < b_end && b_begin < a_end;
  partial = partial && non_overlapping_and_dense(self) &&
            non_overlapping_and_dense(input);
  NPGRAD_CHECK(
      !partial,
      "unsupported operation: some elements of the input tensor and the "
      "written-to tensor refer to a single memory location. Please clone() "
      "the tensor before performing the operation.");
}

// An in-place op's other operand must broadcast to self's shape exactly.
// torch's errors: the shapes do not broadcast (infer_size raises), or they
// broadcast to another shape than self's.
void check_broadcasts_to_self(const Tensor& self, const Tensor& other) {
  if (is_expandable_to(other.sizes(), self.sizes())) {
    return;
  }
  Shape broadcast = infer_size(self.sizes(), other.sizes());
  NPGRAD_CHECK(
      false,
      "output with shape ",
      shape_str(self.sizes()),
      " doesn't match the broadcast shape ",
      shape_str(broadcast));
}

void check_castable(ScalarType result, ScalarType out, bool cpp_type_name) {
  bool ok = !(is_floating(result) && !is_floating(out)) &&
            !(result == ScalarType::Int64 && out == ScalarType::Bool);
  NPGRAD_CHECK(
      ok,
      "result type ",
      scalar_type_name(result),
      " can't be cast to the desired output type ",
      cpp_type_name ? type_meta_name(out) : scalar_type_name(out));
}

SavedVariable save_original(const Tensor& self) {
  return SavedVariable(clone(self), false);
}

void finish_inplace(
    const Tensor& self, const std::shared_ptr<Node>& node, const char* op) {
  bump_version(self, op);
  if (node) {
    rebase_history(self, node);
  }
}

namespace {

template <typename NodeT>
std::shared_ptr<NodeT> make_inplace_node(
    std::initializer_list<const Tensor*> inputs) {
  auto node = make_node<NodeT>();
  node->set_next_edges(collect_next_edges(inputs));
  return node;
}

}  // namespace

void set_inplace_observer(InplaceObserver observer) {
  inplace_observer = std::move(observer);
}

InplaceObserver get_inplace_observer() {
  return inplace_observer;
}

void zero_(const Tensor& self) {
  bool requires_grad = compute_requires_grad({&self});
  check_inplace(self, requires_grad, /*allow_overlap=*/true);
  std::shared_ptr<Node> node;
  if (requires_grad) {
    node = make_inplace_node<ZeroBackward0>({&self});
  }
  kernels::fill(self, 0);
  finish_inplace(self, node, "zero_");
}

void fill_(const Tensor& self, double value) {
  bool rg = compute_requires_grad({&self});
  check_inplace(self, rg, /*allow_overlap=*/true);
  std::shared_ptr<Node> node;
  if (rg) {
    auto n = make_node<FillBackward2>();
    n->set_next_edges(collect_next_edges({&self}));
    node = n;
  }
  kernels::fill(self, value);
  finish_inplace(self, node, "fill_");
}

namespace {
// The range an integer fill value must lie in, and the type's name in torch's
// overflow message (its kernels' C++ element type, not TypeMeta's name).
// uint8 takes negative values down to -255 as torch's c10::overflows does
// (they wrap); npgrad sees a double, so -1.0 passes too where torch refuses.
struct IntegerFillRange {
  double lowest, max;
  const char* name;
};
std::optional<IntegerFillRange> integer_fill_range(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::UInt8:
      return IntegerFillRange{-255, 255, "uint8_t"};
    case ScalarType::Int8:
      return IntegerFillRange{-128, 127, "int8_t"};
    case ScalarType::Int16:
      return IntegerFillRange{-32768, 32767, "int16_t"};
    case ScalarType::Int32:
      return IntegerFillRange{-2147483648.0, 2147483647.0, "int"};
    case ScalarType::Int64:
      // 2^63 is the first double past int64's range.
      return IntegerFillRange{
          -9223372036854775808.0, 9223372036854774784.0, "int64_t"};
    default:
      return std::nullopt;
  }
}
}  // namespace

void check_number_fits(double value, ScalarType dtype) {
  if (auto range = integer_fill_range(dtype)) {
    NPGRAD_CHECK(
        std::isfinite(value) && value >= range->lowest && value <= range->max,
        "value cannot be converted to type ",
        range->name,
        " without overflow");
    return;
  }
  double max = largest_finite(dtype);
  NPGRAD_CHECK(
      max == 0 || !std::isfinite(value) || std::abs(value) <= max,
      "value cannot be converted to type ",
      type_meta_name(dtype),
      " without overflow");
}

void check_fill_value(double value, ScalarType dtype, int64_t numel) {
  // torch's one-element reduced-float fill converts without the check.
  if (!(is_reduced_float(dtype) && numel == 1)) {
    check_number_fits(value, dtype);
  }
}

void fill_(const Tensor& self, const Tensor& value) {
  NPGRAD_CHECK(
      value.dim() == 0,
      "fill_ only supports 0-dimension value tensor but got tensor with ",
      value.dim(),
      " dimensions.");
  bool rg = compute_requires_grad({&self, &value});
  check_inplace(self, rg, /*allow_overlap=*/true);
  std::shared_ptr<Node> node;
  if (rg) {
    node = make_inplace_node<FillBackward3>({&self, &value});
  }
  kernels::fill(self, kernels::item(value));
  finish_inplace(self, node, "fill_");
}

void copy_(const Tensor& self, const Tensor& src) {
  bool rg = compute_requires_grad({&self, &src});
  check_inplace(self, rg);
  check_no_partial_overlap(self, src);
  check_broadcasts_to_self(self, src);
  std::shared_ptr<Node> node;
  if (rg) {
    node = make_inplace_node<CopyBackwards>({&self, &src});
  }
  if (!(self.data_ptr() == src.data_ptr() && self.sizes() == src.sizes() &&
        self.strides() == src.strides() && self.dtype() == src.dtype())) {
    kernels::copy_into(self, src);
  }
  finish_inplace(self, node, "copy_");
}

void triu_(const Tensor& self, int64_t diagonal, bool upper) {
  Tensor values;
  {
    AutoGradMode no_grad(false);
    values = upper ? triu(self, diagonal) : tril(self, diagonal);
  }
  bool rg = compute_requires_grad({&self});
  check_inplace(self, rg);
  std::shared_ptr<Node> node;
  if (rg && upper) {
    auto n = make_inplace_node<TriuBackward0>({&self});
    n->diagonal = diagonal;
    node = n;
  } else if (rg) {
    auto n = make_inplace_node<TrilBackward0>({&self});
    n->diagonal = diagonal;
    node = n;
  }
  kernels::copy_into(self, values);
  finish_inplace(self, node, upper ? "triu_" : "tril_");
}

void masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill(mask, value);
  check_broadcasts_to_self(self, mask);
  bool tensor_value = !value.impl()->is_wrapped_number;
  bool rg = tensor_value ? compute_requires_grad({&self, &value})
                         : compute_requires_grad({&self});
  check_inplace(self, rg);
  std::shared_ptr<Node> node;
  if (rg && tensor_value) {
    auto n = make_inplace_node<MaskedFillBackward1>({&self, &value});
    n->mask_ = SavedVariable(mask, false);
    node = n;
  } else if (rg) {
    auto n = make_inplace_node<MaskedFillBackward0>({&self});
    n->mask_ = SavedVariable(mask, false);
    node = n;
  }
  kernels::copy_into(self, kernels::where(mask, value, self, self.dtype()));
  finish_inplace(self, node, "masked_fill_");
}

void nan_to_num_(
    const Tensor& self,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf) {
  bool rg = compute_requires_grad({&self});
  check_inplace(self, rg);
  std::shared_ptr<Node> node;
  if (rg) {
    auto n = make_inplace_node<NanToNumBackward0>({&self});
    n->self_ = save_original(self);
    node = n;
  }
  kernels::copy_into(self, nan_to_num_values(self, nan, posinf, neginf));
  finish_inplace(self, node, "nan_to_num_");
}

void pow_(const Tensor& self, const Tensor& exponent) {
  bool number = exponent.impl()->is_wrapped_number;
  Tensor values;
  {
    AutoGradMode no_grad(false);
    values = pow(self, exponent);
  }
  bool rg = number ? compute_requires_grad({&self})
                   : compute_requires_grad({&self, &exponent});
  check_inplace(self, rg);
  check_no_partial_overlap(self, exponent);
  check_broadcasts_to_self(self, exponent);
  check_castable(values.dtype(), self.dtype());
  std::shared_ptr<Node> node;
  std::shared_ptr<PowBackward1> tensor_node;
  if (rg && number) {
    auto n = make_inplace_node<PowBackward0>({&self});
    n->self_ = save_original(self);
    n->exponent = kernels::item(exponent);
    node = n;
  } else if (rg) {
    tensor_node = make_inplace_node<PowBackward1>({&self, &exponent});
    tensor_node->self_ = save_original(self);
    tensor_node->exponent_ = SavedVariable(exponent, false);
    node = tensor_node;
  }
  kernels::copy_into(self, values);
  finish_inplace(self, node, "pow_");
  if (tensor_node) {
    tensor_node->result_ = SavedVariable(self, true, self.is_view());
  }
}

void sgn_(const Tensor& self) {
  Tensor values;
  {
    AutoGradMode no_grad(false);
    values = sgn(self);
  }
  bool rg = compute_requires_grad({&self});
  check_inplace(self, rg);
  std::shared_ptr<SgnBackward0> node;
  if (rg) {
    node = make_inplace_node<SgnBackward0>({&self});
    node->self_ = save_original(self);
  }
  kernels::copy_into(self, values);
  finish_inplace(self, node, "sgn_");
  if (node) {
    node->result_ = SavedVariable(self, true, self.is_view());
  }
}

}  // namespace npgrad::ops
