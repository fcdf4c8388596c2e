#pragma once
// Pack/unpack hooks of saved tensors
// (torch/csrc/autograd/saved_variable_hooks.h) and the thread-local stack of
// default hooks that saved_tensors_hooks pushes (at::SavedTensorDefaultHooks).
// The bindings implement the hooks with Python callables.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npgrad/autograd/python_refs.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

struct SavedVariableHooks : PythonRefHolder {
  virtual ~SavedVariableHooks() = default;
  /// Called once, at save time, under no_grad.
  virtual void call_pack_hook(const Tensor& t) = 0;
  /// Called at every unpack; must return a tensor.
  virtual Tensor call_unpack_hook() = 0;

  // What was packed, recorded before the pack hook runs, so that
  // saved_tensors() describes a packed tensor without unpacking it. The
  // version counter (the storage's identity) is kept so that its address is
  // not reused while the hooks live; the data itself is not kept.
  Shape packed_sizes;
  ScalarType packed_dtype = ScalarType::Float32;
  std::shared_ptr<VersionCounter> packed_storage;
};

using SavedHooksFactory = std::function<std::unique_ptr<SavedVariableHooks>()>;

struct SavedTensorDefaultHooks {
  /// Throws the disabled message if hooks are disabled.
  static void push(SavedHooksFactory factory);
  static void pop();
  /// Hooks for a tensor being saved now: the innermost pair, or null.
  static std::unique_ptr<SavedVariableHooks> get();
  /// Whether get() would return hooks now.
  static bool active();
  /// Disables default hooks with this message; throws it if a pair is active.
  static void disable(const std::string& message);
  static void enable();
  static std::optional<std::string> disabled_error_message();

  /// This thread's stack and disabled message, to carry to another thread.
  struct State {
    std::vector<SavedHooksFactory> stack;
    std::optional<std::string> disabled_message;
  };
  static State get_state();
  static void set_state(State state);
};

}  // namespace npgrad::autograd
