#pragma once
// Per-tensor autograd state and the functions that read it
// (torch/csrc/autograd/variable.h). A tensor without AutogradMeta is a leaf
// that does not require grad.

#include <memory>
#include <mutex>
#include <vector>

#include "npgrad/autograd/edge.h"
#include "npgrad/autograd/node_hooks.h"
#include "npgrad/tensor/tensor.h"
#include "npgrad/util/pool.h"

namespace npgrad::autograd {

class Node;

/// Python-side state of a tensor (hook dicts) kept by the bindings.
struct TensorPyState : PythonRefHolder {};

struct AutogradMeta {
  Tensor grad;
  /// Strong: the node that produced this tensor; null for leaves.
  std::shared_ptr<Node> grad_fn;
  /// Weak: a leaf's AccumulateGrad lives only as long as graph edges use it.
  std::weak_ptr<Node> grad_accumulator;
  bool requires_grad = false;  // meaningful on leaves only
  bool retains_grad = false;   // meaningful on non-leaves only
  /// In the cycle collector's candidates (Note [Autograd cycles]).
  bool cycle_candidate = false;
  uint32_t output_nr = 0;
  /// Tensor pre-hooks of a leaf; run by its AccumulateGrad.
  std::vector<std::shared_ptr<FunctionPreHook>> hooks;
  std::vector<std::shared_ptr<PostAccumulateGradHook>> post_acc_grad_hooks;
  std::unique_ptr<TensorPyState> py_state;
  /// Guards grad_accumulator creation and .grad writes across threads.
  std::mutex mutex;

  // Every op's output gets one (Note [Pooled small objects]).
  static void* operator new(std::size_t bytes) { return pool::allocate(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept {
    pool::deallocate(p, bytes);
  }
};

/// Null when the tensor never needed autograd state.
inline AutogradMeta* get_autograd_meta(const Tensor& t) {
  return t.impl()->autograd_meta.get();
}
AutogradMeta& materialize_autograd_meta(const Tensor& t);

bool requires_grad(const Tensor& t);
const std::shared_ptr<Node>& grad_fn(const Tensor& t);
/// torch's handle_view_on_rebase: a view whose history must not be rebased
/// (made in no_grad mode, by an op that returns several views, or inside a
/// custom Function) raises when it is written in place (`indirect` false) or
/// when its grad_fn is read after its base or another view of the base was
/// (`indirect` true).
void check_view_rebase(const Tensor& view, bool indirect);
inline bool is_leaf(const Tensor& t) {
  return grad_fn(t) == nullptr;
}
uint32_t output_nr(const Tensor& t);
/// The edge a consumer stores for input t: (grad_fn, output_nr) for a
/// non-leaf, (its AccumulateGrad, 0) for a leaf that requires grad, and an
/// invalid edge (no node) for any other tensor.
Edge gradient_edge(const Tensor& t);
/// The leaf's AccumulateGrad, created on first use (null if no grad needed).
std::shared_ptr<Node> grad_accumulator(const Tensor& t);
std::shared_ptr<Node> try_get_grad_accumulator(const Tensor& t);

/// Sets requires_grad on a leaf, with torch's checks.
void set_requires_grad(const Tensor& t, bool value);
/// Makes (fn, output_nr) the history of t.
void set_gradient_edge(const Tensor& t, Edge edge);
struct ViewGeometry;
/// The geometry of a view relative to its root base's data.
ViewGeometry view_geometry(const Tensor& view);
/// After t's grad_fn changed from old_fn to new_fn: a retains_grad hook
/// follows the tensor, and Python hooks registered later bind to new_fn.
void move_retains_grad_hook(
    const Tensor& t,
    const std::shared_ptr<Node>& old_fn,
    uint32_t old_nr,
    const std::shared_ptr<Node>& new_fn);
std::shared_ptr<FunctionPreHook> make_retain_grad_hook(
    const Tensor& t, uint32_t idx);
/// t.retain_grad(): a non-leaf keeps its gradient in .grad (no-op on leaves).
void retain_grad(const Tensor& t);
/// A tensor sharing t's data and version counter, with no autograd state.
Tensor detach(const Tensor& t);

}  // namespace npgrad::autograd
