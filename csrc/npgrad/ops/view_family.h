#pragma once
// The machinery behind the view table (view_ops.h): the ops whose result is
// a view of their one input, a new geometry (sizes, strides, offset) over
// the input's data. From one entry come the forward op (the result shares
// the input's storage and version counter and is a view for autograd), its
// node types, the in-place view arm, and in the bindings
// (csrc/bindings/view_table.cpp) the function and/or method, the node
// classes, the docstrings and (through _C._op_table, family "view") the
// stubs.
//
// An entry is a struct with these members:
//   name       torch's name of the function and/or the method
//   function, method   whether torch has `torch.<name>` and `Tensor.<name>`
//   nodes      torch's node names, one per form of the call: most ops have
//              one; squeeze has three (no dim, an int dim, a dims tuple:
//              SqueezeBackward0/1/2), told apart by `form`
//   inplace, inplace_nodes   optional: torch's in-place view op (t_) and
//              its nodes, one per form (TBackward1; SqueezeBackward3/4/5)
//   Args       a std::tuple of the arguments after the input, of types
//              int64_t (an int), Shape (a tuple of ints; a method whose
//              only argument it is also takes them unpacked, `view(2, 3)`)
//              or SqueezeDims (None, an int or a tuple of ints)
//   params     `static constexpr std::array<ViewParam, N> params`: torch's
//              names of Args, in order, with their defaults (a SqueezeDims
//              defaults to None)
//   saves      what the node keeps, a mask of ViewSaves::Args (the
//              arguments as the caller gave them, as `_saved_<param>`) and
//              ViewSaves::SelfSizes (`_saved_self_sym_sizes`)
//   geometry   `static Strided geometry(const Tensor& input, const Args&)`:
//              the view's sizes, strides and offset (elements, from the
//              input's data), with torch's checks and messages
//   backward   `static Tensor backward(const Tensor& grad, const Args&, const
//              Shape& self_sizes)`: written with npgrad ops so that
//              create_graph records it
//   doc        `static constexpr OpDoc doc`; its example_other is the
//              example call's arguments after the input ("0, 1")
//   check      optional `static void check(const Tensor& input, const Args&,
//              const char* fn)`: torch's argument errors of the function and
//              method (and the in-place form, `fn` naming the one called)
//              that the op's internal callers never meet, or meet with a
//              message of their own (indexing's for select)
//   form       optional `static int form(const Args&)`: which of `nodes`
// The entry is added to ViewOps at the end of view_ops.h.

#include <array>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/mutation.h"
#include "npgrad/ops/op_table.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"

namespace npgrad::ops {

/// A view's geometry relative to its input's data, in elements.
struct Strided {
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
};

/// One argument of a view entry: torch's name and its default, if any.
struct ViewParam {
  const char* name;
  bool has_default = false;
  int64_t default_value = 0;
};

/// squeeze's `dim`: None (all size-1 dims), an int, or a tuple of ints,
/// each its own torch overload and node.
struct SqueezeDims {
  std::optional<Shape> dims;
  bool tuple = false;
};

/// What a view node can save, as bits of a mask.
struct ViewSaves {
  static constexpr unsigned Args = 1, SelfSizes = 2;
};

namespace detail {
template <typename Op, typename = void>
struct HasInplaceView : std::false_type {};
template <typename Op>
struct HasInplaceView<Op, std::void_t<decltype(Op::inplace)>> : std::true_type {
};

template <typename Op, typename = void>
struct HasForm : std::false_type {};
template <typename Op>
struct HasForm<Op, std::void_t<decltype(&Op::form)>> : std::true_type {};

template <typename Op>
constexpr std::size_t num_forms = std::size(Op::nodes);

inline void visit_arg(
    autograd::SavedAttributeVisitor& v, const char* name, int64_t value) {
  v.integer(name, value);
}
inline void visit_arg(
    autograd::SavedAttributeVisitor& v, const char* name, const Shape& value) {
  v.int_list(name, value);
}
// squeeze() saves no dim; squeeze(dim) an int, squeeze(dims) a tuple.
inline void visit_arg(
    autograd::SavedAttributeVisitor& v,
    const char* name,
    const SqueezeDims& value) {
  if (value.dims) {
    if (value.tuple) {
      v.int_list(name, *value.dims);
    } else {
      v.integer(name, value.dims->at(0));
    }
  }
}
}  // namespace detail

/// The backward node of a view entry, for its form `Form` (an index into
/// `nodes`), of the out-of-place op or (Inplace) of the in-place view op.
template <typename Op, int Form = 0, bool Inplace = false>
struct ViewOpBackward final : autograd::FormulaNode {
  std::string name() const override {
    if constexpr (Inplace) {
      return Op::inplace_nodes[Form];
    } else {
      return Op::nodes[Form];
    }
  }

  void compute(const variable_list& g, variable_list& out) override {
    out[0] = Op::backward(g[0], args, self_sizes);
  }

