// Making, wrapping and reading arrays: tensors over ndarrays, their creation,
// scalar reads and writes, casts and copies, strided views.
#include "npgrad/kernels/internal.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "npgrad/kernels/float16.h"
#include "npgrad/kernels/float_dispatch.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {

namespace {
// "float64, float32, float16, int64, and bool": torch lists the NumPy types
// it converts from the widest down.
std::string supported_numpy_types() {
  std::string list;
  for (int i = kNumScalarTypes - 1; i >= 0; --i) {
    list += i == 0 ? "and " : "";
    list += dtype_info(static_cast<ScalarType>(i)).numpy_name;
    list += i == 0 ? "" : ", ";
  }
  return list;
}

// A double as an element of type T, as fill() and wrapped numbers store a
// scalar (as NumPy casts it): nonzero for bool, truncated for integers,
// rounded to nearest for floats (beyond float's range to inf).
template <typename T>
T element_from_double(double v) {
  return static_cast<T>(v);
}
template <>
bool element_from_double<bool>(double v) {
  return v != 0;
}
template <>
float element_from_double<float>(double v) {
  return to_float(v);
}
template <>
Half element_from_double<Half>(double v) {
  return Half{float_to_half(to_float(v))};
}
template <>
BFloat16 element_from_double<BFloat16>(double v) {
  return BFloat16{float_to_bfloat16(to_float(v))};
}

// An element as item() returns it.
template <typename T>
double element_to_double(T v) {
  return static_cast<double>(v);
}
template <>
double element_to_double<Half>(Half v) {
  return half_to_float(v.bits);
}
template <>
double element_to_double<BFloat16>(BFloat16 v) {
  return bfloat16_to_float(v.bits);
}
}  // namespace

void array_incref(void* o) {
  GilGuard gil;
  Py_INCREF(static_cast<PyObject*>(o));
}

void array_decref(void* o) {
  if (!Py_IsInitialized()) {
    return;  // interpreter gone at process exit: nothing left to free
  }
  if (PyGILState_Check()) {
    auto* p = static_cast<PyObject*>(o);
    if (Py_REFCNT(p) == 1 && recycle_array(p)) {
      return;
    }
    Py_DECREF(p);
  } else {
    GilGuard gil;
    Py_DECREF(static_cast<PyObject*>(o));
  }
}

Tensor wrap_array(void* ndarray) {
  PyObject* o = check(static_cast<PyObject*>(ndarray));
  if (!PyArray_Check(o)) {
    // Ufuncs and reductions hand back NumPy scalars for 0-dim results.
    PyObject* a =
        PyArray_FromAny(o, nullptr, 0, 0, NPY_ARRAY_ENSUREARRAY, nullptr);
    Py_DECREF(o);
    o = check(a);
  }
  auto* a = reinterpret_cast<PyArrayObject*>(o);
  auto impl = make_tensor_impl();
  int row = dtype_index(PyArray_TYPE(a));
  if (row < 0) {
    std::string type_name = PyArray_DESCR(a)->typeobj->tp_name;
    Py_DECREF(o);
    throw TypeError(
        "can't convert np.ndarray of type " + type_name +
        ". The only supported types are: " + supported_numpy_types() + ".");
  }
  impl->dtype = static_cast<ScalarType>(row);
  impl->array = ArrayHandle::steal(o);
  impl->data = PyArray_DATA(a);
  int nd = PyArray_NDIM(a);
  npy_intp* dims = PyArray_DIMS(a);
  npy_intp* strides = PyArray_STRIDES(a);
  auto itemsize = static_cast<int64_t>(PyArray_ITEMSIZE(a));
  impl->sizes.assign(dims, dims + nd);
  if (PyArray_SIZE(a) == 0 &&
      std::all_of(strides, strides + nd, [](npy_intp s) { return s == 0; })) {
    // NumPy gives a new empty array zero strides; torch gives every new
    // tensor its contiguous strides, sizes of 0 counted as 1 (zeros(3, 0)
    // has strides (1, 1)). No element is ever addressed, so any strides
    // describe the buffer; these are the ones torch reports. A view keeps
    // the strides it was made with.
    impl->strides = contiguous_strides(impl->sizes);
  } else {
    impl->strides.resize(nd);
    for (int i = 0; i < nd; ++i) {
      impl->strides[i] = strides[i] / itemsize;
    }
  }
  impl->version_counter = make_version_counter();
  return Tensor(std::move(impl));
}

Tensor from_array(void* ndarray) {
  // The loops that read a tensor's memory directly take it in native byte
  // order, as torch does.
  NPGRAD_CHECK_VALUE(
      PyArray_ISNOTSWAPPED(static_cast<PyArrayObject*>(ndarray)),
      "given numpy array has byte order different from the native byte "
      "order. Conversion between byte orders is currently not supported.");
  Py_INCREF(static_cast<PyObject*>(ndarray));
  return wrap_array(ndarray);
}

