// torch.einsum, computed as torch's einsum computes it (ATen's Linear.cpp):
// the equation parsed into one label list per operand, every operand brought
// to one common order of dims (the output's dims, then the contracted ones;
// diagonals for repeated labels, size-1 dims for missing ones), then the
// operands contracted pairwise, left to right (or along a given path), each
// pair by permute/reshape/bmm. Written with npgrad's ops, so that it records
// torch's graph (UnsqueezeBackward0, PermuteBackward0, ViewBackward0,
// BmmBackward0, SumBackward1, DiagonalBackward0, MulBackward0) and its
// gradients of any order come from those ops.

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

namespace {

// Labels are the letters: 'A'-'Z' are 0-25 and 'a'-'z' 26-51, so that the
// implicit output lists upper-case labels first, as torch's does.
constexpr int kLetters = 26;
constexpr int kLabels = 2 * kLetters;
constexpr int kEllipsis = kLabels;

bool is_letter(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int label_of(unsigned char c) {
  return c <= 'Z' ? c - 'A' : c - 'a' + kLetters;
}

char letter_of(int label) {
  return static_cast<char>(
      label < kLetters ? 'A' + label : 'a' + label - kLetters);
}

// Whether an ellipsis starts at text[i] ("..." in full); moves i to its end.
bool take_ellipsis(const std::string& text, std::size_t& i) {
  if (i + 2 < text.size() && text[i + 1] == '.' && text[i + 2] == '.') {
    i += 2;
    return true;
  }
  return false;
}

// (left * right) summed over sum_dims, which stay as dims of size 1. The
// operands are aligned: the same number of dims, each of equal size or 1.
// The dims fall in four groups (in both operands and the output, in one
// operand and the output, summed) and bmm computes the product of
// left as (both, left only, summed) and right as (both, summed, right only).
Tensor contract_pair(
    Tensor left, Tensor right, const std::vector<int64_t>& sum_dims) {
  if (sum_dims.empty()) {
    return mul(left, right);
  }
  const int64_t ndim = left.dim();
  std::vector<bool> summed(static_cast<std::size_t>(ndim));
  for (int64_t d : sum_dims) {
    summed[d] = true;
  }
  std::vector<int64_t> both, left_only, right_only;
  int64_t both_size = 1, left_size = 1, right_size = 1, sum_size = 1;
  auto check_match = [&](int64_t i) {
    NPGRAD_CHECK(
        left.sizes()[i] == right.sizes()[i],
        "non-broadcast dimensions must match");
  };
  for (int64_t i = 0; i < ndim; ++i) {
    const bool in_left = left.sizes()[i] != 1;
    const bool in_right = right.sizes()[i] != 1;
    if (summed[i]) {
      // A summed dim in one operand only is summed there right away.
      if (in_left && in_right) {
        check_match(i);
        sum_size *= left.sizes()[i];
      } else if (in_left) {
        left = sum(left, {i}, true);
      } else if (in_right) {
        right = sum(right, {i}, true);
      }
    } else if (in_left && in_right) {
      check_match(i);
      both.push_back(i);
      both_size *= left.sizes()[i];
    } else if (in_left) {
      left_only.push_back(i);
      left_size *= left.sizes()[i];
    } else {
      right_only.push_back(i);
      right_size *= right.sizes()[i];
    }
  }
  // When every dim of right alone comes before every dim of left alone, the
  // operands trade places, so that bmm's result is in the output's order (as
  // torch's einsum does since it chose to return contiguous results more
  // often: einsum("fd,bd->bf", w, x) is contiguous).
  if (!left_only.empty() && !right_only.empty() &&
      right_only.back() < left_only.front()) {
    std::swap(left, right);
    std::swap(left_only, right_only);
    std::swap(left_size, right_size);
  }
  Shape out_sizes;
  std::vector<int64_t> left_perm, right_perm, out_perm(ndim, -1);
  int64_t position = 0;
  auto place = [&](const std::vector<int64_t>& dims, const Tensor* sizes_of) {
    for (int64_t d : dims) {
      out_sizes.push_back(sizes_of != nullptr ? sizes_of->sizes()[d] : 1);
      out_perm[d] = position++;
    }
  };
  place(both, &left);
  place(left_only, &left);
  place(sum_dims, nullptr);
  place(right_only, &right);
  using Dims = const std::vector<int64_t>*;
  for (Dims group :
       std::initializer_list<Dims>{&both, &left_only, &sum_dims, &right_only}) {
    left_perm.insert(left_perm.end(), group->begin(), group->end());
  }
  for (Dims group :
       std::initializer_list<Dims>{&both, &sum_dims, &right_only, &left_only}) {
    right_perm.insert(right_perm.end(), group->begin(), group->end());
  }
  left = reshape(permute(left, left_perm), {both_size, left_size, sum_size});
  right =
      reshape(permute(right, right_perm), {both_size, sum_size, right_size});
  return permute(view(bmm(left, right), out_sizes), out_perm);
}

}  // namespace

Tensor einsum(
    const std::string& equation,
    const std::vector<Tensor>& operands,
    const std::optional<std::vector<int64_t>>& path) {
  NPGRAD_CHECK(
      !operands.empty(), "einsum(): must provide at least one operand");
  const std::size_t num_ops = operands.size();
  if (path) {
    const std::size_t expected = num_ops == 1 ? 1 : (num_ops - 1) * 2;
    NPGRAD_CHECK(
        path->size() == expected,
        "einsum(): expected contraction path given in path parameter to have "
        "size ",
        expected,
        " but got ",
        path->size());
  }

  // 1. The labels of each operand (kEllipsis for "...").
  const std::size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> op_labels(num_ops);
  std::size_t current = 0;
  bool ellipsis_seen = false;
  for (std::size_t i = 0; i < lhs.size(); ++i) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ' ') {
      continue;
    }
    if (c == '.') {
      NPGRAD_CHECK(
          !ellipsis_seen,
          "einsum(): found '.' for operand ",
          current,
          " for which an ellipsis was already found");
      NPGRAD_CHECK(
          take_ellipsis(lhs, i),
          "einsum(): found '.' for operand ",
          current,
          " that is not part of any ellipsis");
      op_labels[current].push_back(kEllipsis);
      ellipsis_seen = true;
    } else if (c == ',') {
      ++current;
      NPGRAD_CHECK(
          current < num_ops,
          "einsum(): fewer operands were provided than specified in the "
          "equation");
      ellipsis_seen = false;
    } else {
      NPGRAD_CHECK(
          is_letter(c),
          "einsum(): invalid subscript given at index ",
          i,
          " in the equation string, subscripts must be in [a-zA-Z]");
      op_labels[current].push_back(label_of(c));
    }
  }
  NPGRAD_CHECK(
      current == num_ops - 1,
      "einsum(): more operands were provided than specified in the equation");

  // How often each label occurs, and how many dims the widest ellipsis covers.
  std::vector<int64_t> label_count(kLabels, 0);
  int64_t ell_num_dim = 0;
  for (std::size_t i = 0; i < num_ops; ++i) {
    const int64_t ndim = operands[i].dim();
    int64_t nlabels = static_cast<int64_t>(op_labels[i].size());
    bool has_ellipsis = false;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        --nlabels;
        has_ellipsis = true;
        ell_num_dim = std::max(ell_num_dim, ndim - nlabels);
      } else {
        ++label_count[label];
      }
    }
    NPGRAD_CHECK(
        has_ellipsis ? nlabels <= ndim : nlabels == ndim,
        "einsum(): the number of subscripts in the equation (",
        nlabels,
        has_ellipsis ? ") is more than the number of dimensions ("
                     : ") does not match the number of dimensions (",
        ndim,
        ") for operand ",
        i,
        has_ellipsis ? "" : " and no ellipsis was given");
  }

  // 2. The common order of dims: the output's (explicit, or the ellipsis then
  // the labels seen once, in label order), then the contracted ones.
  std::vector<int64_t> label_position(kLabels, -1);
  int64_t num_dims = 0;
  int64_t ell_position = 0;
  bool ell_in_output = false;
  if (arrow == std::string::npos) {
    num_dims = ell_num_dim;
    ell_in_output = true;
    for (int label = 0; label < kLabels; ++label) {
      if (label_count[label] == 1) {
        label_position[label] = num_dims++;
      }
    }
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (std::size_t i = 0; i < rhs.size(); ++i) {
      const auto c = static_cast<unsigned char>(rhs[i]);
      if (c == ' ') {
        continue;
      }
      if (c == '.') {
        NPGRAD_CHECK(
            !ell_in_output,
            "einsum(): found '.' for output but an ellipsis (...) was already "
            "found");
        NPGRAD_CHECK(
            take_ellipsis(rhs, i),
            "einsum(): found '.' for output that is not part of any ellipsis "
            "(...)");
        ell_position = num_dims;
        num_dims += ell_num_dim;
        ell_in_output = true;
        continue;
      }
      NPGRAD_CHECK(
          is_letter(c),
          "einsum(): invalid subscript given at index ",
          lhs.size() + 2 + i,
          " in the equation string, subscripts must be in [a-zA-Z]");
      const int label = label_of(c);
      NPGRAD_CHECK(
          label_count[label] > 0 && label_position[label] == -1,
          "einsum(): output subscript ",
          static_cast<char>(c),
          label_position[label] > -1
              ? " appears more than once in the output"
              : " does not appear in the equation for any input operand");
      label_position[label] = num_dims++;
    }
  }
  const int64_t out_num_dim = num_dims;
  if (!ell_in_output) {
    ell_position = num_dims;
    num_dims += ell_num_dim;
  }
  for (int label = 0; label < kLabels; ++label) {
    if (label_count[label] > 0 && label_position[label] == -1) {
      label_position[label] = num_dims++;
    }
  }

  // 3. Each operand aligned to that order; sizes checked, and counted: how
  // many operands have each dim with a size other than 1.
  std::vector<int64_t> label_size(kLabels, 1);
  std::vector<int64_t> ell_sizes(static_cast<std::size_t>(ell_num_dim), 1);
  std::vector<int64_t> dim_counts(static_cast<std::size_t>(num_dims), 0);
  std::deque<Tensor> ops;
  for (std::size_t i = 0; i < num_ops; ++i) {
    Tensor op = operands[i];
    std::vector<int64_t> permutation(static_cast<std::size_t>(num_dims), -1);
    int64_t dim = 0;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        const int64_t covered =
            operands[i].dim() - (static_cast<int64_t>(op_labels[i].size()) - 1);
        for (int64_t j = ell_num_dim - covered; j < ell_num_dim; ++j) {
          const int64_t size = op.sizes()[dim];
          if (size != 1) {
            // torch's message has no space before "has size".
            NPGRAD_CHECK(
                ell_sizes[j] == 1 || ell_sizes[j] == size,
                "einsum(): dimension ",
                dim,
                " covered by ellipsis in operand ",
                i,
                "has size ",
                size,
                " which does not broadcast with previously seen ellipsis "
                "with size ",
                ell_sizes[j],
                " for the respective dimension");
            ell_sizes[j] = size;
            ++dim_counts[ell_position + j];
          }
          permutation[ell_position + j] = dim++;
        }
      } else if (permutation[label_position[label]] == -1) {
        const int64_t size = op.sizes()[dim];
        if (size != 1) {
          NPGRAD_CHECK(
              label_size[label] == 1 || label_size[label] == size,
              "einsum(): subscript ",
              letter_of(label),
              " has size ",
              size,
              " for operand ",
              i,
              " which does not broadcast with previously seen size ",
              label_size[label]);
          label_size[label] = size;
          ++dim_counts[label_position[label]];
        }
        permutation[label_position[label]] = dim++;
      } else {
        // A repeated label: its diagonal, in place of the first occurrence.
        const int64_t first = permutation[label_position[label]];
        NPGRAD_CHECK(
            op.sizes()[dim] == op.sizes()[first],
            "einsum(): subscript ",
            letter_of(label),
            " is repeated for operand ",
            i,
            " but the sizes don't match, ",
            op.sizes()[dim],
            " != ",
            op.sizes()[first]);
        op = movedim(diagonal(op, 0, first, dim), {-1}, {first});
      }
    }
    for (auto& p : permutation) {
      if (p == -1) {
        op = unsqueeze(op, dim);
        p = dim++;
      }
    }
    ops.push_back(permute(op, permutation));
  }

  // 4. Contraction, pairwise: a dim is summed as soon as no other operand
  // has it (in one operand only: summed there first).
  std::size_t step = 0;
  while (ops.size() > 1) {
    int64_t i = 0;
    int64_t j = 1;
    if (path) {
      i = (*path)[step++];
      j = (*path)[step++];
      if (j < i) {
        std::swap(i, j);
      }
      NPGRAD_CHECK(
          i != j && i >= 0 && j < static_cast<int64_t>(ops.size()),
          "einsum(): invalid contraction (",
          i,
          ", ",
          j,
          i == j ? ") cannot contract an operand with itself"
                 : ") operand index is out of bounds");
    }
    Tensor a = ops[i];
    Tensor b = ops[j];
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    std::vector<int64_t> sum_dims, a_dims, b_dims;
    for (int64_t d = out_num_dim; d < num_dims; ++d) {
      const bool in_a = a.sizes()[d] != 1;
      const bool in_b = b.sizes()[d] != 1;
      if (in_a && in_b) {
        if (--dim_counts[d] == 1) {
          sum_dims.push_back(d);
          dim_counts[d] = 0;
        }
      } else if (dim_counts[d] == 1) {
        if (in_a) {
          a_dims.push_back(d);
          dim_counts[d] = 0;
        } else if (in_b) {
          b_dims.push_back(d);
          dim_counts[d] = 0;
        }
      }
    }
    if (!a_dims.empty()) {
      a = sum(a, a_dims, true);
    }
    if (!b_dims.empty()) {
      b = sum(b, b_dims, true);
    }
    Tensor product = contract_pair(a, b, sum_dims);
    if (path) {
      ops.push_back(std::move(product));
    } else {
      ops.push_front(std::move(product));
    }
  }

  // The contracted dims: size 1 by now when there were several operands (a
  // view drops them), summed when there was one.
  if (num_dims > out_num_dim) {
    if (num_ops > 1) {
      Shape sizes = ops[0].sizes();
      sizes.resize(static_cast<std::size_t>(out_num_dim));
      return view(ops[0], sizes);
    }
    std::vector<int64_t> dims;
    for (int64_t d = out_num_dim; d < num_dims; ++d) {
      dims.push_back(d);
    }
    return sum(ops[0], dims, false);
  }
  return ops[0];
}

}  // namespace npgrad::ops