  void visit_saved(autograd::SavedAttributeVisitor& v) override {
    if constexpr ((Op::saves & ViewSaves::Args) != 0) {
      std::apply(
          [&](const auto&... arg) {
            std::size_t i = 0;
            auto visit = [&](const auto& value) {
              std::string name = std::string("_saved_") + Op::params[i++].name;
              detail::visit_arg(v, name.c_str(), value);
            };
            (visit(arg), ...);
          },
          args);
    }
    if constexpr ((Op::saves & ViewSaves::SelfSizes) != 0) {
      v.int_list("_saved_self_sym_sizes", self_sizes);
    }
  }

  typename Op::Args args;
  Shape self_sizes;
};

namespace detail {
template <typename Op>
int view_form(const typename Op::Args& args) {
  if constexpr (HasForm<Op>::value) {
    return Op::form(args);
  } else {
    return 0;
  }
}

// Calls fn(std::integral_constant<int, form>) for the runtime `form`.
template <typename Op, typename Fn, std::size_t... I>
void with_form(int form, Fn&& fn, std::index_sequence<I...>) {
  ((form == static_cast<int>(I)
        ? (fn(std::integral_constant<int, static_cast<int>(I)>{}), 0)
        : 0),
   ...);
}

// The node of the call's form, with its edge to `input` and its saved
// state (the in-place view op's node when Inplace).
template <typename Op, bool Inplace>
std::shared_ptr<autograd::Node> make_view_node(
    const Tensor& input, const typename Op::Args& args) {
  std::shared_ptr<autograd::Node> node;
  with_form<Op>(
      view_form<Op>(args),
      [&](auto form) {
        using Node = ViewOpBackward<Op, decltype(form)::value, Inplace>;
        auto made = autograd::make_node<Node>();
        made->set_next_edges(autograd::collect_next_edges({&input}));
        made->args = args;
        made->self_sizes = input.sizes();
        node = made;
      },
      std::make_index_sequence<num_forms<Op>>{});
  return node;
}

template <typename Op>
void check_view_args(
    const Tensor& input, const typename Op::Args& args, const char* fn) {
  if constexpr (HasCheck<Op>::value) {
    Op::check(input, args, fn);
  }
}
}  // namespace detail

/// The forward op of a view entry: the view, then the node when the input
/// requires grad. `InplaceNode` records the in-place op's node for the
/// out-of-place view (matmul's squeeze_ of a helper dim, as torch records
/// it). The entry's `check` is the bindings' (detail::check_view_args).
template <typename Op, bool InplaceNode = false>
Tensor view_op(const Tensor& input, const typename Op::Args& args) {
  Strided g = Op::geometry(input, args);
  Tensor out = autograd::make_view(
      input, kernels::view_as_strided(input, g.sizes, g.strides, g.offset));
  if (autograd::compute_requires_grad({&input})) {
    autograd::set_history(
        out, detail::make_view_node<Op, InplaceNode>(input, args));
  }
  return out;
}

// Note [In-place view ops]
// t_, transpose_, squeeze_ and unsqueeze_ change self's sizes and strides,
// never its elements: self takes the geometry of the view that the
// out-of-place op computes (in no-grad mode, so that it records nothing),
// the version is bumped as for any in-place op, and when grad is recorded
// the entry's in-place node (torch's in-place variant: TBackward1,
// TransposeBackward1, SqueezeBackward3/4/5, UnsqueezeBackward1) is stacked
// on self's history. No CopySlices: no element of a base changed, so a view
// keeps its base and its base keeps its history. torch's leaf and view rules
// apply (check_inplace).

/// The in-place view arm of an entry with `inplace`.
template <typename Op>
void view_op_(const Tensor& self, const typename Op::Args& args) {
  const bool record = autograd::compute_requires_grad({&self});
  check_inplace(self, record, /*allow_overlap=*/true);
  Tensor view;
  {
    autograd::AutoGradMode no_grad(false);
    view = view_op<Op>(self, args);
  }
  std::shared_ptr<autograd::Node> node;
  if (record) {
    node = detail::make_view_node<Op, true>(self, args);
  }
  TensorImpl* dst = self.impl();
  const TensorImpl* src = view.impl();
  dst->array = src->array;
  dst->data = src->data;
  dst->sizes = src->sizes;
  dst->strides = src->strides;
  autograd::bump_version(self, Op::inplace);
  if (node) {
    autograd::AutogradMeta& meta = autograd::materialize_autograd_meta(self);
    std::shared_ptr<autograd::Node> old_fn = meta.grad_fn;
    const uint32_t old_nr = meta.output_nr;
    autograd::set_history(self, node);
    // The history just set is current (Note [Lazy grad_fn of views]).
    dst->attr_version = self.version();
    autograd::move_retains_grad_hook(self, old_fn, old_nr, node);
  }
}

}  // namespace npgrad::ops
