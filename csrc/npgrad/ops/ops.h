#pragma once
// Forward ops. Each computes through a kernel, then, if grad mode is on and an
// input requires grad, records its backward node, in the same function.
// Backward formulas are written with these same ops, so with create_graph they
// record a graph themselves (higher-order gradients).

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

// ---- Helpers ----
/// A Python number as a 0-dim "wrapped number" tensor.
Tensor wrapped_scalar(double value, ScalarType dtype);
bool is_expandable_to(const Shape& shape, const Shape& desired);
/// Sums t down to `shape` (the reduction of a broadcast gradient).
Tensor sum_to(const Tensor& t, const Shape& shape);
/// Differentiable dtype conversion (ToCopyBackward0); t itself when equal.
Tensor to_dtype(const Tensor& t, ScalarType dtype);
Tensor zeros(const Shape& sizes, ScalarType dtype);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
/// The result dtype of sum, prod, cumsum and cumprod: `dtype` when given,
/// else int64 for integer and bool tensors, else a's.
ScalarType sum_dtype(const Tensor& a, std::optional<ScalarType> dtype);
/// dims wrapped into [0, ndim), with torch's error for a repeated one (none
/// for a 0-dim tensor, which any dim 0 or -1 reduces to itself).
std::vector<int64_t> wrap_dims(std::vector<int64_t> dims, int64_t ndim);
/// torch's result_type over two operands.
ScalarType result_type(const Tensor& a, const Tensor& b);
/// masked_fill's checks: a bool mask, a 0-dim value.
void check_masked_fill(const Tensor& mask, const Tensor& value);
/// nan_to_num's values, no graph.
Tensor nan_to_num_values(
    const Tensor& a,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf);

