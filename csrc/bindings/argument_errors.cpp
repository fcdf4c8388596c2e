// Note [Argument errors in torch's words]: when pybind11 finds no overload
// that accepts a call's arguments it raises "f(): incompatible function
// arguments ...". torch's argument parser says which argument is wrong:
//   sin(): argument 'input' (position 1) must be Tensor, not NoneType
// Every function of _C (module functions, methods, static methods and
// property accessors of its classes) is dispatched through
// dispatch_with_torch_errors, which calls pybind11's own dispatcher and, only
// when that failed to match the arguments, rewrites its TypeError from the
// function's record: the first argument whose value its declared type
// rejects, a missing or surplus argument, an unknown keyword. The rewrite is
// the cold path; a successful call pays one extra indirect call.
//
// Parameters declared bool take True and False only, as torch's (Note
// [Strict bools]).
//
// Tensor parameters never take None (the Tensor caster rejects it), so a
// function whose tensor argument may be None declares it std::optional<Tensor>
// (or a py::handle it checks itself), as torch's "Tensor?" does.
#include <unordered_map>
#include <unordered_set>

#include "bindings.h"

namespace npgrad::bindings {

namespace {

using detail_record = py::detail::function_record;

// pybind11's dispatcher is a protected static member of cpp_function.
struct Pybind11Dispatch : py::cpp_function {
  using py::cpp_function::dispatcher;
};

PyCFunction pybind11_dispatcher() {
  return reinterpret_cast<PyCFunction>(
      reinterpret_cast<void (*)()>(&Pybind11Dispatch::dispatcher));
}

// Functions whose torch counterpart has several overloads: torch reports a
// mismatch as "received an invalid combination of arguments".
// Its value: the fewest arguments for which torch has several plausible
// overloads (with fewer, one signature is left and torch names the argument).
std::unordered_map<const detail_record*, int>& torch_overloaded_records() {
  static std::unordered_map<const detail_record*, int> records;
  return records;
}

// One parameter of a bound function, as its signature declares it.
struct Param {
  std::string name;
  std::string type;  // the annotation pybind11 wrote: "Tensor", "bool", ...
  bool has_default = false;
  bool keyword_only = false;
};

// Splits pybind11's "(a: T, b: U = d, *, c: V) -> R" into parameters.
std::vector<Param> parse_signature(const char* signature) {
  std::vector<Param> params;
  std::string sig = signature != nullptr ? signature : "";
  std::size_t open = sig.find('(');
  if (open == std::string::npos) {
    return params;
  }
  int depth = 0;
  std::size_t start = open + 1;
  bool keyword_only = false;
  for (std::size_t i = start; i < sig.size(); ++i) {
    char c = sig[i];
    if (c == '[' || c == '(' || c == '{') {
      ++depth;
      continue;
    }
    if ((c == ']' || c == '}') || (c == ')' && depth > 0)) {
      --depth;
      continue;
    }
    if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      std::string item = sig.substr(start, i - start);
      while (!item.empty() && item.front() == ' ') {
        item.erase(item.begin());
      }
      if (item == "*" || item.rfind("*", 0) == 0) {
        keyword_only = true;  // "*" marker or *args: the rest by keyword
      } else if (!item.empty() && item != "/") {
        Param p;
        std::size_t colon = item.find(':');
        std::size_t eq = item.find(" = ");
        p.name = item.substr(0, colon);
        if (colon != std::string::npos) {
          std::size_t type_end = eq == std::string::npos ? item.size() : eq;
          p.type = item.substr(colon + 2, type_end - colon - 2);
        }
        p.has_default = eq != std::string::npos;
        p.keyword_only = keyword_only;
        params.push_back(std::move(p));
      }
      start = i + 1;
      if (c == ')') {
        break;
      }
    }
  }
  return params;
}

// torch's name for a declared type, and whether a value fits it; an empty
// name for types this check does not know (any value is let through).
struct TypeCheck {
  std::string torch_name;
  bool accepts = true;
};

bool is_int_value(py::handle v) {
  return !PyBool_Check(v.ptr()) &&
         py::detail::make_caster<int64_t>().load(v, true);
}

TypeCheck check_value(const std::string& type, py::handle value) {
  if (type == "Tensor") {
    return {"Tensor", is_tensor(value)};
  }
  if (type == "Tensor | None" || type == "typing.Optional[Tensor]" ||
      type == "Optional[Tensor]") {
    return {"Tensor", value.is_none() || is_tensor(value)};
  }
  if (type == "typing.SupportsInt | typing.SupportsIndex" || type == "int" ||
      type == "typing.SupportsInt") {
    return {"int", is_int_value(value)};
  }
  if (type == "typing.SupportsInt | typing.SupportsIndex | None") {
    return {"int", value.is_none() || is_int_value(value)};  // torch's int?
  }
  if (type == "typing.SupportsFloat | typing.SupportsIndex" ||
      type == "float" || type == "typing.SupportsFloat") {
    return {"float", py::detail::make_caster<double>().load(value, true)};
  }
  if (type == "typing.SupportsFloat | typing.SupportsIndex | None") {
    return {
        "float",
        value.is_none() || py::detail::make_caster<double>().load(value, true)};
  }
  if (type == "bool") {
    // torch's bool takes True and False only (see strict_bools).
    return {"bool", py::detail::make_caster<bool>().load(value, false)};
  }
  if (type.rfind("collections.abc.Sequence[typing.SupportsInt", 0) == 0 ||
      type.rfind("list[int]", 0) == 0) {
    bool ok =
        (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value));
    if (ok) {
      for (py::handle item : value) {
        ok = ok && is_int_value(item);
      }
    }
    return {"tuple of ints", ok};
  }
  return {};
}

