#pragma once
// The thin binding layer: pybind11 only. Each bind_<thing>() mirrors a part
// of the core; module.cpp calls them in dependency order.

#include <atomic>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "npgrad/kernels/kernels.h"
#include "npgrad/tensor/tensor.h"

namespace py = pybind11;

namespace npgrad::bindings {
/// Note [PyObject preservation]: the TensorImpl `impl` owns `obj`; gives the
/// object back its owning reference to impl (returned) and drops impl's.
std::shared_ptr<TensorImpl> reclaim_pyobj(PyObject* obj, TensorImpl* impl);
/// pybind11's record of the Tensor type, null until it is registered. The
/// casters below pass it to pybind11 instead of letting it search its type
/// maps on every conversion (several hundred instructions per op).
const pybind11::detail::type_info* tensor_type_info();
/// The holder of a pybind11 instance of Tensor (the type has no C++
/// subclasses, so the first value-and-holder is TensorImpl's); null when not
/// constructed.
std::shared_ptr<TensorImpl>* tensor_holder(PyObject* self);
}  // namespace npgrad::bindings

// npgrad::Tensor <-> the Python Tensor object (a pybind11 instance holding
// shared_ptr<TensorImpl>). An undefined Tensor converts to None, but None
// never loads as a Tensor: a parameter that may be None is a
// std::optional<Tensor> (torch's "Tensor?"), and a rejected argument gets
// torch's TypeError (Note [Argument errors in torch's words]). A Python object
// that its TensorImpl owns (Note [PyObject preservation]) is taken back by
// either direction.
namespace pybind11::detail {
template <>
struct type_caster<npgrad::Tensor> {
  PYBIND11_TYPE_CASTER(npgrad::Tensor, const_name("Tensor"));
  bool load(handle src, bool convert) {
    std::shared_ptr<npgrad::TensorImpl> impl;
    const type_info* tinfo = npgrad::bindings::tensor_type_info();
    if (tinfo != nullptr && Py_TYPE(src.ptr()) == tinfo->type) {
      // Exactly a Tensor: its holder, as pybind11's own caster reads it.
      auto v_h =
          reinterpret_cast<instance*>(src.ptr())->get_value_and_holder(tinfo);
      if (v_h.holder_constructed()) {
        impl = v_h.holder<std::shared_ptr<npgrad::TensorImpl>>();
      }
    }
    if (impl == nullptr) {
      // Subclasses, other types and uninitialised objects (pybind11 raises).
      make_caster<std::shared_ptr<npgrad::TensorImpl>> caster;
      if (!caster.load(src, convert)) {
        return false;
      }
      impl = static_cast<std::shared_ptr<npgrad::TensorImpl>&>(caster);
      if (impl == nullptr) {
        // pybind11's holder caster loads None as a null holder.
        return false;
      }
    }
    if (impl->owned_pyobj != nullptr) {
      // Reached through a weakref: its holder does not own impl.
      value = npgrad::Tensor(
          npgrad::bindings::reclaim_pyobj(src.ptr(), impl.get()));
    } else {
      value = npgrad::Tensor(impl);
    }
    return true;
  }
  static handle cast(const npgrad::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) {
      return none().release();
    }
    if (t.impl()->array.get() == nullptr) {
      // Note [Wrapped numbers have no ndarray until one is needed]: Python
      // sees a stable data_ptr().
      npgrad::kernels::materialize_array(*t.impl());
    }
    const type_info* tinfo = npgrad::bindings::tensor_type_info();
    // What pybind11's shared_ptr caster does, with the type looked up once.
    handle obj =
        tinfo != nullptr
            ? type_caster_generic::cast(
                  cast_sources(t.impl(), tinfo),
                  return_value_policy::take_ownership,
                  handle(),
                  nullptr,
                  nullptr,
                  &t.impl_ptr())
            : type_caster<std::shared_ptr<npgrad::TensorImpl>>::cast(
                  t.impl_ptr(), return_value_policy::take_ownership, handle());
    if (obj && t.impl()->owned_pyobj != nullptr) {
      npgrad::bindings::reclaim_pyobj(obj.ptr(), t.impl());
    }
    return obj;
  }
};
// Shapes (SmallVector) convert like std::vector: from any sequence of ints,
// to a list.
template <typename T, std::size_t N>
struct type_caster<npgrad::SmallVector<T, N>>
    : list_caster<npgrad::SmallVector<T, N>, T> {};
}  // namespace pybind11::detail

