// native_layer_norm, native_group_norm, native_batch_norm and embedding:
// torch's checks, the forward loops, the recorded nodes.
#include "npgrad/ops/normalization.h"

#include <cmath>
#include <initializer_list>
#include <utility>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/normalization_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/kernels/normalization.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

// The dtype the loops run in: float64 stays, float32 and the reduced floats
// compute in float32 (torch's CPU kernels accumulate them in float32).
ScalarType loop_dtype(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

// t as a contiguous buffer of dtype (t itself when it is one already).
Tensor dense(const Tensor& t, ScalarType dtype) {
  if (!t.defined() || (t.dtype() == dtype && t.is_contiguous())) {
    return t;
  }
  return kernels::cast(t, dtype);
}

Tensor from_loop_dtype(const Tensor& t, ScalarType dtype) {
  return t.dtype() == dtype ? t : kernels::cast(t, dtype);
}

void check_floating(const Tensor& input, const char* kernel) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(input.dtype()),
      "\"",
      kernel,
      "\" not implemented for '",
      scalar_type_name(input.dtype()),
      "'");
}

// torch's CPU norm kernels take parameters (weight, bias, running
// statistics) of the input's dtype, or float32 ones with a float16/bfloat16
// input ("mixed" when the first defined parameter's dtype is not the
// input's).
void check_parameter_dtypes(
    const Tensor& input, std::initializer_list<const Tensor*> params) {
  const Tensor* first = nullptr;
  for (const Tensor* p : params) {
    if (p->defined()) {
      first = p;
      break;
    }
  }
  if (first == nullptr) {
    return;
  }
  if (first->dtype() != input.dtype()) {
    for (const Tensor* p : params) {
      NPGRAD_CHECK(
          !p->defined() || p->dtype() == ScalarType::Float32,
          "mixed dtype (CPU): expect parameter to have scalar type of Float");
    }
    NPGRAD_CHECK(
        is_reduced_float(input.dtype()),
        "mixed dtype (CPU): all inputs must share same datatype.");
    return;
  }
  for (const Tensor* p : params) {
    NPGRAD_CHECK(
        !p->defined() || p->dtype() == input.dtype(),
        "expected scalar type ",
        scalar_type_name(input.dtype()),
        " but found ",
        scalar_type_name(p->dtype()));
  }
}

Shape shape_of_vector(const std::vector<double>& v) {
  return Shape{static_cast<int64_t>(v.size())};
}

Tensor tensor_from(const std::vector<double>& v, ScalarType dtype) {
  if (Tensor direct = kernels::empty(shape_of_vector(v), dtype);
      kernels::write_doubles(direct, v.data())) {
    return direct;  // float32/float64: no second array
  }
  Tensor t = kernels::empty(shape_of_vector(v), ScalarType::Float64);
  auto* p = static_cast<double*>(t.data_ptr());
  for (std::size_t i = 0; i < v.size(); ++i) {
    p[i] = v[i];
  }
  return from_loop_dtype(t, dtype);
}

std::vector<double> values_of(const Tensor& t) {
  if (std::vector<double> direct(t.numel());
      kernels::read_doubles(t, direct.data())) {
    return direct;
  }
  Tensor d = dense(t, ScalarType::Float64);
  const auto* p = static_cast<const double*>(d.data_ptr());
  return std::vector<double>(p, p + d.numel());
}

