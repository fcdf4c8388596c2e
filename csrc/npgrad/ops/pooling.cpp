// 2-D pooling and constant padding: torch's argument checks, output sizes and
// windows (padding, dilation, ceil mode, adaptive bounds), the kernels, and the
// nodes.
#include <algorithm>
#include <string>

#include "npgrad/autograd/nodes/pooling_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/ops/recording.h"
#include "npgrad/tensor/shape.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

using namespace npgrad::autograd;
using kernels::PoolWindows;

namespace {

int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Element d (0: H, 1: W) of a list argument of one int or two.
int64_t at(const Shape& s, int d) {
  return s.size() == 1 ? s[0] : s[d];
}

// The geometry of one max or average pooling, both dims expanded.
struct Geometry {
  int64_t kernel[2], stride[2], pad[2], dilation[2];
  int64_t in[2], out[2];
};

// torch's pooling_output_shape, with its checks.
int64_t pooled_size(
    int64_t in,
    int64_t k,
    int64_t pad,
    int64_t stride,
    int64_t dilation,
    bool ceil_mode) {
  NPGRAD_CHECK(stride != 0, "stride should not be zero");
  NPGRAD_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  NPGRAD_CHECK(
      pad <= ((k - 1) * dilation + 1) / 2,
      "pad should be at most half of effective kernel size, but got pad=",
      pad,
      ", kernel_size=",
      k,
      " and dilation=",
      dilation);
  int64_t out =
      div_floor(
          in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0),
          stride) +
      1;
  if (ceil_mode && (out - 1) * stride >= in + pad) {
    --out;
  }
  return out;
}

void check_list(const Shape& s, bool may_be_empty, const std::string& msg) {
  NPGRAD_CHECK(
      s.size() == 1 || s.size() == 2 || (may_be_empty && s.empty()), msg);
}

// torch's checks of max_pool2d / avg_pool2d (the list lengths, the output
// shape, pool2d_shape_check) and the geometry they accept.
Geometry pool_geometry(const Tensor& a, const Pool2dArgs& args, bool is_max) {
  std::string op = is_max ? "max_pool2d" : "avg_pool2d";
  check_list(
      args.kernel_size,
      false,
      op + ": kernel_size must either be a single int, or a tuple of two ints");
  check_list(
      args.stride,
      true,
      op + ": stride must either be omitted, a single int, or a tuple of two "
           "ints");
  check_list(
      args.padding,
      false,
      op + ": padding must either be a single int, or a tuple of two ints");
  if (is_max) {
    check_list(
        args.dilation,
        false,
        "max_pool2d: dilation must be either a single int, or a tuple of two "
        "ints");
    NPGRAD_CHECK(
        a.dim() == 3 || a.dim() == 4,
        "non-empty 3D or 4D (batch mode) tensor expected for input");
  } else {
    NPGRAD_CHECK(
        !args.divisor_override || *args.divisor_override != 0,
        "divisor must be not zero");
    maybe_wrap_dim(-3, a.dim());  // torch reads input.size(-3)
  }
  Geometry g{};
  const Shape& stride = args.stride.empty() ? args.kernel_size : args.stride;
  int64_t nd = a.dim();
  for (int d = 0; d < 2; ++d) {
    g.kernel[d] = at(args.kernel_size, d);
    g.stride[d] = at(stride, d);
    g.pad[d] = at(args.padding, d);
    g.dilation[d] = is_max ? at(args.dilation, d) : 1;
    g.in[d] = a.sizes()[nd - 2 + d];
    g.out[d] = pooled_size(
        g.in[d],
        g.kernel[d],
        g.pad[d],
        g.stride[d],
        g.dilation[d],
        args.ceil_mode);
  }
  NPGRAD_CHECK(
      g.kernel[0] > 0 && g.kernel[1] > 0,
      "kernel size should be greater than zero, but got kH: ",
      g.kernel[0],
      " kW: ",
      g.kernel[1]);
  NPGRAD_CHECK(
      g.stride[0] > 0 && g.stride[1] > 0,
      "stride should be greater than zero, but got dH: ",
      g.stride[0],
      " dW: ",
      g.stride[1]);
  NPGRAD_CHECK(
      g.dilation[0] > 0 && g.dilation[1] > 0,
      "dilation should be greater than zero, but got dilationH: ",
      g.dilation[0],
      " dilationW: ",
      g.dilation[1]);
  const Shape& s = a.sizes();
  bool valid_dims = nd >= 3 && s[1] != 0 && s[2] != 0;
  NPGRAD_CHECK(
      (nd == 3 && s[0] != 0 && valid_dims) ||
          (nd == 4 && valid_dims && s[3] != 0),
      "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
      "for input, but got:",
      shape_str(s));
  NPGRAD_CHECK(
      g.kernel[1] / 2 >= g.pad[1] && g.kernel[0] / 2 >= g.pad[0],
      "pad should be smaller than or equal to half of kernel size, but got "
      "padW = ",
      g.pad[1],
      ", padH = ",
      g.pad[0],
      ", kW = ",
      g.kernel[1],
      ", kH = ",
      g.kernel[0]);
  NPGRAD_CHECK(
      g.out[0] >= 1 && g.out[1] >= 1,
      "Given input size: (",
      s[nd - 3],
      "x",
      g.in[0],
      "x",
      g.in[1],
      "). Calculated output size: (",
      s[nd - 3],
      "x",
      g.out[0],
      "x",
      g.out[1],
      "). Output size is too small");
  return g;
}

