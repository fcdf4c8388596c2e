#include "npgrad/autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <queue>
#include <unordered_set>

#include "npgrad/autograd/anomaly_mode.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_task.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/thread_local_state.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/small_vector.h"

namespace npgrad::autograd {

namespace {

thread_local GraphTask* tl_current_task = nullptr;
thread_local Node* tl_current_node = nullptr;
thread_local int tl_reentrant_depth = -1;
// Backward passes nested on this thread (Note [Reentrant backward depth]).
thread_local int tl_thread_depth = 0;
// Note [Checkpoint valid]: false while a node of a backward pass that was
// given `inputs` (grad(), backward(inputs=...)) runs on this thread, or
// anything nested in such a node; a captured leaf's hooks, run outside
// call_function, do not count. torch's checkpoint_valid: reentrant
// checkpointing cannot run its inner backward in such a pruned pass.
thread_local bool tl_checkpoint_valid = true;
std::atomic<int64_t> next_graph_task_id{0};

struct NodeTask {
  std::shared_ptr<Node> fn;
  InputBuffer inputs;
};

// Note [Execution order of ready nodes]
// Ready nodes run newest first (highest sequence_nr); AccumulateGrad has
// sequence_nr UINT64_MAX so a leaf's .grad is written as soon as its gradient
// is complete. A std::priority_queue with torch's comparator reproduces even
// torch's tie-breaking, since both push in the same order.
struct CompareNodeTaskTime {
  bool operator()(const NodeTask& a, const NodeTask& b) const {
    return a.fn->sequence_nr() < b.fn->sequence_nr();
  }
};
using ReadyQueue =
    std::priority_queue<NodeTask, std::vector<NodeTask>, CompareNodeTaskTime>;

// Restores the thread-local engine state however a scope is left.
struct TaskStateGuard {
  GraphTask* prev_task;
  Node* prev_node;
  TaskStateGuard(GraphTask* task, Node* node)
      : prev_task(tl_current_task), prev_node(tl_current_node) {
    tl_current_task = task;
    tl_current_node = node;
  }
  ~TaskStateGuard() {
    tl_current_task = prev_task;
    tl_current_node = prev_node;
  }
};

bool node_should_execute(const GraphTask& task, Node* fn);

// Note [Prefetching saved tensors]
// saved_tensors_hooks(pack, unpack, prefetch=fn) (npgrad's own): the engine
// calls fn(payload) for every payload of those hooks before unpack needs it,
// so that an offloading hook can start loading it on another thread.
// Just before a node runs, the pass looks ahead at the nodes that will run
// after it. The ready queue is ordered by sequence number (Note [Execution
// order of ready nodes]), so they are, newest first, the queue's top and the
// children whose last missing gradient this node provides. The newest is
// the next to run; if it makes nothing ready (a sink such as AccumulateGrad,
// or a node a pruned pass only reaches), the next newest runs after it, and
// so on, up to the queue's top (what follows it is not known yet). The pass
// prefetches those nodes in that order, so a node's payloads are prefetched
// before the last node with work in front of it runs. The first node, and
// any the prediction missed (ready nodes of equal sequence number, made on
// different threads, run in either order), are prefetched just before they
// run. So: each payload is prefetched once per pass, before its unpack, at
// least one node ahead, in the order the nodes run (within a node, in the
// order of its saved attributes). Payloads of nodes outside the pass (that
// a hook unpacks, such as the inputs non-reentrant checkpoint saves) are not
// prefetched. A prefetch hook runs on the thread of the pass, with the GIL
// taken as any hook, and never while the engine holds a lock (the task's
// mutex guards only final callbacks); its exception ends the pass as a
// node's would. Passes without live prefetching hooks skip all of this.
struct Prefetcher {
  // The node last prefetched ahead of its turn, and earlier ones whose turn
  // has not come yet (after a misprediction: rare, so the set is mostly
  // empty). Only nodes that had something to prefetch are remembered; a
  // node is prefetched when neither holds it: once per pass.
  Node* predicted = nullptr;
  std::unordered_set<Node*> ahead;

