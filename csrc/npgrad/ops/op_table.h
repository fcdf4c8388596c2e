#pragma once
// What every op table shares: the list type, the dtype rule, the docstring.
// The families' machinery (unary_family.h, binary_family.h) builds on it.

#include <type_traits>

namespace npgrad::ops {

/// The dtype an op computes in: Promotes::ToFloat sends integer and bool
/// inputs to the default float dtype (float32), as torch's exp, sin or div
/// do; Promotes::No keeps the (promoted) input dtype (abs, neg, mul).
enum class Promotes { No, ToFloat };

/// A docstring's parts: what the op computes, an example input (a Python
/// list literal), for a binary op the other operand (a list literal or a
/// number), and what `npgrad.<name>(tensor(input)[, other])` prints.
struct OpDoc {
  const char* summary;
  const char* example_input;
  const char* example_output;
  const char* example_other = nullptr;
};

template <typename... Ops>
struct OpList {
  /// Calls fn(Op{}) for each entry, in order.
  template <typename Fn>
  static void for_each(Fn&& fn) {
    (fn(Ops{}), ...);
  }
};

namespace detail {
// An entry without `node` is not differentiable: a bool result, no graph.
template <typename Op, typename = void>
struct IsDifferentiable : std::false_type {};
template <typename Op>
struct IsDifferentiable<Op, std::void_t<decltype(Op::node)>> : std::true_type {
};

// An entry whose in-place form records a node of its own.
template <typename Op, typename = void>
struct HasInplaceNode : std::false_type {};
template <typename Op>
struct HasInplaceNode<Op, std::void_t<decltype(Op::inplace_node)>>
    : std::true_type {};

// An entry with `exposed = false` is an op torch has only inside its
// composites or backward formulas: no public function or method.
template <typename Op, typename = void>
struct IsExposed : std::true_type {};
template <typename Op>
struct IsExposed<Op, std::void_t<decltype(Op::exposed)>>
    : std::bool_constant<Op::exposed> {};

template <typename Op, typename = void>
struct HasCheck : std::false_type {};
template <typename Op>
struct HasCheck<Op, std::void_t<decltype(&Op::check)>> : std::true_type {};
}  // namespace detail

}  // namespace npgrad::ops