// The windows of max pooling: each starts at o * stride - pad and reads
// kernel positions `dilation` apart, those inside the input.
PoolWindows max_windows(const Geometry& g) {
  PoolWindows w;
  for (int d = 0; d < 2; ++d) {
    w.step[d] = g.dilation[d];
    for (int64_t o = 0; o < g.out[d]; ++o) {
      int64_t start = o * g.stride[d] - g.pad[d];
      int64_t end =
          std::min(start + (g.kernel[d] - 1) * g.dilation[d] + 1, g.in[d]);
      int64_t first = start;
      while (first < 0) {
        first += g.dilation[d];
      }
      int64_t count =
          first < end ? (end - first + g.dilation[d] - 1) / g.dilation[d] : 0;
      w.first[d].push_back(first);
      w.count[d].push_back(count);
    }
  }
  return w;
}

// The windows of average pooling and their divisors: the window clipped to
// the padded input counts padding (count_include_pad), the one clipped to
// the input does not.
std::pair<PoolWindows, std::vector<int64_t>> avg_windows(
    const Geometry& g, const Pool2dArgs& args) {
  PoolWindows w;
  std::vector<int64_t> padded[2];
  for (int d = 0; d < 2; ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      int64_t start = o * g.stride[d] - g.pad[d];
      int64_t end = std::min(start + g.kernel[d], g.in[d] + g.pad[d]);
      padded[d].push_back(end - start);
      int64_t first = std::max<int64_t>(start, 0);
      w.first[d].push_back(first);
      w.count[d].push_back(
          std::max<int64_t>(std::min(end, g.in[d]) - first, 0));
    }
  }
  std::vector<int64_t> divisors;
  divisors.reserve(g.out[0] * g.out[1]);
  for (int64_t i = 0; i < g.out[0]; ++i) {
    for (int64_t j = 0; j < g.out[1]; ++j) {
      divisors.push_back(
          args.divisor_override    ? *args.divisor_override
          : args.count_include_pad ? padded[0][i] * padded[1][j]
                                   : w.count[0][i] * w.count[1][j]);
    }
  }
  return {w, divisors};
}

// The windows of adaptive pooling: output o of n over `in` positions reads
// [floor(o * in / n), ceil((o + 1) * in / n)).
std::pair<PoolWindows, std::vector<int64_t>> adaptive_windows(
    const Tensor& a, const Shape& output_size) {
  PoolWindows w;
  int64_t nd = a.dim();
  for (int d = 0; d < 2; ++d) {
    int64_t in = a.sizes()[nd - 2 + d], n = output_size[d];
    for (int64_t o = 0; o < n; ++o) {
      int64_t start = (o * in) / n;
      int64_t end = ((o + 1) * in + n - 1) / n;
      w.first[d].push_back(start);
      w.count[d].push_back(end - start);
    }
  }
  std::vector<int64_t> divisors;
  for (int64_t ch : w.count[0]) {
    for (int64_t cw : w.count[1]) {
      divisors.push_back(ch * cw);
    }
  }
  return {w, divisors};
}