  // fn is about to run.
  void on_turn(Node* fn) {
    if (fn == predicted) {
      predicted = nullptr;
    } else if (ahead.empty() || ahead.erase(fn) == 0) {
      fn->prefetch_saved_variables();
    }
  }

  // fn runs later in this pass.
  void before_turn(Node* fn) {
    if (fn == predicted || (!ahead.empty() && ahead.count(fn) != 0)) {
      return;
    }
    if (fn->prefetch_saved_variables()) {
      if (predicted != nullptr) {
        ahead.insert(predicted);
      }
      predicted = fn;
    }
  }

  static bool will_apply(const GraphTask& task, Node* fn) {
    if (task.exec_info.empty()) {
      return true;
    }
    auto it = task.exec_info.find(fn);
    return it != task.exec_info.end() && it->second.needed;
  }

  // Whether running `fn` makes `child` ready: fn's edges to it are all the
  // dependencies it still waits for.
  static bool becomes_ready(const GraphTask& task, Node& fn, Node* child) {
    auto dep = task.dependencies.find(child);
    if (dep == task.dependencies.end()) {
      return false;
    }
    int edges = 0;
    for (const Edge& e : fn.next_edges()) {
      edges += e.function.get() == child ? 1 : 0;
    }
    return dep->second == edges;
  }

  // Whether running fn queues nothing.
  static bool makes_nothing_ready(const GraphTask& task, Node* fn) {
    if (!will_apply(task, fn)) {
      return true;
    }
    for (const Edge& e : fn->next_edges()) {
      if (e.is_valid()) {
        return false;
      }
    }
    return true;
  }

