#include "npgrad/autograd/saved_variable_hooks.h"

#include <atomic>
#include <utility>
#include <vector>

#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/kernels/kernels.h"
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

// ---- Note [Storage dedup of saved tensors] ----

SavedBuffer::SavedBuffer(
    std::unique_ptr<SavedVariableHooks> chain,
    const Tensor& packed,
    bool is_buffer)
    : chain(std::move(chain)),
      sizes(packed.sizes()),
      strides(packed.strides()),
      dtype(packed.dtype()),
      version_counter(packed.impl()->version_counter),
      is_buffer(is_buffer) {}

SavedBuffer::PassState* SavedBuffer::pass_state(GraphTask* task) {
  if (task == nullptr) {
    return nullptr;
  }
  for (PassState& st : passes_) {
    if (st.task_id == task->id) {
      return &st;
    }
  }
  passes_.push_back(PassState{task->id, Tensor()});
  std::lock_guard<std::mutex> lock(task->mutex);
  task->saved_buffers.push_back(weak_from_this());
  return &passes_.back();
}

namespace {
bool same_layout(const Shape& sizes, const Shape& a, const Shape& b) {
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1 && a[d] != b[d]) {
      return false;
    }
  }
  return true;
}
}  // namespace

Tensor SavedBuffer::unpack() {
  if (!is_buffer) {
    return chain->call_unpack_hook();
  }
  GraphTask* task = current_graph_task();
  if (task != nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    PassState* st = pass_state(task);
    if (st->unpacked.defined()) {
      return st->unpacked;
    }
  }
  Tensor u = chain->call_unpack_hook();
  NPGRAD_CHECK(
      u.sizes() == sizes && u.dtype() == dtype,
      "saved_tensors_hooks(dedup=True): unpack_hook must return a tensor of "
      "the shape and dtype of the buffer pack_hook received (",
      shape_str(sizes),
      ", ",
      type_string(dtype),
      ") but got ",
      shape_str(u.sizes()),
      ", ",
      type_string(u.dtype()));
  if (!same_layout(sizes, u.strides(), strides)) {
    // The saved tensors' geometry is in the buffer's layout.
    Tensor laid_out = kernels::empty_strided(sizes, strides, dtype);
    kernels::copy_into(laid_out, u);
    u = std::move(laid_out);
  }
  if (task != nullptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    pass_state(task)->unpacked = u;
  }
  return u;
}

void SavedBuffer::prefetch() {
  if (is_buffer) {
    if (GraphTask* task = current_graph_task()) {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const PassState& st : passes_) {
        if (st.task_id == task->id) {
          return;  // prefetched or unpacked in this pass already
        }
      }
      pass_state(task);
    }
  }
  chain->call_prefetch_hook();
}

