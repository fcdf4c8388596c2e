// Python's cyclic GC and the C++ autograd state: the tensor and node wrapper
// types report the Python objects their C++ object owns alone (Note [GC
// visibility] in npgrad/autograd/python_refs.h), and a full collection also
// breaks cycles made of C++ state only (Note [Autograd cycles]).

#include "bindings.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/python_refs.h"
#include "npgrad/kernels/buffer_cache.h"
#include "python_function.h"

namespace npgrad::bindings {

namespace {

// The node of a pybind11 instance of a node class, when the wrapper's holder
// is its only strong reference.
autograd::Node* node_owned_alone(PyObject* self) {
  if (!holder_constructed(self)) {
    return nullptr;
  }
  auto* node = py::handle(self).cast<autograd::Node*>();
  return node != nullptr && node->weak_from_this().use_count() == 1 ? node
                                                                    : nullptr;
}

// pybind11_traverse visits the instance __dict__ and the type. For an
// instance of a Python subclass on Python 3.11, CPython's subtype_traverse
// has already visited the (managed) __dict__ before calling the base's
// traverse, and a second visit breaks the GC's reference arithmetic (the dict
// then looks referenced from outside, so a cycle through it is never
// collected). From 3.12 subtype_traverse leaves a managed __dict__ to the
// base's traverse when the base has one too, as pybind11's dynamic_attr types
// do there: skipping it then hid the dict from the GC altogether
// (test_gc_cycles.py::test_function_ctx_holding_its_output). Before 3.11 a
// subclass shares its base's dict offset, which only the base visits.
int traverse_dict_and_type(
    PyObject* self, visitproc visit, void* arg, traverseproc own) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  PyTypeObject* type = Py_TYPE(self);
  if (type->tp_traverse != own &&
      PyType_HasFeature(type, Py_TPFLAGS_MANAGED_DICT)) {
    Py_VISIT(type);
    return 0;
  }
#else
  (void)own;
#endif
  return py::detail::pybind11_traverse(self, visit, arg);
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg);

// Note [PyObject preservation]: while C++ shares the TensorImpl, the object
// would be resurrected rather than freed. Its references then count as roots
// (as in torch's THPVariable traverse): a cycle through its __dict__ is kept,
// and not cleared, until C++ lets the tensor go. Only for Tensor itself,
// whose instances are preserved.
bool resurrectable(PyObject* self, std::shared_ptr<TensorImpl>* holder) {
  return holder != nullptr && holder->use_count() > 1 &&
         Py_TYPE(self)->tp_traverse == tensor_traverse;
}

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  if (resurrectable(self, tensor_holder(self))) {
    Py_VISIT(Py_TYPE(self));
    return 0;
  }
  if (int r = traverse_dict_and_type(self, visit, arg, tensor_traverse)) {
    return r;
  }
  auto* holder = tensor_holder(self);
  return holder != nullptr
             ? autograd::traverse_if_owned_alone(*holder, visit, arg)
             : 0;
}

int tensor_clear(PyObject* self) {
  if (resurrectable(self, tensor_holder(self))) {
    return 0;
  }
  py::detail::pybind11_clear(self);
  if (auto* holder = tensor_holder(self)) {
    autograd::clear_if_owned_alone(*holder);
  }
  return 0;
}

int node_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (autograd::Node* node = node_owned_alone(self)) {
    return autograd::traverse_node_python_refs(*node, visit, arg);
  }
  return 0;
}

int node_clear(PyObject* self) {
  if (autograd::Node* node = node_owned_alone(self)) {
    autograd::clear_node_python_refs(*node);
  }
  return 0;
}

// The C++ state of a Function ctx, once constructed.
FunctionBase* function_base(PyObject* self) {
  if (!holder_constructed(self)) {
    return nullptr;
  }
  return py::handle(self).cast<FunctionBase*>();
}

// A ctx owns its saved tensors: it reports their Python objects (pack-hook
// results, and the tensors it alone keeps) and drops them when garbage.
int function_base_traverse(PyObject* self, visitproc visit, void* arg) {
  if (int r =
          traverse_dict_and_type(self, visit, arg, function_base_traverse)) {
    return r;
  }
  if (FunctionBase* base = function_base(self)) {
    autograd::SharedBufferTally shared;
    for (const auto& sv : base->saved_variables) {
      shared.add(sv.shared_buffer());
      if (int r = sv.traverse_python(visit, arg)) {
        return r;
      }
    }
    if (int r = shared.traverse_python(visit, arg)) {
      return r;
    }
    // The node it keeps (Note [A ctx keeps its node]), which refers back.
    return autograd::traverse_if_owned_alone(base->owner, visit, arg);
  }
  return 0;
}

int function_base_clear(PyObject* self) {
  FunctionBase* base = function_base(self);
  if (base != nullptr) {
    base->cleared_by_gc = true;
  }
  py::detail::pybind11_clear(self);
  if (base != nullptr) {
    autograd::SharedBufferTally shared;
    for (auto& sv : base->saved_variables) {
      shared.add(sv.shared_buffer());
      sv.clear_python();
    }
    shared.clear_python();
    autograd::clear_if_owned_alone(base->owner);
  }
  return 0;
}

}  // namespace

void setup_function_base_type_gc(PyHeapTypeObject* heap_type) {
  heap_type->ht_type.tp_traverse = function_base_traverse;
  heap_type->ht_type.tp_clear = function_base_clear;
}

void setup_tensor_type_gc(PyHeapTypeObject* heap_type) {
  auto* type = &heap_type->ht_type;
  type->tp_flags |= Py_TPFLAGS_HAVE_GC;
  type->tp_traverse = tensor_traverse;
  type->tp_clear = tensor_clear;
}

void setup_node_type_gc(PyHeapTypeObject* heap_type) {
  auto* type = &heap_type->ht_type;
  type->tp_flags |= Py_TPFLAGS_HAVE_GC;
  type->tp_traverse = node_traverse;
  type->tp_clear = node_clear;
}

void bind_gc(py::module_& m) {
  m.def(
      "_collect_autograd_cycles",
      [] { return autograd::collect_autograd_cycles(); },
      "Breaks unreachable cycles of C++ autograd state (Note [Autograd "
      "cycles]); runs at every full collection of Python's gc. Returns the "
      "number of tensors whose .grad and grad_fn were dropped.");
  m.def("_autograd_cycle_candidates", [] {
    return autograd::cycle_candidate_count();
  });
  // Note [Large buffers are cached] in kernels/buffer_cache.h.
  m.def(
      "_empty_buffer_cache",
      [] { kernels::buffer_cache::empty(); },
      "Frees the freed large tensor buffers npgrad keeps for reuse.");
  m.def("_buffer_cache_stats", [] {
    auto s = kernels::buffer_cache::stats();
    py::dict d;
    d["cached_bytes"] = s.cached_bytes;
    d["cached_blocks"] = s.cached_blocks;
    d["limit_bytes"] = s.limit_bytes;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    return d;
  });
}

}  // namespace npgrad::bindings
