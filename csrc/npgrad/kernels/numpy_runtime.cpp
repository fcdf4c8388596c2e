// The NumPy runtime: importing NumPy's C API and the callables the kernels
// use, and turning Python exceptions into the core's. See Note [Storage is a
// NumPy array] in kernels.h.
#define NPGRAD_KERNELS_DEFINE_NUMPY_API
#include "npgrad/kernels/internal.h"

#include <string>

#include "npgrad/util/error.h"

namespace npgrad::kernels {

NumpyFunctions np_;
bool initialized_ = false;
int npy_types_[kNumScalarTypes] = {};

namespace {

// See Note [Large buffers are cached] in buffer_cache.h.
void* cache_malloc(void*, size_t bytes) {
  return buffer_cache::allocate(bytes);
}
void* cache_calloc(void*, size_t count, size_t elsize) {
  return buffer_cache::allocate_zeroed(count, elsize);
}
void* cache_realloc(void*, void* ptr, size_t bytes) {
  return buffer_cache::reallocate(ptr, bytes);
}
void cache_free(void*, void* ptr, size_t bytes) {
  buffer_cache::release(ptr, bytes);
}
PyDataMem_Handler buffer_cache_handler_ = {
    "npgrad_buffer_cache",
    1,
    {nullptr, cache_malloc, cache_calloc, cache_realloc, cache_free}};

}  // namespace

void throw_python_error() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  std::string msg = "NumPy error";
  if (value != nullptr) {
    PyObject* s = PyObject_Str(value);
    if (s != nullptr) {
      const char* c = PyUnicode_AsUTF8(s);
      if (c != nullptr) {
        msg = c;
      }
      Py_DECREF(s);
    }
  }
  bool is_type = type && PyErr_GivenExceptionMatches(type, PyExc_TypeError);
  bool is_value = type && PyErr_GivenExceptionMatches(type, PyExc_ValueError);
  bool is_index = type && PyErr_GivenExceptionMatches(type, PyExc_IndexError);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  PyErr_Clear();
  if (is_type) {
    throw TypeError(msg);
  }
  if (is_index) {
    throw IndexError(msg);
  }
  if (is_value) {
    throw ValueError(msg);
  }
  throw Error(msg);
}

void init() {
  if (initialized_) {
    return;
  }
  if (PyArray_ImportNumPyAPI() < 0) {
    throw_python_error();
  }
  // Importing ml_dtypes registers bfloat16 (its descriptor, casts and ufunc
  // loops) with NumPy, under a type number NumPy assigns then.
  Ref ml_dtypes(PyImport_ImportModule("ml_dtypes"));
  Ref numpy(PyImport_ImportModule("numpy"));
  for (int i = 0; i < kNumScalarTypes; ++i) {
    Ref name(PyUnicode_FromString(
        dtype_info(static_cast<ScalarType>(i)).numpy_name));
    PyArray_Descr* descr = nullptr;
    if (PyArray_DescrConverter(name.p, &descr) == 0) {
      throw_python_error();
    }
    npy_types_[i] = descr->type_num;
    // Registered descriptors live as long as NumPy: no reference is kept.
    Py_DECREF(descr);
  }
  init_array_recycling();
  auto get = [&](const char* name) {
    return check(PyObject_GetAttrString(numpy.p, name));
  };
  const char* binary_names[] = {
#define NPGRAD_BINARY_NAME(name, ufunc) ufunc,
      NPGRAD_FORALL_BINARY_UFUNCS(NPGRAD_BINARY_NAME)
#undef NPGRAD_BINARY_NAME
  };
  for (int i = 0; i < kNumBinary; ++i) {
    np_.binary[i] = get(binary_names[i]);
  }
  init_inner_loops();
  np_.add_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::Add)], "reduce"));
  np_.max_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::Maximum)], "reduce"));
  np_.min_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::Minimum)], "reduce"));
  np_.mul_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::Mul)], "reduce"));
  np_.logical_or_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::LogicalOr)], "reduce"));
  np_.logical_and_reduce = check(PyObject_GetAttrString(
      np_.binary[static_cast<int>(Binary::LogicalAnd)], "reduce"));
  np_.add_at = check(
      PyObject_GetAttrString(np_.binary[static_cast<int>(Binary::Add)], "at"));
  np_.argmax = get("argmax");
  np_.argmin = get("argmin");
  np_.matmul = get("matmul");
  np_.where = get("where");
  np_.concatenate = get("concatenate");
  np_.take_along_axis = get("take_along_axis");
  np_.copyto = get("copyto");
  np_.isnan = get("isnan");
  np_.any = get("any");
  np_.argwhere = get("argwhere");
  np_.str_axis = PyUnicode_InternFromString("axis");
  np_.str_dtype = PyUnicode_InternFromString("dtype");
  np_.str_keepdims = PyUnicode_InternFromString("keepdims");
  np_.str_casting = PyUnicode_InternFromString("casting");
  np_.str_unsafe = PyUnicode_InternFromString("unsafe");
  np_.kw_axis_dtype_keepdims =
      PyTuple_Pack(3, np_.str_axis, np_.str_dtype, np_.str_keepdims);
  np_.kw_axis_keepdims = PyTuple_Pack(2, np_.str_axis, np_.str_keepdims);
  np_.kw_axis = PyTuple_Pack(1, np_.str_axis);
  np_.kw_casting = PyTuple_Pack(1, np_.str_casting);
  np_.kw_out = PyTuple_Pack(1, PyUnicode_InternFromString("out"));
  {
    Ref config(PyImport_ImportModule("numpy._core._ufunc_config"));
    np_.errstate_var =
        check(PyObject_GetAttrString(config.p, "_extobj_contextvar"));
    Ref errstate(PyObject_GetAttrString(numpy.p, "errstate"));
    Ref kwargs(Py_BuildValue("{s:s}", "all", "ignore"));
    Ref empty(PyTuple_New(0));
    Ref ctx(PyObject_Call(errstate.p, empty.p, kwargs.p));
    Ref entered(PyObject_CallMethod(ctx.p, "__enter__", nullptr));
    PyObject* value = nullptr;
    if (PyContextVar_Get(np_.errstate_var, nullptr, &value) < 0 ||
        value == nullptr) {
      throw_python_error();
    }
    np_.errstate_ignore = value;
    Ref exited(PyObject_CallMethod(
        ctx.p, "__exit__", "OOO", Py_None, Py_None, Py_None));
  }
  if (buffer_cache::stats().limit_bytes > 0) {
    np_.buffer_cache_handler =
        check(PyCapsule_New(&buffer_cache_handler_, "mem_handler", nullptr));
  }
  initialized_ = true;
}

}  // namespace npgrad::kernels