void check_adaptive(const Tensor& a, const Shape& output_size, bool is_max) {
  const char* op = is_max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d";
  NPGRAD_CHECK(output_size.size() == 2, op, ": output_size must be 2");
  NPGRAD_CHECK(
      a.dim() == 3 || a.dim() == 4,
      op,
      "(): Expected 3D or 4D tensor, but got",
      is_max ? ": " : " ",
      shape_str(a.sizes()));
  // Max pooling wants every non-batch dim, average pooling the last two.
  for (int64_t d = is_max ? 1 : a.dim() - 2; d < a.dim(); ++d) {
    NPGRAD_CHECK(
        a.sizes()[d] > 0,
        op,
        "(): Expected input to have non-zero size for non-batch dimensions, "
        "but input has sizes ",
        shape_str(a.sizes()),
        " with dimension ",
        d,
        " being empty");
  }
  // Checked before the windows are built: a huge output_size would
  // otherwise build them for ever.
  Shape out = a.sizes();
  out.resize(out.size() - 2);
  out.insert(out.end(), output_size.begin(), output_size.end());
  if (is_max) {
    for (int64_t s : output_size) {
      NPGRAD_CHECK(
          s >= 0,
          "Trying to create tensor with negative dimension ",
          s,
          ": ",
          shape_str(out));
    }
    check_allocatable(out);
  } else {
    NPGRAD_CHECK(
        output_size[0] >= 0 && output_size[1] >= 0,
        "adaptive_avg_pool2d: elements of output_size must be greater than or "
        "equal to 0 but received {",
        output_size[0],
        ", ",
        output_size[1],
        "}");
    NPGRAD_CHECK(
        !numel_overflows(out), "numel: integer multiplication overflow");
  }
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      is_floating(a.dtype()),
      "\"",
      op,
      "\" not implemented for '",
      dtype_info(a.dtype()).scalar_type_name,
      "'");
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& a, const Pool2dArgs& args) {
  Geometry g = pool_geometry(a, args, true);
  auto [out, indices] = kernels::max_pool2d(a, max_windows(g), "max_pool2d");
  if (auto node = record<MaxPool2DWithIndicesBackward0>(out, {&a})) {
    node->args = args;
    node->self_ = SavedVariable(a, false);
    node->result1_ = SavedVariable(indices, false);
  }
  return {out, indices};
}

Tensor max_pool2d_with_indices_backward(
    const Tensor& grad,
    const Tensor& self,
    const Pool2dArgs& /*args*/,
    const Tensor& indices) {
  Tensor out = kernels::scatter_to_planes(grad, indices, self.sizes());
  if (auto node =
          record<MaxPool2DWithIndicesBackwardBackward0>(out, {&grad, &self})) {
    node->indices_ = SavedVariable(indices, false);
    node->self_sizes = self.sizes();
    node->self_dtype = self.dtype();
  }
  return out;
}

Tensor avg_pool2d(const Tensor& a, const Pool2dArgs& args) {
  Geometry g = pool_geometry(a, args, false);
  auto [windows, divisors] = avg_windows(g, args);
  Tensor out = kernels::avg_pool2d(a, windows, divisors, "avg_pool2d");
  if (auto node = record<AvgPool2DBackward0>(out, {&a})) {
    node->args = args;
    node->self_ = SavedVariable(a, false);
  }
  return out;
}

