#include "npgrad/tensor/dtype.h"

#include "npgrad/util/error.h"

namespace npgrad {

std::size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return 1;
    case ScalarType::Float16:
      return 2;
    case ScalarType::Float32:
      return 4;
    case ScalarType::Int64:
    case ScalarType::Float64:
      return 8;
  }
  return 0;
}

std::string dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "torch.bool";
    case ScalarType::Int64:
      return "torch.int64";
    case ScalarType::Float16:
      return "torch.float16";
    case ScalarType::Float32:
      return "torch.float32";
    case ScalarType::Float64:
      return "torch.float64";
  }
  return "?";
}

std::string legacy_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "torch.BoolTensor";
    case ScalarType::Int64:
      return "torch.LongTensor";
    case ScalarType::Float16:
      return "torch.HalfTensor";
    case ScalarType::Float32:
      return "torch.FloatTensor";
    case ScalarType::Float64:
      return "torch.DoubleTensor";
  }
  return "?";
}

const char* scalar_type_name(ScalarType t) {
  static const char* const kNames[kNumScalarTypes] = {
      "Bool", "Long", "Half", "Float", "Double"};
  return kNames[static_cast<int>(t)];
}

const char* type_meta_name(ScalarType t) {
  static const char* const kNames[kNumScalarTypes] = {
      "bool", "long int", "c10::Half", "float", "double"};
  return kNames[static_cast<int>(t)];
}

std::string dtype_abbrev(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "b8";
    case ScalarType::Int64:
      return "i64";
    case ScalarType::Float16:
      return "f16";
    case ScalarType::Float32:
      return "f32";
    case ScalarType::Float64:
      return "f64";
  }
  return "?";
}

ScalarType promote_types(ScalarType a, ScalarType b) {
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
  if (h == ScalarType::Bool || is_floating(l)) {
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
