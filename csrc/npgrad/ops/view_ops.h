#pragma once
// The view op table: one entry per single-output view op (fields described
// at the top of view_family.h). Each entry is the op's one home: arguments,
// geometry and its checks, nodes, saved state, backward formula, docstring.
//
// Not here (views.cpp):
// - reshape, flatten, unflatten, movedim/moveaxis, narrow, view_as,
//   expand_as, and swapaxes/swapdims (with swapaxes_/swapdims_): composites
//   that dispatch to other views (torch records the views they call, or
//   _reshape_alias/_unsafe_view);
// - split, split_with_sizes, chunk, unbind: several outputs share one node
//   (CreationMeta::MultiOutputNode);
// - slice: no torch function or method (indexing and narrow reach it), and
//   its node saves the bounds as given and as clamped;
// - alias and as_strided: internal (torch has no torch.alias; npgrad has no
//   public as_strided), and as_strided's node is view replay's, whose
//   geometry is the root base's (Note [Lazy grad_fn of views]).

#include <algorithm>
#include <array>
#include <tuple>
#include <vector>

#include "npgrad/ops/view_family.h"

namespace npgrad::ops {

/// torch's infer_size: `shape` with its -1 (at most one) inferred from
/// `numel`, with torch's errors (views.cpp).
Shape infer_size(Shape shape, int64_t numel);
/// torch's computeStride: strides for viewing (oldshape, oldstride) as
/// newshape without a copy, or nothing if the layout does not allow it
/// (views.cpp).
std::optional<Shape> compute_stride(
    const Shape& oldshape, const Shape& oldstride, const Shape& newshape);

}  // namespace npgrad::ops

