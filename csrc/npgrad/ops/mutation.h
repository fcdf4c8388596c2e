#pragma once
// The steps of Note [The mutation path] (inplace.cpp), for the in-place ops
// defined outside inplace.cpp (the op tables' `name_` forms).

#include <memory>
#include <string>

#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/tensor/tensor.h"

namespace npgrad::ops {

/// Step (1): torch's checks before writing into self (no internal overlap
/// unless allowed; the leaf and view rules when the result requires grad);
/// also tells the in-place observer.
void check_inplace(
    const Tensor& self, bool result_requires_grad, bool allow_overlap = false);
/// torch's assert_no_partial_overlap: `input` shares some, but not all, of
/// self's memory (it would be read after parts of it were overwritten).
void check_no_partial_overlap(const Tensor& self, const Tensor& input);
/// An in-place op's other operand broadcasts to self's shape exactly.
void check_broadcasts_to_self(const Tensor& self, const Tensor& other);
/// torch's error when a result of dtype `result` cannot be written into a
/// tensor of dtype `out` (a float result into an integer tensor); some of
/// torch's kernels name `out` by its C++ type ("long int", cpp_type_name).
void check_castable(
    ScalarType result, ScalarType out, bool cpp_type_name = false);
/// Step (2) for a formula that needs self's value before the write: a clone
/// recorded as torch's original_self = self.clone() is (CloneBackward0), so
/// that a double backward flows through it to self's history.
autograd::SavedVariable save_original(const Tensor& self);
/// Steps (4) and (5): bump the version, rebase self's history onto node.
/// `op` is the in-place op's name ("add_"), recorded under anomaly mode
/// (Note [Mutation provenance]).
void finish_inplace(
    const Tensor& self,
    const std::shared_ptr<autograd::Node>& node,
    const char* op);

/// An op table entry's in-place name: Op::name + "_".
template <typename Op>
const char* inplace_name() {
  static const std::string name = std::string(Op::name) + "_";
  return name.c_str();
}

}  // namespace npgrad::ops