// ---- Pointwise ----
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1);
/// b - alpha * a, for a Python number b (torch's rsub(Tensor, Scalar)).
Tensor rsub(const Tensor& a, double b, double alpha = 1);
/// The same with b as a wrapped number, whose kind (bool, int or float)
/// takes part in type promotion: 1 - int_tensor stays integral.
Tensor rsub(const Tensor& a, const Tensor& b, double alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor pow(double base, const Tensor& exponent);
/// torch's square: pow(a, 2) with an integer 2 (PowBackward0; integer and
/// bool tensors give int64).
Tensor square(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor clamp(
    const Tensor& a, std::optional<double> min, std::optional<double> max);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// self with `value` (a 0-dim tensor; a wrapped number for a Python number)
/// where the bool `mask` is true, broadcast together: MaskedFillBackward0
/// for a number, MaskedFillBackward1 (the value gets a gradient) for a tensor.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
/// NaN, +inf and -inf replaced (defaults: 0, the dtype's largest and lowest
/// finite values); integer and bool tensors are copied (NanToNumBackward0).
Tensor nan_to_num(
    const Tensor& a,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf);
/// |a - b| <= atol + rtol * |b| (and a == b, NaN == NaN with equal_nan): a
/// bool tensor, no graph.
Tensor isclose(
    const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
bool allclose(
    const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan);
/// Same sizes and equal values (NaN is not equal to itself).
bool equal(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);
// Comparisons and logical ops: bool tensors, not differentiable.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);
/// torch's tanh_backward and sigmoid_backward: the gradients of tanh and
/// sigmoid from their output, ops of their own (TanhBackwardBackward0, ...).
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);

// ---- Reductions ----
/// How many elements of a tensor of `sizes` each output element of a
/// reduction over dims (all when empty; negative ones allowed) reduces.
double reduced_numel(const Shape& sizes, const std::vector<int64_t>& dims);
Tensor sum(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(
    const Tensor& a,
    std::vector<int64_t> dims,
    bool keepdim,
    std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, std::vector<int64_t> dims, bool keepdim);
/// Full max/min (MaxBackward1 / MinBackward1).
Tensor max(const Tensor& a, bool is_max = true);
/// (values, indices) along dim (MaxBackward0 / MinBackward0).
std::pair<Tensor, Tensor> max(
    const Tensor& a, int64_t dim, bool keepdim, bool is_max = true);
Tensor softmax(const Tensor& a, int64_t dim);
Tensor log_softmax(const Tensor& a, int64_t dim);
/// torch's _softmax_backward_data / _log_softmax_backward_data: softmax's
/// and log_softmax's gradients from their output, ops of their own
/// (SoftmaxBackwardDataBackward0, ...) so that a double backward records
/// torch's nodes. The result has input_dtype.
Tensor _softmax_backward_data(
    const Tensor& grad_output,
    const Tensor& output,
    int64_t dim,
    ScalarType input_dtype);
Tensor _log_softmax_backward_data(
    const Tensor& grad_output,
    const Tensor& output,
    int64_t dim,
    ScalarType input_dtype);
/// amax/amin over dims, all when empty (AmaxBackward0 / AminBackward0).
Tensor amax(
    const Tensor& a, std::vector<int64_t> dims, bool keepdim, bool is_max);
/// argmax/argmin along dim, of the flattened tensor when nullopt: int64, no
/// graph.
Tensor argmax(
    const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max);
/// any/all over dims (all when nullopt; none when empty): bool, no graph.
Tensor any(
    const Tensor& a,
    std::optional<std::vector<int64_t>> dims,
    bool keepdim,
    bool is_any);
/// The arguments of var_mean and std_mean as torch saves them: dims
/// nullopt (all) or as given, correction nullopt when neither `correction`
/// nor `unbiased` nor a dim was given (it then counts as 1).
struct VarArgs {
  std::optional<std::vector<int64_t>> dims;
  std::optional<double> correction;
  bool keepdim = false;
};
/// (var or std, mean) (VarMeanBackward0 / StdMeanBackward0), with the
/// reduction table's var/std and mean kernels.
std::pair<Tensor, Tensor> var_mean(
    const Tensor& a, const VarArgs& args, bool take_sqrt);
Tensor logsumexp(const Tensor& a, std::vector<int64_t> dims, bool keepdim);

// ---- Scans, sorting and selection along a dim ----
// Dims are saved as given; results keep torch's dtypes (int64 indices, int64
// scans of integer and bool tensors).
Tensor cumsum(
    const Tensor& a,
    int64_t dim,
    std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(
    const Tensor& a,
    int64_t dim,
    std::optional<ScalarType> dtype = std::nullopt);
void cumsum_(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype);
void cumprod_(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype);
/// A stable sort (NaN largest): SortBackward0, or SortBackward1 when
/// `stable` was given (torch's sort.stable overload).
std::pair<Tensor, Tensor> sort(
    const Tensor& a, int64_t dim, bool descending, std::optional<bool> stable);
/// The indices of sort, no graph.
Tensor argsort(const Tensor& a, int64_t dim, bool descending, bool stable);
/// The k largest (smallest) along dim, in sorted order (TopkBackward0).
std::pair<Tensor, Tensor> topk(
    const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted);
/// The lower median of all elements, NaN if there is one (MedianBackward0).
Tensor median(const Tensor& a);
/// (values, indices) of the lower median along dim (MedianBackward1).
std::pair<Tensor, Tensor> median(const Tensor& a, int64_t dim, bool keepdim);
/// (values, indices) of the k-th smallest along dim (KthvalueBackward0).
std::pair<Tensor, Tensor> kthvalue(
    const Tensor& a, int64_t k, int64_t dim, bool keepdim);

// ---- Views (share data and version counter; _base is the root base) ----
// view, expand, t, transpose, permute, squeeze, unsqueeze, select, diagonal
// and unfold are the view table's (view_ops.h).
Tensor view(const Tensor& a, Shape sizes);
Tensor reshape(const Tensor& a, Shape sizes);
Tensor expand(const Tensor& a, Shape sizes);
Tensor t(const Tensor& a);
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& a, std::vector<int64_t> dims);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a, std::vector<int64_t> dims);
/// split (SplitBackward0), split_with_sizes (SplitWithSizesBackward0), chunk
/// (a split, as torch records it) and unbind (UnbindBackward0): views that
/// share one node and may not be written in place.
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim);
std::vector<Tensor> split_with_sizes(
    const Tensor& a, const std::vector<int64_t>& split_sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim);
std::vector<Tensor> unbind(const Tensor& a, int64_t dim);
/// The lengths of split(split_size) of a dim of `size` elements.
std::vector<int64_t> split_lengths(int64_t size, int64_t split_size);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor slice(
    const Tensor& a,
    int64_t dim,
    std::optional<int64_t> start,
    std::optional<int64_t> end,
    int64_t step);
Tensor alias(const Tensor& a);
/// A view of a's data with any geometry; offset in elements from a's data.
Tensor as_strided(const Tensor& a, Shape sizes, Shape strides, int64_t offset);
/// torch's _unsafe_view: a's data in new sizes, recorded as
/// UnsafeViewBackward0 and not a view for autograd (a is private to the
/// caller: a fresh result or copy).
Tensor unsafe_view(const Tensor& a, Shape sizes);
/// transpose_ (and its aliases swapdims_, swapaxes_): the view table's
/// in-place view arm (Note [In-place view ops], view_family.h).
void transpose_(const Tensor& self, int64_t dim0, int64_t dim1);
/// matmul's in-place squeeze of a 1-D operand's helper dim (SqueezeBackward4).
Tensor squeeze_matmul_dim(const Tensor& a, int64_t dim);

/// A slice of `length` elements from `start` (negative: from the end).
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
/// The diagonal of dims dim1 and dim2 (above the main one for a positive
/// offset) as the last dim.
Tensor diagonal(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2);
/// Windows of `size` elements every `step` along `dimension`, as a last dim.
Tensor unfold(const Tensor& a, int64_t dimension, int64_t size, int64_t step);
/// The dims `source` moved to the positions `destination` (a permute).
Tensor movedim(
    const Tensor& a,
    const std::vector<int64_t>& source,
    const std::vector<int64_t>& destination);
/// Dims start_dim..end_dim merged into one: a view when the layout allows
/// (reshape); a itself when there is nothing to merge.
Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim);
/// Dim `dim` split into `sizes` (one may be -1): a view.
Tensor unflatten(const Tensor& a, int64_t dim, const Shape& sizes);

