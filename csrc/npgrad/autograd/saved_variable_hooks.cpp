#include "npgrad/autograd/saved_variable_hooks.h"

#include <atomic>
#include <vector>

#include "npgrad/util/error.h"

namespace npgrad::autograd {

namespace {
// Per thread, like torch: work done in other threads does not see the hooks.
thread_local std::vector<SavedTensorDefaultHooks::Entry> stack;
thread_local std::optional<std::string> disabled_message;
std::atomic<int64_t> live_prefetching_hooks{0};
}  // namespace

Tensor SavedVariableHooks::call_pack_hook_to_tensor(const Tensor&) {
  NPGRAD_INTERNAL_ASSERT(false, "these saved tensor hooks cannot be composed");
  return Tensor();
}

Tensor SavedVariableHooks::call_unpack_hook_from_tensor(const Tensor&) {
  NPGRAD_INTERNAL_ASSERT(false, "these saved tensor hooks cannot be composed");
  return Tensor();
}

void ComposedSavedVariableHooks::call_pack_hook(const Tensor& t) {
  Tensor packed = t;
  for (std::size_t i = 0; i + 1 < layers.size(); ++i) {
    packed = layers[i]->call_pack_hook_to_tensor(packed);
  }
  layers.back()->call_pack_hook(packed);
}

Tensor ComposedSavedVariableHooks::call_unpack_hook() {
  Tensor t = layers.back()->call_unpack_hook();
  for (std::size_t i = layers.size() - 1; i-- > 0;) {
    t = layers[i]->call_unpack_hook_from_tensor(t);
  }
  return t;
}

int ComposedSavedVariableHooks::traverse_python(
    PyVisitProc visit, void* arg) const {
  for (const auto& layer : layers) {
    if (int r = layer->traverse_python(visit, arg)) {
      return r;
    }
  }
  return 0;
}

void ComposedSavedVariableHooks::clear_python() {
  for (const auto& layer : layers) {
    layer->clear_python();
  }
}

PrefetchRegistration::PrefetchRegistration(bool active) : active_(active) {
  if (active_) {
    live_prefetching_hooks.fetch_add(1, std::memory_order_relaxed);
  }
}

PrefetchRegistration::~PrefetchRegistration() {
  if (active_) {
    live_prefetching_hooks.fetch_sub(1, std::memory_order_relaxed);
  }
}

bool PrefetchRegistration::any() {
  return live_prefetching_hooks.load(std::memory_order_relaxed) > 0;
}

void SavedTensorDefaultHooks::push(
    SavedHooksFactory factory, bool compose, bool prefetches) {
  NPGRAD_CHECK(!disabled_message, *disabled_message);
  NPGRAD_CHECK(
      !(compose && prefetches && !stack.empty()),
      "saved_tensors_hooks(compose=True, prefetch=...) inside another "
      "saved_tensors_hooks: the enclosing pack hook keeps what this pack hook "
      "returns, so there is no payload of its own to prefetch; pass prefetch= "
      "to the outermost saved_tensors_hooks instead");
  stack.push_back(Entry{std::move(factory), compose});
}

void SavedTensorDefaultHooks::pop() {
  NPGRAD_INTERNAL_ASSERT(
      !stack.empty(), "pop of an empty saved tensors hooks stack");
  stack.pop_back();
}

std::unique_ptr<SavedVariableHooks> SavedTensorDefaultHooks::get() {
  if (disabled_message || stack.empty()) {
    return nullptr;
  }
  if (!stack.back().compose || stack.size() == 1) {
    return stack.back().factory();  // nothing to compose with
  }
  std::vector<std::unique_ptr<SavedVariableHooks>> layers;  // innermost first
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    layers.push_back(it->factory());
    if (!it->compose) {
      break;
    }
  }
  return std::make_unique<ComposedSavedVariableHooks>(std::move(layers));
}

bool SavedTensorDefaultHooks::active() {
  return !disabled_message && !stack.empty();
}

void SavedTensorDefaultHooks::disable(const std::string& message) {
  disabled_message = message;
  NPGRAD_CHECK(stack.empty(), message);
}

void SavedTensorDefaultHooks::enable() {
  disabled_message.reset();
}

std::optional<std::string> SavedTensorDefaultHooks::disabled_error_message() {
  return disabled_message;
}

SavedTensorDefaultHooks::State SavedTensorDefaultHooks::get_state() {
  return State{stack, disabled_message};
}

void SavedTensorDefaultHooks::set_state(State state) {
  stack = std::move(state.stack);
  disabled_message = std::move(state.disabled_message);
}

}  // namespace npgrad::autograd
