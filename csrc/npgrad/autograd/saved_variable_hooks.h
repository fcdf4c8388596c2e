#pragma once
// Pack/unpack hooks of saved tensors
// (torch/csrc/autograd/saved_variable_hooks.h) and the thread-local stack of
// default hooks that saved_tensors_hooks pushes (at::SavedTensorDefaultHooks).
// The bindings implement the hooks with Python callables. Two additions of
// npgrad's own, both opt-in: composed pairs (Note [Composed saved tensor
// hooks]) and prefetching (Note [Prefetching saved tensors] in engine.cpp).

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
  /// An inner layer of a composed chain: packs t and returns the result,
  /// which must be a tensor (the enclosing layer packs it); keeps nothing.
  virtual Tensor call_pack_hook_to_tensor(const Tensor& t);
  /// Unpacks what call_pack_hook_to_tensor returned (the enclosing layer's
  /// unpack gave it back).
  virtual Tensor call_unpack_hook_from_tensor(const Tensor& packed);

  /// Whether call_prefetch_hook does anything.
  virtual bool has_prefetch_hook() const { return false; }
  /// Called by the engine ahead of call_unpack_hook, once per backward pass.
  virtual void call_prefetch_hook() {}
};

// Note [Composed saved tensor hooks]
// A pair pushed with compose=true does not replace the pairs it is nested
// in: what its pack returns (a tensor) is packed by the enclosing pair, and
// so on outwards to the first pair pushed without compose (or the bottom of
// the stack); unpack runs the other way, outermost first. Only the outermost
// layer's result is kept, so only its prefetch hook can be given a payload;
// a prefetching pair nested with compose is refused when pushed.
struct ComposedSavedVariableHooks final : SavedVariableHooks {
  /// layers: innermost first.
  explicit ComposedSavedVariableHooks(
      std::vector<std::unique_ptr<SavedVariableHooks>> layers)
      : layers(std::move(layers)) {}
  void call_pack_hook(const Tensor& t) override;
  Tensor call_unpack_hook() override;
  bool has_prefetch_hook() const override {
    return layers.back()->has_prefetch_hook();
  }
  void call_prefetch_hook() override { layers.back()->call_prefetch_hook(); }
  int traverse_python(PyVisitProc visit, void* arg) const override;
  void clear_python() override;

  std::vector<std::unique_ptr<SavedVariableHooks>> layers;
};

/// Counts the live hooks that have a prefetch hook, so that a backward pass
/// runs its lookahead only while some exist (Note [Prefetching saved
/// tensors]). Hooks with a prefetch hook own one registration.
class PrefetchRegistration {
 public:
  explicit PrefetchRegistration(bool active);
  ~PrefetchRegistration();
  PrefetchRegistration(const PrefetchRegistration&) = delete;
  PrefetchRegistration& operator=(const PrefetchRegistration&) = delete;
  static bool any();

 private:
  bool active_;
};

using SavedHooksFactory = std::function<std::unique_ptr<SavedVariableHooks>()>;

struct SavedTensorDefaultHooks {
  struct Entry {
    SavedHooksFactory factory;
    bool compose = false;
  };
  /// Throws the disabled message if hooks are disabled. With compose, the
  /// pair feeds the enclosing ones (Note [Composed saved tensor hooks]);
  /// prefetches: its hooks have a prefetch hook.
  static void push(
      SavedHooksFactory factory, bool compose = false, bool prefetches = false);
  static void pop();
  /// Hooks for a tensor being saved now: the innermost pair (composed with
  /// the enclosing ones when it was pushed with compose), or null.
  static std::unique_ptr<SavedVariableHooks> get();
  /// Whether get() would return hooks now.
  static bool active();
  /// Disables default hooks with this message; throws it if a pair is active.
  static void disable(const std::string& message);
  static void enable();
  static std::optional<std::string> disabled_error_message();

  /// This thread's stack and disabled message, to carry to another thread.
  struct State {
    std::vector<Entry> stack;
    std::optional<std::string> disabled_message;
  };
  static State get_state();
  static void set_state(State state);
};

}  // namespace npgrad::autograd
