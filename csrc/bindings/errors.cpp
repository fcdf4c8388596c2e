// The only exception translator: core error types -> the Python built-in
// exception torch raises. Python exceptions from user code (hooks, custom
// backward) travel as py::error_already_set and keep their type.
#include "bindings.h"
#include "npgrad/util/error.h"

namespace npgrad::bindings {

namespace {
// torch.set_warn_always: TORCH_WARN_ONCE warnings warn every time.
std::atomic<bool> warn_always{false};
}  // namespace

void warn_once(std::atomic<bool>& warned, const char* message) {
  // The flag is set first, as torch's: a warning turned into an error is
  // still the one warning.
  if (warned.exchange(true) && !warn_always.load()) {
    return;
  }
  if (PyErr_WarnEx(PyExc_UserWarning, message, 1) < 0) {
    throw py::error_already_set();  // warnings turned into errors
  }
}

void bind_errors(py::module_& m) {
  m.def(
      "set_warn_always", [](bool b) { warn_always.store(b); }, py::arg("b"));
  m.def("is_warn_always_enabled", [] { return warn_always.load(); });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) {
        std::rethrow_exception(p);
      }
    } catch (const npgrad::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const npgrad::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const npgrad::IndexError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const npgrad::RecursionError& e) {
      PyErr_SetString(PyExc_RecursionError, e.what());
    } catch (const npgrad::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    } catch (const npgrad::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

py::cpp_function not_writable(const char* name) {
  std::string attr = name;
  return py::cpp_function([attr](py::handle self, py::handle /*value*/) {
    throw py::attribute_error(
        "attribute '" + attr + "' of '" + python_type_name(self) +
        "' objects is not writable");
  });
}

}  // namespace npgrad::bindings