// ---- Copies ----
Tensor clone(const Tensor& a);
Tensor contiguous(const Tensor& a);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);
/// Advanced indexing; indices[d] undefined = full slice of dim d.
Tensor index(const Tensor& a, const std::vector<Tensor>& indices);
/// torch's error for an index tensor of a dtype that cannot index.
void check_index_tensors(const std::vector<Tensor>& indices);
/// torch's out-of-bounds error for the first bad value of an integer index
/// of a[indices] ("dimension" counts the index tensors, as torch's index
/// kernel does).
void check_index_bounds(const Tensor& a, const std::vector<Tensor>& indices);

// ---- Indexing by index tensors and masks (indexing.cpp) ----
// The ops that write into self take `inplace`: false writes into a copy of
// self and returns it, true writes into self through the mutation path and
// returns self (Note [Ops that write into self]). dim is saved as given.
Tensor gather(
    const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad);
/// src a tensor (ScatterBackward0) or a wrapped number (ScatterBackward1).
Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    bool inplace);
/// torch's deprecated scatter(dim, index, src|value, reduce=): reduce "add"
/// or "multiply" combines each value into its place; records torch's
/// NotImplemented node (a backward through it raises).
Tensor scatter(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const std::string& reduce,
    bool inplace);
/// reduce one of sum, prod, mean, amax, amin (ScatterReduceBackward0).
Tensor scatter_reduce(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    const std::string& reduce,
    bool include_self,
    bool inplace);
Tensor scatter_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& src,
    bool inplace);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor index_add(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    double alpha,
    bool inplace);
Tensor index_copy(
    const Tensor& self,
    int64_t dim,
    const Tensor& index,
    const Tensor& source,
    bool inplace);
/// The elements of self where the bool mask (broadcast together) is true.
Tensor masked_select(const Tensor& self, const Tensor& mask);
/// source's first elements, in order, written where the mask is true.
Tensor masked_scatter(
    const Tensor& self, const Tensor& mask, const Tensor& source, bool inplace);
/// torch's composite: gather of the broadcast operands (ExpandBackward0
/// below GatherBackward0), or of the flattened ones without a dim.
Tensor take_along_dim(
    const Tensor& self, const Tensor& indices, std::optional<int64_t> dim);
/// The positions of the nonzero elements, (count, dim) int64; no graph.
Tensor nonzero(const Tensor& self);
/// nonzero as one int64 tensor per dim (a 0-dim self counts as 1-dim).
std::vector<Tensor> nonzero_tuple(const Tensor& self);
/// torch's index_put: values of self's dtype (or a wrapped number).
Tensor index_put(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate,
    bool inplace);