// What the channel-wise backward loops (batch and group norm) take and
// write: the weight per channel (1 without one), and the gradient buffers
// in the loop dtype, each only when output_mask asks for it.
struct ChannelGrads {
  ChannelGrads(
      const Tensor& input,
      const Tensor& weight,
      int64_t C,
      std::array<bool, 3> output_mask)
      : w(weight.defined() ? values_of(weight) : std::vector<double>(C, 1.0)) {
    ScalarType dt = loop_dtype(input.dtype());
    dx = output_mask[0] ? kernels::empty(input.sizes(), dt) : Tensor();
    dw = output_mask[1] ? kernels::empty(Shape{C}, dt) : Tensor();
    db = output_mask[2] ? kernels::empty(Shape{C}, dt) : Tensor();
  }
  /// The gradients in dtype (a reduced float rounded once).
  std::tuple<Tensor, Tensor, Tensor> rounded(ScalarType dtype) const {
    auto round = [dtype](const Tensor& t) {
      return t.defined() ? from_loop_dtype(t, dtype) : t;
    };
    return {round(dx), round(dw), round(db)};
  }
  std::vector<double> w;
  Tensor dx, dw, db;
};

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(
    const Tensor& input,
    const Shape& normalized_shape,
    const Tensor& weight,
    const Tensor& bias,
    double eps) {
  auto nd = static_cast<int64_t>(normalized_shape.size());
  NPGRAD_CHECK(
      nd >= 1,
      "Expected normalized_shape to be at least 1-dimensional, i.e., "
      "containing at least one element, but got normalized_shape = ",
      shape_str(normalized_shape));
  NPGRAD_CHECK(
      !weight.defined() || weight.sizes() == normalized_shape,
      "Expected weight to be of same shape as normalized_shape, but got "
      "weight of shape ",
      shape_str(weight.defined() ? weight.sizes() : Shape{}),
      " and normalized_shape = ",
      shape_str(normalized_shape));
  NPGRAD_CHECK(
      !bias.defined() || bias.sizes() == normalized_shape,
      "Expected bias to be of same shape as normalized_shape, but got "
      "bias of shape ",
      shape_str(bias.defined() ? bias.sizes() : Shape{}),
      " and normalized_shape = ",
      shape_str(normalized_shape));
  int64_t axis = input.dim() - nd;
  bool fits = axis >= 0;
  for (int64_t i = 0; fits && i < nd; ++i) {
    fits = input.sizes()[axis + i] == normalized_shape[i];
  }
  if (!fits) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) {
      expected += ", " + std::to_string(s);
    }
    NPGRAD_CHECK(
        false,
        "Given normalized_shape=",
        shape_str(normalized_shape),
        ", expected input with shape ",
        expected,
        "], but got input of size",
        shape_str(input.sizes()));
  }
  check_floating(input, "LayerNormKernelImpl");
  check_parameter_dtypes(input, {&weight, &bias});
  ScalarType dt = loop_dtype(input.dtype());
  int64_t M = 1;
  int64_t N = 1;
  Shape stat_shape;
  for (int64_t i = 0; i < input.dim(); ++i) {
    (i < axis ? M : N) *= input.sizes()[i];
    stat_shape.push_back(i < axis ? input.sizes()[i] : 1);
  }
  Tensor x = dense(input, dt);
  Tensor out = kernels::empty(input.sizes(), dt);
  Tensor mean = kernels::empty(stat_shape, dt);
  Tensor rstd = kernels::empty(stat_shape, dt);
  kernels::layer_norm_forward(
      x, M, N, eps, dense(weight, dt), dense(bias, dt), mean, rstd, out);
  out = from_loop_dtype(out, input.dtype());
  mean = from_loop_dtype(mean, input.dtype());
  rstd = from_loop_dtype(rstd, input.dtype());
  if (auto node =
          record<NativeLayerNormBackward0>(out, {&input, &weight, &bias})) {
    node->normalized_shape = normalized_shape;
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
    node->bias_ = SavedVariable(bias, false);
    node->result1_ = SavedVariable(mean, false);
    node->result2_ = SavedVariable(rstd, false);
  }
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    double eps) {
  NPGRAD_CHECK(
      input.dim() >= 2,
      "Expected at least 2 dimensions for input tensor but received ",
      input.dim());
  NPGRAD_CHECK(
      group > 0 && C % group == 0,
      "Expected number of channels in input to be divisible by num_groups, "
      "but got input of shape ",
      shape_str(input.sizes()),
      " and num_groups=",
      group);
  for (const auto* t : {&weight, &bias}) {
    NPGRAD_CHECK(
        !t->defined() || (t->dim() == 1 && t->numel() == C),
        "Expected ",
        t == &weight ? "weight" : "bias",
        " to be a vector of size equal to the number of channels in input, "
        "but got ",
        t == &weight ? "weight" : "bias",
        " of shape ",
        shape_str(t->defined() ? t->sizes() : Shape{}),
        " and input of shape ",
        shape_str(input.sizes()));
  }
  check_floating(input, "GroupNormKernelImpl");
  check_parameter_dtypes(input, {&weight, &bias});
  ScalarType dt = loop_dtype(input.dtype());
  Tensor x = dense(input, dt);
  int64_t rows = N * group;
  int64_t per_row = (C / group) * HxW;
  Tensor mean = kernels::empty(Shape{N, group}, dt);
  Tensor rstd = kernels::empty(Shape{N, group}, dt);
  kernels::row_moments(x, rows, per_row, eps, mean, rstd);
  // Per (n, c): out = (x - mean) * scale + b[c], scale = rstd * w[c].
  std::vector<double> mu = values_of(mean);
  std::vector<double> rs = values_of(rstd);
  std::vector<double> w =
      weight.defined() ? values_of(weight) : std::vector<double>(C, 1.0);
  std::vector<double> b =
      bias.defined() ? values_of(bias) : std::vector<double>(C, 0.0);
  std::vector<double> center(N * C), scale(N * C), shift(N * C);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      auto g = static_cast<std::size_t>(n * group + c / (C / group));
      auto k = static_cast<std::size_t>(n * C + c);
      center[k] = mu[g];
      scale[k] = rs[g] * w[c];
      shift[k] = b[c];
    }
  }
  Tensor out = kernels::empty(input.sizes(), dt);
  kernels::channel_affine(x, N, C, HxW, center, scale, shift, out);
  out = from_loop_dtype(out, input.dtype());
  mean = from_loop_dtype(mean, input.dtype());
  rstd = from_loop_dtype(rstd, input.dtype());
  if (auto node =
          record<NativeGroupNormBackward0>(out, {&input, &weight, &bias})) {
    node->N = N;
    node->C = C;
    node->HxW = HxW;
    node->group = group;
    node->eps = eps;
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
    node->result1_ = SavedVariable(mean, false);
    node->result2_ = SavedVariable(rstd, false);
  }
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_values(
    const Tensor& grad_out,
    const Tensor& input,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    std::array<bool, 3> output_mask) {
  ScalarType dt = loop_dtype(input.dtype());
  ChannelGrads grads(input, weight, C, output_mask);
  kernels::group_norm_backward(
      dense(grad_out, dt),
      dense(input, dt),
      N,
      C,
      HxW,
      group,
      values_of(mean),
      values_of(rstd),
      grads.w,
      grads.dx,
      grads.dw,
      grads.db);
  return grads.rounded(input.dtype());
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const Tensor& running_mean,
    const Tensor& running_var,
    bool training,
    double momentum,
    double eps) {
  NPGRAD_CHECK(
      input.dim() >= 2,
      "Expected at least 2 dimensions for input tensor but received ",
      input.dim());
  int64_t N = input.sizes()[0];
  int64_t C = input.sizes()[1];
  int64_t HxW = C > 0 && N > 0 ? input.numel() / (N * C) : 0;
  // torch's order: each running statistic (its size, or its absence in
  // evaluation mode), then the affine parameters.
  auto check_size = [C](const char* name, const Tensor& t) {
    NPGRAD_CHECK(
        t.numel() == C,
        name,
        " should contain ",
        C,
        " elements not ",
        t.numel());
  };
  for (const auto& [name, t] :
       {std::pair<const char*, const Tensor*>{"running_mean", &running_mean},
        {"running_var", &running_var}}) {
    NPGRAD_CHECK(
        training || t->defined(), name, " must be defined in evaluation mode");
    if (t->defined()) {
      check_size(name, *t);
    }
  }
  for (const auto& [name, t] :
       {std::pair<const char*, const Tensor*>{"weight", &weight},
        {"bias", &bias}}) {
    if (t->defined()) {
      check_size(name, *t);
    }
  }
  check_floating(input, "batch_norm");
  check_parameter_dtypes(input, {&weight, &bias, &running_mean, &running_var});
  ScalarType dt = loop_dtype(input.dtype());
  Tensor x = dense(input, dt);
  std::vector<double> mean, var;
  if (training) {
    kernels::channel_moments(x, N, C, HxW, mean, var);
  } else {
    mean = values_of(running_mean);
    var = values_of(running_var);
  }
  std::vector<double> invstd(C);
  for (int64_t c = 0; c < C; ++c) {
    invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  }
  std::vector<double> w =
      weight.defined() ? values_of(weight) : std::vector<double>(C, 1.0);
  std::vector<double> b =
      bias.defined() ? values_of(bias) : std::vector<double>(C, 0.0);
  std::vector<double> scale(C);
  for (int64_t c = 0; c < C; ++c) {
    scale[c] = invstd[c] * w[c];
  }
  Tensor out = kernels::empty(input.sizes(), dt);
  kernels::channel_affine(x, N, C, HxW, mean, scale, b, out);
  out = from_loop_dtype(out, input.dtype());
  Tensor save_mean, save_invstd;
  if (training) {
    save_mean = tensor_from(mean, input.dtype());
    save_invstd = tensor_from(invstd, input.dtype());
    double count = static_cast<double>(N * HxW);
    double unbias = count > 1 ? count / (count - 1) : 1.0;
    if (running_mean.defined()) {
      std::vector<double> rm = values_of(running_mean);
      for (int64_t c = 0; c < C; ++c) {
        rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
      }
      if (!kernels::write_doubles(running_mean, rm.data())) {
        kernels::copy_into(running_mean, tensor_from(rm, running_mean.dtype()));
      }
    }
    if (running_var.defined()) {
      std::vector<double> rv = values_of(running_var);
      for (int64_t c = 0; c < C; ++c) {
        rv[c] = (1 - momentum) * rv[c] + momentum * var[c] * unbias;
      }
      if (!kernels::write_doubles(running_var, rv.data())) {
        kernels::copy_into(running_var, tensor_from(rv, running_var.dtype()));
      }
    }
  } else {
    save_mean = kernels::empty(Shape{0}, input.dtype());
    save_invstd = kernels::empty(Shape{0}, input.dtype());
  }
  if (auto node =
          record<NativeBatchNormBackward0>(out, {&input, &weight, &bias})) {
    node->eps = eps;
    node->training = training;
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
    node->running_mean_ = SavedVariable(running_mean, false);
    node->running_var_ = SavedVariable(running_var, false);
    node->result1_ = SavedVariable(save_mean, false);
    node->result2_ = SavedVariable(save_invstd, false);
  }
  return {out, save_mean, save_invstd};
}