Tensor empty(const Shape& sizes, ScalarType dtype) {
  NPGRAD_CHECK(
      sizes.size() <= NPY_MAXDIMS,
      "too many dimensions: ",
      sizes.size(),
      " (NumPy allows ",
      NPY_MAXDIMS,
      ")");
  npy_intp dims[NPY_MAXDIMS];
  std::copy(sizes.begin(), sizes.end(), dims);
  return wrap_array(
      new_array(static_cast<int>(sizes.size()), dims, npy_type(dtype)));
}

Tensor empty_strided(
    const Shape& sizes, const Shape& strides, ScalarType dtype) {
  int64_t extent = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      extent = 0;
      break;
    }
    extent += (sizes[i] - 1) * strides[i];
  }
  Tensor buffer = empty({extent}, dtype);
  return view_as_strided(buffer, sizes, strides, 0);
}

Tensor full(const Shape& sizes, double value, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  fill(t, value);
  return t;
}

Tensor scalar_tensor(double value, ScalarType dtype, bool wrapped) {
  if (!wrapped) {
    Tensor t = empty({}, dtype);
    fill(t, value);
    return t;
  }
  // Note [Wrapped numbers have no ndarray until one is needed]: the value is
  // stored as fill() would store it.
  auto impl = make_tensor_impl();
  impl->dtype = dtype;
  impl->is_wrapped_number = true;
  void* p = impl->inline_scalar;
  switch (dtype) {
#define NPGRAD_STORE_CASE(name, ctype, ...)                      \
  case ScalarType::name:                                         \
    *static_cast<ctype*>(p) = element_from_double<ctype>(value); \
    break;
    NPGRAD_FORALL_DTYPES(NPGRAD_STORE_CASE)
#undef NPGRAD_STORE_CASE
  }
  impl->data = p;
  impl->version_counter = make_version_counter();
  return Tensor(std::move(impl));
}

void* materialize_array(TensorImpl& impl) {
  if (impl.array.get() != nullptr) {
    return impl.array.get();
  }
  NPGRAD_CHECK(impl.has_inline_scalar(), "a tensor without data");
  std::optional<GilGuard> gil;
  if (!PyGILState_Check()) {
    gil.emplace();
  }
  npy_intp dims[1] = {0};
  PyObject* a = check(new_array(0, dims, npy_type(impl.dtype)));
  void* data = PyArray_DATA(reinterpret_cast<PyArrayObject*>(a));
  std::memcpy(data, impl.inline_scalar, element_size(impl.dtype));
  impl.array = ArrayHandle::steal(a);
  impl.data = data;
  return a;
}

double item(const Tensor& t) {
  NPGRAD_CHECK(
      t.numel() == 1,
      "a Tensor with ",
      t.numel(),
      " elements cannot be converted to Scalar");
  const char* p = static_cast<const char*>(t.data_ptr());
  switch (t.dtype()) {
#define NPGRAD_READ_CASE(name, ctype, ...) \
  case ScalarType::name:                   \
    return element_to_double(*reinterpret_cast<const ctype*>(p));
    NPGRAD_FORALL_DTYPES(NPGRAD_READ_CASE)
#undef NPGRAD_READ_CASE
  }
  return 0;
}

Tensor cast(const Tensor& a, ScalarType dtype) {
  IgnoreFpErrors quiet;
  BufferCacheScope cached(is_large(a));
  PyObject* r = PyArray_NewLikeArray(
      arr(a), NPY_CORDER, PyArray_DescrFromType(npy_type(dtype)), 0);
  Tensor out = wrap_array(check(r));
  if (PyArray_CopyInto(arr(out), arr(a)) < 0) {
    throw_python_error();
  }
  return out;
}

void copy_into(const Tensor& dst, const Tensor& src) {
  IgnoreFpErrors quiet;
  PyObject* args[3] = {obj(dst), obj(src), np_.str_unsafe};
  Py_XDECREF(check(PyObject_Vectorcall(np_.copyto, args, 2, np_.kw_casting)));
}

namespace {
template <typename T>
void fill_contiguous(void* data, int64_t n, T value) {
  std::fill_n(static_cast<T*>(data), n, value);
}
}  // namespace

bool read_doubles(const Tensor& src, double* out) {
  ScalarType dtype = src.dtype();
  if ((dtype != ScalarType::Float32 && dtype != ScalarType::Float64) ||
      !src.is_contiguous()) {
    return false;
  }
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* p = static_cast<const T*>(src.data_ptr());
    std::copy(p, p + src.numel(), out);
  });
  return true;
}

