#pragma once
// GraphTask: the state of one backward pass (torch/csrc/autograd/graph_task.h):
// dependency counts, buffers of nodes not yet ready, the exec_info that prunes
// the pass to what `inputs=` needs, captured gradients for grad(), and final
// callbacks. One GraphTask per Engine::execute call, including nested ones.

#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "npgrad/autograd/input_buffer.h"
#include "npgrad/tensor/tensor.h"
#include "npgrad/util/pool.h"

namespace npgrad::autograd {

class Node;
struct SavedBuffer;

struct GraphTask {
  struct Capture {
    uint32_t input_nr;
    std::size_t output_idx;
  };
  struct ExecInfo {
    bool needed = false;
    std::vector<Capture> captures;
    bool should_execute() const { return needed || !captures.empty(); }
  };

  GraphTask(bool keep_graph, bool create_graph, int reentrant_depth, int64_t id)
      : keep_graph(keep_graph),
        create_graph(create_graph),
        reentrant_depth(reentrant_depth),
        id(id) {}

  // Set before execution starts; read-only afterwards.
  const bool keep_graph;
  const bool create_graph;
  const int reentrant_depth;
  const int64_t id;
  std::unordered_set<
      Node*,
      std::hash<Node*>,
      std::equal_to<Node*>,
      PoolAllocator<Node*>>
      nodes_in_graph;
  /// The node the pass starts from (not in nodes_in_graph, as in torch).
  Node* graph_root = nullptr;
  /// Empty: run everything reachable. Otherwise only should_execute() nodes.
  std::unordered_map<Node*, ExecInfo> exec_info;

  // Guarded by mutex (the engine runs a task on one thread; the lock is for
  // hooks that inspect the task from other threads).
  std::mutex mutex;
  // One entry per node of the pass: pooled (Note [Pooled small objects]).
  template <typename V>
  using NodeMap = std::unordered_map<
      Node*,
      V,
      std::hash<Node*>,
      std::equal_to<Node*>,
      PoolAllocator<std::pair<Node* const, V>>>;
  NodeMap<int> dependencies;
  NodeMap<InputBuffer> not_ready;
  variable_list captured_vars;
  std::vector<std::function<void()>> final_callbacks;
  /// Dedup payloads that keep something for this pass, released when it
  /// ends (Note [Storage dedup of saved tensors]).
  std::vector<std::weak_ptr<SavedBuffer>> saved_buffers;
};

/// The graph task whose node, hook or callback runs on this thread, or null.
GraphTask* current_graph_task();
/// The node being evaluated on this thread, or null.
Node* current_node();
/// torch's Engine::is_checkpoint_valid (Note [Checkpoint valid]).
bool is_checkpoint_valid();
/// See Node::task_should_compute_output: false for nodes a pruned pass skips.
bool task_should_execute(Node* fn);
/// torch._C._will_engine_execute_node, with torch's errors.
bool will_engine_execute_node(Node* fn);
/// Whether the current pass reaches fn (runs its tensor pre-hooks), which is
/// also true for a leaf captured by grad() and for the root.
bool will_engine_reach_node(Node* fn);

}  // namespace npgrad::autograd
