#pragma once
// The five dtypes npgrad supports, their torch spellings, and torch's type
// promotion (at::result_type), which differs from NumPy's: a 0-dim tensor or a
// Python number never raises the dtype of a dimensioned tensor of the same
// category, and a Python float meets an integer tensor as the default dtype.

#include <cstdint>
#include <string>

namespace npgrad {

// Ordered as torch's promotion lattice, which promote_types relies on.
enum class ScalarType : uint8_t { Bool, Int64, Float16, Float32, Float64 };
constexpr int kNumScalarTypes = 5;

inline bool is_floating(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::Float32 ||
         t == ScalarType::Float64;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int64 || (include_bool && t == ScalarType::Bool);
}
std::size_t element_size(ScalarType t);
/// "torch.float32"
std::string dtype_name(ScalarType t);
/// "torch.FloatTensor", as torch prints types in error messages.
std::string legacy_type_name(ScalarType t);
/// "Float", as torch's ATen messages spell scalar types.
const char* scalar_type_name(ScalarType t);
/// "float", "c10::Half": the C++ type name of torch's TypeMeta, as some of
/// its messages name a dtype.
const char* type_meta_name(ScalarType t);
/// "f32", as torch's autograd debug logging abbreviates dtypes.
std::string dtype_abbrev(ScalarType t);

/// The larger of two dtypes in the lattice
/// Bool < Int64 < Float16 < Float32 < Float64.
ScalarType promote_types(ScalarType a, ScalarType b);

/// Accumulates torch's three-tier result_type over operands.
class ResultTypeState {
 public:
  void add(ScalarType dtype, int64_t dim, bool is_wrapped_number);
  ScalarType result() const;

 private:
  // kUndefined marks a tier with no operand yet.
  static constexpr int kUndefined = -1;
  int dim_result_ = kUndefined;
  int zero_result_ = kUndefined;
  int wrapped_result_ = kUndefined;
};

}  // namespace npgrad