Tensor avg_pool2d_backward(
    const Tensor& grad, const Tensor& self, const Pool2dArgs& args) {
  Geometry g = pool_geometry(self, args, false);
  auto [windows, divisors] = avg_windows(g, args);
  Tensor out =
      kernels::avg_pool2d_backward(grad, self.sizes(), windows, divisors);
  if (auto node = record<AvgPool2DBackwardBackward0>(out, {&grad, &self})) {
    node->args = args;
    node->self_sizes = self.sizes();
    node->self_dtype = self.dtype();
  }
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& a, const Shape& output_size) {
  check_adaptive(a, output_size, false);
  if (output_size[0] == 1 && output_size[1] == 1) {
    return mean(a, {-1, -2}, true);
  }
  auto [windows, divisors] = adaptive_windows(a, output_size);
  Tensor out = kernels::avg_pool2d(a, windows, divisors, "adaptive_avg_pool2d");
  if (auto node = record<AdaptiveAvgPool2DBackward0>(out, {&a})) {
    node->self_ = SavedVariable(a, false);
  }
  return out;
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad, const Tensor& self) {
  int64_t nd = grad.dim();
  Shape output_size{grad.sizes()[nd - 2], grad.sizes()[nd - 1]};
  auto [windows, divisors] = adaptive_windows(self, output_size);
  Tensor out =
      kernels::avg_pool2d_backward(grad, self.sizes(), windows, divisors);
  if (auto node =
          record<AdaptiveAvgPool2DBackwardBackward0>(out, {&grad, &self})) {
    node->output_size = output_size;
    node->self_sizes = self.sizes();
    node->self_dtype = self.dtype();
  }
  return out;
}

std::pair<Tensor, Tensor> adaptive_max_pool2d(
    const Tensor& a, const Shape& output_size) {
  check_adaptive(a, output_size, true);
  auto [out, indices] = kernels::max_pool2d(
      a, adaptive_windows(a, output_size).first, "adaptive_max_pool2d");
  if (auto node = record<AdaptiveMaxPool2DBackward0>(out, {&a})) {
    node->self_ = SavedVariable(a, false);
    node->result1_ = SavedVariable(indices, false);
  }
  return {out, indices};
}

Tensor adaptive_max_pool2d_backward(
    const Tensor& grad, const Tensor& self, const Tensor& indices) {
  Tensor out = kernels::scatter_to_planes(grad, indices, self.sizes());
  if (auto node =
          record<AdaptiveMaxPool2DBackwardBackward0>(out, {&grad, &self})) {
    node->indices_ = SavedVariable(indices, false);
    node->self_sizes = self.sizes();
    node->self_dtype = self.dtype();
  }
  return out;
}

Tensor constant_pad_nd(const Tensor& a, const Shape& pad, double value) {
  auto n = static_cast<int64_t>(pad.size());
  NPGRAD_CHECK(n % 2 == 0, "Padding length must be divisible by 2");
  NPGRAD_CHECK(
      n / 2 <= a.dim(),
      "Padding length should be less than or equal to two times the input "
      "dimension but got padding length ",
      n,
      " and input of dimension ",
      a.dim());
  // The kept part of a (negative padding crops it), and where it goes.
  Shape sizes = a.sizes(), kept = a.sizes(), out_sizes = a.sizes();
  int64_t src_offset = 0;
  Shape dst_start(a.dim(), 0);
  for (int64_t i = 0; i < n / 2; ++i) {
    int64_t d = a.dim() - 1 - i;
    int64_t before = pad[2 * i], after = pad[2 * i + 1];
    kept[d] =
        sizes[d] + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
    NPGRAD_CHECK(kept[d] >= 0, "narrow(): length must be non-negative.");
    src_offset += std::max<int64_t>(-before, 0) * a.strides()[d];
    dst_start[d] = std::max<int64_t>(before, 0);
    out_sizes[d] =
        kept[d] + std::max<int64_t>(before, 0) + std::max<int64_t>(after, 0);
  }
  Tensor out = kernels::full(out_sizes, value, a.dtype());
  Shape out_strides = contiguous_strides(out_sizes);
  int64_t dst_offset = 0;
  for (int64_t d = 0; d < a.dim(); ++d) {
    dst_offset += dst_start[d] * out_strides[d];
  }
  if (a.numel() > 0 && std::count(kept.begin(), kept.end(), 0) == 0) {
    kernels::copy_into(
        kernels::view_as_strided(out, kept, out_strides, dst_offset),
        kernels::view_as_strided(a, kept, a.strides(), src_offset));
  }
  if (auto node = record<ConstantPadNdBackward0>(out, {&a})) {
    node->pad = pad;
  }
  return out;
}

}  // namespace npgrad::ops
