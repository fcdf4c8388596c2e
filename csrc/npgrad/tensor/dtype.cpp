#include "npgrad/tensor/dtype.h"

#include "npgrad/util/error.h"

namespace npgrad {

std::string dtype_name(ScalarType t) {
  return std::string("torch.") + dtype_info(t).name;
}

std::string legacy_type_name(ScalarType t) {
  return std::string("torch.") + dtype_info(t).legacy_type_name;
}

std::string type_string(ScalarType t) {
  if (t == ScalarType::BFloat16) {
    return std::string("CPU") + dtype_info(t).scalar_type_name + "Type";
  }
  return legacy_type_name(t);
}

std::string dtype_abbrev(ScalarType t) {
  return dtype_info(t).abbrev;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // The lattice is the table's order but for two pairs, which torch joins
  // above both: no 8-bit type holds every uint8 and every int8 value, and
  // neither 16-bit float holds the other (float16 has the precision,
  // bfloat16 the range).
  if ((a == ScalarType::UInt8 && b == ScalarType::Int8) ||
      (a == ScalarType::Int8 && b == ScalarType::UInt8)) {
    return ScalarType::Int16;
  }
  if ((a == ScalarType::Float16 && b == ScalarType::BFloat16) ||
      (a == ScalarType::BFloat16 && b == ScalarType::Float16)) {
    return ScalarType::Float32;
  }
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

void ResultTypeState::add(ScalarType dtype, int64_t dim, bool wrapped) {
  int* tier =
      wrapped ? &wrapped_result_ : (dim == 0 ? &zero_result_ : &dim_result_);
  ScalarType current = dtype;
  // A Python float takes part as the default dtype, not as float64.
  if (wrapped && is_floating(dtype)) {
    current = ScalarType::Float32;
  }
  if (*tier == kUndefined) {
    *tier = static_cast<int>(current);
  } else {
    *tier = static_cast<int>(
        promote_types(static_cast<ScalarType>(*tier), current));
  }
}

namespace {
// Mirrors at::native's combine_categories: a higher tier keeps its dtype
// unless the lower tier is of a higher category (bool < integral < floating).
int combine_categories(int higher, int lower) {
  if (higher == -1) {
    return lower;
  }
  if (lower == -1) {
    return higher;
  }
  auto h = static_cast<ScalarType>(higher);
  auto l = static_cast<ScalarType>(lower);
  if (is_floating(h)) {
    return higher;
  }
  if (dtype_info(h).category == DtypeCategory::Bool || is_floating(l)) {
    return static_cast<int>(promote_types(h, l));
  }
  return higher;
}
}  // namespace

ScalarType ResultTypeState::result() const {
  int r = combine_categories(
      dim_result_, combine_categories(zero_result_, wrapped_result_));
  NPGRAD_INTERNAL_ASSERT(r != kUndefined, "result_type of no operands");
  return static_cast<ScalarType>(r);
}

}  // namespace npgrad
