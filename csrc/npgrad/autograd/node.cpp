#include "npgrad/autograd/node.h"

#include <atomic>

#include "npgrad/autograd/anomaly_mode.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/util/error.h"

namespace npgrad::autograd {

namespace {
thread_local uint64_t sequence_counter = 0;
std::atomic<int64_t> live_nodes{0};
}  // namespace

uint64_t next_sequence_nr() {
  return sequence_counter++;
}
int64_t live_node_count() {
  return live_nodes.load();
}

Node::Node(uint64_t sequence_nr, edge_list next_edges)
    : sequence_nr_(sequence_nr) {
  live_nodes.fetch_add(1, std::memory_order_relaxed);
  set_next_edges(std::move(next_edges));
  if (AnomalyMode::is_enabled() && anomaly_handler() != nullptr) {
    anomaly_handler()->store_stack(*this);
  }
}

Node::~Node() {
  live_nodes.fetch_sub(1, std::memory_order_relaxed);
}

void Node::hand_over_to(Node& heir) {
  heir.sequence_nr_ = sequence_nr_;
  heir.topological_nr_ = topological_nr_;
  heir.has_parent_ = has_parent_;
  heir.next_edges_ = std::move(next_edges_);
  heir.input_metadata_ = std::move(input_metadata_);
  heir.pre_hooks_ = std::move(pre_hooks_);
  heir.post_hooks_ = std::move(post_hooks_);
  heir.tensor_pre_hooks_ = std::move(tensor_pre_hooks_);
  heir.retains_grad_hooks_ = std::move(retains_grad_hooks_);
  heir.py_state = std::move(py_state);
}

void Node::update_topological_nr(const Edge& edge) {
  if (!edge.is_valid()) {
    return;
  }
  uint64_t child = edge.function->topological_nr();
  if (topological_nr_ <= child) {
    NPGRAD_INTERNAL_ASSERT(
        !has_parent_,
        "Cannot update a node's topological_nr after it already has a parent."
        " If we allow this, we can no longer guarantee that a parent's topo_nr"
        " is always greater than those of all its children");
    topological_nr_ = child + 1;
  }
}

void Node::add_next_edge(Edge edge) {
  update_topological_nr(edge);
  next_edges_.push_back(std::move(edge));
}

void Node::set_next_edges(edge_list edges) {
  next_edges_ = std::move(edges);
  for (const auto& e : next_edges_) {
    update_topological_nr(e);
  }
}

void Node::release_variables() {
  struct Releaser final : SavedAttributeVisitor {
    void tensor(const char*, SavedVariable& v) override { v.reset_data(); }
    void tensor_list(const char*, SavedVariableList& v) override {
      for (auto& sv : v.items) {
        sv.reset_data();
      }
      v.released = true;
    }
    void integer(const char*, int64_t) override {}
    void real(const char*, double) override {}
    void boolean(const char*, bool) override {}
    void int_list(const char*, const Shape&) override {}
    void none(const char*) override {}
    void text(const char*, const char*) override {}
  } releaser;
  visit_saved(releaser);
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.emplace_back(t);
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

uint32_t Node::add_input_metadata_undefined() {
  input_metadata_.emplace_back();
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

bool Node::task_should_compute_output(std::size_t i) const {
  const Edge& e = next_edges_[i];
  if (!e.is_valid()) {
    return false;
  }
  return task_should_execute(e.function.get());
}

std::string forward_op_name(const Node& fn) {
  std::string name = fn.name();
  if (name.find("::") != std::string::npos) {
    return name;
  }
  auto b = name.rfind("Backward");
  return b == std::string::npos || b == 0 ? name : name.substr(0, b);
}

// Note [Iterative graph teardown]
// Destroying the last reference to the head of a long chain would destroy its
// children recursively (node -> edge -> node ...), and saved input tensors
// hold their producers' nodes too (node -> saved tensor -> grad_fn). So before
// a node is destroyed we drop its saved state and steal every child it alone
// keeps alive onto an explicit stack; those children are handled the same way
// in a loop, and each is destroyed only once its own edges are gone. Stack
// depth stays constant however long the graph is. (Each node's memory is
// freed by its shared_ptr after this, with its reference counts.)
void destroy_node(Node* node) {
  std::vector<std::shared_ptr<Node>> stack;
  auto gather = [&stack](Node* n) {
    n->release_for_destruction();
    edge_list edges = n->release_next_edges();
    for (auto& e : edges) {
      if (e.function && e.function.use_count() == 1) {
        stack.push_back(std::move(e.function));
      }
    }
  };
  gather(node);
  node->~Node();
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    gather(n.get());
    // n's last reference dies here; destroy_node finds nothing to gather.
  }
}

}  // namespace npgrad::autograd
