// Elementwise ops through the ufuncs' own inner loops, skipping NumPy's
// dispatch for operands that are ready for them.
#include "npgrad/kernels/internal.h"

#include <algorithm>
#include <cstring>
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
InnerLoop binary_loops_[kNumBinary][kLoopDtypes];
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

}  // namespace

int loop_slot_type(int slot) {
  return slot == 0 ? NPY_FLOAT32 : NPY_FLOAT64;
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

void init_inner_loops() {
  for (int slot = 0; slot < kLoopDtypes; ++slot) {
    for (int i = 0; i < kNumBinary; ++i) {
      binary_loops_[i][slot] =
          find_inner_loop(np_.binary[i], loop_slot_type(slot));
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

// Which operand of a binary op is one value per row, broadcast along the
// last dim of the other: 1 for b (..., N) op (..., 1), 0 for a, -1 neither.
// Same leading sizes, N of at least kMinRow (below it, a call per row costs
// more than NumPy's own broadcasting).
constexpr int64_t kMinRow = 16;

int row_operand(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || a.dim() != b.dim()) {
    return -1;
  }
  const Shape& x = a.sizes();
  const Shape& y = b.sizes();
  if (!std::equal(x.begin(), x.end() - 1, y.begin())) {
    return -1;
  }
  if (y.back() == 1 && x.back() >= kMinRow) {
    return 1;
  }
  if (x.back() == 1 && y.back() >= kMinRow) {
    return 0;
  }
  return -1;
}

// Note [Row broadcasts call the inner loop per row]
// x (..., N) op r (..., 1), as softmax, the normalizations and their
// gradients do: NumPy's iterator buffers such an operand, copying each row's
// value N times into a buffer before the loop reads it (a fifth of a
// log_softmax's time at 512x1000). One inner-loop call per row with a step
// of 0 for the row's value does the same arithmetic in place.
bool try_row_loop(
    const InnerLoop& loop,
    const Tensor& a,
    const Tensor& b,
    ScalarType compute,
    const Tensor* out,
    Tensor* result) {
  int row = row_operand(a, b);
  if (row < 0) {
    return false;
  }
  const Tensor& full = row == 1 ? a : b;
  const Tensor& rows = row == 1 ? b : a;
  LoopOperand x, r;
  if (full.impl()->is_wrapped_number || rows.impl()->is_wrapped_number ||
      !loop_operand(full, compute, false, x) ||
      !loop_operand(rows, compute, false, r)) {
    return false;
  }
  const Shape& shape = full.sizes();
  Tensor dst;
  npy_intp total = full.numel();
  if (out != nullptr) {
    if (out->sizes() != shape || out->dtype() != compute ||
        npy_type(compute) != loop.out_type ||
        !loop_ready_array(*out, compute) || !PyArray_ISWRITEABLE(arr(*out))) {
      return false;
    }
    const char* o = static_cast<const char*>(out->data_ptr());
    npy_intp bytes = total * static_cast<npy_intp>(element_size(compute));
    bool row_overlaps =
        r.data < o + bytes && o < r.data + rows.numel() * r.step;
    if (overlaps_partially(*out, x, total) || row_overlaps) {
      return false;
    }
    dst = *out;
  } else {
    dst = new_loop_output(shape, loop.out_type);
  }
  npy_intp n = shape.back();
  npy_intp m = n > 0 ? total / n : 0;
  npy_intp es = static_cast<npy_intp>(element_size(compute));
  npy_intp os = static_cast<npy_intp>(element_size(dst.dtype()));
  npy_intp steps[3] = {es, 0, os};
  if (row == 0) {
    steps[0] = 0;
    steps[1] = es;
  }
  char* po = static_cast<char*>(dst.data_ptr());
  auto run_rows = [&] {
    for (npy_intp i = 0; i < m; ++i) {
      char* pf = x.data + i * n * es;
      char* pr = r.data + i * es;
      char* args[3] = {row == 1 ? pf : pr, row == 1 ? pr : pf, po + i * n * os};
      npy_intp count = n;
      loop.fn(args, &count, steps, loop.data);
    }
  };
  if (total > kReleaseGilAbove) {
    Py_BEGIN_ALLOW_THREADS run_rows();
    Py_END_ALLOW_THREADS
  } else {
    run_rows();
  }
  if (result != nullptr) {
    *result = std::move(dst);
  }
  return true;
}

}  // namespace

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
  if (loop.fn == nullptr) {
    return false;
  }
  const Shape* shape = loop_shape(a, b);
  if (shape == nullptr) {
    return try_row_loop(loop, a, b, compute, out, result);
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
    const UnaryUfunc& op,
    const Tensor& a,
    ScalarType compute,
    const Tensor* out,
    Tensor* result) {
  int slot = loop_slot(compute);
  if (slot < 0) {
    return false;
  }
  const InnerLoop& loop = op.loops[slot];
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

bool try_sum_loop(const Tensor& a, ScalarType dtype, Tensor* result) {
  // NumPy's add.reduce over a whole contiguous array of at most one buffer
  // (8192 elements, so NumPy makes one call too) starts from add's identity
  // and calls the add loop once in its reduce form: out = 0, then
  // out += pairwise_sum(a). The same call here, without the reduce method's
  // argument parsing and iterator.
  constexpr int64_t kOneBuffer = 8192;
  int slot = loop_slot(dtype);
  if (slot < 0 || a.impl()->is_wrapped_number || a.numel() > kOneBuffer ||
      !loop_ready_array(a, dtype)) {
    return false;
  }
  const InnerLoop& loop = binary_loops_[static_cast<int>(Binary::Add)][slot];
  if (loop.fn == nullptr || loop.out_type != npy_type(dtype)) {
    return false;
  }
  Tensor out = new_loop_output({}, loop.out_type);
  char* o = static_cast<char*>(out.data_ptr());
  if (slot == 0) {
    *reinterpret_cast<float*>(o) = 0.0F;
  } else {
    *reinterpret_cast<double*>(o) = 0.0;
  }
  char* args[3] = {o, static_cast<char*>(a.data_ptr()), o};
  npy_intp steps[3] = {0, static_cast<npy_intp>(element_size(dtype)), 0};
  run_loop(loop, args, a.numel(), steps);
  *result = std::move(out);
  return true;
}

bool try_last_dim_reduce_loop(
    Binary op,
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype,
    Tensor* result) {
  // Along the last dim of a small contiguous array, NumPy's reduce calls the
  // op's loop once per row in its reduce form: add from its identity 0,
  // maximum/minimum (no identity) from the row's first element over the
  // rest. The same calls here, without the reduce method's parsing and
  // iterator.
  constexpr int64_t kOneBuffer = 8192;
  int slot = loop_slot(dtype);
  bool from_first = op == Binary::Maximum || op == Binary::Minimum;
  if (slot < 0 || (op != Binary::Add && !from_first) || a.dim() == 0 ||
      dims.size() != 1 || dims[0] != a.dim() - 1 ||
      a.impl()->is_wrapped_number || a.numel() > kOneBuffer || a.numel() == 0 ||
      !loop_ready_array(a, dtype)) {
    return false;
  }
  const InnerLoop& loop = binary_loops_[static_cast<int>(op)][slot];
  if (loop.fn == nullptr || loop.out_type != npy_type(dtype)) {
    return false;
  }
  Shape out_sizes = a.sizes();
  int64_t n = out_sizes.back();
  if (keepdim) {
    out_sizes.back() = 1;
  } else {
    out_sizes.pop_back();
  }
  Tensor out = new_loop_output(out_sizes, loop.out_type);
  auto size = static_cast<npy_intp>(element_size(dtype));
  char* o = static_cast<char*>(out.data_ptr());
  char* in = static_cast<char*>(a.data_ptr());
  int64_t rows = a.numel() / n;
  npy_intp steps[3] = {0, size, 0};
  for (int64_t r = 0; r < rows; ++r) {
    char* row = in + r * n * size;
    char* dst = o + r * size;
    if (from_first) {
      std::memcpy(dst, row, static_cast<std::size_t>(size));
      char* args[3] = {dst, row + size, dst};
      run_loop(loop, args, n - 1, steps);
    } else {
      std::memset(dst, 0, static_cast<std::size_t>(size));  // +0.0
      char* args[3] = {dst, row, dst};
      run_loop(loop, args, n, steps);
    }
  }
  *result = std::move(out);
  return true;
}

}  // namespace npgrad::kernels