// torch's "f() received an invalid combination of arguments - got (NoneType,
// Tensor, other=Tensor), but expected one of:\n" followed by `expected`.
std::string invalid_combination(
    const std::string& fn,
    const std::vector<std::string>& got,
    const std::string& expected) {
  std::string msg =
      fn + "() received an invalid combination of arguments - got (";
  for (std::size_t i = 0; i < got.size(); ++i) {
    msg += (i ? ", " : "") + got[i];
  }
  return msg + "), but expected one of:\n" + expected;
}

// The type of each argument after `skip`, keywords as name=type.
std::vector<std::string> argument_types(
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames,
    Py_ssize_t skip) {
  std::vector<std::string> out;
  for (Py_ssize_t i = skip; i < nargs; ++i) {
    out.push_back(python_type_name(args[i]));
  }
  Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    out.push_back(
        py::str(PyTuple_GET_ITEM(kwnames, k)).cast<std::string>() + "=" +
        python_type_name(args[nargs + k]));
  }
  return out;
}

// torch's message for a call no overload of `rec` accepted, or empty when
// the mismatch is not one this check can name (pybind11's text then stays).
std::string torch_message(
    const detail_record* rec,
    PyObject* const* args,
    Py_ssize_t nargs,
    PyObject* kwnames) {
  const std::string name = rec->name;
  // A method's self comes first; torch counts positions after it.
  const Py_ssize_t skip = rec->is_method ? 1 : 0;
  const std::vector<Param> params = parse_signature(rec->signature);
  if (rec->is_method && nargs > 0 && !is_tensor(args[0]) && !params.empty() &&
      params[0].type == "Tensor") {
    return "descriptor '" + name +
           "' for 'Tensor' objects doesn't apply to a '" +
           python_type_name(args[0]) + "' object";
  }
  Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  auto overloaded = torch_overloaded_records().find(rec);
  if (rec->next != nullptr || (overloaded != torch_overloaded_records().end() &&
                               nargs - skip + nkw >= overloaded->second)) {
    std::string expected;
    for (const detail_record* r = rec; r != nullptr; r = r->next) {
      expected +=
          std::string(" * ") + (r->signature ? r->signature : "") + "\n";
    }
    return invalid_combination(
        name, argument_types(args, nargs, kwnames, skip), expected);
  }
  if (rec->has_args || rec->has_kwargs) {
    return {};
  }
  if (static_cast<Py_ssize_t>(params.size()) < skip) {
    return {};
  }
  // Positional arguments beyond what the function takes.
  Py_ssize_t positional_params = 0;
  for (const Param& p : params) {
    positional_params += p.keyword_only ? 0 : 1;
  }
  if (nargs > positional_params) {
    Py_ssize_t takes = positional_params - skip;
    return name + "() takes " + std::to_string(takes) + " positional argument" +
           (takes == 1 ? "" : "s") + " but " + std::to_string(nargs - skip) +
           (nargs - skip == 1 ? " was" : " were") + " given";
  }
  // Keywords: unknown names first, as torch's parser checks them first.
  std::vector<py::handle> values(params.size());
  std::vector<bool> by_keyword(params.size(), false);
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    values[static_cast<std::size_t>(i)] = args[i];
  }
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    std::string kw = py::str(PyTuple_GET_ITEM(kwnames, k)).cast<std::string>();
    bool found = false;
    for (std::size_t j = static_cast<std::size_t>(skip); j < params.size();
         ++j) {
      if (params[j].name == kw) {
        values[j] = args[nargs + k];
        by_keyword[j] = true;
        found = true;
      }
    }
    if (!found) {
      return name + "() got an unexpected keyword argument '" + kw + "'";
    }
  }
  // The first argument of a type its parameter rejects.
  for (std::size_t j = static_cast<std::size_t>(skip); j < params.size(); ++j) {
    if (!values[j]) {
      continue;
    }
    TypeCheck check = check_value(params[j].type, values[j]);
    if (!check.accepts) {
      std::string position =
          by_keyword[j]
              ? ""
              : " (position " +
                    std::to_string(j + 1 - static_cast<std::size_t>(skip)) +
                    ")";
      return name + "(): argument '" + params[j].name + "'" + position +
             " must be " + check.torch_name + ", not " +
             python_type_name(values[j]);
    }
  }
  // Required arguments not given.
  std::vector<std::string> missing;
  for (std::size_t j = static_cast<std::size_t>(skip); j < params.size(); ++j) {
    if (!values[j] && !params[j].has_default) {
      missing.push_back(params[j].name);
    }
  }
  if (!missing.empty()) {
    std::string msg = name + "() missing " + std::to_string(missing.size()) +
                      " required positional arguments: ";
    for (std::size_t i = 0; i < missing.size(); ++i) {
      msg += (i ? ", " : "") + std::string("\"") + missing[i] + "\"";
    }
    return msg;
  }
  return {};
}