bool write_doubles(const Tensor& dst, const double* values) {
  ScalarType dtype = dst.dtype();
  if ((dtype != ScalarType::Float32 && dtype != ScalarType::Float64) ||
      !dst.is_contiguous() || !PyArray_ISWRITEABLE(arr(dst))) {
    return false;
  }
  dispatch_floating(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    T* p = static_cast<T*>(dst.data_ptr());
    for (int64_t i = 0, n = dst.numel(); i < n; ++i) {
      p[i] = static_cast<T>(values[i]);
    }
  });
  return true;
}

void fill(const Tensor& dst, double value) {
  // A contiguous destination is written directly: PyArray_FillWithScalar
  // goes through a Python number and NumPy's casting machinery, which costs
  // more than the write for the small tensors that scalars make.
  if (dst.is_contiguous() && PyArray_ISWRITEABLE(arr(dst))) {
    int64_t n = dst.numel();
    switch (dst.dtype()) {
#define NPGRAD_FILL_CASE(name, ctype, ...) \
  case ScalarType::name:                   \
    return fill_contiguous<ctype>(         \
        dst.data_ptr(), n, element_from_double<ctype>(value));
      NPGRAD_FORALL_DTYPES(NPGRAD_FILL_CASE)
#undef NPGRAD_FILL_CASE
    }
  }
  IgnoreFpErrors quiet;  // a float too large for a reduced float becomes inf
  Ref v(
      is_floating(dst.dtype())
          ? PyFloat_FromDouble(value)
          : PyLong_FromLongLong(static_cast<long long>(value)));
  if (PyArray_FillWithScalar(arr(dst), v.p) < 0) {
    throw_python_error();
  }
}

Tensor view_as_strided(
    const Tensor& a, const Shape& sizes, const Shape& strides, int64_t offset) {
  PyArray_Descr* descr = PyArray_DESCR(arr(a));
  Py_INCREF(descr);
  auto itemsize = static_cast<npy_intp>(element_size(a.dtype()));
  std::vector<npy_intp> dims(sizes.begin(), sizes.end());
  std::vector<npy_intp> bstrides(strides.size());
  for (std::size_t i = 0; i < strides.size(); ++i) {
    bstrides[i] = strides[i] * itemsize;
  }
  char* data = static_cast<char*>(a.data_ptr()) + offset * itemsize;
  int flags = (PyArray_FLAGS(arr(a)) & NPY_ARRAY_WRITEABLE) |
              (made_read_only_by_lock(a) ? NPY_ARRAY_WRITEABLE : 0);
  PyObject* v = PyArray_NewFromDescr(
      &PyArray_Type,
      descr,
      static_cast<int>(dims.size()),
      dims.data(),
      bstrides.data(),
      data,
      flags,
      nullptr);
  check(v);
  Py_INCREF(obj(a));
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(v), obj(a)) < 0) {
    Py_DECREF(v);
    throw_python_error();
  }
  return wrap_array(v);
}

std::optional<StorageRoot> storage_root(const Tensor& t) {
  void* own = materialize_array(*t.impl());
  std::optional<GilGuard> gil;
  if (!PyGILState_Check()) {
    gil.emplace();
  }
  auto* a = static_cast<PyArrayObject*>(own);
  PyArrayObject* root = a;
  while (PyArray_BASE(root) != nullptr && PyArray_Check(PyArray_BASE(root))) {
    root = reinterpret_cast<PyArrayObject*>(PyArray_BASE(root));
  }
  if (!PyArray_EquivTypes(PyArray_DESCR(root), PyArray_DESCR(a))) {
    return std::nullopt;
  }
  // Dense: the strides, in increasing order, step over exactly the elements
  // of the dimensions below them.
  auto itemsize = static_cast<int64_t>(PyArray_ITEMSIZE(root));
  int ndim = PyArray_NDIM(root);
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    int64_t size = PyArray_DIM(root, d);
    numel *= size;
    if (size != 1) {
      dims.emplace_back(PyArray_STRIDE(root, d), size);
    }
  }
  if (numel == 0 || itemsize == 0) {
    return std::nullopt;
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = itemsize;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) {
      return std::nullopt;
    }
    expected *= size;
  }
  std::ptrdiff_t bytes = static_cast<const char*>(t.data_ptr()) -
                         static_cast<const char*>(PyArray_DATA(root));
  if (bytes < 0 || bytes % itemsize != 0 || bytes / itemsize >= numel) {
    return std::nullopt;
  }
  return StorageRoot{root, bytes / itemsize};
}

bool is_exclusively_owned(const Tensor& t) {
  if (t.impl()->array.get() == nullptr) {
    return false;  // a wrapped number: nothing writes into it
  }
  PyArrayObject* a = arr(t);
  return t.impl_ptr().use_count() == 1 && Py_REFCNT(obj(t)) == 1 &&
         PyArray_BASE(a) == nullptr && (PyArray_FLAGS(a) & NPY_ARRAY_OWNDATA);
}

}  // namespace npgrad::kernels
