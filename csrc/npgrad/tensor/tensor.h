#pragma once
// Tensor (a cheap, shared handle) -> TensorImpl: the ndarray holding the data,
// its sizes/strides/dtype, the version counter shared by every alias of the
// storage, the view base, and the lazily created AutogradMeta. Mirrors
// c10::TensorImpl + at::Tensor, with the storage held as an opaque reference to
// a NumPy array so that this tier never includes Python.h
// (See Note [Storage is a NumPy array] in kernels/kernels.h).

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "npgrad/tensor/dtype.h"
#include "npgrad/util/small_vector.h"

namespace npgrad {

// Note [Per-op allocations]
// A small op's cost is mostly bookkeeping, and much of that is malloc/free:
// each op makes an output TensorImpl, a node, edges and metadata, and the
// backward makes gradient tensors. Geometry lives inline (SmallVector), so a
// tensor of up to six dims costs no allocation for its sizes and strides.
using Shape = SmallVector<int64_t, 6>;

namespace autograd {
struct AutogradMeta;
// Defined in the autograd tier, so that a TensorImpl owns its AutogradMeta
// without this tier seeing (or including) its definition.
struct AutogradMetaDeleter {
  void operator()(AutogradMeta* meta) const;
};
}  // namespace autograd

/// Owning reference to a NumPy array; copies and destruction adjust its
/// refcount through the kernels tier (taking the GIL if needed).
class ArrayHandle {
 public:
  ArrayHandle() = default;
  /// Takes over one reference.
  static ArrayHandle steal(void* obj) {
    ArrayHandle h;
    h.obj_ = obj;
    return h;
  }
  ArrayHandle(const ArrayHandle& other);
  ArrayHandle(ArrayHandle&& other) noexcept : obj_(other.obj_) {
    other.obj_ = nullptr;
  }
  ArrayHandle& operator=(ArrayHandle other) noexcept {
    std::swap(obj_, other.obj_);
    return *this;
  }
  ~ArrayHandle();
  void* get() const { return obj_; }

 private:
  void* obj_ = nullptr;
};

/// One write recorded under anomaly mode (Note [Mutation provenance] in
/// autograd/mutation_provenance.h): the version it produced, the op, and the
/// user's frame that called it.
struct MutationRecord {
  uint32_t version = 0;
  std::string op;
  std::string where;  // File "x.py", line 12, in f
};

/// The storage's state while saves made under lock_saved_tensors() hold it
/// (Note [lock_saved_tensors] in autograd/saved_tensor_lock.h); read and
/// changed with the GIL held.
struct BufferLock {
  /// The ndarrays made read-only by the lock (they were writeable).
  std::vector<ArrayHandle> made_read_only;
  /// The saves holding the lock, oldest first, with their node's name.
  std::vector<std::pair<const void*, std::string>> holders;
};

/// One counter per storage-aliasing family: a base, its views and detach()es.
struct VersionCounter {
  std::atomic<uint32_t> version{0};
  /// Saves under lock_saved_tensors() holding this storage (the in-place
  /// ops' fast check); `lock` has the details.
  std::atomic<uint32_t> saved_locks{0};
  std::unique_ptr<BufferLock> lock;
  /// The last writes, under anomaly mode only (null otherwise).
  std::unique_ptr<std::vector<MutationRecord>> mutations;
};

/// How a view was made; decides whether in-place ops through it are allowed
/// (torch's CreationMeta).
enum class CreationMeta : uint8_t {
  Default,
  NoGradMode,
  MultiOutputNode,
  InCustomFunction
};

class Tensor;

// Note [PyObject preservation]
// As in torch, a tensor's Python object lives as long as the tensor does, not
// only as long as Python references it: when the last Python reference goes
// while C++ still holds the TensorImpl (a saved variable, a .grad, a view's
// base), the object's dealloc resurrects it and hands it to the TensorImpl
// (owned_pyobj), and the object's own reference to the TensorImpl becomes
// non-owning, so there is no cycle. Handing the tensor back to Python (or
// Python reaching the object again, e.g. through a weakref, and passing it to
// npgrad) flips ownership back. So attributes set on a tensor, its weakrefs
// and `is` identity survive a round trip through the graph, and the object is
// freed when the TensorImpl is (csrc/bindings/pyobject_preservation.cpp).
// Because ~TensorImpl may now run Python code, a TensorImpl is never released
// while a mutex that such code could need is held (AccumulateGrad frees the
// replaced .grad after the leaf's mutex). When an object outlives its
// TensorImpl (Python reached it through a weakref), it takes the state over,
// and what held the old TensorImpl weakly is re-pointed (adopt_moved_tensor).
//
// Note [Wrapped numbers have no ndarray until one is needed]
// Every `y * 1.001` turns the Python number into a 0-dim tensor (a wrapped
// number) that lives as long as the op's node. Its value is all the kernels
// read (the inner loops and the NumPy fallback take it by value), so it is
// kept in `inline_scalar` with `data` pointing there, and `array` stays null:
// creating and freeing a 0-dim ndarray was about a tenth of a small op.
// The ndarray is made (kernels::materialize_array) the first time anything
// asks for it: a kernel needing NumPy's machinery, an alias sharing its
// storage (detach, set_data), or Python reaching the tensor (the type caster,
// e.g. grad_fn._saved_other), so data_ptr() is stable once Python can see it
// and every alias sees the same memory, as before.
struct TensorImpl : std::enable_shared_from_this<TensorImpl> {
  TensorImpl();
  ~TensorImpl();
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  ArrayHandle array;  // null only for a wrapped number not yet materialized
  void* data = nullptr;
  Shape sizes;
  Shape strides;  // in elements, like torch
  ScalarType dtype = ScalarType::Float32;
  // A Python number turned into a 0-dim tensor: it takes part in type
  // promotion as the weakest operand (torch's "wrapped number").
  bool is_wrapped_number = false;
  std::shared_ptr<VersionCounter> version_counter;
  // Views: the root base (a view of a view points at the original tensor).
  std::shared_ptr<TensorImpl> view_base;
  CreationMeta creation_meta = CreationMeta::Default;
  // Made in inference mode (Note [Inference mode]); a view inherits it.
  bool is_inference = false;
  // Counter value when this view's grad_fn was last set (lazy regeneration).
  uint32_t attr_version = 0;
  std::unique_ptr<autograd::AutogradMeta, autograd::AutogradMetaDeleter>
      autograd_meta;
  // The Python object this TensorImpl owns (Note [PyObject preservation]);
  // null while Python owns the object, or when there is none.
  void* owned_pyobj = nullptr;
  // A wrapped number's value while `array` is null (`data` points here).
  alignas(8) unsigned char inline_scalar[8] = {};

