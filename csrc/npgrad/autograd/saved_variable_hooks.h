#pragma once
// Pack/unpack hooks of saved tensors
// (torch/csrc/autograd/saved_variable_hooks.h) and the thread-local stack of
// default hooks that saved_tensors_hooks pushes (at::SavedTensorDefaultHooks).
// The bindings implement the hooks with Python callables. Three additions of
// npgrad's own, all opt-in: composed pairs (Note [Composed saved tensor
// hooks]), prefetching (Note [Prefetching saved tensors] in engine.cpp) and
// storage dedup (Note [Storage dedup of saved tensors]).

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "npgrad/autograd/python_refs.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

struct GraphTask;
struct SavedBuffer;

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

  /// Whether unpack checks the saved tensor's version, as without hooks
  /// (dedup hooks do: Note [Storage dedup of saved tensors]).
  virtual bool checks_versions() const { return false; }
  /// The payload these hooks share with others, if any.
  virtual const std::shared_ptr<SavedBuffer>* shared_buffer() const {
    return nullptr;
  }
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

// Note [Storage dedup of saved tensors]
// saved_tensors_hooks(pack, unpack, dedup=True) (npgrad's own): tensors saved
// in its scope that share one buffer (views of one tensor, a tensor saved by
// several nodes) are packed once per buffer.
// - The buffer: every alias of a tensor shares its version counter (the
//   `storage` of current_saved_tensor()) and the ndarray at the end of its
//   chain of ndarray bases (kernels::storage_root). The pack hook receives a
//   tensor over that whole ndarray, in its own shape and strides (a fresh
//   alias: no history, the same version counter), once per (buffer,
//   version): a buffer written in place between two saves is packed again,
//   so each saved tensor gets the values it had when saved. A small view of
//   a large buffer costs the whole buffer. A tensor whose root is of another
//   dtype or not dense (overlapping, negative strides) is packed alone, as
//   without dedup.
// - Each SavedVariable keeps the shared payload (SavedBuffer) and its view's
//   geometry in the buffer (sizes, strides, offset; the dtype is the
//   buffer's). At unpack, the payload's unpack hook must return a tensor of
//   the buffer's shape and dtype (else a RuntimeError); one laid out with
//   other strides is copied into the buffer's layout; each saved tensor is
//   its view of that.
// - Unpack runs once per payload per backward pass: the result is kept on
//   the payload under the pass's GraphTask id, and released when the pass
//   ends (Engine::execute, normally or by an exception) or with the payload.
//   Outside a pass (reading `_saved_x`) every read unpacks. A payload's
//   prefetch hook runs at most once per pass, and not after its unpack.
// - Lifetime: the payload lives while a SavedVariable holds it (released
//   ones drop their share); the scope's registry holds it weakly, keyed by
//   (version counter, version, root ndarray), the payload keeping the
//   counter (so the key's address is not reused while it lives).
// - Versions: unpack checks each saved tensor's version against its own
//   version counter, with torch's "modified by an inplace operation" error,
//   as a saved tensor without hooks is (plain hooks cannot check: torch
//   keeps no counter through them).
// - Composition: with compose=True pairs nested inside the dedup pair, those
//   run per saved tensor first, and dedup applies to what they return; the
//   pairs the dedup pair composes with (enclosing it) run once per buffer,
//   on what its pack returns. Prefetch is the outermost pair's, as always.
// - GC (Note [GC visibility]): a payload's Python objects are reported once,
//   by the holder (node, Function ctx) of all its shares; a payload shared
//   across holders is not reported (it then only looks alive).
// - The registry belongs to one entering of the context manager (its stack
//   entry); hooks are per thread, so each thread's scopes are its own.

/// What several SavedVariables share under dedup: the packed buffer.
struct SavedBuffer : std::enable_shared_from_this<SavedBuffer> {
  /// `chain` has packed `packed`; is_buffer: it is a dense whole buffer
  /// (else a tensor packed alone, whose unpack result is used as it is).
  SavedBuffer(
      std::unique_ptr<SavedVariableHooks> chain,
      const Tensor& packed,
      bool is_buffer);
  /// The buffer, unpacked once per backward pass (uncached outside one).
  Tensor unpack();
  /// The prefetch hook, once per pass and not once unpacked in it.
  void prefetch();
  /// Drops what was kept for pass `task_id`.
  void end_pass(int64_t task_id);