namespace npgrad::ops::view_ops {

struct View {
  static constexpr const char* name = "view";
  static constexpr bool function = false, method = true;
  static constexpr const char* nodes[] = {"ViewBackward0"};
  using Args = std::tuple<Shape>;
  static constexpr std::array<ViewParam, 1> params = {{{"size"}}};
  static constexpr unsigned saves = ViewSaves::SelfSizes;
  static Strided geometry(const Tensor& a, const Args& args) {
    Shape sizes = infer_size(std::get<0>(args), a.numel());
    auto strides = compute_stride(a.sizes(), a.strides(), sizes);
    NPGRAD_CHECK(
        strides.has_value(),
        "view size is not compatible with input tensor's size and stride (at "
        "least one dimension spans across two contiguous subspaces). Use "
        ".reshape(...) instead.");
    return {sizes, *strides, 0};
  }
  static Tensor backward(const Tensor& grad, const Args&, const Shape& sizes) {
    return reshape(grad, sizes);
  }
  static constexpr OpDoc doc = {
      "A view with a new shape (one entry may be -1), sharing memory and the "
      "version counter; the layout must allow it (see ``reshape``)",
      "[1, 2, 3, 4, 5, 6]",
      "tensor([[1, 2, 3],\n        [4, 5, 6]])",
      "2, 3"};
};

struct Expand {
  static constexpr const char* name = "expand";
  static constexpr bool function = false, method = true;
  static constexpr const char* nodes[] = {"ExpandBackward0"};
  using Args = std::tuple<Shape>;
  static constexpr std::array<ViewParam, 1> params = {{{"size"}}};
  static constexpr unsigned saves = ViewSaves::SelfSizes;
  static Strided geometry(const Tensor& a, const Args& args) {
    Shape sizes = std::get<0>(args);
    int64_t ndim = static_cast<int64_t>(sizes.size());
    NPGRAD_CHECK(
        ndim >= a.dim(),
        "expand(torch.FloatTensor{",
        shape_str(a.sizes()),
        "}, size=",
        shape_str(sizes),
        "): the number of sizes provided (",
        ndim,
        ") must be greater or equal to the number of dimensions in the "
        "tensor (",
        a.dim(),
        ")");
    Shape strides(ndim);
    int64_t lead = ndim - a.dim();
    for (int64_t i = ndim - 1; i >= 0; --i) {
      if (i < lead) {
        NPGRAD_CHECK(
            sizes[i] >= 0,
            "The expanded size of the tensor (",
            sizes[i],
            ") isn't allowed in a leading, non-existing dimension ",
            i);
        strides[i] = 0;
        continue;
      }
      int64_t have = a.sizes()[i - lead];
      if (sizes[i] == -1) {
        sizes[i] = have;
      }
      NPGRAD_CHECK(
          have == sizes[i] || have == 1,
          "The expanded size of the tensor (",
          sizes[i],
          ") must match the existing size (",
          have,
          ") at non-singleton dimension ",
          i,
          ".  Target sizes: ",
          shape_str(sizes),
          ".  Tensor sizes: ",
          shape_str(a.sizes()));
      strides[i] = have == sizes[i] ? a.strides()[i - lead] : 0;
    }
    return {sizes, strides, 0};
  }
  static Tensor backward(const Tensor& grad, const Args&, const Shape& sizes) {
    return sum_to(grad, sizes);
  }
  static constexpr OpDoc doc = {
      "A view repeating size-1 dims to ``size`` without copying (-1 keeps a "
      "size; new leading dims may be added)",
      "[[1.0], [2.0]]",
      "tensor([[1., 1., 1.],\n        [2., 2., 2.]])",
      "2, 3"};
};

struct T {
  static constexpr const char* name = "t";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"TBackward0"};
  static constexpr const char* inplace = "t_";
  static constexpr const char* inplace_nodes[] = {"TBackward1"};
  using Args = std::tuple<>;
  static constexpr std::array<ViewParam, 0> params = {};
  static constexpr unsigned saves = 0;
  static void check(const Tensor& a, const Args&, const char* fn) {
    NPGRAD_CHECK(
        a.dim() <= 2,
        fn,
        "() expects a tensor with <= 2 dimensions, but self is ",
        a.dim(),
        "D");
  }
  static Strided geometry(const Tensor& a, const Args&) {
    Strided g{a.sizes(), a.strides(), 0};
    std::reverse(g.sizes.begin(), g.sizes.end());
    std::reverse(g.strides.begin(), g.strides.end());
    return g;
  }
  static Tensor backward(const Tensor& grad, const Args&, const Shape&) {
    return t(grad);
  }
  static constexpr OpDoc doc = {
      "The transpose of a tensor of at most 2 dims, as a view",
      "[[1, 2], [3, 4]]",
      "tensor([[1, 3],\n        [2, 4]])",
      ""};
};

struct Transpose {
  static constexpr const char* name = "transpose";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"TransposeBackward0"};
  static constexpr const char* inplace = "transpose_";
  static constexpr const char* inplace_nodes[] = {"TransposeBackward1"};
  using Args = std::tuple<int64_t, int64_t>;
  static constexpr std::array<ViewParam, 2> params = {{{"dim0"}, {"dim1"}}};
  static constexpr unsigned saves = ViewSaves::Args;
  static Strided geometry(const Tensor& a, const Args& args) {
    int64_t d0 = maybe_wrap_dim(std::get<0>(args), a.dim());
    int64_t d1 = maybe_wrap_dim(std::get<1>(args), a.dim());
    Strided g{a.sizes(), a.strides(), 0};
    if (a.dim() > 0) {
      std::swap(g.sizes[d0], g.sizes[d1]);
      std::swap(g.strides[d0], g.strides[d1]);
    }
    return g;
  }
  static Tensor backward(const Tensor& grad, const Args& args, const Shape&) {
    return transpose(grad, std::get<0>(args), std::get<1>(args));
  }
  static constexpr OpDoc doc = {
      "A view with dims ``dim0`` and ``dim1`` swapped",
      "[[1, 2, 3], [4, 5, 6]]",
      "tensor([[1, 4],\n        [2, 5],\n        [3, 6]])",
      "0, 1"};
};

