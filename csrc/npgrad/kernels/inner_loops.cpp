// Elementwise ops through the ufuncs' own inner loops, skipping NumPy's
// dispatch for operands that are ready for them.
#include "npgrad/kernels/internal.h"

#include <algorithm>
#include <string>

#include "npgrad/kernels/float16.h"

namespace npgrad::kernels {
namespace {

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
// By op and compute dtype; a null fn (every dtype but float32 and float64)
// means no direct loop.
InnerLoop binary_loops_[13][kNumScalarTypes];
InnerLoop unary_loops_[9][kNumScalarTypes];
constexpr npy_intp kReleaseGilAbove = 500;  // NumPy's own threshold

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

}  // namespace

void init_inner_loops() {
  for (ScalarType dtype : {ScalarType::Float32, ScalarType::Float64}) {
    int slot = static_cast<int>(dtype);
    for (int i = 0; i < 13; ++i) {
      binary_loops_[i][slot] = find_inner_loop(np_.binary[i], npy_type(dtype));
    }
    for (int i = 0; i < 9; ++i) {
      unary_loops_[i][slot] = find_inner_loop(np_.unary[i], npy_type(dtype));
    }
  }
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

}  // namespace

bool try_binary_loop(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    ScalarType compute,
    const Tensor* out,
    Tensor* result) {
  const InnerLoop& loop =
      binary_loops_[static_cast<int>(op)][static_cast<int>(compute)];
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
  if (op == Unary::Sigmoid) {
    return false;
  }
  const InnerLoop& loop =
      unary_loops_[static_cast<int>(op)][static_cast<int>(compute)];
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

}  // namespace npgrad::kernels