  bool has_inline_scalar() const { return data == inline_scalar; }

  /// Moves every field into `dst` (an object that outlives this TensorImpl
  /// takes its state over); keep in step with the fields above.
  void move_state_to(TensorImpl& dst);
};

/// Releases impl.owned_pyobj from ~TensorImpl; set by the bindings (the core
/// never creates Python objects itself).
extern void (*release_owned_pyobj)(TensorImpl& impl);
/// Whether Python references impl.owned_pyobj beyond impl's own reference
/// (reached again through a weakref or gc): the cycle collector must then
/// count the object as an outside owner. Set by the bindings; GIL held.
extern bool (*owned_pyobj_is_shared)(const TensorImpl& impl);

/// A shared handle; the default-constructed Tensor is "undefined" (None).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  const Shape& sizes() const { return impl_->sizes; }
  const Shape& strides() const { return impl_->strides; }
  int64_t dim() const { return static_cast<int64_t>(impl_->sizes.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const;
  ScalarType dtype() const { return impl_->dtype; }
  void* data_ptr() const { return impl_->data; }
  bool is_contiguous() const;

  uint32_t version() const { return impl_->version_counter->version.load(); }
  void bump_version() const { impl_->version_counter->version.fetch_add(1); }
  bool is_view() const { return impl_->view_base != nullptr; }
  Tensor base() const { return Tensor(impl_->view_base); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

using variable_list = std::vector<Tensor>;

/// A new TensorImpl / version counter, each with its reference counts in one
/// pooled block (Note [Pooled small objects] in util/pool.h).
// Note [Inference mode]
// As torch's c10::InferenceMode: thread-local; while it is on, grad mode is
// off and every tensor made (except views of normal tensors) is an inference
// tensor. Outside it, an inference tensor cannot be written in place, saved
// for backward, set to require grad, or asked for its version. It lives in
// this tier because every new TensorImpl reads it.
struct InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// A new TensorImpl, an inference tensor when inference mode is on.
std::shared_ptr<TensorImpl> make_tensor_impl();
std::shared_ptr<VersionCounter> make_version_counter();

/// Wraps a negative dim and checks its range, with torch's IndexError text.
int64_t maybe_wrap_dim(int64_t dim, int64_t ndim);
/// "[2, 3]"
std::string shape_str(const Shape& s);

}  // namespace npgrad
