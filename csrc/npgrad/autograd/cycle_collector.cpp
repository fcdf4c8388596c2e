#include "npgrad/autograd/cycle_collector.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable.h"

namespace npgrad::autograd {

void Node::visit_strong_refs(StrongRefVisitor& v) {
  for (const Edge& e : next_edges_) {
    if (e.function) {
      v.node(e.function);
    }
  }
  for_each_saved_variable([&](SavedVariable& sv) { sv.visit_strong_refs(v); });
}

namespace {

std::mutex candidates_mutex;
std::vector<std::weak_ptr<TensorImpl>> candidates;  // guarded by the mutex

bool grad_requires_grad(const AutogradMeta& meta) {
  return meta.grad.defined() && requires_grad(meta.grad);
}

// One object of the walked set. `use` is its strong count when first seen
// (nothing changes the graph during a collection: the caller holds the GIL,
// which every graph mutation needs).
struct Entry {
  const TensorImpl* tensor = nullptr;
  const Node* node = nullptr;
  long use = 0;
  long internal = 0;
  bool reachable = false;
  std::vector<std::size_t> children;
};

class Walk final : public StrongRefVisitor {
 public:
  void add_root(const std::shared_ptr<TensorImpl>& root) {
    // The candidates snapshot holds one reference of its own.
    add(root.get(), nullptr, static_cast<long>(root.use_count()) - 1);
  }

  void run() {
    while (!stack_.empty()) {
      current_ = stack_.back();
      stack_.pop_back();
      if (const TensorImpl* t = entries_[current_].tensor) {
        if (t->view_base) {
          tensor(t->view_base);
        }
        if (const AutogradMeta* meta = t->autograd_meta.get()) {
          if (meta->grad.defined()) {
            tensor(meta->grad.impl_ptr());
          }
          if (meta->grad_fn) {
            node(meta->grad_fn);
          }
        }
      } else {
        const_cast<Node*>(entries_[current_].node)->visit_strong_refs(*this);
      }
    }
  }

  /// Marks what outside owners keep alive; returns the garbage tensors.
  std::vector<TensorImpl*> garbage_tensors() {
    std::vector<std::size_t> work;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].use > entries_[i].internal) {
        entries_[i].reachable = true;
        work.push_back(i);
      }
    }
    while (!work.empty()) {
      std::size_t i = work.back();
      work.pop_back();
      for (std::size_t c : entries_[i].children) {
        if (!entries_[c].reachable) {
          entries_[c].reachable = true;
          work.push_back(c);
        }
      }
    }
    std::vector<TensorImpl*> out;
    for (const Entry& e : entries_) {
      if (!e.reachable && e.tensor != nullptr) {
        out.push_back(const_cast<TensorImpl*>(e.tensor));
      }
    }
    return out;
  }

  void tensor(const std::shared_ptr<TensorImpl>& impl) override {
    link(add(impl.get(), nullptr, static_cast<long>(impl.use_count())));
  }
  void node(const std::shared_ptr<Node>& n) override {
    link(add(nullptr, n.get(), static_cast<long>(n.use_count())));
  }

 private:
  std::size_t add(const TensorImpl* t, const Node* n, long use) {
    const void* key = t != nullptr ? static_cast<const void*>(t) : n;
    auto [it, inserted] = index_.try_emplace(key, entries_.size());
    if (inserted) {
      Entry e;
      e.tensor = t;
      e.node = n;
      e.use = use;
      // A Python object the tensor owns (Note [PyObject preservation]) that
      // Python reached again holds the tensor without a strong count.
      if (t != nullptr && t->owned_pyobj != nullptr &&
          owned_pyobj_is_shared != nullptr && owned_pyobj_is_shared(*t)) {
        e.use++;
      }
      entries_.push_back(std::move(e));
      stack_.push_back(it->second);
    }
    return it->second;
  }
  void link(std::size_t child) {
    entries_[child].internal++;
    entries_[current_].children.push_back(child);
  }

  std::vector<Entry> entries_;
  std::unordered_map<const void*, std::size_t> index_;
  std::vector<std::size_t> stack_;
  std::size_t current_ = 0;
};

}  // namespace

void note_grad_assigned(const Tensor& owner) {
  AutogradMeta* meta = get_autograd_meta(owner);
  if (meta == nullptr || meta->cycle_candidate || !grad_requires_grad(*meta)) {
    return;
  }
  meta->cycle_candidate = true;
  std::lock_guard<std::mutex> lock(candidates_mutex);
  candidates.push_back(owner.impl_ptr());
}

std::size_t collect_autograd_cycles() {
  std::vector<std::shared_ptr<TensorImpl>> roots;
  // Released after the mutex: the last reference to a tensor may be among
  // them, and ~TensorImpl can run Python code that assigns a .grad.
  std::vector<std::shared_ptr<TensorImpl>> dropped;
  {
    std::lock_guard<std::mutex> lock(candidates_mutex);
    std::vector<std::weak_ptr<TensorImpl>> kept;
    for (auto& weak : candidates) {
      std::shared_ptr<TensorImpl> impl = weak.lock();
      if (!impl) {
        continue;
      }
      AutogradMeta* meta = impl->autograd_meta.get();
      if (meta == nullptr || !grad_requires_grad(*meta)) {
        if (meta != nullptr) {
          meta->cycle_candidate = false;
        }
        dropped.push_back(std::move(impl));
        continue;
      }
      kept.push_back(weak);
      roots.push_back(std::move(impl));
    }
    candidates = std::move(kept);
  }
  dropped.clear();
  if (roots.empty()) {
    return 0;
  }
  Walk walk;
  for (const auto& root : roots) {
    walk.add_root(root);
  }
  walk.run();
  std::vector<TensorImpl*> garbage = walk.garbage_tensors();
  // Dropping every garbage tensor's out-edges breaks every cycle: the nodes
  // alone form a DAG. The references are moved out first and released after
  // the loop, when nothing of the walk is in use.
  std::vector<Tensor> dropped_grads;
  std::vector<std::shared_ptr<Node>> dropped_fns;
  for (TensorImpl* t : garbage) {
    if (AutogradMeta* meta = t->autograd_meta.get()) {
      dropped_grads.push_back(std::move(meta->grad));
      meta->grad = Tensor();
      dropped_fns.push_back(std::move(meta->grad_fn));
      meta->grad_fn = nullptr;
      meta->cycle_candidate = false;
    }
  }
  roots.clear();
  dropped_fns.clear();
  dropped_grads.clear();
  return garbage.size();
}

void adopt_moved_tensor(const Tensor& t) {
  AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) {
    return;
  }
  // The retains_grad hook holds the tensor weakly: point it at t.
  if (meta->retains_grad && meta->grad_fn) {
    meta->grad_fn->retains_grad_hooks()[meta->output_nr] =
        make_retain_grad_hook(t, meta->output_nr);
  }
  // The candidates list held the old TensorImpl weakly.
  if (meta->cycle_candidate) {
    meta->cycle_candidate = false;
    note_grad_assigned(t);
  }
}

std::size_t cycle_candidate_count() {
  std::lock_guard<std::mutex> lock(candidates_mutex);
  std::size_t n = 0;
  for (const auto& weak : candidates) {
    n += weak.expired() ? 0 : 1;
  }
  return n;
}

}  // namespace npgrad::autograd
