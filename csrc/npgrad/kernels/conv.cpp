// Sliding windows, the two halves of every convolution: im2col copies each
// window of the zero-padded input out as a column (one strided view of the
// input, copied once by NumPy), col2im adds columns back into their windows
// (one strided NumPy add per kernel position). Any number of spatial dims.
#include <numeric>

#include "npgrad/kernels/internal.h"

namespace npgrad::kernels {
namespace {

int64_t product(const Shape& s) {
  return std::accumulate(
      s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

// Shape's strides when C-contiguous.
Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t step = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    strides[i] = step;
    step *= sizes[i];
  }
  return strides;
}

// The view of `padded` (N, C, *spatial + 2 * padding) without its padding.
Tensor interior(
    const Tensor& padded, const Shape& sizes, const Shape& padding) {
  const Shape& st = padded.strides();
  int64_t offset = 0;
  for (std::size_t d = 0; d < padding.size(); ++d) {
    offset += padding[d] * st[2 + d];
  }
  return view_as_strided(padded, sizes, st, offset);
}

Shape padded_sizes(const Shape& sizes, const Shape& padding) {
  Shape out = sizes;
  for (std::size_t d = 0; d < padding.size(); ++d) {
    out[2 + d] += 2 * padding[d];
  }
  return out;
}

}  // namespace

Tensor im2col(
    const Tensor& x,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows,
    bool batch_inner) {
  const Shape& xs = x.sizes();
  Tensor src = x;
  if (std::any_of(
          padding.begin(), padding.end(), [](int64_t p) { return p != 0; })) {
    src = full(padded_sizes(xs, padding), 0, x.dtype());
    copy_into(interior(src, xs, padding), x);
  }
  const Shape& st = src.strides();
  std::size_t nd = kernel.size();
  // (N, C, *kernel, *windows), or (C, *kernel, N, *windows) batch-inner.
  Shape sizes = {xs[1]};
  Shape strides = {st[1]};
  for (std::size_t d = 0; d < nd; ++d) {
    sizes.push_back(kernel[d]);
    strides.push_back(st[2 + d] * dilation[d]);
  }
  auto at = batch_inner ? sizes.end() : sizes.begin();
  strides.insert(batch_inner ? strides.end() : strides.begin(), st[0]);
  sizes.insert(at, xs[0]);
  for (std::size_t d = 0; d < nd; ++d) {
    sizes.push_back(windows[d]);
    strides.push_back(st[2 + d] * stride[d]);
  }
  Tensor columns = cast(view_as_strided(src, sizes, strides, 0), x.dtype());
  int64_t rows = xs[1] * product(kernel);
  Shape flat = batch_inner ? Shape{rows, xs[0] * product(windows)}
                           : Shape{xs[0], rows, product(windows)};
  return view_as_strided(columns, flat, contiguous_strides(flat), 0);
}

Tensor col2im(
    const Tensor& columns,
    int64_t channels,
    const Shape& output,
    const Shape& kernel,
    const Shape& dilation,
    const Shape& padding,
    const Shape& stride,
    const Shape& windows) {
  IgnoreFpErrors quiet;
  std::size_t nd = kernel.size();
  int64_t n = columns.sizes()[0];
  int64_t kernel_numel = product(kernel);
  Shape out_sizes = {n, channels};
  out_sizes.insert(out_sizes.end(), output.begin(), output.end());
  Tensor out = full(padded_sizes(out_sizes, padding), 0, columns.dtype());
  const Shape& ost = out.strides();
  const Shape& cst = columns.strides();
  // One kernel position's columns (N, C, *windows), and where they go.
  Shape sizes = {n, channels};
  sizes.insert(sizes.end(), windows.begin(), windows.end());
  Shape src_strides = {cst[0], cst[1] * kernel_numel};
  Shape dst_strides = {ost[0], ost[1]};
  int64_t window_step = cst[2];
  for (std::size_t d = nd; d-- > 0;) {
    src_strides.insert(src_strides.begin() + 2, window_step);
    window_step *= windows[d];
  }
  for (std::size_t d = 0; d < nd; ++d) {
    dst_strides.push_back(ost[2 + d] * stride[d]);
  }
  Shape position(nd, 0);
  for (int64_t k = 0; k < kernel_numel; ++k) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < nd; ++d) {
      offset += position[d] * dilation[d] * ost[2 + d];
    }
    Tensor dst = view_as_strided(out, sizes, dst_strides, offset);
    Tensor src = view_as_strided(columns, sizes, src_strides, k * cst[1]);
    binary_out(Binary::Add, dst, src, dst);
    for (std::size_t d = nd; d-- > 0;) {
      if (++position[d] < kernel[d]) {
        break;
      }
      position[d] = 0;
    }
  }
  if (std::all_of(
          padding.begin(), padding.end(), [](int64_t p) { return p == 0; })) {
    return out;
  }
  return cast(interior(out, out_sizes, padding), out.dtype());
}

}  // namespace npgrad::kernels