/// Copies of `a` rearranged: flip (FlipBackward0), roll (RollBackward0; no
/// dims: of the flattened tensor), repeat (RepeatBackward0) and tile (repeat
/// with `dims` padded with leading ones).
Tensor flip(const Tensor& a, const std::vector<int64_t>& dims);
Tensor roll(
    const Tensor& a,
    const std::vector<int64_t>& shifts,
    const std::vector<int64_t>& dims);
Tensor repeat(const Tensor& a, const std::vector<int64_t>& repeats);
Tensor tile(const Tensor& a, std::vector<int64_t> dims);
/// Each element repeated along dim (of the flattened tensor when nullopt):
/// torch's composite of unsqueeze, expand, clone and flatten.
Tensor repeat_interleave(
    const Tensor& a,
    int64_t repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size);
/// Element i repeated repeats[i] times: an index_select (IndexSelectBackward0).
Tensor repeat_interleave(
    const Tensor& a,
    const Tensor& repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size);
/// torch.repeat_interleave(repeats): i repeated repeats[i] times (int64).
Tensor repeat_interleave_index(const Tensor& repeats);
/// The upper (triu) or lower (tril) triangle of the last two dims, the rest
/// zero; `diagonal` shifts the border above (positive) or below the main one.
Tensor triu(const Tensor& a, int64_t diagonal);
Tensor tril(const Tensor& a, int64_t diagonal);
/// Zeros with the last dim of `a` written on the diagonal of dims dim1, dim2.
Tensor diag_embed(const Tensor& a, int64_t offset, int64_t dim1, int64_t dim2);
/// A vector on a diagonal (diag_embed), or a matrix's diagonal (a copy:
/// DiagonalBackward0_copy).
Tensor diag(const Tensor& a, int64_t diagonal);

// ---- Linear algebra ----
// The matrix product table's ops (linalg_ops.h) that other ops and formulas
// call.
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& mat, const Tensor& vec);
/// torch's outer (and its alias ger): a.reshape(-1, 1) * b.
Tensor outer(const Tensor& a, const Tensor& b);
/// torch's tensordot: the dims_a of a contracted with the dims_b of b (a
/// permute and reshape of each, then mm).
Tensor tensordot(
    const Tensor& a,
    const Tensor& b,
    const std::vector<int64_t>& dims_a,
    const std::vector<int64_t>& dims_b);
/// torch's einsum: the operands contracted as the equation says, pairwise
/// left to right (or in the order `path` gives, opt_einsum's format).
Tensor einsum(
    const std::string& equation,
    const std::vector<Tensor>& operands,
    const std::optional<std::vector<int64_t>>& path = std::nullopt);
/// torch's kron: the Kronecker product (a broadcast mul between unsafe views).
Tensor kron(const Tensor& a, const Tensor& b);
/// torch's matmul: dot, mv, mm, a fold into mm/mv, or broadcast batches into
/// bmm, through the views torch's _matmul_impl records.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- Backward helpers, differentiable themselves ----
Tensor select_backward(
    const Tensor& grad, const Shape& sizes, int64_t dim, int64_t index);
Tensor slice_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t dim,
    int64_t start,
    int64_t end,
    int64_t step);
/// Zeros of `sizes` with grad on the diagonal (DiagonalBackwardBackward0).
Tensor diagonal_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t offset,
    int64_t dim1,
    int64_t dim2);
/// Zeros of `sizes` with each window of grad added where unfold took it
/// (UnfoldBackwardBackward0).
Tensor unfold_backward(
    const Tensor& grad,
    const Shape& sizes,
    int64_t dim,
    int64_t size,
    int64_t step);
Tensor index_backward(
    const Tensor& grad, const Shape& sizes, const std::vector<Tensor>& indices);
/// torch's sgn (sign for real tensors), differentiable (SgnBackward0: zero
/// gradient): abs's backward is grad * sgn(self).
Tensor sgn(const Tensor& a);
/// grad where self > threshold, else 0 (ThresholdBackwardBackward0): relu's
/// backward, so that a double backward reaches grad and self.
Tensor threshold_backward(
    const Tensor& grad, const Tensor& self, double threshold);
/// torch's embedding_dense_backward: the (num_weights, D) weight gradient
/// of embedding, each row of grad (indices' shape + (D,)) summed into the
/// row its index names (none for padding_idx; divided by the index's count
/// with scale_grad_by_freq). Records EmbeddingDenseBackwardBackward0 when
/// grad requires grad, so a double backward reaches it.
Tensor embedding_dense_backward(
    const Tensor& grad,
    const Tensor& indices,
    int64_t num_weights,
    int64_t padding_idx,
    bool scale_grad_by_freq);
