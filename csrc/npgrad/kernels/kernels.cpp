// The NumPy tier: see Note [Storage is a NumPy array] in kernels.h.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
// npgrad requires NumPy >= 2.0 (pyproject.toml). Without this the headers
// target the oldest NumPy of the running Python (1.21 for 3.10), which hides
// the memory-handler API the buffer cache uses.
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL npgrad_ARRAY_API
#include <numpy/arrayobject.h>
// Only the PyUFuncObject layout is used (its loop table), never the ufunc C
// API.
#define NO_IMPORT_UFUNC
#include <numpy/ufuncobject.h>

#include "npgrad/kernels/kernels.h"

#include "npgrad/kernels/buffer_cache.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <system_error>
#include <thread>

#include "npgrad/ops/broadcast.h"
#include "npgrad/util/error.h"

namespace npgrad::kernels {
namespace {

// Cached NumPy callables; borrowed for the life of the process once imported.
struct NumpyFunctions {
  PyObject* binary[13];
  PyObject* unary[9];
  PyObject* add_reduce;
  PyObject* max_reduce;
  PyObject* min_reduce;
  PyObject* add_at;
  PyObject* argmax;
  PyObject* argmin;
  PyObject* matmul;
  PyObject* where;
  PyObject* concatenate;
  PyObject* copyto;
  PyObject* isnan;
  PyObject* any;
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
NumpyFunctions np_;

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

// Note [Calling NumPy's inner loops directly]
// For small tensors most of a ufunc call is dispatch, not math: argument
// parsing, dtype promotion and loop lookup, the override and wrap protocols,
// reading the error state (a context variable), output allocation and the
// floating-point error check. When the operands are already in the compute
// dtype, aligned, native-endian and contiguous (or a 0-dim broadcast), the
// kernels call the very inner loop NumPy would select (from the ufunc's own
// table, looked up once per dtype), so the results are bit-for-bit NumPy's.
// Only float32/float64 loops are used: their resolution is the exact-match
// one and they never touch Python. The loops may raise floating-point flags,
// which nobody reads: torch is silent on 0/0 and NumPy clears the flags before
// each of its own loops. Like NumPy, the GIL is released for long loops.
struct InnerLoop {
  PyUFuncGenericFunction fn = nullptr;
  void* data = nullptr;
  int out_type = NPY_NOTYPE;
};
constexpr int kLoopDtypes = 2;  // float32, float64
InnerLoop binary_loops_[13][kLoopDtypes];
InnerLoop unary_loops_[9][kLoopDtypes];
constexpr npy_intp kReleaseGilAbove = 500;  // NumPy's own threshold

int loop_slot(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return 0;
    case ScalarType::Float64:
      return 1;
    default:
      return -1;
  }
}

InnerLoop find_inner_loop(PyObject* ufunc_obj, int type) {
  auto* ufunc = reinterpret_cast<PyUFuncObject*>(ufunc_obj);
  InnerLoop loop;
  if (std::string(Py_TYPE(ufunc_obj)->tp_name) != "numpy.ufunc" ||
      ufunc->nout != 1) {
    return loop;
  }
  for (int k = 0; k < ufunc->ntypes; ++k) {
    const char* types = ufunc->types + k * ufunc->nargs;
    bool inputs_match = true;
    for (int i = 0; i < ufunc->nin; ++i) {
      inputs_match = inputs_match && types[i] == type;
    }
    if (inputs_match) {
      loop.fn = ufunc->functions[k];
      loop.data = ufunc->data == nullptr ? nullptr : ufunc->data[k];
      loop.out_type = types[ufunc->nin];
      return loop;
    }
  }
  return loop;
}
bool initialized_ = false;

// Turns the pending Python error into the core exception of the same kind.
[[noreturn]] void throw_python_error() {
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

PyObject* check(PyObject* result) {
  if (result == nullptr) {
    throw_python_error();
  }
  return result;
}

// check() for a NumPy call over operands of these shapes: when they do not
// broadcast, torch's error instead of NumPy's ValueError (only computed on the
// failure path).
PyObject* check_broadcast(
    PyObject* result, std::initializer_list<const Tensor*> operands) {
  if (result == nullptr) {
    auto it = operands.begin();
    Shape shape = (*it)->sizes();
    try {
      for (++it; it != operands.end(); ++it) {
        shape = ops::infer_size(shape, (*it)->sizes());
      }
    } catch (const Error&) {
      PyErr_Clear();
      throw;
    }
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

int npy_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return NPY_BOOL;
    case ScalarType::Int64:
      return NPY_INT64;
    case ScalarType::Float16:
      return NPY_FLOAT16;
    case ScalarType::Float32:
      return NPY_FLOAT32;
    case ScalarType::Float64:
      return NPY_FLOAT64;
  }
  return NPY_FLOAT32;
}

// A double as the nearest float; a finite value beyond float's range becomes
// inf, as NumPy and torch round it (the plain conversion would be UB).
float to_float(double v) {
  if (std::abs(v) > static_cast<double>(FLT_MAX) && std::isfinite(v)) {
    return v > 0 ? HUGE_VALF : -HUGE_VALF;
  }
  return static_cast<float>(v);
}

// IEEE binary16 <-> float, for the scalar reads and writes the kernels do
// themselves (item, fill); all arithmetic on float16 is NumPy's. A double
// becomes a half through float, as c10::Half converts it.
float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise into float's wider exponent range
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Round to nearest even, overflow to inf, nan stays nan.
uint16_t float_to_half(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7fffffffu;
  if (bits >= 0x7f800000u) {
    return sign | (bits > 0x7f800000u ? 0x7e00 : 0x7c00);
  }
  if (bits >= 0x477ff000u) {  // 65520 and above round to inf
    return sign | 0x7c00;
  }
  if (bits < 0x38800000u) {
    // Below half's smallest normal: adding 0.5 lets the FPU round the value
    // to a multiple of 2^-24 (half's subnormal step) in float's mantissa.
    constexpr uint32_t kMagic = 126u << 23;  // 0.5f
    float magic, sum, x;
    std::memcpy(&magic, &kMagic, sizeof magic);
    std::memcpy(&x, &bits, sizeof x);
    sum = x + magic;
    uint32_t sum_bits;
    std::memcpy(&sum_bits, &sum, sizeof sum_bits);
    return sign | static_cast<uint16_t>(sum_bits - kMagic);
  }
  uint32_t odd = (bits >> 13) & 1u;
  bits += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return sign | static_cast<uint16_t>(bits >> 13);
}

// t's ndarray; made here for a wrapped number that has none yet.
PyObject* obj(const Tensor& t) {
  void* a = t.impl()->array.get();
  return static_cast<PyObject*>(
      a != nullptr ? a : materialize_array(*t.impl()));
}
PyArrayObject* arr(const Tensor& t) {
  return reinterpret_cast<PyArrayObject*>(obj(t));
}

// The operand to hand to a ufunc: the array cast to dtype, or for a wrapped
// number a Python scalar, which NumPy treats as weakly typed like torch.
PyObject* operand(const Tensor& t, ScalarType dtype) {
  if (t.impl()->is_wrapped_number) {
    double v = item(t);
    if (is_floating(dtype)) {
      return check(PyFloat_FromDouble(v));
    }
    if (dtype == ScalarType::Bool) {
      return check(PyBool_FromLong(v != 0));
    }
    return check(PyLong_FromLongLong(static_cast<long long>(v)));
  }
  if (t.dtype() == dtype) {
    Py_INCREF(obj(t));
    return obj(t);
  }
  return check(
      PyArray_CastToType(arr(t), PyArray_DescrFromType(npy_type(dtype)), 0));
}

bool is_large(const Tensor& t) {
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

// Note [Small ndarrays are recycled]
// Every op's output and every gradient is a new ndarray, and the backward pass
// frees them all moments later: NumPy's creation and dealloc of a small array
// (descriptor and memory-handler lookups, three allocations and their frees)
// cost about a sixth of a small op. When a TensorImpl drops the last reference
// to an ndarray nobody could tell from a fresh np.empty (exactly an ndarray,
// NumPy's own C strides, owning aligned writable data of at most
// kRecycleMaxBytes, no base, no weak reference, its dtype's canonical
// descriptor), the array is kept, and new_array hands it out again for the
// same dtype and shape. Its contents are as undefined as np.empty's, and no
// one else holds it, so nothing can observe the reuse. At most
// kRecycleMaxKept arrays are kept; every access holds the GIL.
constexpr std::size_t kRecycleMaxBytes = 512;
constexpr std::size_t kRecycleMaxKept = 4096;
constexpr int kRecycleMaxDims = 6;
struct RecycledArrays {
  std::vector<PyObject*> stacks[kNumScalarTypes][kRecycleMaxDims + 1];
  PyArray_Descr* descrs[kNumScalarTypes] = {};  // the canonical ones
  std::size_t kept = 0;
};
RecycledArrays recycled_;

int recycle_slot(int type) {
  switch (type) {
    case NPY_BOOL:
      return 0;
    case NPY_INT64:
      return 1;
    case NPY_FLOAT16:
      return 2;
    case NPY_FLOAT32:
      return 3;
    case NPY_FLOAT64:
      return 4;
    default:
      return -1;
  }
}

// Keeps o (whose last reference the caller holds) for reuse; false when it
// must be freed instead.
bool recycle_array(PyObject* o) {
  if (Py_TYPE(o) != &PyArray_Type || recycled_.kept >= kRecycleMaxKept) {
    return false;
  }
  auto* a = reinterpret_cast<PyArrayObject*>(o);
  constexpr int kRequired = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_OWNDATA |
                            NPY_ARRAY_ALIGNED | NPY_ARRAY_WRITEABLE;
  int nd = PyArray_NDIM(a);
  int flags = PyArray_FLAGS(a);
  if (nd > kRecycleMaxDims || (flags & kRequired) != kRequired ||
      (flags & ~(kRequired | NPY_ARRAY_F_CONTIGUOUS)) != 0 ||
      PyArray_BASE(a) != nullptr ||
      reinterpret_cast<PyArrayObject_fields*>(a)->weakreflist != nullptr) {
    return false;
  }
  int slot = recycle_slot(PyArray_TYPE(a));
  if (slot < 0 || PyArray_DESCR(a) != recycled_.descrs[slot]) {
    return false;
  }
  npy_intp bytes = PyArray_ITEMSIZE(a);
  const npy_intp* dims = PyArray_DIMS(a);
  const npy_intp* strides = PyArray_STRIDES(a);
  for (int i = nd - 1; i >= 0; --i) {
    if (dims[i] == 0 || strides[i] != bytes) {
      return false;
    }
    bytes *= dims[i];
    if (bytes > static_cast<npy_intp>(kRecycleMaxBytes)) {
      return false;
    }
  }
  recycled_.stacks[slot][nd].push_back(o);
  ++recycled_.kept;
  return true;
}

// A kept array of this dtype and shape (a new reference), or null.
PyObject* reuse_array(int nd, const npy_intp* dims, int type) {
  int slot = recycle_slot(type);
  if (nd > kRecycleMaxDims || slot < 0) {
    return nullptr;
  }
  std::vector<PyObject*>& stack = recycled_.stacks[slot][nd];
  if (stack.empty()) {
    return nullptr;
  }
  PyObject* o = stack.back();
  if (!std::equal(
          dims, dims + nd, PyArray_DIMS(reinterpret_cast<PyArrayObject*>(o)))) {
    return nullptr;
  }
  stack.pop_back();
  --recycled_.kept;
  return o;
}

// A new C-contiguous array; a large one takes its data from the buffer cache,
// a small one may be a recycled one (Note [Small ndarrays are recycled]).
PyObject* new_array(int nd, npy_intp* dims, int type) {
  if (PyObject* reused = reuse_array(nd, dims, type)) {
    return reused;
  }
  std::size_t bytes = type == NPY_BOOL      ? 1
                      : type == NPY_FLOAT16 ? 2
                      : type == NPY_FLOAT32 ? 4
                                            : 8;
  for (int i = 0; i < nd; ++i) {
    bytes *= static_cast<std::size_t>(dims[i]);
  }
  BufferCacheScope cached(bytes >= buffer_cache::kMinCachedBytes);
  return PyArray_SimpleNew(nd, dims, type);
}

PyObject* dims_tuple(const std::vector<int64_t>& dims) {
  PyObject* tup = check(PyTuple_New(static_cast<Py_ssize_t>(dims.size())));
  for (std::size_t i = 0; i < dims.size(); ++i) {
    PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(dims[i]));
  }
  return tup;
}

PyObject* dtype_obj(ScalarType t) {
  return reinterpret_cast<PyObject*>(PyArray_DescrFromType(npy_type(t)));
}

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

void init() {
  if (initialized_) {
    return;
  }
  if (PyArray_ImportNumPyAPI() < 0) {
    throw_python_error();
  }
  for (int type :
       {NPY_BOOL, NPY_INT64, NPY_FLOAT16, NPY_FLOAT32, NPY_FLOAT64}) {
    // Builtin descriptors are immortal singletons: a borrowed pointer is fine.
    PyArray_Descr* d = PyArray_DescrFromType(type);
    recycled_.descrs[recycle_slot(type)] = d;
    Py_DECREF(d);
  }
  Ref numpy(PyImport_ImportModule("numpy"));
  auto get = [&](const char* name) {
    return check(PyObject_GetAttrString(numpy.p, name));
  };
  const char* binary_names[] = {
      "add",
      "subtract",
      "multiply",
      "true_divide",
      "power",
      "maximum",
      "minimum",
      "equal",
      "not_equal",
      "less",
      "less_equal",
      "greater",
      "greater_equal"};
  for (int i = 0; i < 13; ++i) {
    np_.binary[i] = get(binary_names[i]);
  }
  const char* unary_names[] = {
      "negative",
      "exp",
      "log",
      "sin",
      "cos",
      "tanh",
      "sqrt",
      "absolute",
      "sign"};
  for (int i = 0; i < 9; ++i) {
    np_.unary[i] = get(unary_names[i]);
  }
  for (int slot = 0; slot < kLoopDtypes; ++slot) {
    int type = slot == 0 ? NPY_FLOAT32 : NPY_FLOAT64;
    for (int i = 0; i < 13; ++i) {
      binary_loops_[i][slot] = find_inner_loop(np_.binary[i], type);
    }
    for (int i = 0; i < 9; ++i) {
      unary_loops_[i][slot] = find_inner_loop(np_.unary[i], type);
    }
  }
  np_.add_reduce = check(PyObject_GetAttrString(np_.binary[0], "reduce"));
  np_.max_reduce = check(PyObject_GetAttrString(np_.binary[5], "reduce"));
  np_.min_reduce = check(PyObject_GetAttrString(np_.binary[6], "reduce"));
  np_.add_at = check(PyObject_GetAttrString(np_.binary[0], "at"));
  np_.argmax = get("argmax");
  np_.argmin = get("argmin");
  np_.matmul = get("matmul");
  np_.where = get("where");
  np_.concatenate = get("concatenate");
  np_.copyto = get("copyto");
  np_.isnan = get("isnan");
  np_.any = get("any");
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

namespace {
thread_local int fp_ignore_depth = 0;
}

IgnoreFpErrors::IgnoreFpErrors() {
  if (fp_ignore_depth++ == 0 && initialized_) {
    token_ = PyContextVar_Set(np_.errstate_var, np_.errstate_ignore);
    if (token_ == nullptr) {
      PyErr_Clear();
    }
  }
}

IgnoreFpErrors::~IgnoreFpErrors() {
  --fp_ignore_depth;
  if (token_ != nullptr) {
    PyContextVar_Reset(np_.errstate_var, static_cast<PyObject*>(token_));
    Py_DECREF(static_cast<PyObject*>(token_));
  }
}

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
  switch (PyArray_TYPE(a)) {
    case NPY_BOOL:
      impl->dtype = ScalarType::Bool;
      break;
    case NPY_INT64:
      impl->dtype = ScalarType::Int64;
      break;
    case NPY_FLOAT16:
      impl->dtype = ScalarType::Float16;
      break;
    case NPY_FLOAT32:
      impl->dtype = ScalarType::Float32;
      break;
    case NPY_FLOAT64:
      impl->dtype = ScalarType::Float64;
      break;
    default: {
      std::string type_name = PyArray_DESCR(a)->typeobj->tp_name;
      Py_DECREF(o);
      throw TypeError(
          "can't convert np.ndarray of type " + type_name +
          ". The only supported types are: float64, float32, float16, int64, "
          "and bool.");
    }
  }
  impl->array = ArrayHandle::steal(o);
  impl->data = PyArray_DATA(a);
  int nd = PyArray_NDIM(a);
  npy_intp* dims = PyArray_DIMS(a);
  npy_intp* strides = PyArray_STRIDES(a);
  auto itemsize = static_cast<int64_t>(PyArray_ITEMSIZE(a));
  impl->sizes.assign(dims, dims + nd);
  impl->strides.resize(nd);
  for (int i = 0; i < nd; ++i) {
    impl->strides[i] = strides[i] / itemsize;
  }
  impl->version_counter = make_version_counter();
  return Tensor(std::move(impl));
}

Tensor from_array(void* ndarray) {
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
    case ScalarType::Bool:
      *static_cast<bool*>(p) = value != 0;
      break;
    case ScalarType::Int64:
      *static_cast<int64_t*>(p) = static_cast<int64_t>(value);
      break;
    case ScalarType::Float16:
      *static_cast<uint16_t*>(p) = float_to_half(to_float(value));
      break;
    case ScalarType::Float32:
      *static_cast<float*>(p) = to_float(value);
      break;
    case ScalarType::Float64:
      *static_cast<double*>(p) = value;
      break;
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
    case ScalarType::Bool:
      return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
    case ScalarType::Int64:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case ScalarType::Float16:
      return half_to_float(*reinterpret_cast<const uint16_t*>(p));
    case ScalarType::Float32:
      return *reinterpret_cast<const float*>(p);
    case ScalarType::Float64:
      return *reinterpret_cast<const double*>(p);
  }
  return 0;
}

namespace {

// One operand of a direct inner-loop call: its data, and its step in bytes
// (0 for a 0-dim operand broadcast over the others).
struct LoopOperand {
  char* data = nullptr;
  npy_intp step = 0;
  // A wrapped number's value in the compute dtype.
  double value64 = 0;
  float value32 = 0;
};

bool loop_ready_array(const Tensor& t, ScalarType compute) {
  if (t.dtype() != compute || !t.is_contiguous()) {
    return false;
  }
  int flags = PyArray_FLAGS(arr(t));
  return (flags & NPY_ARRAY_ALIGNED) != 0 && PyArray_ISNOTSWAPPED(arr(t));
}

// Fills `op` for t in a loop computing in `compute`; false when t needs
// NumPy's own machinery (a cast, a strided view, odd alignment or byte order).
bool loop_operand(
    const Tensor& t, ScalarType compute, bool broadcast, LoopOperand& op) {
  if (t.impl()->is_wrapped_number) {
    double v = item(t);
    if (compute == ScalarType::Float64) {
      op.value64 = v;
      op.data = reinterpret_cast<char*>(&op.value64);
    } else {
      op.value32 = to_float(v);  // as NumPy rounds a Python float
      op.data = reinterpret_cast<char*>(&op.value32);
    }
    op.step = 0;
    return true;
  }
  if (!loop_ready_array(t, compute)) {
    return false;
  }
  op.data = static_cast<char*>(t.data_ptr());
  op.step = broadcast ? 0 : static_cast<npy_intp>(element_size(compute));
  return true;
}

// The output geometry of a direct binary loop: equal shapes, or a 0-dim
// operand broadcast over the other. Null when NumPy must broadcast.
const Shape* loop_shape(const Tensor& a, const Tensor& b) {
  if (a.sizes() == b.sizes()) {
    return &a.sizes();
  }
  if (b.dim() == 0) {
    return &a.sizes();
  }
  if (a.dim() == 0) {
    return &b.sizes();
  }
  return nullptr;
}

void run_loop(const InnerLoop& loop, char** args, npy_intp n, npy_intp* steps) {
  if (n == 0) {
    return;
  }
  if (n > kReleaseGilAbove) {
    Py_BEGIN_ALLOW_THREADS loop.fn(args, &n, steps, loop.data);
    Py_END_ALLOW_THREADS
  } else {
    loop.fn(args, &n, steps, loop.data);
  }
}

Tensor new_loop_output(const Shape& sizes, int type) {
  npy_intp dims[NPY_MAXDIMS];
  std::copy(sizes.begin(), sizes.end(), dims);
  return wrap_array(new_array(static_cast<int>(sizes.size()), dims, type));
}

bool overlaps_partially(const Tensor& out, const LoopOperand& in, npy_intp n) {
  if (in.step == 0) {
    // A broadcast operand is read on every iteration: any overlap with the
    // output would change it under the loop.
    const char* o = static_cast<const char*>(out.data_ptr());
    npy_intp bytes = n * static_cast<npy_intp>(element_size(out.dtype()));
    return in.data >= o && in.data < o + bytes;
  }
  const char* o = static_cast<const char*>(out.data_ptr());
  npy_intp bytes = n * in.step;
  if (in.data == o) {
    return false;  // elementwise in place: each element is read, then written
  }
  return in.data < o + bytes && o < in.data + bytes;
}

// out = op(a, b) through the inner loop, when the operands allow it.
bool try_binary_loop(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    ScalarType compute,
    const Tensor* out,
    Tensor* result) {
  int slot = loop_slot(compute);
  if (slot < 0) {
    return false;
  }
  const InnerLoop& loop = binary_loops_[static_cast<int>(op)][slot];
  const Shape* shape = loop_shape(a, b);
  if (loop.fn == nullptr || shape == nullptr) {
    return false;
  }
  LoopOperand x, y;
  if (!loop_operand(a, compute, a.dim() == 0 && shape->size() > 0, x) ||
      !loop_operand(b, compute, b.dim() == 0 && shape->size() > 0, y)) {
    return false;
  }
  if (a.dim() == 0 && b.dim() == 0) {
    x.step = y.step = 0;  // one element
  }
  Tensor dst;
  if (out != nullptr) {
    if (out->sizes() != *shape || out->dtype() != compute ||
        npy_type(compute) != loop.out_type ||
        !loop_ready_array(*out, compute) || !PyArray_ISWRITEABLE(arr(*out))) {
      return false;
    }
    npy_intp n = out->numel();
    if (overlaps_partially(*out, x, n) || overlaps_partially(*out, y, n)) {
      return false;
    }
    dst = *out;
  } else {
    dst = new_loop_output(*shape, loop.out_type);
  }
  npy_intp n = dst.numel();
  char* args[3] = {x.data, y.data, static_cast<char*>(dst.data_ptr())};
  npy_intp steps[3] = {
      x.step, y.step, static_cast<npy_intp>(element_size(dst.dtype()))};
  run_loop(loop, args, n, steps);
  if (result != nullptr) {
    *result = std::move(dst);
  }
  return true;
}

bool try_unary_loop(
    Unary op,
    const Tensor& a,
    ScalarType compute,
    const Tensor* out,
    Tensor* result) {
  int slot = loop_slot(compute);
  if (slot < 0 || op == Unary::Sigmoid) {
    return false;
  }
  const InnerLoop& loop = unary_loops_[static_cast<int>(op)][slot];
  LoopOperand x;
  if (loop.fn == nullptr || a.impl()->is_wrapped_number ||
      !loop_operand(a, compute, false, x)) {
    return false;
  }
  Tensor dst;
  if (out != nullptr) {
    if (out->sizes() != a.sizes() || npy_type(out->dtype()) != loop.out_type ||
        !loop_ready_array(*out, out->dtype()) ||
        !PyArray_ISWRITEABLE(arr(*out)) ||
        overlaps_partially(*out, x, out->numel())) {
      return false;
    }
    dst = *out;
  } else {
    dst = new_loop_output(a.sizes(), loop.out_type);
  }
  npy_intp n = dst.numel();
  char* args[2] = {x.data, static_cast<char*>(dst.data_ptr())};
  npy_intp steps[2] = {
      x.step, static_cast<npy_intp>(element_size(dst.dtype()))};
  run_loop(loop, args, n, steps);
  if (result != nullptr) {
    *result = std::move(dst);
  }
  return true;
}

}  // namespace

// Note [float16 computes in float32 where torch does]
// NumPy's float16 ufunc loops convert each element to float, compute and round
// once, which is what torch's CPU kernels do, so pointwise ops on float16 are
// NumPy's. Where npgrad composes a result from several NumPy steps (sigmoid,
// softmax) or NumPy would round between steps (a reduction's partial sums
// along a non-contiguous axis), float16 inputs are computed in float32 and
// rounded once at the end, as torch accumulates half in float: otherwise each
// intermediate rounding adds an error of up to 2^-11. matmul also goes
// through float32, where NumPy has BLAS. Multiplying or dividing by a scalar
// (a Python number or a 0-dim tensor of another dtype as the second operand)
// is the other case: torch's mul and div kernels read the scalar's original
// value in float, where NumPy would first round it to float16 (x * 0.1
// differs in the last bit for a third of all x). torch's add, sub and pow
// round the scalar to float16 first, as NumPy does.
namespace {
bool scalar_in_float32(Binary op, const Tensor& b, ScalarType compute) {
  return compute == ScalarType::Float16 &&
         (op == Binary::Mul || op == Binary::Div) && b.dim() == 0 &&
         b.dtype() != compute;
}
}  // namespace

Tensor binary(Binary op, const Tensor& a, const Tensor& b, ScalarType compute) {
  if (scalar_in_float32(op, b, compute)) {
    return cast(binary(op, a, b, ScalarType::Float32), compute);
  }
  Tensor fast;
  if (try_binary_loop(op, a, b, compute, nullptr, &fast)) {
    return fast;
  }
  IgnoreFpErrors quiet;
  BufferCacheScope cached(is_large(a) || is_large(b));
  Ref x(operand(a, compute));
  Ref y(operand(b, compute));
  PyObject* args[2] = {x.p, y.p};
  return wrap_array(check_broadcast(
      PyObject_Vectorcall(np_.binary[static_cast<int>(op)], args, 2, nullptr),
      {&a, &b}));
}

void binary_out(
    Binary op, const Tensor& a, const Tensor& b, const Tensor& out) {
  ScalarType compute = out.dtype();
  if (scalar_in_float32(op, b, compute)) {
    copy_into(out, binary(op, a, b, ScalarType::Float32));
    return;
  }
  if (try_binary_loop(op, a, b, compute, &out, nullptr)) {
    return;
  }
  IgnoreFpErrors quiet;
  Ref x(operand(a, compute));
  Ref y(operand(b, compute));
  PyObject* args[3] = {x.p, y.p, obj(out)};
  Py_XDECREF(check(PyObject_Vectorcall(
      np_.binary[static_cast<int>(op)], args, 2, np_.kw_out)));
}

Tensor binary_with_alpha(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    double alpha,
    ScalarType compute) {
  if (alpha == 1) {
    return binary(op, a, b, compute);
  }
  if (compute != ScalarType::Float16) {
    Tensor scaled = binary(
        Binary::Mul,
        b,
        scalar_tensor(alpha, ScalarType::Float64, true),
        compute);
    return binary(op, a, scaled, compute);
  }
  // See Note [float16 computes in float32 where torch does]: torch rounds
  // alpha to float16, then computes a + alpha * b in float.
  constexpr ScalarType f32 = ScalarType::Float32;
  double rounded = half_to_float(float_to_half(to_float(alpha)));
  Tensor scaled = binary(
      Binary::Mul,
      cast(b, f32),
      scalar_tensor(rounded, ScalarType::Float64, true),
      f32);
  return cast(binary(op, a, scaled, f32), compute);
}

Tensor unary(Unary op, const Tensor& a, ScalarType compute) {
  Tensor fast;
  if (try_unary_loop(op, a, compute, nullptr, &fast)) {
    return fast;
  }
  IgnoreFpErrors quiet;
  if (op == Unary::Sigmoid && compute == ScalarType::Float16) {
    // See Note [float16 computes in float32 where torch does].
    return cast(unary(op, a, ScalarType::Float32), compute);
  }
  BufferCacheScope cached(is_large(a));
  Ref x(operand(a, compute));
  if (op == Unary::Sigmoid) {
    // Stable form: e = exp(-|x|); sigmoid = where(x >= 0, 1, e) / (1 + e).
    Ref ax(PyObject_CallOneArg(np_.unary[static_cast<int>(Unary::Abs)], x.p));
    // 0-dim inputs give NumPy scalars; out= below needs arrays.
    Ref neg(PyObject_CallOneArg(np_.unary[static_cast<int>(Unary::Neg)], ax.p));
    Ref e(
        PyArray_FromAny(neg.p, nullptr, 0, 0, NPY_ARRAY_ENSUREARRAY, nullptr));
    PyObject* exp_args[2] = {e.p, e.p};
    Py_XDECREF(check(PyObject_Vectorcall(
        np_.unary[static_cast<int>(Unary::Exp)], exp_args, 1, np_.kw_out)));
    Ref zero(PyLong_FromLong(0));
    Ref one(PyLong_FromLong(1));
    PyObject* ge_args[2] = {x.p, zero.p};
    Ref nonneg(PyObject_Vectorcall(
        np_.binary[static_cast<int>(Binary::Ge)], ge_args, 2, nullptr));
    PyObject* where_args[3] = {nonneg.p, one.p, e.p};
    Ref where(PyObject_Vectorcall(np_.where, where_args, 3, nullptr));
    Ref num(PyArray_FromAny(
        where.p, nullptr, 0, 0, NPY_ARRAY_ENSUREARRAY, nullptr));
    PyObject* add_args[3] = {e.p, one.p, e.p};
    Py_XDECREF(
        check(PyObject_Vectorcall(np_.binary[0], add_args, 2, np_.kw_out)));
    PyObject* div_args[3] = {num.p, e.p, num.p};
    Py_XDECREF(check(PyObject_Vectorcall(
        np_.binary[static_cast<int>(Binary::Div)], div_args, 2, np_.kw_out)));
    Tensor out = wrap_array(num.release());
    if (out.dtype() != compute) {
      out = cast(out, compute);
    }
    return out;
  }
  PyObject* args[1] = {x.p};
  return wrap_array(check(
      PyObject_Vectorcall(np_.unary[static_cast<int>(op)], args, 1, nullptr)));
}

void unary_out(Unary op, const Tensor& a, const Tensor& out) {
  if (try_unary_loop(op, a, out.dtype(), &out, nullptr)) {
    return;
  }
  IgnoreFpErrors quiet;
  if (op == Unary::Sigmoid) {
    copy_into(out, unary(op, a, out.dtype()));
    return;
  }
  Ref x(operand(a, out.dtype()));
  PyObject* args[2] = {x.p, obj(out)};
  Py_XDECREF(check(PyObject_Vectorcall(
      np_.unary[static_cast<int>(op)], args, 1, np_.kw_out)));
}

Tensor clamp(
    const Tensor& a, std::optional<double> min, std::optional<double> max) {
  Tensor r;
  ScalarType dt = a.dtype();
  auto bound = [&](double v) {
    return scalar_tensor(
        v, is_floating(dt) ? ScalarType::Float64 : ScalarType::Int64, true);
  };
  r = a;
  if (min) {
    r = binary(Binary::Maximum, r, bound(*min), dt);
  }
  if (max) {
    r = binary(Binary::Minimum, r, bound(*max), dt);
  }
  if (r.is_same(a)) {
    r = cast(a, dt);
  }
  return r;
}

Tensor where(
    const Tensor& cond, const Tensor& a, const Tensor& b, ScalarType dtype) {
  IgnoreFpErrors quiet;  // casting a float into float16 may overflow to inf
  BufferCacheScope cached(is_large(cond) || is_large(a) || is_large(b));
  Ref x(operand(a, dtype));
  Ref y(operand(b, dtype));
  PyObject* args[3] = {obj(cond), x.p, y.p};
  Tensor out = wrap_array(check_broadcast(
      PyObject_Vectorcall(np_.where, args, 3, nullptr), {&cond, &a, &b}));
  return out.dtype() == dtype ? out : cast(out, dtype);
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

void fill(const Tensor& dst, double value) {
  // A contiguous destination is written directly: PyArray_FillWithScalar
  // goes through a Python number and NumPy's casting machinery, which costs
  // more than the write for the small tensors that scalars make.
  if (dst.is_contiguous() && PyArray_ISWRITEABLE(arr(dst))) {
    int64_t n = dst.numel();
    switch (dst.dtype()) {
      case ScalarType::Bool:
        return fill_contiguous<bool>(dst.data_ptr(), n, value != 0);
      case ScalarType::Int64:
        return fill_contiguous<int64_t>(
            dst.data_ptr(), n, static_cast<int64_t>(value));
      case ScalarType::Float16:
        return fill_contiguous<uint16_t>(
            dst.data_ptr(), n, float_to_half(to_float(value)));
      case ScalarType::Float32:
        return fill_contiguous<float>(dst.data_ptr(), n, to_float(value));
      case ScalarType::Float64:
        return fill_contiguous<double>(dst.data_ptr(), n, value);
    }
  }
  IgnoreFpErrors quiet;  // a float too large for float16 becomes inf
  Ref v(
      is_floating(dst.dtype())
          ? PyFloat_FromDouble(value)
          : PyLong_FromLongLong(static_cast<long long>(value)));
  if (PyArray_FillWithScalar(arr(dst), v.p) < 0) {
    throw_python_error();
  }
}

Tensor sum(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype) {
  IgnoreFpErrors quiet;
  if (dtype == ScalarType::Float16) {
    // See Note [float16 computes in float32 where torch does].
    Tensor input = a.dtype() == dtype ? a : cast(a, dtype);
    return cast(sum(input, dims, keepdim, ScalarType::Float32), dtype);
  }
  Ref axes(dims.empty() ? (Py_INCREF(Py_None), Py_None) : dims_tuple(dims));
  Ref dt(dtype_obj(dtype));
  PyObject* args[4] = {obj(a), axes.p, dt.p, keepdim ? Py_True : Py_False};
  return wrap_array(check(PyObject_Vectorcall(
      np_.add_reduce, args, 1, np_.kw_axis_dtype_keepdims)));
}

Tensor amax(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    bool is_max) {
  Ref axes(dims.empty() ? (Py_INCREF(Py_None), Py_None) : dims_tuple(dims));
  PyObject* args[3] = {obj(a), axes.p, keepdim ? Py_True : Py_False};
  return wrap_array(check(PyObject_Vectorcall(
      is_max ? np_.max_reduce : np_.min_reduce,
      args,
      1,
      np_.kw_axis_keepdims)));
}

Tensor argmax(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  Ref axis(PyLong_FromLongLong(dim));
  PyObject* args[3] = {obj(a), axis.p, keepdim ? Py_True : Py_False};
  return wrap_array(check(PyObject_Vectorcall(
      is_max ? np_.argmax : np_.argmin, args, 1, np_.kw_axis_keepdims)));
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  IgnoreFpErrors quiet;
  if (a.dtype() == ScalarType::Float16) {
    // See Note [float16 computes in float32 where torch does].
    return cast(softmax(cast(a, ScalarType::Float32), dim, log), a.dtype());
  }
  // shifted = a - max(a, dim); softmax = exp(shifted) / sum(exp(shifted));
  // log_softmax = shifted - log(sum(exp(shifted))).
  Tensor m = amax(a, {dim}, true, true);
  Tensor shifted = binary(Binary::Sub, a, m, a.dtype());
  Tensor e = unary(Unary::Exp, shifted, a.dtype());
  Tensor s = sum(e, {dim}, true, a.dtype());
  if (!log) {
    binary_out(Binary::Div, e, s, e);
    return e;
  }
  unary_out(Unary::Log, s, s);
  binary_out(Binary::Sub, shifted, s, shifted);
  return shifted;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  IgnoreFpErrors quiet;
  if (a.dtype() == ScalarType::Float16 && b.dtype() == ScalarType::Float16) {
    // See Note [float16 computes in float32 where torch does]. NumPy's own
    // float16 matmul is a scalar loop without BLAS.
    constexpr ScalarType f32 = ScalarType::Float32;
    return cast(matmul(cast(a, f32), cast(b, f32)), ScalarType::Float16);
  }
  BufferCacheScope cached(is_large(a) || is_large(b));
  PyObject* args[2] = {obj(a), obj(b)};
  return wrap_array(check(PyObject_Vectorcall(np_.matmul, args, 2, nullptr)));
}

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
  int flags = PyArray_FLAGS(arr(a)) & NPY_ARRAY_WRITEABLE;
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

bool is_exclusively_owned(const Tensor& t) {
  if (t.impl()->array.get() == nullptr) {
    return false;  // a wrapped number: nothing writes into it
  }
  PyArrayObject* a = arr(t);
  return t.impl_ptr().use_count() == 1 && Py_REFCNT(obj(t)) == 1 &&
         PyArray_BASE(a) == nullptr && (PyArray_FLAGS(a) & NPY_ARRAY_OWNDATA);
}

// Note [GIL and shared autograd state]
// The engine runs with the GIL held, so the GIL serialises npgrad's own code.
// But NumPy drops the GIL inside a large ufunc: a second thread's backward
// can then run and reach state the first is in the middle of updating (a
// leaf's .grad). That state has its own mutex; a thread must never block on
// it while holding the GIL, or the owner could wait forever for the GIL.
void lock_releasing_gil(std::mutex& m) {
  if (m.try_lock()) {
    return;
  }
  if (Py_IsInitialized() && PyGILState_Check()) {
    Py_BEGIN_ALLOW_THREADS m.lock();
    Py_END_ALLOW_THREADS
  } else {
    m.lock();
  }
}

void run_on_new_thread(const std::function<void()>& fn) {
  std::exception_ptr error;
  bool python = Py_IsInitialized() && PyGILState_Check();
  auto body = [&] {
    PyGILState_STATE gil{};
    if (python) {
      gil = PyGILState_Ensure();
    }
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    if (python) {
      PyGILState_Release(gil);
    }
  };
  // A thread that cannot be started (the process is out of threads or
  // memory) is an error of the call, raised with the GIL held again.
  std::string start_failure;
  auto start_and_join = [&] {
    try {
      std::thread(body).join();
    } catch (const std::system_error& e) {
      start_failure = e.what();
    }
  };
  if (python) {
    Py_BEGIN_ALLOW_THREADS start_and_join();
    Py_END_ALLOW_THREADS
  } else {
    start_and_join();
  }
  if (!start_failure.empty()) {
    throw Error("could not start a thread: " + start_failure);
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

bool has_nan(const Tensor& t) {
  if (!is_floating(t.dtype())) {
    return false;
  }
  PyObject* args[1] = {obj(t)};
  Ref mask(PyObject_Vectorcall(np_.isnan, args, 1, nullptr));
  PyObject* any_args[1] = {mask.p};
  Ref r(PyObject_Vectorcall(np_.any, any_args, 1, nullptr));
  return PyObject_IsTrue(r.p) == 1;
}

}  // namespace npgrad::kernels