PyObject* dispatch_with_torch_errors(
    PyObject* self,
    PyObject* const* args,
    Py_ssize_t nargsf,
    PyObject* kwnames) {
  PyObject* result = Pybind11Dispatch::dispatcher(
      self, args, static_cast<size_t>(nargsf), kwnames);
  if (result != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) {
    return result;
  }
  // Cold path: was it pybind11's own "no overload matched"?
  const detail_record* rec =
      py::detail::function_record_ptr_from_PyObject(self);
  if (rec == nullptr) {
    return nullptr;
  }
  py::error_already_set original;  // fetches (and, if not restored, drops) it
  std::string text = py::str(original.value()).cast<std::string>();
  std::string marker = std::string(rec->name) + "(): incompatible ";
  if (text.rfind(marker, 0) != 0) {
    original.restore();
    return nullptr;
  }
  std::string msg;
  try {
    msg = torch_message(
        rec, args, PyVectorcall_NARGS(static_cast<size_t>(nargsf)), kwnames);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("npgrad: describing an argument error");
  }
  if (msg.empty()) {
    original.restore();
  } else {
    PyErr_SetString(PyExc_TypeError, msg.c_str());
  }
  return nullptr;
}

// Note [Strict bools]: torch's parser takes only True and False for a bool
// parameter (`sum(0, 1)`: "argument 'keepdim' (position 2) must be bool, not
// int"), where pybind11's bool caster, allowed to convert, takes any object
// with __bool__. Every parameter a signature declares `bool` is marked
// no-convert, as py::arg(...).noconvert() would: the caster then takes True,
// False and NumPy's bool only, and a mismatch gets torch's message above.
void strict_bools(detail_record* rec) {
  for (; rec != nullptr; rec = rec->next) {
    for (const Param& p : parse_signature(rec->signature)) {
      if (p.type != "bool") {
        continue;
      }
      for (auto& arg : rec->args) {
        if (arg.name != nullptr && p.name == arg.name) {
          arg.convert = false;
        }
      }
    }
  }
}

