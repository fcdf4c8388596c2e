#include "npgrad/tensor/tensor.h"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "npgrad/kernels/kernels.h"
#include "npgrad/util/error.h"
#include "npgrad/util/pool.h"

namespace npgrad {

ArrayHandle::ArrayHandle(const ArrayHandle& other) : obj_(other.obj_) {
  if (obj_ != nullptr) {
    kernels::array_incref(obj_);
  }
}

ArrayHandle::~ArrayHandle() {
  if (obj_ != nullptr) {
    kernels::array_decref(obj_);
  }
}

TensorImpl::TensorImpl() = default;
void (*release_owned_pyobj)(TensorImpl& impl) = nullptr;
bool (*owned_pyobj_is_shared)(const TensorImpl& impl) = nullptr;

TensorImpl::~TensorImpl() {
  // First, while every field is intact: the object's dealloc runs Python code
  // (its __dict__'s finalizers), and the object may even take the state over.
  if (owned_pyobj != nullptr && release_owned_pyobj != nullptr) {
    release_owned_pyobj(*this);
  }
}

void TensorImpl::move_state_to(TensorImpl& dst) {
  dst.array = std::move(array);
  std::copy(
      std::begin(inline_scalar), std::end(inline_scalar), dst.inline_scalar);
  dst.data = has_inline_scalar() ? dst.inline_scalar : data;
  dst.sizes = std::move(sizes);
  dst.strides = std::move(strides);
  dst.dtype = dtype;
  dst.is_wrapped_number = is_wrapped_number;
  dst.version_counter = std::move(version_counter);
  dst.view_base = std::move(view_base);
  dst.creation_meta = creation_meta;
  dst.is_inference = is_inference;
  dst.attr_version = attr_version;
  dst.autograd_meta = std::move(autograd_meta);
}

namespace {
thread_local bool inference_mode_enabled = false;
}  // namespace

bool InferenceMode::is_enabled() {
  return inference_mode_enabled;
}
void InferenceMode::set_enabled(bool enabled) {
  inference_mode_enabled = enabled;
}

std::shared_ptr<TensorImpl> make_tensor_impl() {
  auto impl = std::allocate_shared<TensorImpl>(PoolAllocator<TensorImpl>());
  impl->is_inference = inference_mode_enabled;
  return impl;
}

std::shared_ptr<VersionCounter> make_version_counter() {
  return std::allocate_shared<VersionCounter>(PoolAllocator<VersionCounter>());
}

int64_t Tensor::size(int64_t d) const {
  return impl_->sizes[maybe_wrap_dim(d, dim())];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (auto s : impl_->sizes) {
    n *= s;
  }
  return n;
}

bool Tensor::is_contiguous() const {
  // torch: a tensor with no elements is contiguous whatever its strides.
  if (numel() == 0) {
    return true;
  }
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (impl_->sizes[i] != 1 && impl_->strides[i] != expected) {
      return false;
    }
    expected *= impl_->sizes[i];
  }
  return true;
}

int64_t maybe_wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = ndim <= 0 ? 1 : ndim;
  NPGRAD_CHECK_INDEX(
      dim >= -n && dim < n,
      "Dimension out of range (expected to be in range of [",
      -n,
      ", ",
      n - 1,
      "], but got ",
      dim,
      ")");
  return dim < 0 ? dim + n : dim;
}

std::string shape_str(const Shape& s) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < s.size(); ++i) {
    out << (i ? ", " : "") << s[i];
  }
  out << "]";
  return out.str();
}

}  // namespace npgrad