namespace {

// node as the grad_fn of each defined gradient; an undefined one keeps its
// output slot (torch's backward ops return all three).
void set_histories(
    const std::shared_ptr<Node>& node,
    const std::tuple<Tensor, Tensor, Tensor>& grads) {
  for (const Tensor* t :
       {&std::get<0>(grads), &std::get<1>(grads), &std::get<2>(grads)}) {
    if (t->defined()) {
      set_history(*t, node);
    } else {
      node->add_input_metadata_undefined();
    }
  }
}

Tensor to_input_dtype(const Tensor& t, ScalarType dtype) {
  return t.defined() ? from_loop_dtype(t, dtype) : t;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out,
    const Tensor& input,
    const Shape& normalized_shape,
    const Tensor& mean,
    const Tensor& rstd,
    const Tensor& weight,
    const Tensor& bias,
    std::array<bool, 3> output_mask) {
  // One pass of the loop kernel over the rows, in the loop dtype (a reduced
  // float in float32, rounded once).
  ScalarType dt = loop_dtype(input.dtype());
  int64_t N = 1;
  for (int64_t s : normalized_shape) {
    N *= s;
  }
  int64_t M = N > 0 ? input.numel() / N : 0;
  auto buffer = [&](bool needed, const Shape& sizes) {
    return needed ? kernels::empty(sizes, dt) : Tensor();
  };
  Tensor dx = buffer(output_mask[0], input.sizes());
  Tensor dw = buffer(output_mask[1], normalized_shape);
  Tensor db = buffer(output_mask[2], normalized_shape);
  kernels::layer_norm_backward(
      dense(grad_out, dt),
      dense(input, dt),
      M,
      N,
      dense(mean, dt),
      dense(rstd, dt),
      dense(weight, dt),
      dx,
      dw,
      db);
  std::tuple<Tensor, Tensor, Tensor> grads{
      to_input_dtype(dx, input.dtype()),
      to_input_dtype(dw, input.dtype()),
      to_input_dtype(db, input.dtype())};
  if (compute_requires_grad(
          {&grad_out, &input, &mean, &rstd, &weight, &bias})) {
    auto node = make_node<NativeLayerNormBackwardBackward0>();
    node->set_next_edges(
        collect_next_edges({&grad_out, &input, &mean, &rstd, &weight, &bias}));
    set_histories(node, grads);
    node->normalized_shape = normalized_shape;
    node->grad_out_ = SavedVariable(grad_out, false);
    node->input_ = SavedVariable(input, false);
    node->mean_ = SavedVariable(mean, false);
    node->rstd_ = SavedVariable(rstd, false);
    node->weight_ = SavedVariable(weight, false);
  }
  return grads;
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out,
    const Tensor& input,
    const Tensor& weight,
    const Tensor& running_mean,
    const Tensor& running_var,
    const Tensor& save_mean,
    const Tensor& save_invstd,
    bool train,
    double eps,
    std::array<bool, 3> output_mask) {
  // One loop per channel in the loop dtype (a reduced float in float32,
  // rounded once).
  ScalarType dt = loop_dtype(input.dtype());
  int64_t N = input.sizes()[0];
  int64_t C = input.sizes()[1];
  int64_t HxW = C > 0 && N > 0 ? input.numel() / (N * C) : 0;
  std::vector<double> mean = values_of(train ? save_mean : running_mean);
  std::vector<double> invstd;
  if (train) {
    invstd = values_of(save_invstd);
  } else {
    for (double v : values_of(running_var)) {
      invstd.push_back(1.0 / std::sqrt(v + eps));
    }
  }
  ChannelGrads buffers(input, weight, C, output_mask);
  kernels::batch_norm_backward(
      dense(grad_out, dt),
      dense(input, dt),
      N,
      C,
      HxW,
      mean,
      invstd,
      buffers.w,
      train,
      buffers.dx,
      buffers.dw,
      buffers.db);
  std::tuple<Tensor, Tensor, Tensor> grads = buffers.rounded(input.dtype());
  if (compute_requires_grad(
          {&grad_out, &input, &weight, &save_mean, &save_invstd})) {
    auto node = make_node<NativeBatchNormBackwardBackward0>();
    node->set_next_edges(collect_next_edges(
        {&grad_out, &input, &weight, &save_mean, &save_invstd}));
    set_histories(node, grads);
    node->eps = eps;
    node->train = train;
    node->grad_out_ = SavedVariable(grad_out, false);
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
    node->running_mean_ = SavedVariable(running_mean, false);
    node->running_var_ = SavedVariable(running_var, false);
    node->save_mean_ = SavedVariable(save_mean, false);
    node->save_invstd_ = SavedVariable(save_invstd, false);
  }
  return grads;
}

Tensor add_scalar(const Tensor& self, double other) {
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = add(self, wrapped_scalar(other, ScalarType::Float64));
  }
  record<AddBackward1>(out, {&self});
  return out;
}

