#pragma once
// What the kernels' translation units share: NumPy's headers, the cached
// NumPy callables, Python error translation and the small helpers every
// kernel uses. Internal to kernels/: nothing outside includes it, so that
// Python.h and NumPy stay out of the other tiers (CMakeLists.txt).
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
// npgrad requires NumPy >= 2.0 (pyproject.toml). Without this the headers
// target the oldest NumPy of the running Python (1.21 for 3.10), which hides
// the memory-handler API the buffer cache uses.
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL npgrad_ARRAY_API
// One translation unit (numpy_runtime.cpp) defines NumPy's API table and
// imports it; the others refer to it.
#ifndef NPGRAD_KERNELS_DEFINE_NUMPY_API
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
// Only the PyUFuncObject layout is used (its loop table), never the ufunc C
// API.
#define NO_IMPORT_UFUNC
#include <numpy/ufuncobject.h>

#include <cstddef>
#include <vector>

#include "npgrad/kernels/buffer_cache.h"
#include "npgrad/kernels/kernels.h"

namespace npgrad::kernels {

// Cached NumPy callables; borrowed for the life of the process once imported.
struct NumpyFunctions {
  PyObject* binary[kNumBinary];
  PyObject* add_reduce;
  PyObject* max_reduce;
  PyObject* min_reduce;
  PyObject* mul_reduce;
  PyObject* logical_or_reduce;
  PyObject* logical_and_reduce;
  PyObject* add_at;
  PyObject* argmax;
  PyObject* argmin;
  PyObject* matmul;
  PyObject* where;
  PyObject* concatenate;
  PyObject* take_along_axis;
  PyObject* copyto;
  PyObject* isnan;
  PyObject* any;
  PyObject* argwhere;
  PyObject* str_axis;
  PyObject* str_dtype;
  PyObject* str_keepdims;
  PyObject* str_casting;
  PyObject* str_unsafe;
  PyObject* kw_axis_dtype_keepdims;
  PyObject* kw_axis_keepdims;
  PyObject* kw_axis;
  PyObject* kw_casting;
  PyObject* kw_out;
  // NumPy's error-state context variable, and its value under
  // errstate(all="ignore").
  PyObject* errstate_var;
  PyObject* errstate_ignore;
  // The NumPy memory handler of the buffer cache (a "mem_handler" capsule),
  // or null when caching is off.
  PyObject* buffer_cache_handler;
};
extern NumpyFunctions np_;
// Set at the end of init().
extern bool initialized_;

// Turns the pending Python error into the core exception of the same kind.
[[noreturn]] void throw_python_error();

inline PyObject* check(PyObject* result) {
  if (result == nullptr) {
    throw_python_error();
  }
  return result;
}

// RAII for a new reference.
struct Ref {
  PyObject* p;
  explicit Ref(PyObject* obj) : p(check(obj)) {}
  ~Ref() { Py_XDECREF(p); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* release() {
    PyObject* r = p;
    p = nullptr;
    return r;
  }
};

// Ensures the GIL for the scope (cheap when already held).
struct GilGuard {
  PyGILState_STATE state;
  GilGuard() : state(PyGILState_Ensure()) {}
  ~GilGuard() { PyGILState_Release(state); }
};

// NumPy's type numbers of the table's dtypes, looked up by their NumPy names
// when NumPy is imported (init): bfloat16's is not a constant, ml_dtypes
// registers it with NumPy when imported.
extern int npy_types_[kNumScalarTypes];

// NumPy's type number of a dtype.
inline int npy_type(ScalarType t) {
  return npy_types_[static_cast<int>(t)];
}

// The dtype whose NumPy type number is `type`, as its index in the table, or
// -1 for a NumPy type npgrad does not support.
inline int dtype_index(int type) {
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (npy_types_[i] == type) {
      return i;
    }
  }
  return -1;
}

// t's ndarray; made here for a wrapped number that has none yet.
inline PyObject* obj(const Tensor& t) {
  void* a = t.impl()->array.get();
  return static_cast<PyObject*>(
      a != nullptr ? a : materialize_array(*t.impl()));
}
inline PyArrayObject* arr(const Tensor& t) {
  return reinterpret_cast<PyArrayObject*>(obj(t));
}

// The operand to hand to a ufunc: the array cast to dtype, or for a wrapped
// number a Python scalar, which NumPy treats as weakly typed like torch.
PyObject* operand(const Tensor& t, ScalarType dtype);

inline bool is_large(const Tensor& t) {
  return static_cast<std::size_t>(t.numel()) * element_size(t.dtype()) >=
         buffer_cache::kMinCachedBytes;
}

// NumPy's own allocations for the scope (the outputs and temporaries of a
// ufunc, matmul or cast) come from the buffer cache when the operands are
// large: blocks the cache keeps are then what the next large result reuses,
// instead of sitting beside fresh memory from malloc.
class BufferCacheScope {
 public:
  explicit BufferCacheScope(bool large) {
    if (large && np_.buffer_cache_handler != nullptr) {
      previous_ = PyDataMem_SetHandler(np_.buffer_cache_handler);
      if (previous_ == nullptr) {
        PyErr_Clear();
      }
    }
  }
  ~BufferCacheScope() {
    if (previous_ != nullptr) {
      PyObject* ours = PyDataMem_SetHandler(previous_);
      if (ours == nullptr) {
        PyErr_Clear();
      }
      Py_XDECREF(ours);
      Py_DECREF(previous_);
    }
  }
  BufferCacheScope(const BufferCacheScope&) = delete;
  BufferCacheScope& operator=(const BufferCacheScope&) = delete;

