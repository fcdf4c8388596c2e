#pragma once
// Error hierarchy of the core and the NPGRAD_CHECK macros. Mirrors TORCH_CHECK:
// messages are built from a variadic list of printable values. The binding
// layer (bindings/errors.cpp) maps each type to the Python exception torch
// raises.

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace npgrad {

/// Becomes RuntimeError in Python.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class TypeError : public Error {
 public:
  using Error::Error;
};
class ValueError : public Error {
 public:
  using Error::Error;
};
class IndexError : public Error {
 public:
  using Error::Error;
};
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
/// Python's RecursionError (a RuntimeError): recursion that never ends.
class RecursionError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}
}  // namespace detail

}  // namespace npgrad

#define NPGRAD_CHECK_TYPED(ErrType, cond, ...)               \
  do {                                                       \
    if (!(cond)) {                                           \
      throw ErrType(::npgrad::detail::str_cat(__VA_ARGS__)); \
    }                                                        \
  } while (0)

#define NPGRAD_CHECK(cond, ...) \
  NPGRAD_CHECK_TYPED(::npgrad::Error, cond, __VA_ARGS__)
#define NPGRAD_CHECK_TYPE(cond, ...) \
  NPGRAD_CHECK_TYPED(::npgrad::TypeError, cond, __VA_ARGS__)
#define NPGRAD_CHECK_VALUE(cond, ...) \
  NPGRAD_CHECK_TYPED(::npgrad::ValueError, cond, __VA_ARGS__)
#define NPGRAD_CHECK_INDEX(cond, ...) \
  NPGRAD_CHECK_TYPED(::npgrad::IndexError, cond, __VA_ARGS__)

/// A broken invariant: a bug in npgrad, never a user error.
#define NPGRAD_INTERNAL_ASSERT(cond, msg)        \
  NPGRAD_CHECK_TYPED(                            \
      ::npgrad::Error,                           \
      cond,                                      \
      "INTERNAL ASSERT FAILED at " __FILE__ ":", \
      __LINE__,                                  \
      ": " #cond ". This is a bug in npgrad. ",  \
      msg)