namespace npgrad::bindings {

void bind_errors(py::module_& m);
void bind_tensor(py::module_& m);
void bind_ops(py::module_& m);
/// The op tables' functions, methods and node classes (op_tables.cpp).
void bind_op_tables(py::module_& m);
/// The view table's (view_table.cpp), its rows appended to `table`.
void bind_view_table(py::module_& m, py::module_& nodes, py::list& table);
/// The matrix product table (linalg_table.cpp), from bind_op_tables: its
/// functions, methods, node classes, and its rows appended to `table`.
void bind_linalg_table(py::module_& m, py::module_& nodes, py::list& table);
void bind_nodes(py::module_& m);
void bind_engine(py::module_& m);
void bind_modes(py::module_& m);
void bind_docstrings(py::module_& m);
/// Note [Argument errors in torch's words]: routes every function of the
/// module (and its submodules and classes) through the rewrite; called last.
void install_argument_errors(py::module_& m);
/// `fn` (a function or method of _C) has several overloads in torch that take
/// `from_num_args` arguments or more; for such a call torch's parser reports
/// "received an invalid combination of arguments" instead of naming one.
void mark_torch_overloaded(py::handle fn, int from_num_args);
/// Raises torch's "fn() received an invalid combination of arguments - got
/// (types...), but expected one of:\n" + expected, for a binding that checks
/// its arguments itself.
[[noreturn]] void throw_invalid_combination(
    const char* fn, const std::vector<py::handle>& args, const char* expected);
/// A `dim` argument of a reduction (ops.cpp): `dim` as a list of ints (an int,
/// a tuple or a list), or torch's TypeError: for a function with torch's two
/// overloads (`sum()` and `sum(dim, ...)`) its "invalid combination" message,
/// else "argument 'dim' must be tuple of ints" (the message for dim given by
/// keyword, as it usually is).
std::vector<int64_t> dims_from(
    py::handle dim, const char* fn, bool two_overloads = true);
/// A shape given as `*shape` (`view(2, 3)`) or one sequence (`view((2,
/// 3))`), or torch's TypeError naming `fn` and its argument `arg` (ops.cpp).
Shape shape_from_args(const py::args& args, const char* fn, const char* arg);
/// A `dtype=` argument: None, or the dtype (ops.cpp).
std::optional<ScalarType> optional_dtype(py::handle dtype);

/// Note [GC visibility]: tp_traverse/tp_clear of the tensor and node types
/// (pybind11 custom_type_setup callbacks), and _C._collect_autograd_cycles.
void setup_tensor_type_gc(PyHeapTypeObject* heap_type);
/// Note [PyObject preservation]: the tensor type's dealloc, and the release
/// of an owned object by ~TensorImpl.
void install_pyobject_preservation(PyTypeObject* tensor_type);
void setup_node_type_gc(PyHeapTypeObject* heap_type);
void bind_gc(py::module_& m);
/// Pooling (pooling.cpp): after bind_nodes and bind_op_tables (_nn).
void bind_pooling(py::module_& m);
/// Upsampling (upsample.cpp): after bind_pooling (_nn).
void bind_upsample(py::module_& m);
/// Tensor._make_subclass (Note [Tensor subclass instances]).
void bind_tensor_subclass(py::module_& m);
/// npgrad.convolution and the sliding windows (conv.cpp).
void bind_conv(py::module_& m);
/// The normalizations and embedding (normalization.cpp).
void bind_normalization(py::module_& m);
/// torch.bilinear's _trilinear and torch.cdist's op (distance.cpp).
void bind_distance(py::module_& m);

/// The Python dtype object (npgrad.float32 ...) for a ScalarType.
py::object dtype_object(ScalarType t);
ScalarType dtype_from_object(py::handle obj);
/// A Python number or Tensor as an operand; nullopt-like undefined Tensor
/// when it is neither (callers return NotImplemented or raise).
Tensor as_operand(py::handle obj);
/// A gradient slot that Python may leave empty: None is the undefined Tensor,
/// anything else must be a Tensor.
Tensor tensor_or_undefined(py::handle obj);
bool is_tensor(py::handle obj);
/// type(obj).__name__, for error messages.
std::string python_type_name(py::handle obj);
/// The setter of a read-only attribute: raises Python's AttributeError
/// "attribute 'name' of 'T' objects is not writable" (T: type(self).__name__),
/// as a getset descriptor without a setter does in torch.
py::cpp_function not_writable(const char* name);
/// Whether a pybind11 instance's C++ value is constructed, safe inside a
/// tp_traverse or tp_clear.
///
/// Note [Traversing half-made instances]: pybind11 lays an instance out after
/// allocating it, and the first instance of a new Python subclass (each
/// Function's ctx class) fills pybind11's type cache then, which allocates a
/// weakref and so can run the GC. The GC traverses the new instance: not laid
/// out yet, it must read as unconstructed without a type lookup (pybind11's
/// get_value_and_holder() would index the type's still-empty list of C++
/// bases, a crash).
inline bool holder_constructed(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (inst->simple_layout) {
    return inst->simple_holder_constructed;
  }
  if (inst->nonsimple.values_and_holders == nullptr) {
    return false;  // not laid out yet: the memory is still tp_alloc's zeros
  }
  return inst->get_value_and_holder().holder_constructed();
}
/// torch's TORCH_WARN_ONCE: a UserWarning the first time `warned` is passed
/// (every time after npgrad.set_warn_always(True)); throws
/// py::error_already_set when warnings are errors.
void warn_once(std::atomic<bool>& warned, const char* message);

}  // namespace npgrad::bindings
