// Joining and advanced indexing: concatenate, index and index_put.
#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {
namespace {

PyObject* index_tuple(const std::vector<Tensor>& indices) {
  PyObject* tup = check(PyTuple_New(static_cast<Py_ssize_t>(indices.size())));
  for (std::size_t i = 0; i < indices.size(); ++i) {
    PyObject* item;
    if (indices[i].defined()) {
      item = obj(indices[i]);
      Py_INCREF(item);
    } else {
      item = PySlice_New(nullptr, nullptr, nullptr);
    }
    PyTuple_SET_ITEM(tup, i, item);
  }
  return tup;
}

}  // namespace

Tensor concatenate(const std::vector<Tensor>& tensors, int64_t dim) {
  Ref seq(PyTuple_New(static_cast<Py_ssize_t>(tensors.size())));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    Py_INCREF(obj(tensors[i]));
    PyTuple_SET_ITEM(seq.p, i, obj(tensors[i]));
  }
  Ref axis(PyLong_FromLongLong(dim));
  PyObject* args[2] = {seq.p, axis.p};
  return wrap_array(
      check(PyObject_Vectorcall(np_.concatenate, args, 1, np_.kw_axis)));
}

Tensor index(const Tensor& a, const std::vector<Tensor>& indices) {
  Ref idx(index_tuple(indices));
  return wrap_array(check(PyObject_GetItem(obj(a), idx.p)));
}

void index_put(
    const Tensor& a,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate) {
  Ref idx(index_tuple(indices));
  Ref v(operand(values, a.dtype()));
  if (accumulate) {
    PyObject* args[3] = {obj(a), idx.p, v.p};
    Py_XDECREF(check(PyObject_Vectorcall(np_.add_at, args, 3, nullptr)));
  } else if (PyObject_SetItem(obj(a), idx.p, v.p) < 0) {
    throw_python_error();
  }
}

}  // namespace npgrad::kernels
