#include "npgrad/autograd/saved_tensor_lock.h"

#include "npgrad/kernels/kernels.h"
#include "npgrad/util/error.h"

namespace npgrad::autograd {

namespace {
thread_local bool lock_enabled = false;
}  // namespace

bool LockSavedTensors::is_enabled() {
  return lock_enabled;
}

void LockSavedTensors::set_enabled(bool enabled) {
  lock_enabled = enabled;
}

SavedLock::SavedLock(const Tensor& t) : counter_(t.impl()->version_counter) {
  kernels::lock_storage(t, this);
}

SavedLock::~SavedLock() {
  kernels::unlock_storage(*counter_, this);
}

void SavedLock::set_node_name(const std::string& name) {
  named_ = true;
  kernels::name_lock_holder(*counter_, this, name);
}

void throw_locked(const Tensor& t) {
  std::vector<std::string> names =
      kernels::lock_holder_names(*t.impl()->version_counter);
  std::string by = names.empty() || names.front().empty()
                       ? std::string("an autograd node")
                       : names.front();
  std::string others;
  if (names.size() > 1) {
    others = " (and " + std::to_string(names.size() - 1) + " other save" +
             (names.size() > 2 ? "s" : "") + ")";
  }
  throw Error(
      "This tensor, or a view of its memory, is saved by " + by + others +
      " under lock_saved_tensors() and cannot be modified in place until "
      "the graph releases it (after backward, or when the graph is freed)");
}

}  // namespace npgrad::autograd