  std::unique_ptr<SavedVariableHooks> chain;
  Shape sizes;
  Shape strides;
  ScalarType dtype;
  std::shared_ptr<VersionCounter> version_counter;
  bool is_buffer;

 private:
  struct PassState {
    int64_t task_id;
    Tensor unpacked;  // undefined until unpacked in that pass
  };
  // This payload's state in pass `task`, made (and the payload registered
  // with the task) on first use; null outside a pass. Caller holds mutex_.
  PassState* pass_state(GraphTask* task);
  std::mutex mutex_;  // never held while a hook runs or a tensor is freed
  std::vector<PassState> passes_;
};

/// One dedup scope's payloads, by buffer (held weakly).
struct DedupRegistry {
  struct Key {
    const VersionCounter* counter;
    uint32_t version;
    const void* root;
    bool operator==(const Key& o) const {
      return counter == o.counter && version == o.version && root == o.root;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::size_t h = std::hash<const void*>()(k.counter);
      h ^= std::hash<const void*>()(k.root) + 0x9e3779b97f4a7c15ULL + (h << 6) +
           (h >> 2);
      return h ^ (std::hash<uint32_t>()(k.version) << 1);
    }
  };
  std::shared_ptr<SavedBuffer> find(const Key& key);
  void insert(const Key& key, const std::shared_ptr<SavedBuffer>& payload);

 private:
  std::mutex mutex_;
  std::unordered_map<Key, std::weak_ptr<SavedBuffer>, KeyHash> map_;
  std::size_t sweep_at_ = 64;
};

/// The hooks of one saved tensor under dedup: the compose layers nested in
/// the dedup pair (its own), then its share of a SavedBuffer.
struct DedupSavedVariableHooks final : SavedVariableHooks {
  DedupSavedVariableHooks(
      std::vector<std::unique_ptr<SavedVariableHooks>> per_tensor,
      std::shared_ptr<DedupRegistry> registry,
      SavedHooksFactory chain_factory)
      : per_tensor(std::move(per_tensor)),
        registry(std::move(registry)),
        chain_factory(std::move(chain_factory)) {}
  void call_pack_hook(const Tensor& t) override;
  Tensor call_unpack_hook() override;
  bool has_prefetch_hook() const override {
    return payload && payload->chain->has_prefetch_hook();
  }
  void call_prefetch_hook() override;
  bool checks_versions() const override { return true; }
  const std::shared_ptr<SavedBuffer>* shared_buffer() const override {
    return payload ? &payload : nullptr;
  }
  /// The per-tensor layers only: the payload is its holders' to report.
  int traverse_python(PyVisitProc visit, void* arg) const override;
  void clear_python() override;

  std::vector<std::unique_ptr<SavedVariableHooks>> per_tensor;  // innermost 1st
  // Until packed: where payloads are found, and how a new one is made.
  std::shared_ptr<DedupRegistry> registry;
  SavedHooksFactory chain_factory;
  std::shared_ptr<SavedBuffer> payload;
  // The saved tensor in the buffer; whole: it is the buffer itself.
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
  bool whole = true;
};

/// Releases what the payloads unpacked or prefetched in `task` kept
/// (Note [Storage dedup of saved tensors]); called when a pass ends.
void release_saved_buffers(GraphTask& task);

/// The shared payloads among a holder's saved variables, counted so that
/// the holder reports (and clears) those it holds all the shares of.
class SharedBufferTally {
 public:
  void add(const std::shared_ptr<SavedBuffer>* payload);
  int traverse_python(PyVisitProc visit, void* arg) const;
  void clear_python() const;

 private:
  std::vector<std::pair<const std::shared_ptr<SavedBuffer>*, long>> counts_;
};

struct SavedTensorDefaultHooks {
  struct Entry {
    SavedHooksFactory factory;
    bool compose = false;
    std::shared_ptr<DedupRegistry> dedup;  // null without dedup
  };
  /// Throws the disabled message if hooks are disabled. With compose, the
  /// pair feeds the enclosing ones (Note [Composed saved tensor hooks]);
  /// prefetches: its hooks have a prefetch hook; dedup: Note [Storage dedup
  /// of saved tensors].
  static void push(
      SavedHooksFactory factory,
      bool compose = false,
      bool prefetches = false,
      bool dedup = false);
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