Tensor sub_scalar(const Tensor& self, double other) {
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = sub(self, wrapped_scalar(other, ScalarType::Float64));
  }
  record<SubBackward1>(out, {&self});
  return out;
}

Tensor embedding(
    const Tensor& weight,
    const Tensor& indices,
    int64_t padding_idx,
    bool scale_grad_by_freq) {
  NPGRAD_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  NPGRAD_CHECK(
      indices.dtype() == ScalarType::Int64 ||
          indices.dtype() == ScalarType::Int32,
      "Expected tensor for argument #1 'indices' to have one of the following "
      "scalar types: Long, Int; but got ",
      type_string(indices.dtype()),
      " instead (while checking arguments for embedding)");
  int64_t V = weight.sizes()[0];
  NPGRAD_CHECK_INDEX(
      !kernels::first_outside(indices, 0, V), "index out of range in self");
  Tensor flat = dense(indices, ScalarType::Int64);
  flat = kernels::view_as_strided(flat, Shape{flat.numel()}, Shape{1}, 0);
  Tensor rows = kernels::index(weight, {flat});
  Shape out_shape = indices.sizes();
  out_shape.push_back(weight.sizes()[1]);
  Tensor out = kernels::view_as_strided(
      rows, out_shape, contiguous_strides(out_shape), 0);
  if (auto node = record<EmbeddingBackward0>(out, {&weight})) {
    node->indices_ = SavedVariable(indices, false);
    node->padding_idx = padding_idx;
    node->scale_grad_by_freq = scale_grad_by_freq;
    node->num_weights = V;
    node->weight_dtype = weight.dtype();
  }
  return out;
}

}  // namespace npgrad::ops