struct Permute {
  static constexpr const char* name = "permute";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"PermuteBackward0"};
  using Args = std::tuple<Shape>;
  static constexpr std::array<ViewParam, 1> params = {{{"dims"}}};
  static constexpr unsigned saves = ViewSaves::Args;
  static Strided geometry(const Tensor& a, const Args& args) {
    const Shape& dims = std::get<0>(args);
    NPGRAD_CHECK(
        static_cast<int64_t>(dims.size()) == a.dim(),
        "permute(sparse_coo): number of dimensions in the tensor input does "
        "not match the length of the desired ordering of dimensions i.e. "
        "input.dim() = ",
        a.dim(),
        " is not equal to len(dims) = ",
        dims.size());
    Strided g{a.sizes(), a.strides(), 0};
    std::vector<bool> seen(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) {
      int64_t d = maybe_wrap_dim(dims[i], a.dim());
      NPGRAD_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
      seen[d] = true;
      g.sizes[i] = a.sizes()[d];
      g.strides[i] = a.strides()[d];
    }
    return g;
  }
  static Tensor backward(const Tensor& grad, const Args& args, const Shape&) {
    const Shape& dims = std::get<0>(args);
    Shape inverse(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) {
      inverse[maybe_wrap_dim(dims[i], static_cast<int64_t>(dims.size()))] =
          static_cast<int64_t>(i);
    }
    return permute(grad, inverse);
  }
  static constexpr OpDoc doc = {
      "A view with the dims reordered: dim ``i`` of the result is dim "
      "``dims[i]`` of the input",
      "[[1, 2, 3], [4, 5, 6]]",
      "tensor([[1, 4],\n        [2, 5],\n        [3, 6]])",
      "(1, 0)"};
};

struct Squeeze {
  static constexpr const char* name = "squeeze";
  static constexpr bool function = true, method = true;
  // torch's overloads: squeeze(), squeeze(int dim), squeeze(tuple dim).
  static constexpr const char* nodes[] = {
      "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2"};
  static constexpr const char* inplace = "squeeze_";
  static constexpr const char* inplace_nodes[] = {
      "SqueezeBackward3", "SqueezeBackward4", "SqueezeBackward5"};
  using Args = std::tuple<SqueezeDims>;
  static constexpr std::array<ViewParam, 1> params = {{{"dim"}}};
  static constexpr unsigned saves = ViewSaves::Args | ViewSaves::SelfSizes;
  static int form(const Args& args) {
    const SqueezeDims& d = std::get<0>(args);
    return !d.dims ? 0 : d.tuple ? 2 : 1;
  }
  static Strided geometry(const Tensor& a, const Args& args) {
    const SqueezeDims& given = std::get<0>(args);
    std::vector<bool> drop(a.dim(), !given.dims);
    if (given.dims) {
      for (int64_t d : *given.dims) {
        d = maybe_wrap_dim(d, a.dim());  // a 0-dim tensor takes 0 and -1
        if (a.dim() > 0) {
          drop[d] = true;
        }
      }
    }
    Strided g;
    for (int64_t i = 0; i < a.dim(); ++i) {
      if (!drop[i] || a.sizes()[i] != 1) {
        g.sizes.push_back(a.sizes()[i]);
        g.strides.push_back(a.strides()[i]);
      }
    }
    return g;
  }
  static Tensor backward(const Tensor& grad, const Args&, const Shape& sizes) {
    return reshape(grad, sizes);
  }
  static constexpr OpDoc doc = {
      "A view without size-1 dims: all of them, or those of ``dim`` (an int "
      "or a tuple)",
      "[[1.0, 2.0]]",
      "tensor([1., 2.])",
      ""};
};

