#include "npgrad/autograd/python_refs.h"

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable.h"

namespace npgrad::autograd {

// Each function below follows Note [GC visibility]: a holder's Python
// references are reported only when the path to it is a chain of single
// owners, so clear_* drops exactly what traverse_* reported.

namespace {

template <typename T>
bool owned_alone(const std::shared_ptr<T>& p) {
  return p && p.use_count() == 1;
}

}  // namespace

int traverse_tensor_python_refs(
    TensorImpl& impl, PyVisitProc visit, void* arg) {
  AutogradMeta* meta = impl.autograd_meta.get();
  if (meta == nullptr) {
    return 0;
  }
  for (const auto& hook : meta->hooks) {
    if (owned_alone(hook)) {
      if (int r = hook->traverse_python(visit, arg)) {
        return r;
      }
    }
  }
  for (const auto& hook : meta->post_acc_grad_hooks) {
    if (owned_alone(hook)) {
      if (int r = hook->traverse_python(visit, arg)) {
        return r;
      }
    }
  }
  if (meta->py_state) {
    if (int r = meta->py_state->traverse_python(visit, arg)) {
      return r;
    }
  }
  return traverse_if_owned_alone(meta->grad_fn, visit, arg);
}

void clear_tensor_python_refs(TensorImpl& impl) {
  AutogradMeta* meta = impl.autograd_meta.get();
  if (meta == nullptr) {
    return;
  }
  for (const auto& hook : meta->hooks) {
    if (owned_alone(hook)) {
      hook->clear_python();
    }
  }
  for (const auto& hook : meta->post_acc_grad_hooks) {
    if (owned_alone(hook)) {
      hook->clear_python();
    }
  }
  if (meta->py_state) {
    meta->py_state->clear_python();
  }
  clear_if_owned_alone(meta->grad_fn);
}

int traverse_node_python_refs(Node& node, PyVisitProc visit, void* arg) {
  for (const auto& hook : node.pre_hooks()) {
    if (int r = hook->traverse_python(visit, arg)) {
      return r;
    }
  }
  for (const auto& hook : node.post_hooks()) {
    if (int r = hook->traverse_python(visit, arg)) {
      return r;
    }
  }
  for (const auto& hook : node.own_tensor_pre_hooks()) {
    if (owned_alone(hook)) {
      if (int r = hook->traverse_python(visit, arg)) {
        return r;
      }
    }
  }
  if (node.py_state) {
    if (int r = node.py_state->traverse_python(visit, arg)) {
      return r;
    }
  }
  int result = 0;
  SharedBufferTally shared;
  node.for_each_saved_variable([&](SavedVariable& sv) {
    shared.add(sv.shared_buffer());
    if (result == 0) {
      result = sv.traverse_python(visit, arg);
    }
  });
  if (result == 0) {
    result = shared.traverse_python(visit, arg);
  }
  if (result != 0) {
    return result;
  }
  // Members a subclass adds (a Function's ctx, an accumulator's leaf).
  return node.traverse_python(visit, arg);
}

void clear_node_python_refs(Node& node) {
  for (const auto& hook : node.pre_hooks()) {
    hook->clear_python();
  }
  for (const auto& hook : node.post_hooks()) {
    hook->clear_python();
  }
  for (const auto& hook : node.own_tensor_pre_hooks()) {
    if (owned_alone(hook)) {
      hook->clear_python();
    }
  }
  if (node.py_state) {
    node.py_state->clear_python();
  }
  SharedBufferTally shared;
  node.for_each_saved_variable([&shared](SavedVariable& sv) {
    shared.add(sv.shared_buffer());
    sv.clear_python();
  });
  shared.clear_python();
  node.clear_python();
}

int traverse_if_owned_alone(
    const std::shared_ptr<TensorImpl>& impl, PyVisitProc visit, void* arg) {
  return owned_alone(impl) ? traverse_tensor_python_refs(*impl, visit, arg) : 0;
}

void clear_if_owned_alone(const std::shared_ptr<TensorImpl>& impl) {
  if (owned_alone(impl)) {
    clear_tensor_python_refs(*impl);
  }
}

int traverse_if_owned_alone(
    const std::shared_ptr<Node>& node, PyVisitProc visit, void* arg) {
  return owned_alone(node) ? traverse_node_python_refs(*node, visit, arg) : 0;
}

void clear_if_owned_alone(const std::shared_ptr<Node>& node) {
  if (owned_alone(node)) {
    clear_node_python_refs(*node);
  }
}

}  // namespace npgrad::autograd
