#pragma once
// The NumPy tier. Every computation on tensor data goes through these
// functions, which call NumPy (ufuncs with out= where it saves a temporary,
// BLAS matmul, reductions). Callers apply torch's dtype rules first; kernels
// only cast operands to the dtype they are told to compute in.
//
// Note [Storage is a NumPy array]
// A TensorImpl holds an owning reference to an ndarray whose shape and strides
// are the tensor's own (views are ndarray views made by view_as_strided), so
// `numpy()` and `from_numpy` share memory and `data_ptr()` shows aliasing as
// torch's does. The kernels take the GIL themselves when a reference count must
// change on a thread that does not hold it.

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "npgrad/tensor/tensor.h"

namespace npgrad::kernels {

/// Imports NumPy's C API; called once by the module and by the C++ tests.
void init();

void array_incref(void* obj);
void array_decref(void* obj);

/// impl's ndarray (borrowed), made first for a wrapped number that has none
/// yet (Note [Wrapped numbers have no ndarray until one is needed]).
void* materialize_array(TensorImpl& impl);

/// A Tensor over a new reference to an ndarray (the reference is stolen).
Tensor wrap_array(void* ndarray);
/// A Tensor over an ndarray owned elsewhere (a new reference is taken).
Tensor from_array(void* ndarray);

Tensor empty(const Shape& sizes, ScalarType dtype);
/// Uninitialised memory laid out with these strides (no overlap assumed).
Tensor empty_strided(
    const Shape& sizes, const Shape& strides, ScalarType dtype);
Tensor full(const Shape& sizes, double value, ScalarType dtype);
/// A 0-dim tensor; wrapped numbers are Python scalars turned into tensors.
Tensor scalar_tensor(double value, ScalarType dtype, bool wrapped_number);
double item(const Tensor& t);

// The elementwise binary ops the kernels know, each with the NumPy ufunc that
// computes it: the one list the enum and the ufunc table both come from.
#define NPGRAD_FORALL_BINARY_UFUNCS(_) \
  _(Add, "add")                        \
  _(Sub, "subtract")                   \
  _(Mul, "multiply")                   \
  _(Div, "true_divide")                \
  _(Pow, "power")                      \
  _(Maximum, "maximum")                \
  _(Minimum, "minimum")                \
  _(Eq, "equal")                       \
  _(Ne, "not_equal")                   \
  _(Lt, "less")                        \
  _(Le, "less_equal")                  \
  _(Gt, "greater")                     \
  _(Ge, "greater_equal")               \
  _(Atan2, "arctan2")                  \
  _(Hypot, "hypot")                    \
  _(Logaddexp, "logaddexp")            \
  _(LogicalAnd, "logical_and")         \
  _(LogicalOr, "logical_or")           \
  _(LogicalXor, "logical_xor")         \
  _(Fmod, "fmod")                      \
  _(Remainder, "remainder")            \
  _(Copysign, "copysign")

enum class Binary {
#define NPGRAD_BINARY_ENUM(name, ufunc) name,
  NPGRAD_FORALL_BINARY_UFUNCS(NPGRAD_BINARY_ENUM)
#undef NPGRAD_BINARY_ENUM
};
constexpr int kNumBinary = 0
#define NPGRAD_BINARY_COUNT(name, ufunc) +1
    NPGRAD_FORALL_BINARY_UFUNCS(NPGRAD_BINARY_COUNT)
#undef NPGRAD_BINARY_COUNT
    ;

/// A one-operand NumPy ufunc (`numpy.<name>`), imported once with the inner
/// loops the direct path calls. The op tables name their kernels this way, so
/// a new unary op needs no kernel code when NumPy has the ufunc.
struct UnaryUfunc;
/// The ufunc `numpy.<numpy_name>`; found on first use and kept for the life
/// of the process. Throws if NumPy has no such one-operand ufunc.
const UnaryUfunc& unary_ufunc(const char* numpy_name);

/// Elementwise with broadcasting; tensor operands are cast to compute_dtype
/// first, wrapped numbers enter as Python scalars (weak, as in torch).
Tensor binary(Binary op, const Tensor& a, const Tensor& b, ScalarType compute);
/// Writes op(a, b) into out (broadcast to out's shape).
void binary_out(Binary op, const Tensor& a, const Tensor& b, const Tensor& out);
Tensor unary(const UnaryUfunc& op, const Tensor& a, ScalarType compute);
/// a op alpha * b for op Add or Sub. A reduced float is computed in float32 and
/// rounded once, as torch's add kernel does.
Tensor binary_with_alpha(
    Binary op,
    const Tensor& a,
    const Tensor& b,
    double alpha,
    ScalarType compute);
void unary_out(const UnaryUfunc& op, const Tensor& a, const Tensor& out);
/// 1 / (1 + exp(-a)) in the stable form (no overflow for large |a|).
Tensor sigmoid(const Tensor& a, ScalarType compute);
/// f32 (float32; a reduced float computes through it and rounds once) or f64
/// (float64) applied to each element: math NumPy has no ufunc for (erf).
Tensor unary_map(
    const Tensor& a,
    ScalarType compute,
    float (*f32)(float),
    double (*f64)(double));
Tensor where(
    const Tensor& cond, const Tensor& a, const Tensor& b, ScalarType dtype);

/// A copy in dtype (contiguous, C order).
Tensor cast(const Tensor& a, ScalarType dtype);
/// dst[...] = src with broadcasting and unsafe casting.
void copy_into(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, double value);
/// For a few values (a norm's per-channel statistics): the elements of a
/// contiguous float32/float64 tensor as doubles into `out` (numel of them),
/// or its elements set from `values`, each rounded once, when the tensor is
/// also writeable. False, with nothing done, for any other tensor.
bool read_doubles(const Tensor& src, double* out);
bool write_doubles(const Tensor& dst, const double* values);

/// Sum over dims (all when empty), in dtype.
Tensor sum(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype);
/// Product over dims (all when empty), in dtype.
Tensor prod(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    ScalarType dtype);
/// Logical or (any) / and (all) over dims (all when empty): a bool tensor.
Tensor any(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    bool is_any);
/// max/min over dims (all when empty).
Tensor amax(
    const Tensor& a,
    const std::vector<int64_t>& dims,
    bool keepdim,
    bool is_max);
/// Indices of the max/min along dim, or into the flattened tensor (nullopt).
Tensor argmax(
    const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max);
Tensor softmax(const Tensor& a, int64_t dim, bool log);
/// The gradient of softmax (log_softmax when `log`) over the wrapped dim
/// from its result, lane by lane (Note [Softmax rows in one pass]): the
/// values of the whole-array passes. False when the result is not a
/// contiguous float32/float64 tensor with long enough rows or few enough
/// lanes, or grad has another dtype or shape.
bool softmax_backward_rows(
    const Tensor& grad,
    const Tensor& result,
    int64_t dim,
    bool log,
    Tensor* out);
/// Softmax over the last dim of contiguous float32/float64 scores, and each
/// row's logsumexp (shape without the last dim); a row of -inf only gets
/// zeros (lse -inf).
std::pair<Tensor, Tensor> row_softmax(const Tensor& scores);
/// exp(scores - lse) over the last dim: the probabilities again from the
/// logsumexp row_softmax gave (zeros where lse is -inf).
Tensor probs_from_lse(const Tensor& scores, const Tensor& lse);

/// Cumulative sum / product along dim, computed and returned in dtype.
Tensor cumsum(const Tensor& a, int64_t dim, ScalarType dtype);
Tensor cumprod(const Tensor& a, int64_t dim, ScalarType dtype);
/// (values, int64 indices) of a stable sort along dim (a has dim >= 1); NaN
/// sorts as the largest value.
std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending);
/// NumPy's take_along_axis: a's elements at int64 `indices` along dim.
Tensor take_along(const Tensor& a, const Tensor& indices, int64_t dim);

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor concatenate(const std::vector<Tensor>& tensors, int64_t dim);