 private:
  PyObject* previous_ = nullptr;
};

// array_recycling.cpp (Note [Small ndarrays are recycled]).
void init_array_recycling();
// Keeps o (whose last reference the caller holds) for reuse; false when it
// must be freed instead.
bool recycle_array(PyObject* o);
// A new C-contiguous array of one of the dtype table's NumPy types; a large
// one takes its data from the buffer cache, a small one may be a recycled one.
PyObject* new_array(int nd, npy_intp* dims, int type);

// inner_loops.cpp (Note [Calling NumPy's inner loops directly]).
// A ufunc's inner loop for one operand dtype, as NumPy would select it.
struct InnerLoop {
  PyUFuncGenericFunction fn = nullptr;
  void* data = nullptr;
  int out_type = NPY_NOTYPE;
};
constexpr int kLoopDtypes = 2;  // float32, float64
// The loop of ufunc_obj whose inputs are all `type` (empty when none).
InnerLoop find_inner_loop(PyObject* ufunc_obj, int type);
// The NPY type of loop slot `slot`.
int loop_slot_type(int slot);

// Looks up the loops once np_'s ufuncs are imported.
void init_inner_loops();
// out (or a new *result) = op(a, b) through the inner loop; false when the
// operands need NumPy's own machinery.
bool try_binary_loop(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    ScalarType compute,
    const Tensor* out,
    Tensor* result);
bool try_unary_loop(
    const UnaryUfunc& op,
    const Tensor& a,
    ScalarType compute,
    const Tensor* out,
    Tensor* result);
// *result = the sum of all of a (dtype: a's) through add's inner loop in
// its reduce form; false when NumPy's reduce must run.
bool try_sum_loop(const Tensor& a, ScalarType dtype, Tensor* result);
// *result = op (Add, Maximum or Minimum) reduced over the last dim of a
// (dims: {a.dim() - 1}) through the op's inner loop, row by row; false when
// NumPy's reduce must run.
bool try_last_dim_reduce_loop(
    Binary op,
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype,
    Tensor* result);

struct UnaryUfunc {
  PyObject* ufunc = nullptr;  // borrowed for the life of the process
  InnerLoop loops[kLoopDtypes];
};

}  // namespace npgrad::kernels
