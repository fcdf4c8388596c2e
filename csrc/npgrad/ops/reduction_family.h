#pragma once
// The machinery behind the reduction table (reduction_ops.h): the ops that
// reduce `input` over `dim` (an int, a tuple of ints, or all dims) with
// `keepdim`. From one entry come the forward op, its backward node type(s),
// and in the bindings the function, the method, the node classes, the
// docstrings and (through _C._op_table) the stubs.
//
// An entry is a struct with these members:
//   name       torch's function and method name
//   node       torch's name of the backward node
//   full_node  optional: torch's node of its overload without `dim` (sum()
//              records SumBackward0, sum(dim) SumBackward1). That node saves
//              neither dim nor keepdim, and the function then has two torch
//              overloads (its "invalid combination" errors list both)
//   dim        Dim::Optional (`dim=None`: all dims; saved as None, or the
//              full_node), Dim::All (`dim=()`: all dims, saved as ()),
//              Dim::Required (no default), Dim::One (one int, saved as an
//              int, as prod's; None or no dim: the full_node)
//   dtype      the result dtype: Dtype::Input; Dtype::IntegersToInt64 (int
//              and bool sum to int64, as torch's sum); Dtype::FloatOnly
//              (torch's "could not infer output dtype" error for others,
//              as mean's; an integer input with a floating `dtype=` is
//              fine); Dtype::IntegersToFloat (float32, as logsumexp)
//   takes_dtype  whether the op takes torch's keyword `dtype=` (the result
//              dtype; the input is converted)
//   saves      what the node keeps, a mask of Saved::Dim (`_saved_dim`, as
//              the caller gave it), Keepdim, Self, Result, SelfNumel
//              (`_saved_self_sym_numel`), SelfSizes (`_saved_self_sym_sizes`)
//   kernel     `static Tensor kernel(const Tensor& input, const
//              std::vector<int64_t>& dims, bool keepdim, ScalarType dtype)`:
//              the values over the wrapped dims (all when empty) in the
//              result dtype, with no graph
//   backward   `static Tensor backward(const Tensor& grad, const
//              ReductionSaved& saved)`: written with npgrad ops so that
//              create_graph records it
//   doc        `static constexpr OpDoc doc`; its example_other is the
//              example call's arguments after the input ("1", "dim=0")
//   check      optional `static void check(const Tensor& input, const
//              ReductionArgs& args)`: torch's errors that depend on the
//              input's dtype, the dims, `dtype=` or the scalar (amax of an
//              empty dim, var of an integer tensor)
//   scalar     optional `static constexpr ScalarArg scalar`: the op's one
//              extra scalar, saved as `scalar.saved`. Its kind says how the
//              bindings take it: ScalarArg::Correction (var's keyword
//              `correction`, or the legacy bool `unbiased`; None when neither
//              is given), ScalarArg::Ord (norm's `p` before `dim`: a number,
//              None or 'fro'). The kernel then takes it as a last argument
//              (`std::optional<double>`), the backward reads `saved.scalar`
//   exposed    optional, false for an op torch has only inside composites
//              (ATen's norm, `_C._norm`): its node and its function in _C
//              with ATen's positional arguments, no method
// The entry is added to ReductionOps at the end of reduction_ops.h.

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/formula_helpers.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

enum class Dim { Optional, All, Required, One };
enum class Dtype { Input, IntegersToInt64, FloatOnly, IntegersToFloat };

/// What a reduction node can save, as bits of a mask.
struct Saved {
  static constexpr unsigned Dim = 1, Keepdim = 2, Self = 4, Result = 8,
                            SelfNumel = 16, SelfSizes = 32;
};

/// An entry's extra scalar argument (see the header comment).
struct ScalarArg {
  enum Kind { Correction, Ord } kind;
  const char* saved;  // the node's attribute
};

/// What an entry's check sees besides the input.
struct ReductionArgs {
  std::vector<int64_t> given;       // the dims as given (empty: all)
  std::vector<int64_t> wrapped;     // the same wrapped
  std::optional<ScalarType> dtype;  // `dtype=` as given
  std::optional<double> scalar;     // the entry's scalar as given
};