/// A view of a's data with the given geometry; offset in elements from a's
/// first element. Shares memory; the version counter is the caller's concern.
Tensor view_as_strided(
    const Tensor& a, const Shape& sizes, const Shape& strides, int64_t offset);

/// The ndarray that holds t's memory (Note [Storage dedup of saved tensors]
/// in autograd/saved_variable_hooks.h): the end of the chain of ndarray
/// bases, which every alias of t (views, detach) shares.
struct StorageRoot {
  void* array = nullptr;  // borrowed: t keeps it alive
  int64_t offset = 0;     // t's first element, in elements from the root's
};
/// Null when the root cannot stand for t's buffer: another dtype than t's,
/// or a layout that is not dense and non-overlapping with non-negative
/// strides (so that its memory can be laid out again with its strides).
std::optional<StorageRoot> storage_root(const Tensor& t);

/// Advanced indexing: indices[d] undefined means a full slice of dim d.
Tensor index(const Tensor& a, const std::vector<Tensor>& indices);
/// a[indices] = values, or += (accumulating duplicates) when accumulate.
void index_put(
    const Tensor& a,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate);
/// numpy's ufunc.at for a binary op: a[indices] = op(a[indices], values),
/// duplicates combined in turn (scatter_reduce's kernel).
void index_reduce_at(
    const Tensor& a,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    Binary op);
