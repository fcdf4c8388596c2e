#include "npgrad/autograd/saved_tensor_context.h"

#include <array>
#include <functional>

#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_tensor_lock.h"
#include "npgrad/autograd/saved_variable_hooks.h"

namespace npgrad::autograd {

namespace {

thread_local const SavedTensorContext* current_context = nullptr;

// Between a node's creation and the placement of what it saves, an op makes
// at most a few other nodes (save_original's clone, a view's CopySlices), so
// the last few nodes made under hooks always include the owner.
constexpr std::size_t kRecentNodes = 16;
struct RecentNodes {
  std::array<std::weak_ptr<Node>, kRecentNodes> nodes;
  std::size_t next = 0;
};
thread_local RecentNodes recent;

}  // namespace

std::string saved_tensor_name(const char* attribute) {
  std::string name = attribute;
  constexpr const char* kPrefix = "_saved_";
  if (name.rfind(kPrefix, 0) == 0) {
    name.erase(0, std::char_traits<char>::length(kPrefix));
  }
  return name;
}

void for_each_named_saved_tensor(
    Node& node,
    const std::function<void(const std::string&, SavedVariable&)>& fn) {
  struct Named final : SavedAttributeVisitor {
    explicit Named(
        const std::function<void(const std::string&, SavedVariable&)>& fn)
        : fn(fn) {}
    void tensor(const char* name, SavedVariable& v) override {
      fn(saved_tensor_name(name), v);
    }
    void tensor_list(const char* name, SavedVariableList& v) override {
      std::string base = saved_tensor_name(name);
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        fn(base + "[" + std::to_string(i) + "]", v.items[i]);
      }
    }
    void integer(const char*, int64_t) override {}
    void real(const char*, double) override {}
    void boolean(const char*, bool) override {}
    void int_list(const char*, const Shape&) override {}
    void none(const char*) override {}
    void text(const char*, const char*) override {}
    const std::function<void(const std::string&, SavedVariable&)>& fn;
  } named(fn);
  node.visit_saved(named);
}

const SavedTensorContext* current_saved_tensor_context() {
  return current_context;
}

SavedTensorContextScope::SavedTensorContextScope(const SavedTensorContext& ctx)
    : previous_(current_context) {
  current_context = &ctx;
}

SavedTensorContextScope::~SavedTensorContextScope() {
  current_context = previous_;
}

void note_new_node(Node& node) {
  if (!SavedTensorDefaultHooks::active() && !LockSavedTensors::is_enabled()) {
    return;
  }
  recent.nodes[recent.next] = node.weak_from_this();
  recent.next = (recent.next + 1) % kRecentNodes;
}

bool find_saved_owner(
    const SavedVariable* saved,
    std::shared_ptr<Node>& node,
    std::string& name) {
  // Newest first: the owner is usually the node made last.
  for (std::size_t k = 1; k <= kRecentNodes; ++k) {
    std::size_t i = (recent.next + kRecentNodes - k) % kRecentNodes;
    std::shared_ptr<Node> candidate = recent.nodes[i].lock();
    if (!candidate) {
      continue;
    }
    bool found = false;
    for_each_named_saved_tensor(
        *candidate, [&](const std::string& slot, SavedVariable& v) {
          if (&v == saved) {
            found = true;
            name = slot;
          }
        });
    if (found) {
      node = std::move(candidate);
      return true;
    }
  }
  return false;
}

}  // namespace npgrad::autograd