/// Zeros laid out like (sizes, strides) with grad written at the view
/// (view_sizes, view_strides, offset): the backward of as_strided.
Tensor as_strided_backward(
    const Tensor& grad,
    const Shape& sizes,
    const Shape& strides,
    const Shape& view_sizes,
    const Shape& view_strides,
    int64_t offset);

// ---- In-place (See Note [The mutation path] in inplace.cpp) ----
/// zero_() (ZeroBackward0). The table ops' in-place forms are
/// unary_<Op> (unary_family.h) and binary_<Op> (binary_family.h).
void zero_(const Tensor& self);
void fill_(const Tensor& self, double value);
/// torch's check on a Python number converted to `dtype` (c10's
/// checked_convert: clamp's number bounds): a finite value beyond the
/// dtype's range is an error.
void check_number_fits(double value, ScalarType dtype);
/// check_number_fits for a number written into `numel` elements of `dtype`
/// (fill_, full), but for torch's one-element float16 fill, unchecked.
void check_fill_value(double value, ScalarType dtype, int64_t numel);
/// fill_ with a 0-dim tensor (FillBackward3: the value gets grad.sum()).
void fill_(const Tensor& self, const Tensor& value);
void copy_(const Tensor& self, const Tensor& src);
/// The random fills (normal_, uniform_, ...): writes `values` (drawn by the
/// caller, of self's shape) into self under torch's zero-gradient node
/// `node_name`; `p` (undefined for most) is bernoulli_'s probability tensor.
void random_fill_(
    const Tensor& self,
    const Tensor& values,
    const std::string& node_name,
    const Tensor& p);
/// A random op's result (drawn by the caller) recorded under torch's
/// zero-gradient node `node_name` when an input requires grad; the node
/// shows input i's sizes as `size_attributes[i]`.
Tensor record_random(
    const Tensor& result,
    const std::string& node_name,
    const std::vector<Tensor>& inputs,
    const std::vector<std::string>& size_attributes);
/// A result of an op whose derivative torch does not implement, recorded
/// under torch's NotImplemented node (`forward_name`: "aten::bernoulli")
/// when an input requires grad.
Tensor record_not_implemented(
    const Tensor& result,
    const std::string& forward_name,
    const std::vector<Tensor>& inputs);
/// triu_ (upper) or tril_.
void triu_(const Tensor& self, int64_t diagonal, bool upper);
void clamp_(
    const Tensor& self, std::optional<double> min, std::optional<double> max);
/// masked_fill in place: the mask broadcasts to self's shape.
void masked_fill_(const Tensor& self, const Tensor& mask, const Tensor& value);
/// pow_ with a Python number (a wrapped number: PowBackward0, as square_) or
/// a tensor exponent (PowBackward1).
void pow_(const Tensor& self, const Tensor& exponent);
/// sgn_: SgnBackward0, saving the original self and the result.
void sgn_(const Tensor& self);
void nan_to_num_(
    const Tensor& self,
    std::optional<double> nan,
    std::optional<double> posinf,
    std::optional<double> neginf);
/// self[indices] = value (advanced indexing's __setitem__; value of any
/// dtype, converted to self's).
void index_put_(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& value);

/// Called with the tensor an in-place op is about to write, before the write
/// (allow_mutation_on_saved_tensors clones saved originals there). Per thread;
/// an empty function removes it.
using InplaceObserver = std::function<void(const Tensor&)>;
void set_inplace_observer(InplaceObserver observer);
InplaceObserver get_inplace_observer();

// ---- Pooling (pooling.cpp) ----
// Over the last two dims of a 3-D or 4-D tensor, with torch's checks and
// errors. The backward ops are torch's too (max_pool2d_with_indices_backward,
// ...): a double backward records their nodes.

/// max_pool2d's and avg_pool2d's arguments as the caller gave them (one int
/// or two for each list; stride empty when omitted).
struct Pool2dArgs {
  Shape kernel_size, stride, padding, dilation{1};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor_override;
};
/// (values, int64 flat H * W indices) (MaxPool2DWithIndicesBackward0).
std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& a, const Pool2dArgs& args);
/// The gradient of max_pool2d_with_indices with respect to self
/// (MaxPool2DWithIndicesBackwardBackward0).
Tensor max_pool2d_with_indices_backward(
    const Tensor& grad,
    const Tensor& self,
    const Pool2dArgs& args,
    const Tensor& indices);