/// What a reduction's backward formula sees: the saved values (others are
/// empty), and the input's number of dims.
struct ReductionSaved {
  Tensor self, result;
  std::optional<Shape> dims;  // as given; none: all dims
  bool keepdim = false;
  std::optional<double> scalar;  // the entry's scalar, as given
  int64_t self_numel = 0;
  Shape self_sizes;
  int64_t ndim = 0;

  /// The reduced dims as given (empty: all).
  Shape reduced() const { return dims.value_or(Shape{}); }
  /// `t` (shaped as the result) with the reduced dims put back as size 1,
  /// so that it broadcasts against the input.
  Tensor unreduced(const Tensor& t) const {
    return autograd::unsqueeze_reduced(t, ndim, reduced(), keepdim);
  }
};

namespace detail {
template <typename Op, typename = void>
struct HasFullNode : std::false_type {};
template <typename Op>
struct HasFullNode<Op, std::void_t<decltype(Op::full_node)>> : std::true_type {
};
template <typename Op, typename = void>
struct HasScalar : std::false_type {};
template <typename Op>
struct HasScalar<Op, std::void_t<decltype(Op::scalar)>> : std::true_type {};

template <typename Op>
ScalarType reduction_dtype(
    const Tensor& input, std::optional<ScalarType> dtype) {
  if constexpr (Op::dtype == Dtype::FloatOnly) {
    // torch checks the dtype= given, else the input's (an integer input
    // with a floating dtype= is fine).
    NPGRAD_CHECK(
        is_floating(dtype.value_or(input.dtype())),
        Op::name,
        "(): could not infer output dtype. ",
        dtype ? "Optional" : "Input",
        " dtype must be either a floating point or complex dtype. Got: ",
        scalar_type_name(dtype.value_or(input.dtype())));
  }
  if (dtype) {
    return *dtype;
  }
  bool integral = !is_floating(input.dtype());
  if constexpr (Op::dtype == Dtype::IntegersToInt64) {
    return integral ? ScalarType::Int64 : input.dtype();
  } else if constexpr (Op::dtype == Dtype::IntegersToFloat) {
    return integral ? ScalarType::Float32 : input.dtype();
  } else {
    return input.dtype();
  }
}
}  // namespace detail

/// The backward node of a reduction table entry; `Full` for the entry's
/// full_node (no dim given), which saves neither dim nor keepdim.
template <typename Op, bool Full = false>
struct ReductionBackward final : autograd::FormulaNode {
  static constexpr unsigned saves =
      Full ? Op::saves & ~(Saved::Dim | Saved::Keepdim) : Op::saves;

  std::string name() const override {
    if constexpr (Full) {
      return Op::full_node;
    } else {
      return Op::node;
    }
  }

  void compute(const variable_list& g, variable_list& out) override {
    ReductionSaved saved;
    // The input unpacks as torch's formulas do (without the node); the
    // output is rebuilt with this node as its history.
    if constexpr ((saves & Saved::Self) != 0) {
      saved.self = self_.unpack();
    }
    if constexpr ((saves & Saved::Result) != 0) {
      saved.result = result_.unpack(self_ptr());
    }
    saved.dims = dims;
    saved.keepdim = keepdim;
    saved.scalar = scalar;
    saved.self_numel = self_numel;
    saved.self_sizes = self_sizes;
    saved.ndim = ndim;
    out[0] = Op::backward(g[0], saved);
  }

  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    if constexpr (detail::HasScalar<Op>::value) {
      if (scalar) {
        v.real(Op::scalar.saved, *scalar);
      } else {
        v.none(Op::scalar.saved);
      }
    }
    if constexpr ((saves & Saved::Dim) != 0 && Op::dim == Dim::One) {
      v.integer("_saved_dim", dims->front());
    } else if constexpr ((saves & Saved::Dim) != 0) {
      if (dims) {
        v.int_list("_saved_dim", *dims);
      } else {
        v.none("_saved_dim");
      }
    }
    if constexpr ((saves & Saved::Keepdim) != 0) {
      v.boolean("_saved_keepdim", keepdim);
    }
    if constexpr ((saves & Saved::Result) != 0) {
      v.tensor("_saved_result", result_);
    }
    if constexpr ((saves & Saved::Self) != 0) {
      v.tensor("_saved_self", self_);
    }
    if constexpr ((saves & Saved::SelfNumel) != 0) {
      v.integer("_saved_self_sym_numel", self_numel);
    }
    if constexpr ((saves & Saved::SelfSizes) != 0) {
      v.int_list("_saved_self_sym_sizes", self_sizes);
    }
  }

  autograd::SavedVariable self_, result_;
  std::optional<Shape> dims;
  bool keepdim = false;
  std::optional<double> scalar;
  int64_t self_numel = 0;
  Shape self_sizes;
  int64_t ndim = 0;  // not saved state: the formulas' rank of the input
};

