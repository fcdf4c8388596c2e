// The convolutions and their sliding-window halves. A convolution is im2col
// (the input's windows as columns) then one matmul per group; a transposed
// convolution is the adjoint: one matmul per group then col2im. Its gradients
// (convolution_backward) are the same two halves written with ops. Two kinds
// of convolution skip the halves: small ones run direct loops (Note [Small
// convolutions in direct loops]) and float32 ones of stride 1 GEMMs that never
// store the columns (Note [Convolutions as GEMMs]), forward and backward.
#include "npgrad/ops/conv.h"

#include <numeric>
#include <sstream>

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/conv_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/conv_direct.h"
#include "npgrad/kernels/conv_gemm.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/ops/unary_ops.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;

namespace {

int64_t product(const Shape& s) {
  return std::accumulate(
      s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

// "(5 x 5)": torch's spelling of sizes per channel.
std::string per_channel(const Shape& s) {
  std::ostringstream out;
  out << "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    out << (i ? " x " : "") << s[i];
  }
  out << ")";
  return out.str();
}

Shape spatial(const Tensor& t) {
  return Shape(t.sizes().begin() + 2, t.sizes().end());
}

// torch takes a one-element list for every spatial dim.
Shape expand_param(const char* name, const Shape& v, std::size_t nd) {
  if (v.size() == 1) {
    return Shape(nd, v[0]);
  }
  NPGRAD_CHECK(
      v.size() == nd,
      "expected ",
      name,
      " to be a single integer value or a list of ",
      nd,
      " values to match the convolution dimensions, but got ",
      name,
      "=",
      shape_str(v));
  return v;
}

bool any_of(const Shape& v, bool (*pred)(int64_t)) {
  return std::any_of(v.begin(), v.end(), pred);
}

// torch runs 1-d convolutions as 2-d ones of height 1, and some messages
// show that height.
Shape as_2d(const Shape& v, int64_t height) {
  if (v.size() != 1) {
    return v;
  }
  return {height, v[0]};
}

// Windows along each spatial dim of an input of `sizes` (N, C, *spatial).
Shape window_counts(
    const Shape& sizes,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride) {
  Shape out(kernel.size());
  for (std::size_t d = 0; d < kernel.size(); ++d) {
    out[d] =
        (sizes[2 + d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) /
            stride[d] +
        1;
  }
  return out;
}

// torch's checks of convolution's arguments, in its order.
void check_convolution(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const ConvArgs& a) {
  int64_t k = weight.dim();
  const Shape& ws = weight.sizes();
  NPGRAD_CHECK(
      !any_of(a.padding, [](int64_t v) { return v < 0; }),
      "negative padding is not supported");
  NPGRAD_CHECK(
      !any_of(a.output_padding, [](int64_t v) { return v < 0; }),
      "negative output_padding is not supported");
  NPGRAD_CHECK(
      !any_of(a.stride, [](int64_t v) { return v <= 0; }),
      "non-positive stride is not supported");
  NPGRAD_CHECK(
      !any_of(a.dilation, [](int64_t v) { return v <= 0; }),
      "dilation should be greater than zero, but got ",
      shape_str(as_2d(a.dilation, 1)));
  NPGRAD_CHECK(a.groups > 0, "non-positive groups is not supported");
  NPGRAD_CHECK(
      input.dtype() == weight.dtype(),
      "expected scalar type ",
      scalar_type_name(input.dtype()),
      " but found ",
      scalar_type_name(weight.dtype()));
  NPGRAD_CHECK(
      !bias.defined() || bias.dtype() == input.dtype(),
      "Input type (",
      type_meta_name(input.dtype()),
      ") and bias type (",
      type_meta_name(bias.dtype()),
      ") should be the same");
  NPGRAD_CHECK(
      input.dim() == k,
      "Expected ",
      k,
      "-dimensional input for ",
      k,
      "-dimensional weight ",
      shape_str(ws),
      ", but got ",
      input.dim(),
      "-dimensional input of size ",
      shape_str(input.sizes()),
      " instead");
  NPGRAD_CHECK(
      ws[0] >= a.groups,
      "Given groups=",
      a.groups,
      ", expected weight to be at least ",
      a.groups,
      " at dimension 0, but got weight of size ",
      shape_str(ws),
      " instead");
  NPGRAD_CHECK(
      ws[0] % a.groups == 0,
      "Given groups=",
      a.groups,
      ", expected weight to be divisible by ",
      a.groups,
      " at dimension 0, but got weight of size [",
      shape_str(ws),
      "] instead");
  int64_t channels = input.sizes()[1];
  Shape kernel(ws.begin() + 2, ws.end());
  if (!a.transposed) {
    NPGRAD_CHECK(
        channels == ws[1] * a.groups,
        "Given groups=",
        a.groups,
        ", weight of size ",
        shape_str(ws),
        ", expected input",
        shape_str(input.sizes()),
        " to have ",
        ws[1] * a.groups,
        " channels, but got ",
        channels,
        " channels instead");
    NPGRAD_CHECK(
        !bias.defined() || (bias.dim() == 1 && bias.sizes()[0] == ws[0]),
        "Given weight of size ",
        shape_str(ws),
        ", expected bias to be 1-dimensional with ",
        ws[0],
        " elements, but got bias of size ",
        shape_str(bias.defined() ? bias.sizes() : Shape{}),
        " instead");
    Shape padded(kernel.size()), dilated(kernel.size());
    bool fits = true;
    for (std::size_t d = 0; d < kernel.size(); ++d) {
      padded[d] = input.sizes()[2 + d] + 2 * a.padding[d];
      dilated[d] = a.dilation[d] * (kernel[d] - 1) + 1;
      fits = fits && dilated[d] <= padded[d];
    }
    NPGRAD_CHECK(
        fits,
        "Calculated padded input size per channel: ",
        per_channel(padded),
        ". Kernel size: ",
        per_channel(dilated),
        ". Kernel size can't be greater than actual input size");
    return;
  }
  NPGRAD_CHECK(
      channels == ws[0],
      "Given transposed=1, weight of size ",
      shape_str(ws),
      ", expected input",
      shape_str(input.sizes()),
      " to have ",
      ws[0],
      " channels, but got ",
      channels,
      " channels instead");
  NPGRAD_CHECK(
      !bias.defined() ||
          (bias.dim() == 1 && bias.sizes()[0] == ws[1] * a.groups),
      "Given transposed=1, weight of size ",
      shape_str(ws),
      ", expected bias to be 1-dimensional with ",
      ws[1] * a.groups,
      " elements, but got bias of size ",
      shape_str(bias.defined() ? bias.sizes() : Shape{}),
      " instead");
  Shape in = spatial(input), out(kernel.size());
  bool positive = true;
  for (std::size_t d = 0; d < kernel.size(); ++d) {
    out[d] = (in[d] - 1) * a.stride[d] - 2 * a.padding[d] +
             a.dilation[d] * (kernel[d] - 1) + a.output_padding[d] + 1;
    positive = positive && out[d] > 0;
  }
  NPGRAD_CHECK(
      positive,
      "Given input size per channel: ",
      per_channel(as_2d(in, 1)),
      ". Calculated output size per channel: ",
      per_channel(as_2d(out, 1)),
      ". Output size is too small");
  bool small = true;
  for (std::size_t d = 0; d < kernel.size(); ++d) {
    small = small && (a.output_padding[d] < a.stride[d] ||
                      a.output_padding[d] < a.dilation[d]);
  }
  if (!small) {
    Shape op = as_2d(a.output_padding, 0), st = as_2d(a.stride, 1),
          dl = as_2d(a.dilation, 1);
    NPGRAD_CHECK(
        false,
        "output padding must be smaller than either stride or dilation, but "
        "got output_padding_height: ",
        op[0],
        " output_padding_width: ",
        op[1],
        " stride_height: ",
        st[0],
        " stride_width: ",
        st[1],
        " dilation_height: ",
        dl[0],
        " dilation_width: ",
        dl[1]);
  }
}

// A transposed convolution's output sizes from its input's spatial sizes.
Shape transposed_output(
    const Shape& in, const Shape& kernel, const ConvArgs& a) {
  Shape output(kernel.size());
  for (std::size_t d = 0; d < kernel.size(); ++d) {
    output[d] = (in[d] - 1) * a.stride[d] - 2 * a.padding[d] +
                a.dilation[d] * (kernel[d] - 1) + a.output_padding[d] + 1;
  }
  return output;
}

// t as a contiguous 4-d tensor of dtype: a 1-d convolution's operands get a
// height of 1 (Note [Small convolutions in direct loops]).
Tensor as_grid(const Tensor& t, ScalarType dtype) {
  Tensor c =
      t.dtype() == dtype && t.is_contiguous() ? t : kernels::cast(t, dtype);
  if (c.dim() == 4) {
    return c;
  }
  Shape sizes = c.sizes();
  sizes.insert(sizes.begin() + 2, 1);
  return kernels::view_as_strided(c, sizes, contiguous_strides(sizes), 0);
}

kernels::ConvWindows windows_2d(const ConvArgs& a) {
  Shape st = as_2d(a.stride, 1);
  Shape pad = as_2d(a.padding, 0);
  Shape dil = as_2d(a.dilation, 1);
  return {{st[0], st[1]}, {pad[0], pad[1]}, {dil[0], dil[1]}, a.groups};
}

bool direct_dtype(ScalarType dtype) {
  return dtype == ScalarType::Float32 || dtype == ScalarType::Float64;
}

// The convolution (without bias) by the direct loops when it is small
// enough (Note [Small convolutions in direct loops]), else by the GEMM passes
// where they apply (Note [Convolutions as GEMMs]), else undefined.
Tensor grid_convolution(
    const Tensor& input, const Tensor& weight, const ConvArgs& a) {
  const Shape& ws = weight.sizes();
  Shape kernel(ws.begin() + 2, ws.end());
  if (kernel.size() > 2 || !direct_dtype(input.dtype()) || input.numel() == 0 ||
      weight.numel() == 0) {
    return Tensor();
  }
  ScalarType dtype = input.dtype();
  Shape out_spatial =
      a.transposed
          ? transposed_output(spatial(input), kernel, a)
          : window_counts(
                input.sizes(), kernel, a.dilation, a.padding, a.stride);
  Shape small = a.transposed ? input.sizes() : Shape{input.sizes()[0], ws[0]};
  if (!a.transposed) {
    small.insert(small.end(), out_spatial.begin(), out_spatial.end());
  }
  Shape small_4d = small;
  if (small_4d.size() == 3) {
    small_4d.insert(small_4d.begin() + 2, 1);
  }
  Shape w_4d = ws.size() == 3 ? Shape{ws[0], ws[1], 1, ws[2]} : ws;
  kernels::ConvWindows windows = windows_2d(a);
  bool direct =
      kernels::direct_conv_work(small_4d, w_4d) <= kernels::kDirectConvWork;
  if (!direct &&
      !kernels::conv_gemm_applies(dtype, windows, w_4d[2], w_4d[3])) {
    return Tensor();
  }
  Tensor x = as_grid(input, dtype);
  Tensor w = as_grid(weight, dtype);
  Shape out_2d = as_2d(out_spatial, 1);
  auto scatter = direct ? &kernels::conv_scatter : &kernels::conv_gemm_scatter;
  auto gather = direct ? &kernels::conv_gather : &kernels::conv_gemm_gather;
  Tensor out = a.transposed ? scatter(x, w, windows, out_2d[0], out_2d[1])
                            : gather(x, w, windows, out_2d[0], out_2d[1]);
  if (kernel.size() == 2) {
    return out;
  }
  Shape sizes = {out.sizes()[0], out.sizes()[1], out_spatial[0]};
  return kernels::view_as_strided(out, sizes, contiguous_strides(sizes), 0);
}

// The convolution's value (no graph). A reduced float computes in float32 and
// rounds once, as torch's CPU kernels accumulate in float.
Tensor convolution_values(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const ConvArgs& a) {
  ScalarType dtype = input.dtype();
  if (is_reduced_float(dtype)) {
    constexpr ScalarType f32 = ScalarType::Float32;
    Tensor b = bias.defined() ? kernels::cast(bias, f32) : bias;
    Tensor out = convolution_values(
        kernels::cast(input, f32), kernels::cast(weight, f32), b, a);
    return kernels::cast(out, dtype);
  }
  const Shape& ws = weight.sizes();
  Shape kernel(ws.begin() + 2, ws.end());
  int64_t n = input.sizes()[0];
  int64_t g = a.groups;
  int64_t kernel_numel = product(kernel);
  // The weight as (groups, rows, cols) matrices, contiguous.
  Tensor w = kernels::cast(weight, dtype);
  Tensor out;
  int64_t out_channels = a.transposed ? ws[1] * g : ws[0];
  if (Tensor grid = grid_convolution(input, w, a); grid.defined()) {
    out = grid;
  } else if (!a.transposed) {
    int64_t per_group = ws[1] * kernel_numel;
    Shape windows =
        window_counts(input.sizes(), kernel, a.dilation, a.padding, a.stride);
    int64_t count = product(windows);
    // (C * K, N * L) columns, read as (N, g, C * K / g, L): one matmul per
    // sample and group, whose (N, g, out / g, L) result is the output's
    // (N, out, *windows) layout already.
    Tensor columns = kernels::im2col(
        input, kernel, a.dilation, a.padding, a.stride, windows, true);
    Tensor cols = kernels::view_as_strided(
        columns,
        {n, g, per_group, count},
        {count, per_group * n * count, n * count, 1},
        0);
    Tensor mats = kernels::view_as_strided(
        w,
        {1, g, out_channels / g, per_group},
        {0, out_channels / g * per_group, per_group, 1},
        0);
    Tensor product_ = kernels::matmul(mats, cols);
    if (!product_.is_contiguous()) {
      // NumPy's matmul may lay a broadcast product out in its operands'
      // order; the output is (N, out, *windows) in C order.
      product_ = kernels::cast(product_, dtype);
    }
    Shape out_sizes = {n, out_channels};
    out_sizes.insert(out_sizes.end(), windows.begin(), windows.end());
    Shape out_strides(out_sizes.size());
    int64_t step = 1;
    for (std::size_t i = out_sizes.size(); i-- > 0;) {
      out_strides[i] = step;
      step *= out_sizes[i];
    }
    out = kernels::view_as_strided(product_, out_sizes, out_strides, 0);
  } else {
    int64_t in_per_group = ws[0] / g;
    int64_t rows = ws[1] * kernel_numel;
    Shape in = spatial(input);
    int64_t count = product(in);
    Tensor x = kernels::cast(input, dtype);
    Tensor xs = kernels::view_as_strided(
        x,
        {n, g, in_per_group, count},
        {g * in_per_group * count, in_per_group * count, count, 1},
        0);
    // weight (C, out / g, *kernel) as (g, rows, C / g): transposed views.
    Tensor mats = kernels::view_as_strided(
        w, {g, rows, in_per_group}, {in_per_group * rows, 1, rows}, 0);
    Tensor columns = kernels::matmul(mats, xs);
    Tensor cols = kernels::view_as_strided(
        columns,
        {n, out_channels * kernel_numel, count},
        {out_channels * kernel_numel * count, count, 1},
        0);
    Shape output = transposed_output(in, kernel, a);
    out = kernels::col2im(
        cols,
        out_channels,
        output,
        kernel,
        a.dilation,
        a.padding,
        a.stride,
        in);
  }
  if (bias.defined()) {
    Shape sizes(out.dim(), 1);
    Shape strides(out.dim(), 0);
    sizes[1] = out_channels;
    strides[1] = bias.strides()[0];
    Tensor b = kernels::view_as_strided(bias, sizes, strides, 0);
    kernels::binary_out(kernels::Binary::Add, out, b, out);
  }
  return out;
}

// grad (n, g * rows, L) per group against a (g, rows, cols) matrix stack:
// sum over n of grad[n, group] @ columns[n, group].T, as (g, rows, cols).
Tensor summed_products(
    const Tensor& grad, const Tensor& columns, int64_t n, int64_t g) {
  int64_t count = columns.sizes()[2];
  Tensor a = reshape(grad, {n, g, grad.sizes()[1] / g, count});
  Tensor b = reshape(columns, {n, g, columns.sizes()[1] / g, count});
  return sum(matmul(a, transpose(b, 2, 3)), {0}, false);
}

// convolution_backward's values, in the dtype of grad (convolution_backward
// widens a reduced float first), by ops run without a graph. A 1-d
// convolution runs as a 2-d one of height 1.
std::array<Tensor, 3> convolution_gradients(
    Tensor grad,
    Tensor x,
    Tensor w,
    const ConvArgs& a,
    std::array<bool, 3> mask) {
  std::array<Tensor, 3> out;
  bool one_d = grad.dim() == 3;
  if (mask[2]) {
    out[2] =
        sum(grad,
            one_d ? std::vector<int64_t>{0, 2} : std::vector<int64_t>{0, 2, 3},
            false);
  }
  Shape st = as_2d(a.stride, 1);
  Shape pad = as_2d(a.padding, 0);
  Shape dil = as_2d(a.dilation, 1);
  Shape wsizes = w.sizes();
  if (one_d) {
    grad = unsqueeze(grad, 2);
    x = unsqueeze(x, 2);
    w = unsqueeze(w, 2);
  }
  auto finish = [one_d](const Tensor& t) { return one_d ? squeeze(t, 2) : t; };
  int64_t n = grad.sizes()[0];
  const Shape& ws = w.sizes();
  Shape kernel = {ws[2], ws[3]};
  // See Note [Small convolutions in direct loops]: the small grid is the
  // output of a convolution and the input of a transposed one. The GEMM
  // passes (Note [Convolutions as GEMMs]) take the same arguments.
  const Tensor& small = a.transposed ? x : grad;
  const Tensor& large = a.transposed ? grad : x;
  kernels::ConvWindows win = windows_2d(a);
  bool direct =
      kernels::direct_conv_work(small.sizes(), ws) <= kernels::kDirectConvWork;
  if (direct_dtype(grad.dtype()) && small.numel() > 0 && large.numel() > 0 &&
      (direct ||
       kernels::conv_gemm_applies(grad.dtype(), win, kernel[0], kernel[1]))) {
    ScalarType dt = grad.dtype();
    Tensor s = as_grid(small, dt);
    Tensor l = as_grid(large, dt);
    if (mask[0]) {
      Tensor wd = as_grid(w, dt);
      int64_t h = x.sizes()[2], wdt = x.sizes()[3];
      auto scatter =
          direct ? &kernels::conv_scatter : &kernels::conv_gemm_scatter;
      auto gather = direct ? &kernels::conv_gather : &kernels::conv_gemm_gather;
      out[0] = finish(
          a.transposed ? gather(l, wd, win, h, wdt)
                       : scatter(s, wd, win, h, wdt));
    }
    if (mask[1]) {
      auto weight_grad =
          direct ? &kernels::conv_weight_grad : &kernels::conv_gemm_weight_grad;
      out[1] = reshape(weight_grad(s, l, win, kernel[0], kernel[1]), wsizes);
    }
    return out;
  }
  // A transposed convolution's input positions are the windows over grad,
  // but an output_padding not below the stride adds windows past them (over
  // the padding): only the first ones are kept.
  auto first_windows = [&x](Tensor t) {
    for (int64_t d = 2; d < 4; ++d) {
      if (t.sizes()[d] > x.sizes()[d]) {
        t = narrow(t, d, 0, x.sizes()[d]);
      }
    }
    return t;
  };
  if (mask[0]) {
    if (a.transposed) {
      out[0] = finish(first_windows(convolution(
          grad, w, Tensor(), st, pad, dil, false, {0, 0}, a.groups)));
    } else {
      // The columns of each group's input from its weight, summed back into
      // their windows.
      int64_t count = grad.sizes()[2] * grad.sizes()[3];
      int64_t rows = ws[0] / a.groups;
      int64_t per_group = ws[1] * ws[2] * ws[3];
      Tensor mats = transpose(reshape(w, {a.groups, rows, per_group}), 1, 2);
      Tensor cols = matmul(mats, reshape(grad, {n, a.groups, rows, count}));
      Tensor flat = reshape(cols, {n, a.groups * per_group, count});
      Shape size = {x.sizes()[2], x.sizes()[3]};
      out[0] = finish(col2im(flat, size, kernel, dil, pad, st));
    }
  }
  if (mask[1]) {
    Tensor cols, flat;
    if (a.transposed) {
      cols = im2col(grad, kernel, dil, pad, st);
      int64_t count = x.sizes()[2] * x.sizes()[3];
      if (cols.sizes()[2] != count) {
        Shape windows = window_counts(grad.sizes(), kernel, dil, pad, st);
        Shape rows = {n, cols.sizes()[1], windows[0], windows[1]};
        cols = reshape(
            first_windows(reshape(cols, rows)), {n, cols.sizes()[1], count});
      }
      flat = reshape(x, {n, x.sizes()[1], count});
    } else {
      cols = im2col(x, kernel, dil, pad, st);
      flat = reshape(grad, {n, grad.sizes()[1], cols.sizes()[2]});
    }
    out[1] = reshape(summed_products(flat, cols, n, a.groups), wsizes);
  }
  return out;
}

void check_pair(const char* name, const Shape& v) {
  NPGRAD_CHECK(
      v.size() == 2,
      "It is expected ",
      name,
      " equals to 2, but got size ",
      v.size());
}

// torch's checks of the window arguments of im2col and col2im.
void check_window_args(
    const Shape& kernel_size,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride) {
  check_pair("kernel_size", kernel_size);
  check_pair("dilation", dilation);
  check_pair("padding", padding);
  check_pair("stride", stride);
  NPGRAD_CHECK(
      kernel_size[0] > 0 && kernel_size[1] > 0,
      "kernel size should be greater than zero, but got kernel_height: ",
      kernel_size[0],
      " kernel_width: ",
      kernel_size[1]);
  NPGRAD_CHECK(
      stride[0] > 0 && stride[1] > 0,
      "stride should be greater than zero, but got stride_height: ",
      stride[0],
      " stride_width: ",
      stride[1]);
  NPGRAD_CHECK(
      dilation[0] > 0 && dilation[1] > 0,
      "dilation should be greater than zero, but got dilation_height: ",
      dilation[0],
      " dilation_width: ",
      dilation[1]);
  NPGRAD_CHECK(
      padding[0] >= 0 && padding[1] >= 0,
      "padding should be non-negative, but got pad_height: ",
      padding[0],
      " pad_width: ",
      padding[1]);
}

// im2col and col2im copy any dtype but the integer ones (torch's kernels).
void check_window_dtype(const char* kernel, const Tensor& t) {
  ScalarType d = t.dtype();
  unary_ops::check_kernel_dtype(
      kernel, t, is_floating(d) || d == ScalarType::Bool);
}

}  // namespace

Tensor convolution(
    const Tensor& input,
    const Tensor& weight,
    const Tensor& bias,
    const Shape& stride,
    const Shape& padding,
    const Shape& dilation,
    bool transposed,
    const Shape& output_padding,
    int64_t groups,
    bool from_conv_function) {
  NPGRAD_CHECK(
      weight.dim() >= 3, "weight should have at least three dimensions");
  std::size_t nd = static_cast<std::size_t>(weight.dim() - 2);
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      nd <= 2,
      "npgrad's convolution supports 1 and 2 spatial dims, but got a weight "
      "of size ",
      shape_str(weight.sizes()));
  ConvArgs a{
      expand_param("stride", stride, nd),
      expand_param("padding", padding, nd),
      expand_param("dilation", dilation, nd),
      expand_param("output_padding", output_padding, nd),
      transposed,
      groups};
  check_convolution(input, weight, bias, a);
  unary_ops::check_kernel_dtype(
      transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu",
      input,
      input.dtype() != ScalarType::Bool);
  Tensor out = convolution_values(input, weight, bias, a);
  if (auto node = record<ConvolutionBackward0>(out, {&input, &weight, &bias})) {
    node->args = a;
    if (bias.defined() || from_conv_function) {
      node->bias_sizes = bias.defined() ? bias.sizes() : Shape{0};
    }
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
  }
  return out;
}

std::array<Tensor, 3> convolution_backward(
    const Tensor& grad_output,
    const Tensor& input,
    const Tensor& weight,
    const ConvArgs& args,
    std::array<bool, 3> output_mask) {
  std::array<Tensor, 3> grads;
  {
    AutoGradMode no_grad(false);
    ScalarType dtype = grad_output.dtype();
    if (is_reduced_float(dtype)) {
      // In float32, each gradient rounded once, as the forward: the formulas
      // chain a matmul with col2im's sums (or a matmul per sample with their
      // sum), which would round at every step.
      constexpr ScalarType f32 = ScalarType::Float32;
      grads = convolution_gradients(
          kernels::cast(grad_output, f32),
          kernels::cast(input, f32),
          kernels::cast(weight, f32),
          args,
          output_mask);
      for (Tensor& t : grads) {
        if (t.defined()) {
          t = kernels::cast(t, dtype);
        }
      }
    } else {
      grads =
          convolution_gradients(grad_output, input, weight, args, output_mask);
    }
  }
  for (Tensor& t : grads) {
    // A reshape or squeeze of a private intermediate: made a plain tensor,
    // since it becomes the output of the node below.
    if (t.defined() && t.is_view()) {
      t = kernels::view_as_strided(t, t.sizes(), t.strides(), 0);
    }
  }
  if (compute_requires_grad({&grad_output, &input, &weight})) {
    auto node = make_node<ConvolutionBackwardBackward0>();
    node->set_next_edges(collect_next_edges({&grad_output, &input, &weight}));
    for (const Tensor& t : grads) {
      if (t.defined()) {
        set_history(t, node);
      } else {
        node->add_input_metadata_undefined();
      }
    }
    node->args = args;
    node->grad_output_ = SavedVariable(grad_output, false);
    node->input_ = SavedVariable(input, false);
    node->weight_ = SavedVariable(weight, false);
  }
  return grads;
}

Tensor im2col(
    const Tensor& self,
    const Shape& kernel_size,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride) {
  check_window_args(kernel_size, dilation, padding, stride);
  int64_t nd = self.dim();
  const Shape& s = self.sizes();
  NPGRAD_CHECK_INDEX(
      nd >= 3 || nd < 2,
      "Dimension out of range (expected to be in range of [",
      -nd,
      ", ",
      nd - 1,
      "], but got 2)");
  bool shape_ok = (nd == 3 || nd == 4) && s[nd - 1] != 0 && s[nd - 2] != 0 &&
                  s[nd - 3] != 0;
  NPGRAD_CHECK(
      shape_ok,
      "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
      "other non-zero dimensions for input, but got: ",
      shape_str(s));
  Shape batched = nd == 3 ? Shape{1, s[0], s[1], s[2]} : s;
  Shape windows =
      window_counts(batched, kernel_size, dilation, padding, stride);
  NPGRAD_CHECK(
      windows[0] >= 1 && windows[1] >= 1,
      "Given input with spatial size (",
      s[nd - 2],
      ", ",
      s[nd - 1],
      "), kernel_size=(",
      kernel_size[0],
      ", ",
      kernel_size[1],
      "), dilation=(",
      dilation[0],
      ", ",
      dilation[1],
      "), padding=(",
      padding[0],
      ", ",
      padding[1],
      "), calculated shape of the array of sliding blocks as (",
      windows[0],
      ", ",
      windows[1],
      "), but its components must be at least one.");
  check_window_dtype("im2col_out_cpu", self);
  Tensor x = kernels::view_as_strided(
      self,
      batched,
      nd == 3
          ? Shape{0, self.strides()[0], self.strides()[1], self.strides()[2]}
          : self.strides(),
      0);
  Tensor out =
      kernels::im2col(x, kernel_size, dilation, padding, stride, windows);
  if (nd == 3) {
    out = kernels::view_as_strided(
        out, {out.sizes()[1], out.sizes()[2]}, {out.sizes()[2], 1}, 0);
  }
  if (auto node = record<Im2ColBackward0>(out, {&self})) {
    node->kernel_size = kernel_size;
    node->dilation = dilation;
    node->padding = padding;
    node->stride = stride;
    node->height = s[nd - 2];
    node->width = s[nd - 1];
  }
  return out;
}

Tensor col2im(
    const Tensor& self,
    const Shape& output_size,
    const Shape& kernel_size,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride) {
  check_pair("output_size", output_size);
  NPGRAD_CHECK(
      output_size[0] > 0 && output_size[1] > 0,
      "Expected output spatial size to be positive, but got: output_size=(",
      output_size[0],
      ", ",
      output_size[1],
      ").");
  check_window_args(kernel_size, dilation, padding, stride);
  int64_t nd = self.dim();
  const Shape& s = self.sizes();
  bool shape_ok = (nd == 2 || nd == 3) && s[nd - 1] != 0 && s[nd - 2] != 0;
  NPGRAD_CHECK(
      shape_ok,
      "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
      "size and non-zero dimensions for input, but got: ",
      shape_str(s));
  int64_t kernel_numel = kernel_size[0] * kernel_size[1];
  NPGRAD_CHECK(
      s[nd - 2] % kernel_numel == 0,
      "Expected size of input's dimension 1 to be divisible by the product "
      "of kernel_size, but got input.size(1)=",
      s[nd - 2],
      " and kernel_size=(",
      kernel_size[0],
      ", ",
      kernel_size[1],
      ").");
  Shape windows = window_counts(
      {1, 1, output_size[0], output_size[1]},
      kernel_size,
      dilation,
      padding,
      stride);
  NPGRAD_CHECK(
      windows[0] >= 1 && windows[1] >= 1 &&
          windows[0] * windows[1] == s[nd - 1],
      "Given output_size=(",
      output_size[0],
      ", ",
      output_size[1],
      "), kernel_size=(",
      kernel_size[0],
      ", ",
      kernel_size[1],
      "), dilation=(",
      dilation[0],
      ", ",
      dilation[1],
      "), padding=(",
      padding[0],
      ", ",
      padding[1],
      "), stride=(",
      stride[0],
      ", ",
      stride[1],
      "), expected size of input's dimension 2 to match the calculated number "
      "of sliding blocks ",
      windows[0],
      " * ",
      windows[1],
      " = ",
      windows[0] * windows[1],
      ", but got input.size(2)=",
      s[nd - 1],
      ".");
  check_window_dtype("col2im_out_cpu", self);
  Tensor cols = nd == 2 ? kernels::view_as_strided(
                              self,
                              {1, s[0], s[1]},
                              {0, self.strides()[0], self.strides()[1]},
                              0)
                        : self;
  int64_t channels = s[nd - 2] / kernel_numel;
  Tensor out;
  if (is_reduced_float(self.dtype()) || self.dtype() == ScalarType::Bool) {
    // Summed in float32 and rounded once (bool: any column set).
    out = kernels::cast(
        kernels::col2im(
            kernels::cast(cols, ScalarType::Float32),
            channels,
            output_size,
            kernel_size,
            dilation,
            padding,
            stride,
            windows),
        self.dtype());
  } else {
    out = kernels::col2im(
        cols,
        channels,
        output_size,
        kernel_size,
        dilation,
        padding,
        stride,
        windows);
  }
  if (nd == 2) {
    out = kernels::view_as_strided(
        out,
        {channels, output_size[0], output_size[1]},
        {output_size[0] * output_size[1], output_size[1], 1},
        0);
  }
  if (auto node = record<Col2ImBackward0>(out, {&self})) {
    node->kernel_size = kernel_size;
    node->dilation = dilation;
    node->padding = padding;
    node->stride = stride;
  }
  return out;
}

}  // namespace npgrad::ops