  // fn was just popped from the queue. A node the pass only reaches (a
  // grad() capture) does not run and makes nothing ready.
  void before_running(GraphTask& task, Node& fn, const ReadyQueue& queue) {
    Node* top = queue.empty() ? nullptr : queue.top().fn.get();
    SmallVector<Node*, 8> next;  // what runs after fn, newest first
    if (top != nullptr) {
      next.push_back(top);
    }
    if (will_apply(task, &fn)) {
      on_turn(&fn);
      for (const Edge& e : fn.next_edges()) {
        Node* child = e.function.get();
        // A child the pass prunes is never queued.
        if (child != nullptr &&
            (task.exec_info.empty() || node_should_execute(task, child)) &&
            std::find(next.begin(), next.end(), child) == next.end() &&
            becomes_ready(task, fn, child)) {
          next.push_back(child);
        }
      }
    }
    std::stable_sort(next.begin(), next.end(), [](Node* a, Node* b) {
      return a->sequence_nr() > b->sequence_nr();
    });
    for (Node* n : next) {
      if (will_apply(task, n)) {
        before_turn(n);
      }
      if (n == top || !makes_nothing_ready(task, n)) {
        break;
      }
    }
  }
};

void compute_dependencies(GraphTask& task, Node* root, uint64_t min_topo_nr) {
  std::vector<Node*> stack{root};
  while (!stack.empty()) {
    Node* fn = stack.back();
    stack.pop_back();
    if (fn->topological_nr() < min_topo_nr) {
      continue;  // cannot reach any requested input
    }
    for (const auto& edge : fn->next_edges()) {
      if (Node* next = edge.function.get()) {
        task.dependencies[next] += 1;
        if (task.nodes_in_graph.insert(next).second) {
          stack.push_back(next);
        }
      }
    }
  }
}

bool node_should_execute(const GraphTask& task, Node* fn) {
  auto it = task.exec_info.find(fn);
  return it != task.exec_info.end() && it->second.should_execute();
}

// Marks what must run to produce the gradients of `outputs`: an iterative
// post-order DFS in which a node is needed when any child should execute.
void init_to_execute(
    GraphTask& task,
    Node* root,
    const edge_list& outputs,
    bool accumulate_grad,
    uint64_t min_topo_nr) {
  std::size_t output_idx = 0;
  for (const auto& edge : outputs) {
    auto& info = task.exec_info[edge.function.get()];
    if (accumulate_grad) {
      info.needed = true;
    } else {
      info.captures.push_back({edge.input_nr, output_idx++});
    }
  }
  task.captured_vars.resize(output_idx);

  struct Frame {
    Node* fn;
    std::size_t next_child = 0;
    Node* get_next_fn() {
      const auto& edges = fn->next_edges();
      while (next_child < edges.size()) {
        Node* c = edges[next_child++].function.get();
        if (c != nullptr) {
          return c;
        }
      }
      return nullptr;
    }
  };
  std::unordered_set<Node*> seen;
  std::vector<Frame> stack;
  task.exec_info.emplace(root, GraphTask::ExecInfo());
  stack.push_back({root});
  while (!stack.empty()) {
    Frame& frame = stack.back();
    Node* child = nullptr;
    while ((child = frame.get_next_fn()) && !seen.insert(child).second) {
      if (node_should_execute(task, child)) {
        task.exec_info[frame.fn].needed = true;
      }
    }
    if (child != nullptr) {
      if (child->topological_nr() < min_topo_nr) {
        continue;
      }
      stack.push_back({child});
    } else {
      Node* fn = frame.fn;
      stack.pop_back();
      if (node_should_execute(task, fn) && !stack.empty()) {
        task.exec_info[stack.back().fn].needed = true;
      }
    }
  }
}

// Note [Hooks ordering]
// For one node: tensor pre-hooks (registration order), then retains_grad
// hooks, then node pre-hooks, the node, node post-hooks. Each hook sees what
// the previous one returned. Tensor pre-hooks and retains_grad hooks also
// run when the node is reached but not executed (grad() captures).
variable_list call_tensor_pre_hooks(Node& fn, variable_list inputs) {
  for (const auto& hook : fn.tensor_pre_hooks()) {
    inputs = (*hook)(inputs);
  }
  for (const auto& [idx, hook] : fn.retains_grad_hooks()) {
    (void)idx;
    inputs = (*hook)(inputs);
  }
  return inputs;
}

// torch's CheckpointValidGuard (Note [Checkpoint valid]).
struct CheckpointValidGuard {
  bool prev = tl_checkpoint_valid;
  explicit CheckpointValidGuard(const GraphTask& task) {
    tl_checkpoint_valid = prev && task.exec_info.empty();
  }
  ~CheckpointValidGuard() { tl_checkpoint_valid = prev; }
  CheckpointValidGuard(const CheckpointValidGuard&) = delete;
  CheckpointValidGuard& operator=(const CheckpointValidGuard&) = delete;
};

variable_list call_function(GraphTask& task, Node& fn, variable_list inputs) {
  CheckpointValidGuard checkpoint_valid_guard(task);
  inputs = call_tensor_pre_hooks(fn, std::move(inputs));
  for (const auto& hook : fn.pre_hooks()) {
    inputs = (*hook)(inputs);
  }
  if (!task.keep_graph) {
    fn.will_release_variables();
  }
  bool had_post_hooks = !fn.post_hooks().empty();
  variable_list outputs = had_post_hooks ? fn.apply(variable_list(inputs))
                                         : fn.apply(std::move(inputs));
  validate_outputs(fn.next_edges(), outputs, &fn);
  // Post-hooks registered while the node ran (by an unpack hook, on
  // _current_autograd_node()) run too, as in torch. When the node had none
  // before, its inputs were moved into apply: those hooks get no
  // grad_outputs, as torch's do. Indexed: a hook may register another.
  variable_list no_inputs;
  for (std::size_t i = 0; i < fn.post_hooks().size(); ++i) {
    outputs =
        (*fn.post_hooks()[i])(outputs, had_post_hooks ? inputs : no_inputs);
  }
  return outputs;
}

void evaluate_function(
    GraphTask& task,
    const std::shared_ptr<Node>& fn_ptr,
    InputBuffer&& buffer,
    ReadyQueue& queue) {
  Node& fn = *fn_ptr;
  variable_list inputs = buffer.release();
  if (!task.exec_info.empty()) {
    auto& info = task.exec_info.at(&fn);
    if (!info.captures.empty()) {
      // Captured before the tensor hooks when the node also runs; after them
      // when it does not (its hooks run here, instead of in call_function).
      variable_list hooked =
          info.needed ? variable_list() : call_tensor_pre_hooks(fn, inputs);
      const variable_list& source = info.needed ? inputs : hooked;
      for (const auto& cap : info.captures) {
        task.captured_vars[cap.output_idx] = source[cap.input_nr];
      }
    } else if (!info.needed) {
      call_tensor_pre_hooks(fn, inputs);
    }
    if (!info.needed) {
      return;
    }
  }
  variable_list outputs = call_function(task, fn, std::move(inputs));
  if (!task.keep_graph) {
    fn.release_variables();
  }
  std::size_t n = outputs.size();
  if (AnomalyMode::is_enabled() && AnomalyMode::should_check_nan()) {
    for (std::size_t i = 0; i < n; ++i) {
      NPGRAD_CHECK(
          !(outputs[i].defined() && kernels::has_nan(outputs[i])),
          "Function '",
          fn.name(),
          "' returned nan values in its ",
          i,
          "th output.");
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Edge& edge = fn.next_edge(i);
    if (!edge.is_valid()) {
      continue;
    }
    Node* next = edge.function.get();
    bool is_ready = false;
    auto dep = task.dependencies.find(next);
    NPGRAD_CHECK(
        dep != task.dependencies.end(),
        "dependency not found for ",
        next->name());
    if (--dep->second == 0) {
      task.dependencies.erase(dep);
      is_ready = true;
    }
    auto nr = task.not_ready.find(next);
    if (nr == task.not_ready.end()) {
      if (!task.exec_info.empty() && !node_should_execute(task, next)) {
        continue;  // pruned: the gradient is dropped
      }
      InputBuffer input_buffer(next->num_inputs());
      input_buffer.add(edge.input_nr, std::move(outputs[i]));
      if (is_ready) {
        queue.push(NodeTask{edge.function, std::move(input_buffer)});
      } else {
        task.not_ready.emplace(next, std::move(input_buffer));
      }
    } else {
      nr->second.add(edge.input_nr, std::move(outputs[i]));
      if (is_ready) {
        queue.push(NodeTask{edge.function, std::move(nr->second)});
        task.not_ready.erase(nr);
      }
    }
  }
}

}  // namespace

GraphTask* current_graph_task() {
  return tl_current_task;
}
Node* current_node() {
  return tl_current_node;
}

bool is_checkpoint_valid() {
  return tl_checkpoint_valid;
}

bool task_should_execute(Node* fn) {
  GraphTask* task = tl_current_task;
  if (task == nullptr || task->exec_info.empty()) {
    return true;
  }
  return node_should_execute(*task, fn);
}

bool will_engine_execute_node(Node* fn) {
  GraphTask* task = tl_current_task;
  NPGRAD_CHECK(
      task != nullptr,
      "_get_should_execute_nodes should only be called during the backward "
      "pass");
  if (task->nodes_in_graph.count(fn) == 0) {
    return false;
  }
  if (task->exec_info.empty()) {
    return true;
  }
  auto it = task->exec_info.find(fn);
  if (it == task->exec_info.end() || !it->second.should_execute()) {
    return false;
  }
  NPGRAD_CHECK(
      !(fn->topological_nr() == 0 && !it->second.captures.empty()),
      "A leaf node was passed to _will_engine_execute_node but we are "
      "currently running autograd.grad(). This is currently not supported.");
  return true;
}

bool will_engine_reach_node(Node* fn) {
  GraphTask* task = tl_current_task;
  NPGRAD_CHECK(task != nullptr, "expected to be called inside a backward call");
  if (fn == task->graph_root) {
    return true;
  }
  if (task->nodes_in_graph.count(fn) == 0) {
    return false;
  }
  return task->exec_info.empty() || node_should_execute(*task, fn);
}

namespace {
// Built only for an error message: a node's name is a string to make.
std::string producer_prefix(const Node* producer) {
  return producer == nullptr ? std::string()
                             : "Function " + producer->name() + " returned an ";
}
}  // namespace

void validate_outputs(
    const edge_list& edges, variable_list& grads, const Node* producer) {
  NPGRAD_CHECK(
      grads.size() == edges.size(),
      producer_prefix(producer),
      "invalid number of gradients - expected ",
      edges.size(),
      ", but got ",
      grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Edge& edge = edges[i];
    Tensor& grad = grads[i];
    if (!edge.is_valid() || !grad.defined()) {
      continue;
    }
    const InputMetadata& meta = edge.function->input_metadata(edge.input_nr);
    if (!meta.is_valid) {
      continue;
    }
    if (grad.sizes() != meta.shape) {
      NPGRAD_CHECK(
          ops::is_expandable_to(meta.shape, grad.sizes()),
          producer_prefix(producer),
          "invalid gradient at index ",
          i,
          " - got ",
          shape_str(grad.sizes()),
          " but expected shape compatible with ",
          shape_str(meta.shape));
      grad = ops::sum_to(grad, meta.shape);
    }
    if (grad.dtype() != meta.dtype) {
      grad = ops::to_dtype(grad, meta.dtype);
    }
  }
}

// Note [Reentrant backward depth]
// A backward called from inside a backward (a hook, a custom Function's
// backward) runs nested on the same thread, as in torch, until
// kMaxReentrantDepth reentrant passes are nested there (61 passes counting the
// outermost one); the next one runs on a new thread (with the caller's grad
// mode, saved-tensor hooks and in-place observer) while the caller waits
// without the GIL. Each thread brings a fresh C stack and a fresh Python
// recursion depth, so reentrant recursion thousands of levels deep neither
// overflows the stack nor hits Python's recursion limit (torch's MAX_DEPTH and
// add_thread_pool_task). A graph task's reentrant_depth counts the nesting
// across threads.
constexpr int kMaxReentrantDepth = 60;
// Reentrant recursion that never stops (a hook that calls backward on the
// graph that runs it) would start threads until the process dies; past this
// many nested passes it raises RecursionError, as Python recursion does. It
// is far beyond any real nesting (torch's deepest test nests 10,000), and
// costs 32768 / 61 = 538 waiting threads.
constexpr int kMaxTotalReentrantDepth = 32768;

variable_list Engine::execute(
    const edge_list& roots,
    variable_list grads,
    bool keep_graph,
    bool create_graph,
    bool accumulate_grad,
    const edge_list& outputs) {
  if (tl_reentrant_depth + 1 >= kMaxTotalReentrantDepth) {
    throw RecursionError(detail::str_cat(
        "maximum recursion depth exceeded: ",
        kMaxTotalReentrantDepth,
        " backward passes are nested (a hook or a custom Function's backward "
        "calls backward re-entrantly without end?)"));
  }
  if (tl_current_task != nullptr && tl_thread_depth > kMaxReentrantDepth) {
    variable_list result;
    ThreadLocalState state;
    int depth = tl_reentrant_depth;
    bool checkpoint_valid = tl_checkpoint_valid;
    kernels::run_on_new_thread([&] {
      ThreadLocalState::Guard guard(std::move(state));
      tl_reentrant_depth = depth;
      tl_checkpoint_valid = checkpoint_valid;
      result = execute(
          roots,
          std::move(grads),
          keep_graph,
          create_graph,
          accumulate_grad,
          outputs);
    });
    return result;
  }
  ++tl_thread_depth;
  struct ThreadDepthGuard {
    ~ThreadDepthGuard() { --tl_thread_depth; }
  } thread_depth_guard;
  validate_outputs(roots, grads, nullptr);
  auto task = std::make_shared<GraphTask>(
      keep_graph, create_graph, tl_reentrant_depth + 1, next_graph_task_id++);
  // However the pass ends, dedup payloads drop what they kept for it.
  struct SavedBuffersGuard {
    GraphTask& task;
    ~SavedBuffersGuard() { release_saved_buffers(task); }
  } saved_buffers_guard{*task};

  bool single_root = roots.size() == 1;
  std::shared_ptr<Node> root =
      single_root ? roots[0].function : make_node<GraphRoot>(roots, grads);
  uint64_t min_topo_nr = 0;
  if (!outputs.empty()) {
    min_topo_nr = UINT64_MAX;
    for (const auto& e : outputs) {
      min_topo_nr = std::min(min_topo_nr, e.function->topological_nr());
    }
  }
  task->graph_root = root.get();
  compute_dependencies(*task, root.get(), min_topo_nr);
  if (!outputs.empty()) {
    init_to_execute(*task, root.get(), outputs, accumulate_grad, min_topo_nr);
  }

  ReadyQueue queue;
  if (single_root) {
    InputBuffer buffer(root->num_inputs());
    buffer.add(roots[0].input_nr, std::move(grads[0]));
    queue.push(NodeTask{root, std::move(buffer)});
  } else {
    queue.push(NodeTask{root, InputBuffer(0)});
  }

  kernels::IgnoreFpErrors quiet;  // one error-state switch for the whole pass
  // The whole pass, hooks and callbacks included, runs in grad mode
  // create_graph (See Note [Execution order of ready nodes]).
  AutoGradMode grad_mode(create_graph);
  int prev_depth = tl_reentrant_depth;
  tl_reentrant_depth = task->reentrant_depth;
  struct DepthGuard {
    int prev;
    ~DepthGuard() { tl_reentrant_depth = prev; }
  } depth_guard{prev_depth};

  std::optional<Prefetcher> prefetcher;
  if (PrefetchRegistration::any()) {
    prefetcher.emplace();
  }
  while (!queue.empty()) {
    // priority_queue::top is const; the task is popped right after the move.
    NodeTask next = std::move(const_cast<NodeTask&>(queue.top()));
    queue.pop();
    TaskStateGuard state(task.get(), next.fn.get());
    try {
      if (prefetcher) {
        prefetcher->before_running(*task, *next.fn, queue);
      }
      evaluate_function(*task, next.fn, std::move(next.inputs), queue);
    } catch (...) {
      if (AnomalyMode::is_enabled() && anomaly_handler() != nullptr) {
        anomaly_handler()->print_stack(*next.fn);
      }
      throw;
    }
  }

  NPGRAD_CHECK(
      task->not_ready.empty(),
      "could not compute gradients for some functions");
  TaskStateGuard state(task.get(), nullptr);
  // Callbacks may queue more callbacks; they run in the same pass.
  for (std::size_t i = 0; i < task->final_callbacks.size(); ++i) {
    auto cb = task->final_callbacks[i];
    cb();
  }
  return std::move(task->captured_vars);
}

void Engine::queue_callback(std::function<void()> callback) {
  GraphTask* task = tl_current_task;
  NPGRAD_CHECK(
      task != nullptr,
      "Final callbacks can only be installed during backward pass.");
  std::lock_guard<std::mutex> lock(task->mutex);
  task->final_callbacks.push_back(std::move(callback));
}

}  // namespace npgrad::autograd