struct Unsqueeze {
  static constexpr const char* name = "unsqueeze";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"UnsqueezeBackward0"};
  static constexpr const char* inplace = "unsqueeze_";
  static constexpr const char* inplace_nodes[] = {"UnsqueezeBackward1"};
  using Args = std::tuple<int64_t>;
  static constexpr std::array<ViewParam, 1> params = {{{"dim"}}};
  static constexpr unsigned saves = ViewSaves::Args;
  static Strided geometry(const Tensor& a, const Args& args) {
    int64_t d = maybe_wrap_dim(std::get<0>(args), a.dim() + 1);
    Strided g{a.sizes(), a.strides(), 0};
    int64_t stride = d >= a.dim() ? 1 : a.sizes()[d] * a.strides()[d];
    g.sizes.insert(g.sizes.begin() + d, 1);
    g.strides.insert(g.strides.begin() + d, stride);
    return g;
  }
  static Tensor backward(const Tensor& grad, const Args& args, const Shape&) {
    return squeeze(grad, std::get<0>(args));
  }
  static constexpr OpDoc doc = {
      "A view with a size-1 dim inserted at ``dim``",
      "[1.0, 2.0]",
      "tensor([[1.],\n        [2.]])",
      "1"};
};

struct Select {
  static constexpr const char* name = "select";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"SelectBackward0"};
  using Args = std::tuple<int64_t, int64_t>;
  static constexpr std::array<ViewParam, 2> params = {{{"dim"}, {"index"}}};
  static constexpr unsigned saves = ViewSaves::Args | ViewSaves::SelfSizes;
  // torch.select's words; indexing (t[i]) checks first in its own.
  static void check(const Tensor& a, const Args& args, const char*) {
    auto [dim, index] = args;
    if (a.dim() > 0) {
      int64_t size = a.sizes()[maybe_wrap_dim(dim, a.dim())];
      NPGRAD_CHECK_INDEX(
          index >= -size && index < size,
          "select(): index ",
          index,
          " out of range for tensor of size ",
          shape_str(a.sizes()),
          " at dimension ",
          dim);
    }
  }
  static Strided geometry(const Tensor& a, const Args& args) {
    auto [dim, index] = args;
    NPGRAD_CHECK_INDEX(
        a.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
    dim = maybe_wrap_dim(dim, a.dim());
    int64_t size = a.sizes()[dim];
    NPGRAD_CHECK_INDEX(
        index >= -size && index < size,
        "index ",
        index,
        " is out of bounds for dimension ",
        dim,
        " with size ",
        size);
    if (index < 0) {
      index += size;
    }
    Strided g{a.sizes(), a.strides(), index * a.strides()[dim]};
    g.sizes.erase(g.sizes.begin() + dim);
    g.strides.erase(g.strides.begin() + dim);
    return g;
  }
  static Tensor backward(
      const Tensor& grad, const Args& args, const Shape& sizes) {
    return select_backward(grad, sizes, std::get<0>(args), std::get<1>(args));
  }
  static constexpr OpDoc doc = {
      "A view of element ``index`` along ``dim``, without that dim",
      "[[1, 2], [3, 4]]",
      "tensor([1, 3])",
      "1, 0"};
};

