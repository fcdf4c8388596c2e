#pragma once
// Python objects held by C++ autograd state, as seen by Python's cyclic GC.
//
// Note [GC visibility]
// Hooks, packed saved-tensor objects, `metadata` dicts and Function ctx
// objects are Python objects that C++ state (TensorImpl, Node, SavedVariable)
// holds. Python's cyclic GC only sees references that a tp_traverse reports,
// so a hook that captures its own tensor makes a cycle the GC cannot see:
// wrapper -> TensorImpl -> hook dict -> closure -> wrapper.
//
// The tensor and node wrapper types report (tp_traverse) and drop (tp_clear)
// the Python objects held by C++ state that the wrapper owns alone: its
// TensorImpl or Node when the wrapper's holder is the only strong reference,
// and from there state that is itself referenced exactly once (the grad_fn,
// saved tensors, an AccumulateGrad's variable). State with several owners is
// not reported: the GC would otherwise count it as garbage while C++ still
// reaches it (torch's THPVariable_subclass_traverse has the same rule). Since
// every reported object is reached through a chain of single owners, each
// Python reference held by C++ is reported by at most one wrapper, which keeps
// the GC's reference arithmetic exact.
//
// The core does not include Python.h; `_object` is CPython's PyObject.

#include <memory>

struct _object;

namespace npgrad::autograd {

/// CPython's visitproc.
using PyVisitProc = int (*)(_object*, void*);

/// Implemented by C++ objects that hold Python references.
struct PythonRefHolder {
  virtual ~PythonRefHolder() = default;
  /// Reports each Python reference held; stops at the first nonzero result.
  virtual int traverse_python(PyVisitProc /*visit*/, void* /*arg*/) const {
    return 0;
  }
  /// Drops the Python references (the holder is garbage).
  virtual void clear_python() {}
};

}  // namespace npgrad::autograd

namespace npgrad {
struct TensorImpl;
}

namespace npgrad::autograd {

class Node;

/// Reports the Python references held by `impl`'s autograd state and by the
/// state it owns alone (Note [GC visibility]). Call only when the caller's
/// reference is impl's only strong reference.
int traverse_tensor_python_refs(TensorImpl& impl, PyVisitProc visit, void* arg);
/// Drops what traverse_tensor_python_refs reports.
void clear_tensor_python_refs(TensorImpl& impl);
/// The same for a node with a single strong reference (the caller's).
int traverse_node_python_refs(Node& node, PyVisitProc visit, void* arg);
void clear_node_python_refs(Node& node);

/// The same through an owning pointer: only when it is the only owner (else
/// nothing is reported or dropped).
int traverse_if_owned_alone(
    const std::shared_ptr<TensorImpl>& impl, PyVisitProc visit, void* arg);
void clear_if_owned_alone(const std::shared_ptr<TensorImpl>& impl);
int traverse_if_owned_alone(
    const std::shared_ptr<Node>& node, PyVisitProc visit, void* arg);
void clear_if_owned_alone(const std::shared_ptr<Node>& node);

}  // namespace npgrad::autograd