namespace detail {
template <typename Op, bool Full>
void record_reduction(
    const Tensor& out,
    const Tensor& input,
    const std::optional<std::vector<int64_t>>& given,
    bool keepdim,
    std::optional<double> scalar) {
  using Node = ReductionBackward<Op, Full>;
  auto node = autograd::make_node<Node>();
  node->set_next_edges(autograd::collect_next_edges({&input}));
  autograd::set_history(out, node);
  node->dims = given;
  node->keepdim = keepdim;
  node->scalar = scalar;
  node->ndim = input.dim();
  if constexpr ((Node::saves & Saved::SelfNumel) != 0) {
    node->self_numel = input.numel();
  }
  if constexpr ((Node::saves & Saved::SelfSizes) != 0) {
    node->self_sizes = input.sizes();
  }
  // torch's order (pack hooks see it): self, then result (saved once its
  // history is set: the node's own output, without a reference cycle).
  if constexpr ((Node::saves & Saved::Self) != 0) {
    node->self_ = autograd::SavedVariable(input, false);
  }
  if constexpr ((Node::saves & Saved::Result) != 0) {
    node->result_ = autograd::SavedVariable(out, true);
  }
}
}  // namespace detail

/// The forward op of a reduction table entry over `dims` (none: all dims),
/// then the node when the input requires grad. With no dims and not
/// `dim_given_as_none`, an entry with a full_node is torch's overload
/// without dim (`sum()`: the full_node, keepdim ignored); `sum(None,
/// keepdim)` is the overload with dim, which records the node with dim None
/// and keeps the reduced dims when keepdim is true. `scalar`: the entry's
/// scalar as given (correction, p).
template <typename Op>
Tensor reduction(
    const Tensor& input,
    std::optional<std::vector<int64_t>> dims,
    bool keepdim = false,
    std::optional<ScalarType> dtype = std::nullopt,
    bool dim_given_as_none = false,
    std::optional<double> scalar = std::nullopt) {
  const bool full =
      detail::HasFullNode<Op>::value && !dims && !dim_given_as_none;
  ScalarType out_dtype = detail::reduction_dtype<Op>(input, dtype);
  if (full) {
    keepdim = false;
  }
  std::vector<int64_t> wrapped =
      dims ? wrap_dims(*dims, input.dim()) : std::vector<int64_t>{};
  if constexpr (detail::HasCheck<Op>::value) {
    Op::check(
        input,
        ReductionArgs{
            dims.value_or(std::vector<int64_t>{}), wrapped, dtype, scalar});
  }
  Tensor out;
  if constexpr (detail::HasScalar<Op>::value) {
    out = Op::kernel(input, wrapped, keepdim, out_dtype, scalar);
  } else {
    out = Op::kernel(input, wrapped, keepdim, out_dtype);
  }
  if (autograd::compute_requires_grad({&input})) {
    if (full) {
      detail::record_reduction<Op, detail::HasFullNode<Op>::value>(
          out, input, dims, keepdim, scalar);
    } else {
      detail::record_reduction<Op, false>(out, input, dims, keepdim, scalar);
    }
  }
  return out;
}

}  // namespace npgrad::ops