struct Diagonal {
  static constexpr const char* name = "diagonal";
  static constexpr bool function = true, method = true;
  static constexpr const char* nodes[] = {"DiagonalBackward0"};
  using Args = std::tuple<int64_t, int64_t, int64_t>;
  static constexpr std::array<ViewParam, 3> params = {
      {{"offset", true, 0}, {"dim1", true, 0}, {"dim2", true, 1}}};
  static constexpr unsigned saves = ViewSaves::Args | ViewSaves::SelfSizes;
  // The diagonal `offset` of dims dim1 and dim2 (above the main one when
  // positive, below when negative), appended as the last dim.
  static Strided geometry(const Tensor& a, const Args& args) {
    auto [offset, dim1, dim2] = args;
    const Shape& sizes = a.sizes();
    const Shape& strides = a.strides();
    int64_t n = a.dim();
    int64_t d1 = maybe_wrap_dim(dim1, n);
    int64_t d2 = maybe_wrap_dim(dim2, n);
    NPGRAD_CHECK(
        d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
    int64_t length = 0;
    int64_t start = 0;
    if (offset >= 0 && offset < sizes[d2]) {
      length = std::min(sizes[d1], sizes[d2] - offset);
      start = offset * strides[d2];
    } else if (offset < 0 && offset > -sizes[d1]) {
      length = std::min(sizes[d1] + offset, sizes[d2]);
      start = -offset * strides[d1];
    }
    Strided g;
    for (int64_t i = 0; i < n; ++i) {
      if (i != d1 && i != d2) {
        g.sizes.push_back(sizes[i]);
        g.strides.push_back(strides[i]);
      }
    }
    g.sizes.push_back(length);
    g.strides.push_back(strides[d1] + strides[d2]);
    g.offset = length > 0 ? start : 0;
    return g;
  }
  static Tensor backward(
      const Tensor& grad, const Args& args, const Shape& sizes) {
    auto [offset, dim1, dim2] = args;
    return diagonal_backward(grad, sizes, offset, dim1, dim2);
  }
  static constexpr OpDoc doc = {
      "A view of the diagonal ``offset`` of dims ``dim1`` and ``dim2``, as "
      "the last dim",
      "[[1, 2], [3, 4]]",
      "tensor([1, 4])",
      ""};
};

struct Unfold {
  static constexpr const char* name = "unfold";
  static constexpr bool function = false, method = true;
  static constexpr const char* nodes[] = {"UnfoldBackward0"};
  using Args = std::tuple<int64_t, int64_t, int64_t>;
  static constexpr std::array<ViewParam, 3> params = {
      {{"dimension"}, {"size"}, {"step"}}};
  static constexpr unsigned saves = ViewSaves::Args | ViewSaves::SelfSizes;
  // One dim of windows in place of `dimension`, the window's elements last
  // (a 0-dim tensor unfolds as one element).
  static Strided geometry(const Tensor& a, const Args& args) {
    auto [dimension, size, step] = args;
    int64_t d = maybe_wrap_dim(dimension, a.dim());
    int64_t max_size = a.dim() == 0 ? 1 : a.sizes()[d];
    NPGRAD_CHECK(
        size <= max_size,
        "maximum size for tensor at dimension ",
        d,
        " is ",
        max_size,
        " but size is ",
        size);
    NPGRAD_CHECK(size >= 0, "size is ", size, " but must be >= 0");
    NPGRAD_CHECK(step > 0, "step is ", step, " but must be > 0");
    Strided g{a.sizes(), a.strides(), 0};
    if (a.dim() == 0) {
      g.sizes.push_back(size);
      g.strides.push_back(1);
      return g;
    }
    g.sizes[d] = (a.sizes()[d] - size) / step + 1;
    g.strides[d] = a.strides()[d] * step;
    g.sizes.push_back(size);
    g.strides.push_back(a.strides()[d]);
    return g;
  }
  static Tensor backward(
      const Tensor& grad, const Args& args, const Shape& sizes) {
    auto [dimension, size, step] = args;
    return unfold_backward(grad, sizes, dimension, size, step);
  }
  static constexpr OpDoc doc = {
      "A view of the windows of ``size`` elements every ``step`` along "
      "``dimension``, the window's elements as a new last dim",
      "[1, 2, 3, 4]",
      "tensor([[1, 2],\n        [2, 3],\n        [3, 4]])",
      "0, 2, 1"};
};

// One op per line, so that adding one is a one-line change here.
// clang-format off
using ViewOps = OpList<
    View,
    Expand,
    T,
    Transpose,
    Permute,
    Squeeze,
    Unsqueeze,
    Select,
    Diagonal,
    Unfold>;
// clang-format on

}  // namespace npgrad::ops::view_ops