// Routes one pybind11 function object through dispatch_with_torch_errors.
void reroute(py::handle fn) {
  if (fn.ptr() == nullptr) {
    return;
  }
  if (PyInstanceMethod_Check(fn.ptr())) {
    reroute(PyInstanceMethod_GET_FUNCTION(fn.ptr()));
    return;
  }
  if (!PyCFunction_Check(fn.ptr())) {
    return;
  }
  auto* cfunc = reinterpret_cast<PyCFunctionObject*>(fn.ptr());
  if (cfunc->m_ml->ml_meth == pybind11_dispatcher()) {
    cfunc->m_ml->ml_meth = reinterpret_cast<PyCFunction>(
        reinterpret_cast<void (*)()>(&dispatch_with_torch_errors));
  }
  if (cfunc->m_ml->ml_meth ==
      reinterpret_cast<PyCFunction>(
          reinterpret_cast<void (*)()>(&dispatch_with_torch_errors))) {
    strict_bools(py::detail::function_record_ptr_from_PyObject(cfunc->m_self));
  }
}

void reroute_class(py::handle cls) {
  py::dict members = py::reinterpret_borrow<py::dict>(
      reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_dict);
  for (auto item : members) {
    py::handle v = item.second;
    if (py::isinstance<py::staticmethod>(v)) {
      reroute(v.attr("__func__"));
    } else if (PyObject_TypeCheck(v.ptr(), &PyProperty_Type)) {
      reroute(v.attr("fget"));
      reroute(v.attr("fset"));
    } else {
      reroute(v);
    }
  }
}

void reroute_module(py::module_ mod, std::unordered_set<PyObject*>& seen) {
  if (!seen.insert(mod.ptr()).second) {
    return;
  }
  std::string prefix = py::str(mod.attr("__name__")).cast<std::string>();
  for (auto item : py::reinterpret_borrow<py::dict>(mod.attr("__dict__"))) {
    py::handle v = item.second;
    if (PyModule_Check(v.ptr())) {
      std::string sub = py::str(v.attr("__name__")).cast<std::string>();
      if (sub.rfind(prefix + ".", 0) == 0) {
        reroute_module(py::reinterpret_borrow<py::module_>(v), seen);
      }
    } else if (PyType_Check(v.ptr())) {
      if (seen.insert(v.ptr()).second) {
        reroute_class(v);
      }
    } else {
      reroute(v);
    }
  }
}

}  // namespace

void mark_torch_overloaded(py::handle fn, int from_num_args) {
  if (PyInstanceMethod_Check(fn.ptr())) {
    fn = PyInstanceMethod_GET_FUNCTION(fn.ptr());
  }
  if (PyCFunction_Check(fn.ptr())) {
    const detail_record* rec = py::detail::function_record_ptr_from_PyObject(
        PyCFunction_GET_SELF(fn.ptr()));
    if (rec != nullptr) {
      torch_overloaded_records()[rec] = from_num_args;
    }
  }
}

[[noreturn]] void throw_invalid_combination(
    const char* fn, const std::vector<py::handle>& args, const char* expected) {
  std::vector<std::string> got;
  for (py::handle arg : args) {
    got.push_back(python_type_name(arg));
  }
  throw py::type_error(invalid_combination(fn, got, expected));
}

void install_argument_errors(py::module_& m) {
  std::unordered_set<PyObject*> seen;
  reroute_module(m, seen);
}

}  // namespace npgrad::bindings
