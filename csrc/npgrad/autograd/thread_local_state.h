#pragma once
// The thread-local settings a backward pass carries to a thread it runs on
// (torch's at::ThreadLocalState): grad mode, the default saved-tensor hooks
// and the in-place observer of allow_mutation_on_saved_tensors.

#include <optional>
#include <string>
#include <vector>

#include "npgrad/autograd/saved_variable_hooks.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

class ThreadLocalState {
 public:
  /// Captures the calling thread's settings.
  ThreadLocalState();
  /// Installs captured settings on the calling thread for a scope, and
  /// restores the thread's defaults when it ends (the settings may hold
  /// Python objects: they must be dropped before the thread lets go of the
  /// GIL, not by thread-exit destructors).
  class Guard {
   public:
    explicit Guard(ThreadLocalState state);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };

 private:
  bool grad_enabled_;
  SavedTensorDefaultHooks::State saved_hooks_;
  ops::InplaceObserver inplace_observer_;
};

}  // namespace npgrad::autograd