/// AvgPool2DBackward0.
Tensor avg_pool2d(const Tensor& a, const Pool2dArgs& args);
/// AvgPool2DBackwardBackward0.
Tensor avg_pool2d_backward(
    const Tensor& grad, const Tensor& self, const Pool2dArgs& args);
/// AdaptiveAvgPool2DBackward0; an output size of (1, 1) is a mean over the
/// last two dims (MeanBackward1), as torch computes it.
Tensor adaptive_avg_pool2d(const Tensor& a, const Shape& output_size);
/// AdaptiveAvgPool2DBackwardBackward0.
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& self);
/// (values, int64 flat H * W indices) (AdaptiveMaxPool2DBackward0).
std::pair<Tensor, Tensor> adaptive_max_pool2d(
    const Tensor& a, const Shape& output_size);
/// AdaptiveMaxPool2DBackwardBackward0.
Tensor adaptive_max_pool2d_backward(
    const Tensor& grad, const Tensor& self, const Tensor& indices);
/// `pad` = (before, after) pairs from the last dim backwards, each added
/// (negative: cropped) and filled with value (ConstantPadNdBackward0).
Tensor constant_pad_nd(const Tensor& a, const Shape& pad, double value);

// ---- Upsampling (upsample.cpp) ----
// torch's upsample_nearest{1,2}d, _upsample_nearest_exact{1,2}d,
// upsample_linear1d and upsample_bilinear2d over the last one or two dims of
// an (N, C, ...) tensor: each output element reads input elements at indices
// (and, for linear modes, with weights) precomputed per axis as torch's CPU
// kernels compute them. The backward ops are torch's too: a double backward
// records their nodes (Upsample*BackwardBackward0).

enum class UpsampleMode { Nearest, NearestExact, Linear };

/// The arguments of one upsample op as torch's nodes show them.
struct UpsampleArgs {
  UpsampleMode mode = UpsampleMode::Nearest;
  Shape output_size;                          // one size per spatial dim
  std::vector<std::optional<double>> scales;  // one per spatial dim
  bool align_corners = false;                 // linear modes only
};
/// torch's compute_output_size: output_size as given, or each spatial size
/// times its scale factor (floored); the args the node keeps.
UpsampleArgs upsample_args(
    const Tensor& input,
    UpsampleMode mode,
    const std::optional<Shape>& output_size,
    const std::optional<std::vector<double>>& scale_factors,
    bool align_corners);
/// Upsample{Nearest,NearestExact,Linear,Bilinear}{1D,2D}Backward0.
Tensor upsample(const Tensor& input, const UpsampleArgs& args);
/// The gradient of upsample with respect to its input of sizes input_size
/// (Upsample*BackwardBackward0).
Tensor upsample_backward(
    const Tensor& grad, const UpsampleArgs& args, const Shape& input_size);

// ---- embedding_bag (embedding_bag.cpp) ----

/// torch.embedding_bag: (output, offset2bag, bag_size, max_indices), with
/// torch's checks; mode 0 sum, 1 mean, 2 max; padding_idx -1 for none; an
/// undefined per_sample_weights for none (EmbeddingBagBackward0).
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(
    const Tensor& weight,
    const Tensor& indices,
    const Tensor& offsets,
    bool scale_grad_by_freq,
    int64_t mode,
    const Tensor& per_sample_weights,
    bool include_last_offset,
    int64_t padding_idx);
/// What the gradients of embedding_bag read from the forward.
struct EmbeddingBagSaved {
  Tensor indices, offsets, bag_size, max_indices;
  int64_t mode = 0;
  int64_t padding_idx = -1;
};
/// The gradient with respect to weight (EmbeddingBagBackwardBackward0).
Tensor embedding_bag_backward(
    const Tensor& grad,
    const EmbeddingBagSaved& saved,
    const Tensor& per_sample_weights,
    int64_t num_weights,
    ScalarType weight_dtype,
    bool scale_grad_by_freq);
/// The gradient with respect to per_sample_weights (mode sum): each
/// sample's row of weight dotted with its bag's gradient (torch's
/// NotImplemented node).
Tensor embedding_bag_per_sample_weights_backward(
    const Tensor& grad, const Tensor& weight, const EmbeddingBagSaved& saved);

}  // namespace npgrad::ops
