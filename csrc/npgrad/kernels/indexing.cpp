// Joining and advanced indexing: concatenate, index and index_put, the
// addressing of gather and scatter, nonzero.
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

void index_reduce_at(
    const Tensor& a,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    Binary op) {
  Ref idx(index_tuple(indices));
  Ref v(operand(values, a.dtype()));
  Ref at(check(PyObject_GetAttrString(np_.binary[static_cast<int>(op)], "at")));
  PyObject* args[3] = {obj(a), idx.p, v.p};
  Py_XDECREF(check(PyObject_Vectorcall(at.p, args, 3, nullptr)));
}

std::vector<Tensor> along_dim_indices(const Tensor& index, int64_t dim) {
  std::vector<Tensor> indices;
  int64_t nd = index.dim();
  indices.reserve(static_cast<std::size_t>(nd));
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) {
      indices.push_back(index);
      continue;
    }
    Ref range(
        PyArray_Arange(0, static_cast<double>(index.sizes()[d]), 1, NPY_INT64));
    std::vector<npy_intp> shape(static_cast<std::size_t>(nd), 1);
    shape[static_cast<std::size_t>(d)] = index.sizes()[d];
    PyArray_Dims dims{shape.data(), static_cast<int>(nd)};
    indices.push_back(wrap_array(check(PyArray_Newshape(
        reinterpret_cast<PyArrayObject*>(range.p), &dims, NPY_CORDER))));
  }
  return indices;
}

std::optional<int64_t> first_outside(
    const Tensor& index, int64_t low, int64_t high) {
  Ref c(PyArray_FROMANY(obj(index), NPY_INT64, 0, 0, NPY_ARRAY_C_CONTIGUOUS));
  auto* a = reinterpret_cast<PyArrayObject*>(c.p);
  const auto* data = static_cast<const int64_t*>(PyArray_DATA(a));
  npy_intp n = PyArray_SIZE(a);
  for (npy_intp i = 0; i < n; ++i) {
    if (data[i] < low || data[i] >= high) {
      return data[i];
    }
  }
  return std::nullopt;
}

Tensor nonzero(const Tensor& a) {
  PyObject* args[1] = {obj(a)};
  return wrap_array(check(PyObject_Vectorcall(np_.argwhere, args, 1, nullptr)));
}

}  // namespace npgrad::kernels
