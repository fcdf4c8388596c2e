#pragma once
// The dtypes npgrad supports (Note [The dtype table]), and torch's type
// promotion (at::result_type), which differs from NumPy's: a 0-dim tensor or a
// Python number never raises the dtype of a dimensioned tensor of the same
// category, and a Python float meets an integer tensor as the default dtype.

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <string>

namespace npgrad {

/// float16's element as stored: the IEEE binary16 bits. Arithmetic on float16
/// is NumPy's; the kernels convert single values (kernels/float16.h).
struct Half {
  uint16_t bits;
};
/// bfloat16's element as stored: the upper 16 bits of a float. Arithmetic on
/// bfloat16 is ml_dtypes' NumPy loops'; the kernels convert single values.
struct BFloat16 {
  uint16_t bits;
};

// Note [The dtype table]
// Everything npgrad states per dtype, one row each, in the order of torch's
// promotion lattice (the enum's order, which promote_types relies on). C++
// reads its per-dtype facts from here and Python from the _C dtype objects
// (and _C._dtypes) made from it, so a new dtype is a new row (plus the kernel
// code its element type genuinely needs). Columns:
//   enum name; the C++ element type (its size is the element size); torch's
//   name ("float32"); ATen's scalar type name ("Float", in kernel errors);
//   the legacy tensor type ("FloatTensor"); the C++ name of torch's TypeMeta
//   ("float", in some of its messages); the abbreviation of torch's autograd
//   debug logging ("f32"); the category (bool < integral < floating, as
//   promotion ranks them); the Tensor conversion method ("float":
//   Tensor.float()); NumPy's dtype name ("float32"), by which the kernels
//   look up its NumPy descriptor when NumPy is imported (bfloat16 has no
//   fixed NPY_* number: ml_dtypes registers it at import).
// clang-format off
#define NPGRAD_FORALL_DTYPES(_)                                                                                   \
  /* enum     C++       torch       ATen        legacy             TypeMeta         log    category  method      NumPy */ \
  _(Bool,     bool,     "bool",     "Bool",     "BoolTensor",      "bool",          "b8",  Bool,     "bool",     "bool")     \
  _(UInt8,    uint8_t,  "uint8",    "Byte",     "ByteTensor",      "unsigned char", "u8",  Integral, "byte",     "uint8")    \
  _(Int8,     int8_t,   "int8",     "Char",     "CharTensor",      "signed char",   "i8",  Integral, "char",     "int8")     \
  _(Int16,    int16_t,  "int16",    "Short",    "ShortTensor",     "short int",     "i16", Integral, "short",    "int16")    \
  _(Int32,    int32_t,  "int32",    "Int",      "IntTensor",       "int",           "i32", Integral, "int",      "int32")    \
  _(Int64,    int64_t,  "int64",    "Long",     "LongTensor",      "long int",      "i64", Integral, "long",     "int64")    \
  _(Float16,  Half,     "float16",  "Half",     "HalfTensor",      "c10::Half",     "f16", Floating, "half",     "float16")  \
  _(BFloat16, BFloat16, "bfloat16", "BFloat16", "BFloat16Tensor",  "c10::BFloat16", "bf16", Floating, "bfloat16", "bfloat16") \
  _(Float32,  float,    "float32",  "Float",    "FloatTensor",     "float",         "f32", Floating, "float",    "float32")  \
  _(Float64,  double,   "float64",  "Double",   "DoubleTensor",    "double",        "f64", Floating, "double",   "float64")
// clang-format on

#define NPGRAD_DTYPE_ENUM_ENTRY(name, ...) name,
enum class ScalarType : uint8_t {
  NPGRAD_FORALL_DTYPES(NPGRAD_DTYPE_ENUM_ENTRY)
};
#undef NPGRAD_DTYPE_ENUM_ENTRY

#define NPGRAD_DTYPE_COUNT_ENTRY(...) +1
constexpr int kNumScalarTypes =
    0 NPGRAD_FORALL_DTYPES(NPGRAD_DTYPE_COUNT_ENTRY);
#undef NPGRAD_DTYPE_COUNT_ENTRY

enum class DtypeCategory : uint8_t { Bool, Integral, Floating };

/// A row of the dtype table (Note [The dtype table]).
struct DtypeInfo {
  const char* name;
  const char* scalar_type_name;
  const char* legacy_type_name;
  const char* type_meta_name;
  const char* abbrev;
  std::size_t element_size;
  DtypeCategory category;
  const char* method_name;
  const char* numpy_name;
};

// clang-format off
#define NPGRAD_DTYPE_INFO_ENTRY(name, ctype, torch, aten, legacy, meta, abbrev, category, method, numpy) \
  {torch, aten, legacy, meta, abbrev, sizeof(ctype), DtypeCategory::category, method, numpy},
// clang-format on
inline constexpr DtypeInfo kDtypeInfo[kNumScalarTypes] = {
    NPGRAD_FORALL_DTYPES(NPGRAD_DTYPE_INFO_ENTRY)};
#undef NPGRAD_DTYPE_INFO_ENTRY

constexpr const DtypeInfo& dtype_info(ScalarType t) {
  return kDtypeInfo[static_cast<int>(t)];
}

inline bool is_floating(ScalarType t) {
  return dtype_info(t).category == DtypeCategory::Floating;
}
inline bool is_integral(ScalarType t, bool include_bool) {
  DtypeCategory c = dtype_info(t).category;
  return c == DtypeCategory::Integral ||
         (include_bool && c == DtypeCategory::Bool);
}
inline std::size_t element_size(ScalarType t) {
  return dtype_info(t).element_size;
}
/// float16 and bfloat16: the floats narrower than float, which torch's CPU
/// kernels read as float, compute in float and round once (their opmath
/// type). See Note [Reduced floats compute in float32 where torch does].
constexpr bool is_reduced_float(ScalarType t) {
  return dtype_info(t).category == DtypeCategory::Floating &&
         dtype_info(t).element_size < sizeof(float);
}
/// The dtype torch's CPU kernels compute t in: float32 for a reduced float,
/// t itself otherwise.
constexpr ScalarType opmath_type(ScalarType t) {
  return is_reduced_float(t) ? ScalarType::Float32 : t;
}
/// "torch.float32"
std::string dtype_name(ScalarType t);
/// "torch.FloatTensor": the legacy tensor type (Tensor.type()).
std::string legacy_type_name(ScalarType t);
/// A tensor's type as torch's messages print it (its Tensor::toString): the
/// legacy type, but "CPUBFloat16Type" for bfloat16, which torch's Python
/// layer leaves under ATen's own name there.
std::string type_string(ScalarType t);
/// "Float", as torch's ATen messages spell scalar types.
inline const char* scalar_type_name(ScalarType t) {
  return dtype_info(t).scalar_type_name;
}
/// "float", "c10::Half": the C++ type name of torch's TypeMeta, as some of
/// its messages name a dtype.
inline const char* type_meta_name(ScalarType t) {
  return dtype_info(t).type_meta_name;
}
/// The largest finite value of a floating dtype (torch.finfo(dtype).max);
/// 0 for integer and bool dtypes.
inline double largest_finite(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return 65504.0;
    case ScalarType::BFloat16:
      return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
    case ScalarType::Float32:
      return static_cast<double>(FLT_MAX);
    case ScalarType::Float64:
      return DBL_MAX;
    default:
      return 0;
  }
}
/// "f32", as torch's autograd debug logging abbreviates dtypes.
std::string dtype_abbrev(ScalarType t);

/// The larger of two dtypes in the lattice (the table's order).
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
