#pragma once
// Reclaims reference cycles made of C++ autograd state alone.
//
// Note [Autograd cycles]
// A tensor's `.grad` computed with create_graph=True has a graph, and that
// graph references the tensor again: `(x * x).sum().backward(create_graph=
// True)` makes x -> x.grad -> MulBackward0 -> saved x (and -> AccumulateGrad
// -> x). Every link is a C++ shared_ptr, so neither reference counting nor
// Python's GC can free it (torch leaks it: its issue #7343).
//
// Only a `.grad` that requires grad can close such a cycle: every other strong
// link points from newer to older state (outputs save themselves without
// their grad_fn, a leaf holds its AccumulateGrad weakly). So each tensor that
// receives such a gradient becomes a candidate, and collect_autograd_cycles()
// (run by the bindings when Python's GC does a full collection, or called
// directly) does a trial deletion from the candidates: it walks the strong
// references reachable from them, subtracts the references found inside the
// walked set from each object's use count, keeps everything reachable from
// objects that still have outside owners (a Python wrapper, a C++ caller, a
// running backward), and breaks the rest by dropping the garbage tensors'
// `.grad` and grad_fn. A strong reference the walk does not know about only
// makes an object look externally owned, so a miss can leak but never frees
// something in use.

#include <cstddef>
#include <memory>

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

class Node;

/// The strong references one object holds.
struct StrongRefVisitor {
  virtual ~StrongRefVisitor() = default;
  virtual void tensor(const std::shared_ptr<TensorImpl>& impl) = 0;
  virtual void node(const std::shared_ptr<Node>& node) = 0;
};

/// Called after `owner`'s .grad was set: a gradient that requires grad makes
/// owner a candidate root of a cycle.
void note_grad_assigned(const Tensor& owner);

/// Breaks every unreachable cycle through a candidate; returns the number of
/// tensors whose .grad/grad_fn were dropped.
std::size_t collect_autograd_cycles();
/// After a dying TensorImpl moved its state into t's (Note [PyObject
/// preservation]): re-points what held the old TensorImpl weakly (its
/// retains_grad hook, the cycle candidates) at t.
void adopt_moved_tensor(const Tensor& t);

/// Live candidates (for tests).
std::size_t cycle_candidate_count();

}  // namespace npgrad::autograd
