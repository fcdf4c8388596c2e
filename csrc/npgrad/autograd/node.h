#pragma once
// Node: the unit of the backward graph (torch/csrc/autograd/function.h).
// A node holds the edges to the nodes that take its results, the metadata of
// its own inputs (the forward outputs), its sequence and topological numbers,
// and its hooks. Concrete nodes live in autograd/nodes/.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "npgrad/autograd/edge.h"
#include "npgrad/autograd/input_metadata.h"
#include "npgrad/autograd/node_hooks.h"
#include "npgrad/autograd/saved_tensor_context.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/tensor/tensor.h"
#include "npgrad/util/pool.h"

namespace npgrad::autograd {

struct StrongRefVisitor;

/// Next value of this thread's sequence counter (torch's
/// at::sequence_number::get_and_increment).
uint64_t next_sequence_nr();

/// Visits the attributes a node saved for backward (`_saved_*` in Python).
/// A node's visit_saved is the one declaration of its saved state: release
/// after backward, the `_saved_*`/`_raw_saved_*` attributes, Python's GC
/// traversal and the cycle collector are all derived from it.
struct SavedAttributeVisitor {
  virtual ~SavedAttributeVisitor() = default;
  virtual void tensor(const char* name, SavedVariable& v) = 0;
  virtual void tensor_list(const char* name, SavedVariableList& v) = 0;
  virtual void integer(const char* name, int64_t v) = 0;
  /// An int torch's node shows as an unsigned 64-bit value (embedding_bag's
  /// padding_idx of -1 reads 2**64 - 1 there); the other visitors see the int.
  virtual void unsigned_integer(const char* name, int64_t v) {
    integer(name, v);
  }
  virtual void real(const char* name, double v) = 0;
  virtual void boolean(const char* name, bool v) = 0;
  virtual void int_list(const char* name, const Shape& v) = 0;
  virtual void none(const char* name) = 0;
  /// A saved string (gelu's approximate).
  virtual void text(const char* name, const char* v) = 0;
};

/// Per-node state owned by the binding layer (the Python `metadata` dict);
/// it lives on the node so it survives wrapper churn.
struct NodePyState : PythonRefHolder {};

class Node : public std::enable_shared_from_this<Node>, public PythonRefHolder {
 public:
  explicit Node(uint64_t sequence_nr, edge_list next_edges = {});
  Node() : Node(next_sequence_nr()) {}
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Computes the gradients w.r.t. the forward inputs from those w.r.t. the
  /// forward outputs.
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;

  // ---- Graph connectivity ----
  const edge_list& next_edges() const { return next_edges_; }
  const Edge& next_edge(std::size_t i) const { return next_edges_[i]; }
  std::size_t num_outputs() const { return next_edges_.size(); }
  void add_next_edge(Edge edge);
  void set_next_edges(edge_list edges);
  /// Moves the edges out (used by iterative teardown).
  edge_list release_next_edges() { return std::move(next_edges_); }
  /// Moves this node's place in the graph (edges, input metadata, numbers,
  /// hooks, Python state) into `heir`, a fresh node of the same kind that
  /// takes over from it (Note [A ctx keeps its node] in bindings).
  void hand_over_to(Node& heir);

  // ---- Inputs (gradients w.r.t. the forward outputs) ----
  uint32_t add_input_metadata(const Tensor& t);
  uint32_t add_input_metadata_undefined();
  std::size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(std::size_t i) const {
    return input_metadata_[i];
  }

  // ---- Numbers ----
  uint64_t sequence_nr() const { return sequence_nr_; }
  void set_sequence_nr(uint64_t nr) { sequence_nr_ = nr; }
  /// Length of the longest path to a sink. Reading it marks the node as
  /// having a parent, after which its edges may not raise it any more.
  uint64_t topological_nr() {
    has_parent_ = true;
    return topological_nr_;
  }

  /// True when gradient i can flow anywhere (its edge is valid); used at
  /// forward time to decide what to save.
  bool should_compute_output(std::size_t i) const {
    return next_edges_[i].is_valid();
  }
  /// True when gradient i is needed by the running backward pass (edge valid
  /// and, when the pass is pruned by `inputs=`, its node will execute).
  bool task_should_compute_output(std::size_t i) const;