/// The advanced indices that address, for every element of `index`, the
/// element of a tensor at the same position except along dim, where `index`
/// gives the position (gather's and scatter's addressing): `index` itself at
/// dim, an arange shaped to broadcast along each other dim.
std::vector<Tensor> along_dim_indices(const Tensor& index, int64_t dim);
/// The first element of the integer tensor `index` (in row-major order)
/// outside [low, high), if any.
std::optional<int64_t> first_outside(
    const Tensor& index, int64_t low, int64_t high);
/// The positions of the nonzero elements: an int64 tensor (count, a.dim()).
Tensor nonzero(const Tensor& a);

/// Note [lock_saved_tensors] (autograd/saved_tensor_lock.h): `holder` locks
/// t's storage: t's ndarray and its bases become read-only (those that were
/// writeable), until the last holder unlocks it, which restores them.
void lock_storage(const Tensor& t, const void* holder);
void unlock_storage(VersionCounter& counter, const void* holder);
/// The name of the node whose save is `holder`, for the in-place error.
void name_lock_holder(
    VersionCounter& counter, const void* holder, const std::string& name);
/// The holders' node names, oldest first ("" where not known).
std::vector<std::string> lock_holder_names(const VersionCounter& counter);
/// t's ndarray is read-only only because of a lock (GIL held): views npgrad
/// makes of it are writeable, so that they are not read-only for good.
bool made_read_only_by_lock(const Tensor& t);

/// True when t is the only owner of its data: nobody can observe an in-place
/// write into it (used to steal or accumulate gradients in place).
bool is_exclusively_owned(const Tensor& t);
/// While alive, NumPy reports no floating-point errors (0/0, overflow): torch
/// is silent about them, so npgrad's kernels are too. Nests cheaply: the
/// engine holds one for a whole backward pass.
class IgnoreFpErrors {
 public:
  IgnoreFpErrors();
  ~IgnoreFpErrors();
  IgnoreFpErrors(const IgnoreFpErrors&) = delete;
  IgnoreFpErrors& operator=(const IgnoreFpErrors&) = delete;

 private:
  void* token_ = nullptr;
};

/// Locks m without holding the GIL while waiting: NumPy releases the GIL
/// inside large ufuncs, so the thread holding m may need the GIL to finish.
/// See Note [GIL and shared autograd state] in threads.cpp.
void lock_releasing_gil(std::mutex& m);

/// Runs fn on a new thread and waits for it without holding the GIL; fn runs
/// with the GIL (a fresh Python thread state: its own C stack and Python
/// recursion depth). An exception fn throws is rethrown here.
void run_on_new_thread(const std::function<void()>& fn);

/// True if any element is NaN.
bool has_nan(const Tensor& t);

// ---- Pooling (pooling.cpp) ----

/// The windows of a 2-D pooling: for each output position along dim d (0: H,
/// 1: W), the first input position inside the input and how many positions
/// of the window, `step` apart, are inside it.
struct PoolWindows {
  std::vector<int64_t> first[2], count[2];
  int64_t step[2] = {1, 1};
};
/// Max over each window of the last two dims of a 3-D or 4-D tensor: (values,
/// int64 flat H * W index of each maximum; NaN wins, the first maximum is
/// kept). `name` is torch's kernel name for the dtype error.
std::pair<Tensor, Tensor> max_pool2d(
    const Tensor& a, const PoolWindows& windows, const char* name);
/// Sum over each window divided by divisors[i * OW + j] (integer division
/// for integer tensors); empty windows give 0.
Tensor avg_pool2d(
    const Tensor& a,
    const PoolWindows& windows,
    const std::vector<int64_t>& divisors,
    const char* name);
/// The gradient of avg_pool2d: each grad element shared over its window.
Tensor avg_pool2d_backward(
    const Tensor& grad,
    const Shape& self_sizes,
    const PoolWindows& windows,
    const std::vector<int64_t>& divisors);
/// Zeros of self_sizes plus each grad element at its flat H * W index of its
/// plane (max pooling's gradient).
Tensor scatter_to_planes(
    const Tensor& grad, const Tensor& indices, const Shape& self_sizes);
// ---- Sliding windows (conv.cpp) ----
/// Every window of x (N, C, *spatial) zero-padded by `padding`: a contiguous
/// (N, C * prod(kernel), prod(windows)) tensor, channel-major then kernel
/// position, one column per window (torch's im2col layout); `batch_inner`:
/// (C * prod(kernel), N * prod(windows)), the columns of every sample side
/// by side (one matmul for the whole batch).
Tensor im2col(
    const Tensor& x,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows,
    bool batch_inner = false);
/// The adjoint of im2col: columns (N, channels * prod(kernel),
/// prod(windows)) summed into their windows of a zero (N, channels, *output)
/// tensor (padding cropped off); contiguous.
Tensor col2im(
    const Tensor& columns,
    int64_t channels,
    const Shape& output,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows);

}  // namespace npgrad::kernels
