// tests_cpp/test_dtype.cpp -- torch's type promotion (at::result_type) over
// npgrad's five dtypes, float16 included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "npgrad/tensor/dtype.h"

using npgrad::ResultTypeState;
using npgrad::ScalarType;

namespace {
struct Operand {
  ScalarType dtype;
  int64_t dim;
  bool wrapped;
};

ScalarType result_type(std::initializer_list<Operand> operands) {
  ResultTypeState state;
  for (const Operand& op : operands) {
    state.add(op.dtype, op.dim, op.wrapped);
  }
  return state.result();
}

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kLong = ScalarType::Int64;
constexpr ScalarType kHalf = ScalarType::Float16;
constexpr ScalarType kFloat = ScalarType::Float32;
constexpr ScalarType kDouble = ScalarType::Float64;
}  // namespace

TEST_CASE(
    "dtypes promote along Bool < Int64 < Float16 < Float32 < Float64",
    "[dtype]") {
  const ScalarType lattice[] = {kBool, kLong, kHalf, kFloat, kDouble};
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) {
      CHECK(
          npgrad::promote_types(lattice[i], lattice[j]) ==
          lattice[std::max(i, j)]);
    }
  }
  CHECK(npgrad::is_floating(kHalf));
  CHECK_FALSE(npgrad::is_integral(kHalf, true));
  CHECK(npgrad::element_size(kHalf) == 2);
  CHECK(npgrad::dtype_name(kHalf) == "torch.float16");
  CHECK(npgrad::legacy_type_name(kHalf) == "torch.HalfTensor");
  CHECK(std::string(npgrad::scalar_type_name(kHalf)) == "Half");
  CHECK(std::string(npgrad::type_meta_name(kHalf)) == "c10::Half");
  CHECK(npgrad::dtype_abbrev(kHalf) == "f16");

  SECTION("a 0-dim tensor or a number never raises a float16 tensor") {
    CHECK(result_type({{kHalf, 1, false}, {kFloat, 0, false}}) == kHalf);
    CHECK(result_type({{kHalf, 1, false}, {kDouble, 0, false}}) == kHalf);
    CHECK(result_type({{kHalf, 1, false}, {kDouble, 0, true}}) == kHalf);
    CHECK(result_type({{kHalf, 1, false}, {kLong, 0, true}}) == kHalf);
    CHECK(result_type({{kHalf, 2, false}, {kLong, 1, false}}) == kHalf);
  }
  SECTION("dimensioned float tensors widen float16") {
    CHECK(result_type({{kHalf, 1, false}, {kFloat, 1, false}}) == kFloat);
    CHECK(result_type({{kDouble, 1, false}, {kHalf, 1, false}}) == kDouble);
    CHECK(result_type({{kFloat, 1, false}, {kHalf, 0, false}}) == kFloat);
  }
  SECTION("a float16 0-dim tensor raises an integral or bool tensor") {
    CHECK(result_type({{kLong, 1, false}, {kHalf, 0, false}}) == kHalf);
    CHECK(result_type({{kBool, 1, false}, {kHalf, 0, false}}) == kHalf);
    CHECK(
        result_type(
            {{kLong, 1, false}, {kHalf, 0, false}, {kDouble, 0, true}}) ==
        kHalf);
  }
  SECTION("among 0-dim operands and numbers") {
    CHECK(result_type({{kHalf, 0, false}, {kFloat, 0, false}}) == kFloat);
    CHECK(result_type({{kHalf, 0, false}, {kDouble, 0, true}}) == kHalf);
    CHECK(result_type({{kLong, 0, false}, {kHalf, 0, false}}) == kHalf);
    // A Python float meets integers as the default dtype, not as float16.
    CHECK(result_type({{kLong, 1, false}, {kDouble, 0, true}}) == kFloat);
  }
}