void SavedBuffer::end_pass(int64_t task_id) {
  std::vector<PassState> ended;  // freed after the lock is released
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < passes_.size();) {
    if (passes_[i].task_id == task_id) {
      ended.push_back(std::move(passes_[i]));
      passes_.erase(passes_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void release_saved_buffers(GraphTask& task) {
  std::vector<std::weak_ptr<SavedBuffer>> used;
  {
    std::lock_guard<std::mutex> lock(task.mutex);
    used.swap(task.saved_buffers);
  }
  for (const auto& weak : used) {
    if (auto payload = weak.lock()) {
      payload->end_pass(task.id);
    }
  }
}

std::shared_ptr<SavedBuffer> DedupRegistry::find(const Key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : it->second.lock();
}

void DedupRegistry::insert(
    const Key& key, const std::shared_ptr<SavedBuffer>& payload) {
  std::lock_guard<std::mutex> lock(mutex_);
  map_[key] = payload;
  if (map_.size() >= sweep_at_) {
    // Released payloads leave expired entries: drop them now and then.
    for (auto it = map_.begin(); it != map_.end();) {
      it = it->second.expired() ? map_.erase(it) : std::next(it);
    }
    sweep_at_ = 2 * map_.size() + 64;
  }
}

void DedupSavedVariableHooks::call_pack_hook(const Tensor& t) {
  Tensor x = t;
  for (const auto& layer : per_tensor) {
    x = layer->call_pack_hook_to_tensor(x);
  }
  std::optional<kernels::StorageRoot> root;
  if (!x.impl()->is_wrapped_number) {
    root = kernels::storage_root(x);
  }
  DedupRegistry::Key key{};
  if (root) {
    key = {x.impl()->version_counter.get(), x.version(), root->array};
    payload = registry->find(key);
  }
  if (!payload) {
    std::unique_ptr<SavedVariableHooks> chain = chain_factory();
    if (root) {
      // A fresh alias of the whole buffer: no history, the same counter (so
      // that a pack hook writing into it is caught).
      Tensor buffer = kernels::from_array(root->array);
      buffer.impl()->version_counter = x.impl()->version_counter;
      chain->call_pack_hook(buffer);
      payload = std::make_shared<SavedBuffer>(std::move(chain), buffer, true);
      registry->insert(key, payload);
    } else {
      chain->call_pack_hook(x);
      payload = std::make_shared<SavedBuffer>(std::move(chain), x, false);
    }
  }
  if (root) {
    sizes = x.sizes();
    strides = x.strides();
    offset = root->offset;
    whole = offset == 0 && sizes == payload->sizes &&
            same_layout(sizes, strides, payload->strides);
  }
  registry.reset();
  chain_factory = nullptr;
}

Tensor DedupSavedVariableHooks::call_unpack_hook() {
  NPGRAD_INTERNAL_ASSERT(payload, "dedup hooks unpacked before packing");
  Tensor t = payload->unpack();
  if (!whole) {
    t = make_view(t, kernels::view_as_strided(t, sizes, strides, offset));
  }
  for (std::size_t i = per_tensor.size(); i-- > 0;) {
    t = per_tensor[i]->call_unpack_hook_from_tensor(t);
  }
  return t;
}

void DedupSavedVariableHooks::call_prefetch_hook() {
  if (payload) {
    payload->prefetch();
  }
}

int DedupSavedVariableHooks::traverse_python(
    PyVisitProc visit, void* arg) const {
  for (const auto& layer : per_tensor) {
    if (int r = layer->traverse_python(visit, arg)) {
      return r;
    }
  }
  return 0;
}

void DedupSavedVariableHooks::clear_python() {
  for (const auto& layer : per_tensor) {
    layer->clear_python();
  }
}

void SharedBufferTally::add(const std::shared_ptr<SavedBuffer>* payload) {
  if (payload == nullptr) {
    return;
  }
  for (auto& [p, n] : counts_) {
    if (p->get() == payload->get()) {
      ++n;
      return;
    }
  }
  counts_.emplace_back(payload, 1);
}

int SharedBufferTally::traverse_python(PyVisitProc visit, void* arg) const {
  for (const auto& [p, n] : counts_) {
    if (p->use_count() == n) {
      if (int r = (*p)->chain->traverse_python(visit, arg)) {
        return r;
      }
    }
  }
  return 0;
}

void SharedBufferTally::clear_python() const {
  for (const auto& [p, n] : counts_) {
    if (p->use_count() == n) {
      (*p)->chain->clear_python();
    }
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
    SavedHooksFactory factory, bool compose, bool prefetches, bool dedup) {
  NPGRAD_CHECK(!disabled_message, *disabled_message);
  NPGRAD_CHECK(
      !(compose && prefetches && !stack.empty()),
      "saved_tensors_hooks(compose=True, prefetch=...) inside another "
      "saved_tensors_hooks: the enclosing pack hook keeps what this pack hook "
      "returns, so there is no payload of its own to prefetch; pass prefetch= "
      "to the outermost saved_tensors_hooks instead");
  stack.push_back(Entry{
      std::move(factory),
      compose,
      dedup ? std::make_shared<DedupRegistry>() : nullptr});
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
  const Entry& top = stack.back();
  if ((!top.compose || stack.size() == 1) && !top.dedup) {
    return top.factory();  // nothing to compose with, no dedup
  }
  // The entries whose pairs this tensor goes through, innermost first.
  std::vector<const Entry*> chain;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    chain.push_back(&*it);
    if (!it->compose) {
      break;
    }
  }
  std::size_t dedup_at = 0;
  while (dedup_at < chain.size() && !chain[dedup_at]->dedup) {
    ++dedup_at;
  }
  auto build = [](const std::vector<SavedHooksFactory>& factories)
      -> std::unique_ptr<SavedVariableHooks> {
    if (factories.size() == 1) {
      return factories[0]();  // nothing to compose with
    }
    std::vector<std::unique_ptr<SavedVariableHooks>> layers;
    layers.reserve(factories.size());
    for (const auto& f : factories) {
      layers.push_back(f());
    }
    return std::make_unique<ComposedSavedVariableHooks>(std::move(layers));
  };
  if (dedup_at == chain.size()) {
    if (chain.size() == 1) {
      return chain[0]->factory();
    }
    std::vector<SavedHooksFactory> factories;
    for (const Entry* e : chain) {
      factories.push_back(e->factory);
    }
    return build(factories);
  }
  // Note [Storage dedup of saved tensors]: the pairs nested in the dedup
  // pair run per tensor; it and those enclosing it run once per buffer.
  std::vector<std::unique_ptr<SavedVariableHooks>> per_tensor;
  for (std::size_t i = 0; i < dedup_at; ++i) {
    per_tensor.push_back(chain[i]->factory());
  }
  std::vector<SavedHooksFactory> shared;
  for (std::size_t i = dedup_at; i < chain.size(); ++i) {
    shared.push_back(chain[i]->factory);
  }
  return std::make_unique<DedupSavedVariableHooks>(
      std::move(per_tensor),
      chain[dedup_at]->dedup,
      [shared = std::move(shared), build]() { return build(shared); });
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
