#pragma once
// Note [lock_saved_tensors]
// npgrad.autograd.graph.lock_saved_tensors(): npgrad's own (torch cannot
// lock its storage; MyGrad always locks). While a tensor saved under it is
// still saved, its storage cannot be written:
// - npgrad's in-place ops on it or on any alias (they share the version
//   counter) raise a RuntimeError naming the node that saved it, from
//   check_inplace, before anything is written (the tensor and its version
//   are unchanged);
// - the tensor's ndarray and its bases are made read-only (NumPy's
//   writeable flag), so a NumPy write through an array obtained from now on
//   (t.numpy(), or the array given to from_numpy) raises NumPy's
//   "assignment destination is read-only"; t.numpy() of any alias is
//   read-only while locked. Arrays obtained before the lock from another
//   alias's view stay writeable: NumPy cannot revoke that.
// When the graph lets the save go (released after backward, the node freed
// with its graph, register_hooks taking the data over), the lock is
// released; the storage's last release restores the writeable flag of the
// arrays the lock flipped, and only those (a read-only array stays so).
// Locks are counted per storage (several saves, nested contexts); views
// npgrad makes meanwhile are not left read-only (kernels'
// made_read_only_by_lock). Gradient accumulation into a locked .grad makes
// a new tensor instead of writing in place.
// The mode is thread-local, like saved_tensors_hooks. A save packed by a
// default pack hook is not locked: the hook's result is what is kept.
// The saving node's name is found when the save is moved into its place,
// as for Note [Pack-hook context].

#include <memory>
#include <string>

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

struct LockSavedTensors {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// A save's hold on its storage's lock; releases it when destroyed.
class SavedLock {
 public:
  explicit SavedLock(const Tensor& t);
  ~SavedLock();
  SavedLock(const SavedLock&) = delete;
  SavedLock& operator=(const SavedLock&) = delete;
  void set_node_name(const std::string& name);
  bool named() const { return named_; }

 private:
  std::shared_ptr<VersionCounter> counter_;
  bool named_ = false;
};

/// The RuntimeError of an in-place write into a locked storage.
[[noreturn]] void throw_locked(const Tensor& t);

/// check_inplace's check: t's storage is not held by a locked save.
inline void check_not_locked(const Tensor& t) {
  if (t.impl()->version_counter->saved_locks.load(std::memory_order_acquire) !=
      0) {
    throw_locked(t);
  }
}

}  // namespace npgrad::autograd