  // ---- Saved state ----
  /// Frees what visit_saved declares (the tensors; lists are marked
  /// released). Overridden only by nodes holding more than saved state.
  virtual void release_variables();
  /// Called by destroy_node before the node goes: drops the saved state that
  /// dies with the node, so that what it alone keeps alive is torn down
  /// iteratively. Overridden by nodes whose saved state may outlive them.
  virtual void release_for_destruction() { release_variables(); }
  virtual void will_release_variables() {}
  /// Declares the saved state: every saved tensor, tensor list and scalar,
  /// under its torch attribute name.
  virtual void visit_saved(SavedAttributeVisitor&) {}
  /// Strong references held (next edges, saved variables, and members a
  /// subclass adds), for the cycle collector (Note [Autograd cycles]).
  virtual void visit_strong_refs(StrongRefVisitor& v);
  /// Calls fn on each saved variable (through visit_saved).
  template <typename Fn>
  void for_each_saved_variable(Fn&& fn);
  /// Calls each saved variable's prefetch hook (Note [Prefetching saved
  /// tensors]); whether there was any. Overridden by nodes whose saved
  /// variables visit_saved does not declare (a custom Function's live on
  /// its ctx).
  virtual bool prefetch_saved_variables() {
    bool any = false;
    for_each_saved_variable([&any](SavedVariable& v) { any |= v.prefetch(); });
    return any;
  }

  // ---- Hooks ---- (see Note [Hooks ordering] in engine.cpp)
  std::vector<std::unique_ptr<FunctionPreHook>>& pre_hooks() {
    return pre_hooks_;
  }
  std::vector<std::unique_ptr<FunctionPostHook>>& post_hooks() {
    return post_hooks_;
  }
  virtual std::vector<std::shared_ptr<FunctionPreHook>>& tensor_pre_hooks() {
    return tensor_pre_hooks_;
  }
  std::map<uint32_t, std::shared_ptr<FunctionPreHook>>& retains_grad_hooks() {
    return retains_grad_hooks_;
  }
  /// This node's own tensor pre-hooks (AccumulateGrad's tensor_pre_hooks()
  /// are its leaf's).
  std::vector<std::shared_ptr<FunctionPreHook>>& own_tensor_pre_hooks() {
    return tensor_pre_hooks_;
  }

  /// The binding layer's per-node state (guarded by the GIL).
  std::unique_ptr<NodePyState> py_state;

 protected:
  uint64_t sequence_nr_;
  uint64_t topological_nr_ = 0;
  bool has_parent_ = false;
  edge_list next_edges_;
  std::vector<InputMetadata, PoolAllocator<InputMetadata>> input_metadata_;
  std::vector<std::unique_ptr<FunctionPreHook>> pre_hooks_;
  std::vector<std::unique_ptr<FunctionPostHook>> post_hooks_;
  std::vector<std::shared_ptr<FunctionPreHook>> tensor_pre_hooks_;
  std::map<uint32_t, std::shared_ptr<FunctionPreHook>> retains_grad_hooks_;

 private:
  void update_topological_nr(const Edge& edge);
};

template <typename Fn>
void Node::for_each_saved_variable(Fn&& fn) {
  struct Adapter final : SavedAttributeVisitor {
    explicit Adapter(Fn& f) : fn(f) {}
    void tensor(const char*, SavedVariable& v) override { fn(v); }
    void tensor_list(const char*, SavedVariableList& v) override {
      for (auto& sv : v.items) {
        fn(sv);
      }
    }
    void integer(const char*, int64_t) override {}
    void real(const char*, double) override {}
    void boolean(const char*, bool) override {}
    void int_list(const char*, const Shape&) override {}
    void none(const char*) override {}
    void text(const char*, const char*) override {}
    Fn& fn;
  } adapter(fn);
  visit_saved(adapter);
}

/// Destroys a node (not its memory) without recursing into long chains.
/// See Note [Iterative graph teardown] in node.cpp.
void destroy_node(Node* node);

/// Nodes and their reference counts share one pooled block
/// (Note [Pooled small objects]); the shared_ptr destroys the node through
/// destroy() below, so teardown stays iterative.
template <typename T>
struct NodeAllocator : PoolAllocator<T> {
  NodeAllocator() noexcept = default;
  template <typename U>
  NodeAllocator(const NodeAllocator<U>&) noexcept {}  // NOLINT: rebinding
  template <typename U>
  void destroy(U* p) {
    if constexpr (std::is_base_of_v<Node, U>) {
      destroy_node(p);
    } else {
      p->~U();
    }
  }
};

template <typename T, typename... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  auto node =
      std::allocate_shared<T>(NodeAllocator<T>(), std::forward<Args>(args)...);
  note_new_node(*node);  // Note [Pack-hook context]
  return node;
}

/// The forward op a node differentiates, as torch's messages name it:
/// "Tanh" for TanhBackward0; nodes outside the generated set keep their full
/// name ("torch::autograd::CopySlices").
std::string forward_op_name(const Node& fn);

/// Number of live Node objects (for leak tests).
int64_t live_node_count();

}  // namespace npgrad::autograd
