// _C._add_docstr(obj, doc): attaches a docstring to a native function,
// method, property or type after the module is built, as torch's
// torch._C._add_docstr does (torch/csrc/Module.cpp). The texts live in
// python/npgrad/_tensor_docs.py and _torch_docs.py, applied at import.
//
// pybind11 gives every function a doc made of its signature line(s) and owns
// that string (malloc'd; freed with the function record). _add_docstr keeps
// the signature line at the top (help() and IDEs read it: a builtin has no
// other signature) and appends the text. As in torch, documenting an object
// twice is a RuntimeError, and so is documenting a pybind11 function that was
// given a doc in C++.
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_set>

#include "bindings.h"
#include "npgrad/util/error.h"

namespace npgrad::bindings {

namespace {

// The method tables whose ml_doc _add_docstr has set. Touched only with the
// GIL held.
std::unordered_set<const PyMethodDef*>& documented_methods() {
  static auto* set = new std::unordered_set<const PyMethodDef*>();
  return *set;
}

bool has_text(py::handle doc) {
  return !doc.is_none() &&
         !(py::isinstance<py::str>(doc) && py::len(doc.cast<py::str>()) == 0);
}

[[noreturn]] void already_documented(const char* kind, const char* name) {
  throw Error(std::string(kind) + " '" + name + "' already has a docstring");
}

void add_function_doc(PyObject* func, const std::string& doc) {
  auto* f = reinterpret_cast<PyCFunctionObject*>(func);
  PyMethodDef* def = f->m_ml;
  if (documented_methods().count(def) != 0) {
    already_documented("function", def->ml_name);
  }
  PyObject* self = PyCFunction_GET_SELF(func);
  py::detail::function_record* rec =
      self != nullptr ? py::detail::function_record_ptr_from_PyObject(self)
                      : nullptr;
  if (rec == nullptr) {
    // A plain CPython function: its method table is static, so is the copy.
    if (def->ml_doc != nullptr) {
      already_documented("function", def->ml_name);
    }
    def->ml_doc = strdup(doc.c_str());
  } else {
    for (auto* r = rec; r != nullptr; r = r->next) {
      if (r->doc != nullptr && r->doc[0] != '\0') {
        already_documented("function", def->ml_name);
      }
    }
    // Only signatures so far: keep them, then the text. pybind11 frees
    // ml_doc with std::free when the function goes away.
    std::string text = def->ml_doc != nullptr ? def->ml_doc : "";
    while (!text.empty() && text.back() == '\n') {
      text.pop_back();
    }
    text += text.empty() ? doc : "\n\n" + doc;
    std::free(const_cast<char*>(def->ml_doc));
    def->ml_doc = strdup(text.c_str());
  }
  documented_methods().insert(def);
}

// torch._C._add_docstr returns obj, so it can be used as an expression.
py::object add_docstr(py::object obj, const std::string& doc) {
  PyObject* target = obj.ptr();
  if (PyInstanceMethod_Check(target)) {  // a pybind11 method in a class dict
    target = PyInstanceMethod_GET_FUNCTION(target);
  }
  if (PyCFunction_Check(target)) {
    add_function_doc(target, doc);
  } else if (PyObject_TypeCheck(target, &PyProperty_Type)) {
    // pybind11 properties are builtins.property; their __doc__ is writable.
    if (has_text(obj.attr("__doc__"))) {
      // pybind11 getters are anonymous; a Python property's getter is named.
      py::object fget = obj.attr("fget");
      std::string name =
          py::hasattr(fget, "__name__")
              ? py::str(fget.attr("__name__")).cast<std::string>()
              : std::string();
      if (name.empty()) {
        throw Error("property already has a docstring");
      }
      already_documented("attribute", name.c_str());
    }
    obj.attr("__doc__") = py::str(doc);
  } else if (Py_TYPE(target) == &PyMethodDescr_Type) {
    auto* m = reinterpret_cast<PyMethodDescrObject*>(target);
    if (m->d_method->ml_doc != nullptr) {
      already_documented("method", m->d_method->ml_name);
    }
    m->d_method->ml_doc = strdup(doc.c_str());
  } else if (Py_TYPE(target) == &PyGetSetDescr_Type) {
    auto* g = reinterpret_cast<PyGetSetDescrObject*>(target);
    if (g->d_getset->doc != nullptr) {
      already_documented("attribute", g->d_getset->name);
    }
    g->d_getset->doc = strdup(doc.c_str());
  } else if (PyType_Check(target)) {
    auto* t = reinterpret_cast<PyTypeObject*>(target);
    if (has_text(obj.attr("__doc__"))) {
      throw Error(
          std::string("Type '") + t->tp_name + "' already has a docstring");
    }
    if ((t->tp_flags & Py_TPFLAGS_HEAPTYPE) != 0) {
      obj.attr("__doc__") = py::str(doc);  // pybind11 classes are heap types
    } else {
      t->tp_doc = strdup(doc.c_str());
    }
  } else {
    throw TypeError(
        "don't know how to add docstring to type '" +
        std::string(Py_TYPE(target)->tp_name) + "'");
  }
  return obj;
}

}  // namespace

void bind_docstrings(py::module_& m) {
  m.def(
      "_add_docstr",
      &add_docstr,
      py::arg("obj"),
      py::arg("doc"),
      "Attaches ``doc`` to a native function, method, property or type and "
      "returns the object (torch._C._add_docstr). A pybind11 function keeps "
      "its signature line above the text. RuntimeError if the object already "
      "has a docstring; TypeError for other kinds of objects.");
}

}  // namespace npgrad::bindings
