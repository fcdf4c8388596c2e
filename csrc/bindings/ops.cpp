// Ops as Tensor methods, operators and module functions, with torch's
// argument conventions (Python numbers as operands, *shape varargs, dim=).
#include "npgrad/ops/ops.h"
#include <tuple>
#include "npgrad/autograd/mutation_provenance.h"

#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/binary_ops.h"
#include "npgrad/util/error.h"

namespace npgrad::bindings {

namespace {

using namespace py::literals;

// torch's overloads, listed in its "invalid combination" messages.
constexpr const char* kWhereSignatures =
    " * (Tensor condition)\n"
    " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
    " * (Tensor condition, Number self, Tensor other)\n"
    " * (Tensor condition, Tensor input, Number other)\n"
    " * (Tensor condition, Number self, Number other)\n";
constexpr const char* kScatterSignatures =
    " * (Tensor input, int dim, Tensor index, Tensor src)\n"
    " * (Tensor input, int dim, Tensor index, Tensor src, *, str reduce)\n"
    " * (Tensor input, int dim, Tensor index, Number value)\n"
    " * (Tensor input, int dim, Tensor index, Number value, *, str reduce)\n";
constexpr const char* kScatterMethodSignatures =
    " * (int dim, Tensor index, Tensor src)\n"
    " * (int dim, Tensor index, Tensor src, *, str reduce)\n"
    " * (int dim, Tensor index, Number value)\n"
    " * (int dim, Tensor index, Number value, *, str reduce)\n";
constexpr const char* kWhereMethodSignatures =
    " * (Tensor condition, Tensor other)\n"
    " * (Tensor condition, Number other)\n";
constexpr const char* kMaskedFillSignatures =
    " * (Tensor input, Tensor mask, Tensor value)\n"
    " * (Tensor input, Tensor mask, Number value)\n";
constexpr const char* kMaskedFillMethodSignatures =
    " * (Tensor mask, Tensor value)\n"
    " * (Tensor mask, Number value)\n";
constexpr const char* kPowSignatures =
    " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
    " * (Number self, Tensor exponent, *, Tensor out = None)\n"
    " * (Tensor input, Number exponent, *, Tensor out = None)\n";
constexpr const char* kPowMethodSignatures =
    " * (Tensor exponent)\n * (Number exponent)\n";

// Tensor.to(device): the CPU, or torch's error for another device.
void check_device(py::handle device) {
  py::module_::import("npgrad").attr("_check_to_device")(device);
}

py::object not_implemented() {
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

Tensor operand_or_throw(py::handle obj) {
  Tensor t = as_operand(obj);
  NPGRAD_CHECK_TYPE(
      t.defined(),
      "expected Tensor or a Python number as operand, but got ",
      python_type_name(obj));
  return t;
}

bool is_int_arg(py::handle v) {
  if (PyBool_Check(v.ptr())) {
    return false;
  }
  try {
    v.cast<int64_t>();
    return true;
  } catch (const py::cast_error&) {
    return false;
  }
}

// torch's message for elements of a "tuple of ints" argument that are not
// ints, or nullopt.
std::optional<std::string> unpack_error(
    py::handle seq, const char* fn, const char* arg) {
  int64_t pos = 0;
  for (py::handle item : seq) {
    ++pos;
    if (!is_int_arg(item)) {
      return detail::str_cat(
          fn,
          "(): argument '",
          arg,
          "' failed to unpack the object at pos ",
          pos,
          " with error \"type must be tuple of ints,but got ",
          python_type_name(item),
          "\"");
    }
  }
  return std::nullopt;
}

// torch's TypeError for a shape argument that cannot be read.
[[noreturn]] void throw_shape_error(
    const py::args& args, const char* fn, const char* arg) {
  if (args.size() == 1 && !py::isinstance<py::tuple>(args[0]) &&
      !py::isinstance<py::list>(args[0])) {
    std::string type = python_type_name(args[0]);
    if (std::string(fn) == "view") {
      throw TypeError(
          "view() received an invalid combination of arguments - got (" + type +
          "), but expected one of:\n * (torch.dtype dtype)\n      didn't "
          "match because some of the arguments have invalid types: (!" +
          type +
          "!)\n * (tuple of ints size)\n      didn't match because some of "
          "the arguments have invalid types: (!" +
          type + "!)\n");
    }
    throw TypeError(detail::str_cat(
        fn,
        "(): argument '",
        arg,
        "' (position 1) must be tuple of ints, not ",
        type));
  }
  py::handle seq = args.size() == 1 ? args[0] : py::handle(args);
  if (auto msg = unpack_error(seq, fn, arg)) {
    throw TypeError(*msg);
  }
  throw TypeError(detail::str_cat(fn, "(): invalid '", arg, "' argument"));
}

}  // namespace

Shape shape_from_args(const py::args& args, const char* fn, const char* arg) {
  try {
    if (args.size() == 1 && (py::isinstance<py::tuple>(args[0]) ||
                             py::isinstance<py::list>(args[0]))) {
      return args[0].cast<Shape>();
    }
    return args.cast<Shape>();
  } catch (const py::cast_error&) {
    throw_shape_error(args, fn, arg);
  }
}

std::vector<int64_t> dims_from(
    py::handle dim, const char* fn, bool two_overloads) {
  try {
    if (PyLong_Check(dim.ptr())) {
      return {dim.cast<int64_t>()};
    }
    return dim.cast<std::vector<int64_t>>();
  } catch (const py::cast_error&) {
    if (py::isinstance<py::tuple>(dim) || py::isinstance<py::list>(dim)) {
      if (auto msg = unpack_error(dim, fn, "dim")) {
        throw TypeError(*msg);
      }
    }
    // torch's messages when dim is given by keyword, as it usually is.
    NPGRAD_CHECK_TYPE(
        two_overloads,
        fn,
        "(): argument 'dim' must be tuple of ints, not ",
        python_type_name(dim));
    throw TypeError(detail::str_cat(
        fn,
        "() received an invalid combination of arguments - got (dim=",
        python_type_name(dim),
        ", ), but expected one of:\n * (*, torch.dtype dtype = None)\n * "
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = "
        "None)\n"));
  }
}

std::optional<ScalarType> optional_dtype(py::handle dtype) {
  if (dtype.is_none()) {
    return std::nullopt;
  }
  return dtype_from_object(dtype);
}

namespace {

// masked_fill's mask and value (a tensor or a Python number, checked as
// fill_ checks a number), or torch's "invalid combination" error listing
// `got`.
std::pair<Tensor, Tensor> masked_fill_operands(
    py::handle self,
    py::handle mask,
    py::handle value,
    const char* fn,
    const std::vector<py::handle>& got,
    const char* signatures) {
  Tensor v = as_operand(value);
  if (!is_tensor(self) || !is_tensor(mask) || !v.defined()) {
    throw_invalid_combination(fn, got, signatures);
  }
  if (v.impl()->is_wrapped_number) {
    Tensor t = self.cast<Tensor>();
    ops::check_fill_value(kernels::item(v), t.dtype(), t.numel());
  }
  return {mask.cast<Tensor>(), v};
}

py::object max_impl(
    const Tensor& self, py::handle dim, bool keepdim, bool is_max) {
  if (dim.is_none()) {
    return py::cast(ops::max(self, is_max));
  }
  NPGRAD_CHECK_TYPE(
      !is_tensor(dim),
      is_max ? "max" : "min",
      "(other) with a tensor is not supported by npgrad; use torch.where");
  auto [values, indices] = ops::max(self, dim.cast<int64_t>(), keepdim, is_max);
  py::object cls =
      py::module_::import("npgrad.return_types").attr(is_max ? "max" : "min");
  return cls(values, indices);
}

std::optional<std::vector<int64_t>> optional_dims(
    py::handle dim, const char* fn) {
  if (dim.is_none()) {
    return std::nullopt;
  }
  return dims_from(dim, fn);
}

// The reductions with one signature for the function (input first) and the
// method: bound to both from one definition.
template <typename Fn, typename... Extra>
void def_function_and_method(
    py::module_& m,
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    const char* name,
    Fn fn,
    const Extra&... extra) {
  m.def(name, fn, "input"_a, extra...);
  cls.def(name, fn, extra...);
}

void bind_reductions(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  for (bool is_max : {true, false}) {
    def_function_and_method(
        m,
        cls,
        is_max ? "argmax" : "argmin",
        [is_max](const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
          return ops::argmax(a, dim, keepdim, is_max);
        },
        "dim"_a = py::none(),
        "keepdim"_a = false);
  }
  for (bool is_any : {true, false}) {
    const char* any = is_any ? "any" : "all";
    def_function_and_method(
        m,
        cls,
        any,
        [is_any, any](const Tensor& a, py::handle dim, bool keepdim) {
          return ops::any(a, optional_dims(dim, any), keepdim, is_any);
        },
        "dim"_a = py::none(),
        "keepdim"_a = false);
  }
  // Several torch overloads: any(input, dim | dims) from one argument on.
  for (const char* name : {"any", "all"}) {
    mark_torch_overloaded(m.attr(name), 1);
  }
}

py::tuple as_tuple(const std::vector<Tensor>& tensors) {
  py::tuple t(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    t[i] = py::cast(tensors[i]);
  }
  return t;
}

// split(int) is split, split(sequence of ints) split_with_sizes, as torch's
// Tensor.split dispatches (its type error names split_with_sizes).
py::tuple split_impl(const Tensor& self, py::handle sizes, int64_t dim) {
  if (PyLong_Check(sizes.ptr()) && !PyBool_Check(sizes.ptr())) {
    return as_tuple(ops::split(self, sizes.cast<int64_t>(), dim));
  }
  bool int_sequence =
      py::isinstance<py::tuple>(sizes) || py::isinstance<py::list>(sizes);
  if (int_sequence) {
    for (py::handle item : sizes) {
      int_sequence =
          int_sequence && PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr());
    }
  }
  NPGRAD_CHECK_TYPE(
      int_sequence,
      "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
      "of ints, not ",
      python_type_name(sizes));
  return as_tuple(
      ops::split_with_sizes(self, sizes.cast<std::vector<int64_t>>(), dim));
}

// A `tensors` argument (a list or tuple of Tensors) at `position` (from 1).
std::vector<Tensor> tensor_list(
    py::handle seq, const char* fn, int position = 1) {
  NPGRAD_CHECK_TYPE(
      py::isinstance<py::tuple>(seq) || py::isinstance<py::list>(seq),
      fn,
      "(): argument 'tensors' (position ",
      position,
      ") must be tuple of Tensors, not ",
      python_type_name(seq));
  std::vector<Tensor> out;
  for (py::handle item : seq) {
    NPGRAD_CHECK_TYPE(
        is_tensor(item),
        "expected Tensor as element ",
        out.size(),
        " in argument ",
        position - 1,
        ", but got ",
        python_type_name(item));
    out.push_back(item.cast<Tensor>());
  }
  return out;
}

// ---- Indexing (torch's applySlicing) ----

// An index tensor from a list/tuple of ints or bools, or a Tensor.
Tensor index_tensor(py::handle item) {
  if (is_tensor(item)) {
    auto idx = item.cast<Tensor>();
    if (idx.dtype() == ScalarType::UInt8) {
      // A uint8 index is a mask, as in torch's first releases.
      if (PyErr_WarnEx(
              PyExc_UserWarning,
              "indexing with dtype torch.uint8 is now deprecated, please use "
              "a dtype torch.bool instead.",
              1) < 0) {
        throw py::error_already_set();
      }
      return kernels::cast(idx, ScalarType::Bool);
    }
    return idx;
  }
  py::object np = py::module_::import("numpy");
  py::object arr = np.attr("asarray")(item);
  if (arr.attr("dtype").attr("kind").cast<std::string>() != "b") {
    arr = arr.attr("astype")("int64");
  }
  return kernels::from_array(arr.ptr());
}

bool is_advanced(py::handle item) {
  return is_tensor(item) || py::isinstance<py::list>(item);
}

struct Indexed {
  Tensor result;
  std::vector<Tensor> advanced;  // per dim of result; undefined = full slice
  bool has_advanced = false;
};

// keep_full_slices: x[:] is a SliceBackward0 view in getitem (torch disables
// the slice optimization there), but setitem skips no-op slices.
Indexed apply_slicing(
    const Tensor& self, py::handle key, bool keep_full_slices) {
  Indexed out{self, {}, false};
  py::tuple items = py::isinstance<py::tuple>(key)
                        ? py::reinterpret_borrow<py::tuple>(key)
                        : py::make_tuple(key);
  bool single = !py::isinstance<py::tuple>(key);
  int64_t specified = 0;
  for (py::handle item : items) {
    if (item.is_none() || item.ptr() == Py_Ellipsis) {
      continue;
    }
    if (is_tensor(item) && (item.cast<Tensor>().dtype() == ScalarType::Bool ||
                            item.cast<Tensor>().dtype() == ScalarType::UInt8)) {
      specified += item.cast<Tensor>().dim();
    } else {
      specified += 1;
    }
  }
  NPGRAD_CHECK_INDEX(
      specified <= self.dim(),
      "too many indices for tensor of dimension ",
      self.dim());
  if (single && key.ptr() == Py_Ellipsis) {
    out.result = keep_full_slices ? ops::alias(self) : self;
    return out;
  }
  int64_t dim = 0;
  Tensor& r = out.result;
  for (py::handle item : items) {
    if (PyLong_Check(item.ptr()) && !PyBool_Check(item.ptr())) {
      r = ops::select(r, dim, item.cast<int64_t>());
    } else if (PySlice_Check(item.ptr())) {
      auto* s = reinterpret_cast<PySliceObject*>(item.ptr());
      std::optional<int64_t> start, stop;
      int64_t step = 1;
      if (s->start != Py_None) {
        start = py::reinterpret_borrow<py::object>(s->start).cast<int64_t>();
      }
      if (s->stop != Py_None) {
        stop = py::reinterpret_borrow<py::object>(s->stop).cast<int64_t>();
      }
      if (s->step != Py_None) {
        step = py::reinterpret_borrow<py::object>(s->step).cast<int64_t>();
      }
      bool full = !start.value_or(0) && !stop && step == 1;
      if (!full || (single && keep_full_slices)) {
        r = ops::slice(r, dim, start, stop, step);
      }
      out.advanced.emplace_back();
      dim++;
    } else if (item.is_none()) {
      r = ops::unsqueeze(r, dim);
      out.advanced.emplace_back();
      dim++;
    } else if (item.ptr() == Py_Ellipsis) {
      int64_t skip = self.dim() - specified;
      for (int64_t k = 0; k < skip; ++k) {
        out.advanced.emplace_back();
      }
      dim += skip;
    } else if (
        is_advanced(item) || py::isinstance<py::tuple>(item) ||
        PyBool_Check(item.ptr())) {
      Tensor idx =
          PyBool_Check(item.ptr())
              ? kernels::from_array(
                    py::module_::import("numpy").attr("asarray")(item).ptr())
              : index_tensor(item);
      if (idx.dtype() == ScalarType::Bool && idx.dim() > 1) {
        // a multi-dim mask covers several dims: NumPy expands it itself
        out.advanced.push_back(idx);
        out.has_advanced = true;
        dim += idx.dim();
        continue;
      }
      out.advanced.push_back(idx);
      out.has_advanced = true;
      dim++;
    } else {
      throw IndexError(
          "only integers, slices (`:`), ellipsis (`...`), None and long or "
          "byte Variables are valid indices (got " +
          python_type_name(item) + ")");
    }
  }
  return out;
}

Tensor getitem(const Tensor& self, py::handle key) {
  Indexed ix = apply_slicing(self, key, true);
  if (!ix.has_advanced) {
    return ix.result;
  }
  while (!ix.advanced.empty() && !ix.advanced.back().defined()) {
    ix.advanced.pop_back();
  }
  return ops::index(ix.result, ix.advanced);
}

// torch's copy_to: copy_ when the shapes match, fill_ from a 0-dim value,
// else strip the value's leading 1-dims (view), expand it to the
// destination and copy_. Python numbers arrive as 0-dim tensors.
void copy_to(const Tensor& dst, const Tensor& value) {
  if (dst.sizes() == value.sizes()) {
    ops::copy_(dst, value);
  } else if (value.dim() == 0) {
    ops::fill_(dst, value);
  } else {
    Shape stripped(value.sizes());
    std::size_t lead = 0;
    while (lead < stripped.size() && stripped[lead] == 1) {
      ++lead;
    }
    stripped.erase(
        stripped.begin(), stripped.begin() + static_cast<std::ptrdiff_t>(lead));
    ops::copy_(dst, ops::expand(ops::view(value, stripped), dst.sizes()));
  }
}

void setitem(const Tensor& self, py::handle key, py::handle value) {
  Tensor v = operand_or_throw(value);
  // The destination view is recorded like any view (in the current grad
  // mode), so writing through it rebases self's history (CopySlices).
  Indexed ix = apply_slicing(self, key, false);
  // Note [Mutation provenance]: the user wrote t[key] = v.
  autograd::MutationOpScope op("__setitem__");
  if (ix.has_advanced) {
    while (!ix.advanced.empty() && !ix.advanced.back().defined()) {
      ix.advanced.pop_back();
    }
    ops::index_put_(ix.result, ix.advanced, v);
    return;
  }
  copy_to(ix.result, v);
}

template <typename Fn>
void def_binary_operator(
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    const char* name,
    Fn fn) {
  cls.def(name, [fn](const Tensor& self, py::handle other) -> py::object {
    Tensor o = as_operand(other);
    if (!o.defined()) {
      return not_implemented();
    }
    return py::cast(fn(self, o));
  });
}

template <typename Fn>
void def_inplace_operator(
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    const char* name,
    Fn fn) {
  cls.def(name, [fn](py::object self, py::handle other) -> py::object {
    Tensor o = as_operand(other);
    if (!o.defined()) {
      return not_implemented();
    }
    fn(self.cast<Tensor>(), o);
    return self;
  });
}

// isclose and allclose: the function and the method, with torch's default
// tolerances.
template <typename Fn>
void def_closeness(
    py::module_& m,
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    const char* name,
    Fn fn) {
  constexpr double rtol = 1e-05, atol = 1e-08;
  m.def(
      name,
      fn,
      "input"_a,
      "other"_a,
      "rtol"_a = rtol,
      "atol"_a = atol,
      "equal_nan"_a = false);
  cls.def(
      name,
      fn,
      "other"_a,
      "rtol"_a = rtol,
      "atol"_a = atol,
      "equal_nan"_a = false);
}

// torch.tensordot's dims (torch/functional.py): an int n (the last n dims of
// a with the first n of b), a 1-element tensor, or two lists of dims.
Tensor tensordot_impl(const Tensor& a, const Tensor& b, py::handle dims) {
  std::optional<int64_t> count;
  if (PyLong_Check(dims.ptr()) && !PyBool_Check(dims.ptr())) {
    count = dims.cast<int64_t>();
  } else if (is_tensor(dims) && dims.cast<Tensor>().numel() == 1) {
    count = static_cast<int64_t>(kernels::item(dims.cast<Tensor>()));
  }
  if (count) {
    NPGRAD_CHECK(
        *count >= 0, "tensordot expects dims >= 0, but got dims=", *count);
    NPGRAD_CHECK(
        *count <= a.dim() && *count <= b.dim(),
        "tensordot expects dims < ndim_a or ndim_b, but got dims=",
        *count);
    std::vector<int64_t> dims_a, dims_b;
    for (int64_t i = 0; i < *count; ++i) {
      dims_a.push_back(i - *count);
      dims_b.push_back(i);
    }
    return ops::tensordot(a, b, dims_a, dims_b);
  }
  bool pair =
      (py::isinstance<py::tuple>(dims) || py::isinstance<py::list>(dims)) &&
      py::len(dims) == 2;
  NPGRAD_CHECK(
      pair,
      "tensordot expects dims to be int or tuple[list[int], list[int]] or "
      "list[list[int]] containing two lists, but got dims=",
      py::str(dims).cast<std::string>());
  py::sequence both = dims.cast<py::sequence>();
  const char* names[2] = {"dims_self", "dims_other"};
  std::vector<int64_t> lists[2];
  for (int i = 0; i < 2; ++i) {
    py::object item = both[i];
    NPGRAD_CHECK_TYPE(
        py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item),
        "tensordot(): argument '",
        names[i],
        "' (position ",
        i + 3,
        ") must be tuple of ints, not ",
        Py_TYPE(item.ptr())->tp_name);
    for (py::handle d : item) {
      NPGRAD_CHECK_TYPE(
          PyLong_Check(d.ptr()) && !PyBool_Check(d.ptr()),
          "tensordot(): argument '",
          names[i],
          "' (position ",
          i + 3,
          ") must be tuple of ints, but found element of type ",
          Py_TYPE(d.ptr())->tp_name,
          " at pos ",
          lists[i].size());
      lists[i].push_back(d.cast<int64_t>());
    }
  }
  return ops::tensordot(a, b, lists[0], lists[1]);
}

// The products written as composites (the others are the matrix product
// table's, linalg_table.cpp): npgrad.<name>(input, <operand>) and
// Tensor.<name>(<operand>).
void bind_products(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  using Product = Tensor (*)(const Tensor&, const Tensor&);
  const std::tuple<const char*, Product, const char*> products[] = {
      {"outer", &ops::outer, "vec2"},
      {"ger", &ops::outer, "vec2"},
      {"kron", &ops::kron, "other"}};
  for (const auto& [name, fn, operand] : products) {
    m.def(name, fn, "input"_a, py::arg(operand));
    cls.def(name, fn, py::arg(operand));
  }
}

// index_put's indices: a tuple or list of tensors, as torch's parser takes
// them.
std::vector<Tensor> index_tensors(
    py::handle indices, const char* fn, int position) {
  if (!py::isinstance<py::tuple>(indices) &&
      !py::isinstance<py::list>(indices)) {
    NPGRAD_CHECK_TYPE(
        false,
        fn,
        "(): argument 'indices' (position ",
        position,
        ") must be tuple of Tensors, not ",
        py::str(py::type::of(indices).attr("__name__")).cast<std::string>());
  }
  std::vector<Tensor> out;
  std::size_t i = 0;
  for (py::handle item : indices) {
    NPGRAD_CHECK_TYPE(
        is_tensor(item),
        "expected Tensor as element ",
        i,
        " in argument 0, but got ",
        py::str(py::type::of(item).attr("__name__")).cast<std::string>());
    out.push_back(item.cast<Tensor>());
    ++i;
  }
  return out;
}

// The default of scatter's src, value and reduce: an argument not given,
// which None given is not (torch's "invalid combination" error). Never freed.
py::handle not_given() {
  static PyObject* sentinel =
      PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  return sentinel;
}

py::arg_v not_given_arg(const char* name) {
  return py::arg_v(
      name, py::reinterpret_borrow<py::object>(not_given()), "...");
}

// scatter's arguments: src a tensor, or a Python number (given as src or
// value=; a wrapped number of self's dtype); reduce a string or not given.
// Anything else gets torch's "invalid combination" error.
struct ScatterArgs {
  Tensor src;
  std::optional<std::string> reduce;
};

ScatterArgs scatter_args(
    const char* name,
    py::handle self,
    py::handle dim,
    py::handle index,
    py::handle src,
    py::handle value,
    py::handle reduce,
    bool method) {
  // As torch's parser: src positionally or by name, or value by name.
  bool has_value = !value.is(not_given());
  bool has_reduce = !reduce.is(not_given());
  py::handle given = has_value ? value : src;
  Tensor v = given.is(not_given()) ? Tensor() : as_operand(given);
  bool ok = is_tensor(self) && is_int_arg(dim) && is_tensor(index) &&
            v.defined() && !py::isinstance<py::str>(given) &&
            (src.is(not_given()) || !has_value) &&
            (!has_value || v.impl()->is_wrapped_number) &&
            (!has_reduce || py::isinstance<py::str>(reduce));
  if (!ok) {
    std::vector<py::handle> got = {dim, index};
    if (!given.is(not_given())) {
      got.push_back(given);
    }
    if (!method) {
      got.insert(got.begin(), self);
    }
    throw_invalid_combination(
        name, got, method ? kScatterMethodSignatures : kScatterSignatures);
  }
  ScatterArgs args;
  args.src =
      v.impl()->is_wrapped_number
          ? ops::wrapped_scalar(kernels::item(v), self.cast<Tensor>().dtype())
          : v;
  if (has_reduce) {
    args.reduce = reduce.cast<std::string>();
  }
  return args;
}

// torch's warning (once per process, as its TORCH_WARN_ONCE) for the
// deprecated reduce argument with a tensor src.
void warn_scatter_reduce_deprecated() {
  static std::atomic<bool> warned{false};
  warn_once(
      warned,
      "The reduce argument of torch.scatter with Tensor src is deprecated "
      "and will be removed in a future PyTorch release. Use "
      "torch.scatter_reduce instead for more reduction options.");
}

// An op that writes into self (Note [Ops that write into self] in
// indexing.cpp), fn(self, args..., inplace): npgrad.<name>(input, args...)
// and Tensor.<name>(args...) return a copy, Tensor.<name>_(args...) writes
// into self and returns it.
template <typename... Args, typename Fn, typename... Extra>
void def_writing_op(
    py::module_& m,
    py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls,
    const char* name,
    const char* inplace_name,
    Fn fn,
    const Extra&... extra) {
  auto copy = [fn](const Tensor& self, Args... args) {
    return fn(self, args..., false);
  };
  m.def(name, copy, "input"_a, extra...);
  cls.def(name, copy, extra...);
  cls.def(
      inplace_name,
      [fn](py::object self, Args... args) {
        fn(self.cast<Tensor>(), args..., true);
        return self;
      },
      extra...);
}

// The indexing ops (indexing.cpp): npgrad.<name>(input, ...), Tensor.<name>
// and, where torch has them, Tensor.<name>_ and npgrad.<name>_.
void bind_indexing(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  def_function_and_method(
      m,
      cls,
      "gather",
      &ops::gather,
      "dim"_a,
      "index"_a,
      py::kw_only(),
      "sparse_grad"_a = false);
  // scatter's src may be a number (its own overload in torch), and either
  // may come with torch's deprecated reduce.
  auto scatter = [](py::object self,
                    py::handle dim,
                    py::handle index,
                    py::handle src,
                    py::handle value,
                    py::handle reduce,
                    bool method,
                    bool inplace) -> py::object {
    ScatterArgs a = scatter_args(
        inplace ? "scatter_" : "scatter",
        self,
        dim,
        index,
        src,
        value,
        reduce,
        method);
    if (a.reduce && !a.src.impl()->is_wrapped_number) {
      warn_scatter_reduce_deprecated();
    }
    Tensor t = self.cast<Tensor>();
    auto d = dim.cast<int64_t>();
    auto i = index.cast<Tensor>();
    Tensor out = a.reduce ? ops::scatter(t, d, i, a.src, *a.reduce, inplace)
                          : ops::scatter(t, d, i, a.src, inplace);
    return inplace ? self : py::cast(out);
  };
  // The function (`input` first) and the two methods, with one parameter
  // list.
  auto def_scatter = [&scatter](
                         auto& target,
                         const char* name,
                         bool method,
                         bool inplace,
                         auto... input) {
    target.def(
        name,
        [scatter, method, inplace](
            py::object self,
            py::handle dim,
            py::handle index,
            py::handle src,
            py::handle value,
            py::handle reduce) {
          return scatter(self, dim, index, src, value, reduce, method, inplace);
        },
        input...,
        "dim"_a,
        "index"_a,
        not_given_arg("src"),
        py::kw_only(),
        not_given_arg("value"),
        not_given_arg("reduce"));
  };
  def_scatter(m, "scatter", false, false, "input"_a);
  def_scatter(cls, "scatter", true, false);
  def_scatter(cls, "scatter_", true, true);
  mark_torch_overloaded(m.attr("scatter"), 1);
  mark_torch_overloaded(cls.attr("scatter"), 1);
  mark_torch_overloaded(cls.attr("scatter_"), 1);
  def_writing_op<int64_t, const Tensor&, const Tensor&>(
      m,
      cls,
      "scatter_add",
      "scatter_add_",
      &ops::scatter_add,
      "dim"_a,
      "index"_a,
      "src"_a);
  def_writing_op<
      int64_t,
      const Tensor&,
      const Tensor&,
      const std::string&,
      bool>(
      m,
      cls,
      "scatter_reduce",
      "scatter_reduce_",
      &ops::scatter_reduce,
      "dim"_a,
      "index"_a,
      "src"_a,
      "reduce"_a,
      py::kw_only(),
      "include_self"_a = true);
  def_writing_op<int64_t, const Tensor&, const Tensor&, double>(
      m,
      cls,
      "index_add",
      "index_add_",
      &ops::index_add,
      "dim"_a,
      "index"_a,
      "source"_a,
      py::kw_only(),
      "alpha"_a = 1);
  def_writing_op<int64_t, const Tensor&, const Tensor&>(
      m,
      cls,
      "index_copy",
      "index_copy_",
      &ops::index_copy,
      "dim"_a,
      "index"_a,
      "source"_a);
  def_writing_op<const Tensor&, const Tensor&>(
      m,
      cls,
      "masked_scatter",
      "masked_scatter_",
      &ops::masked_scatter,
      "mask"_a,
      "source"_a);
  // index_put's indices: a sequence of tensors, checked here (torch names the
  // argument's position in its error); torch also has npgrad.index_put_.
  for (bool inplace : {false, true}) {
    const char* name = inplace ? "index_put_" : "index_put";
    auto put = [inplace, name](
                   py::object self,
                   py::handle indices,
                   const Tensor& values,
                   bool accumulate,
                   int position) -> py::object {
      Tensor out = ops::index_put(
          self.cast<Tensor>(),
          index_tensors(indices, name, position),
          values,
          accumulate,
          inplace);
      return inplace ? self : py::cast(out);
    };
    for (bool method : {false, true}) {
      auto bound = [put, method](
                       py::object self,
                       py::handle indices,
                       const Tensor& values,
                       bool accumulate) {
        return put(self, indices, values, accumulate, method ? 1 : 2);
      };
      if (method) {
        cls.def(name, bound, "indices"_a, "values"_a, "accumulate"_a = false);
      } else {
        m.def(
            name,
            bound,
            "input"_a,
            "indices"_a,
            "values"_a,
            "accumulate"_a = false);
      }
    }
  }
  def_function_and_method(
      m, cls, "index_select", &ops::index_select, "dim"_a, "index"_a);
  def_function_and_method(
      m, cls, "masked_select", &ops::masked_select, "mask"_a);
  def_function_and_method(
      m,
      cls,
      "take_along_dim",
      &ops::take_along_dim,
      "indices"_a,
      "dim"_a = py::none());
  def_function_and_method(
      m,
      cls,
      "nonzero",
      [](const Tensor& self, bool tuple) -> py::object {
        if (tuple) {
          return as_tuple(ops::nonzero_tuple(self));
        }
        return py::cast(ops::nonzero(self));
      },
      py::kw_only(),
      "as_tuple"_a = false);
}

// A (values, indices) pair as torch.return_types.<name>.
py::object named_pair(const char* name, std::pair<Tensor, Tensor> r) {
  py::object cls = py::module_::import("npgrad.return_types").attr(name);
  return cls(r.first, r.second);
}

// Scans, sort, topk, median and kthvalue: functions and methods.
void bind_sorting(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  for (bool is_prod : {false, true}) {
    const char* name = is_prod ? "cumprod" : "cumsum";
    def_function_and_method(
        m,
        cls,
        name,
        [is_prod](const Tensor& a, int64_t dim, py::handle dtype) {
          return is_prod ? ops::cumprod(a, dim, optional_dtype(dtype))
                         : ops::cumsum(a, dim, optional_dtype(dtype));
        },
        "dim"_a,
        py::kw_only(),
        "dtype"_a = py::none());
    cls.def(
        is_prod ? "cumprod_" : "cumsum_",
        [is_prod](py::object self, int64_t dim, py::handle dtype) {
          auto t = self.cast<Tensor>();
          if (is_prod) {
            ops::cumprod_(t, dim, optional_dtype(dtype));
          } else {
            ops::cumsum_(t, dim, optional_dtype(dtype));
          }
          return self;
        },
        "dim"_a,
        py::kw_only(),
        "dtype"_a = py::none());
  }
  def_function_and_method(
      m,
      cls,
      "sort",
      [](const Tensor& a, int64_t dim, bool descending, py::handle stable) {
        std::optional<bool> s;
        if (!stable.is_none()) {
          s = stable.cast<bool>();
        }
        return named_pair("sort", ops::sort(a, dim, descending, s));
      },
      "dim"_a = -1,
      "descending"_a = false,
      py::kw_only(),
      "stable"_a = py::none());
  def_function_and_method(
      m,
      cls,
      "argsort",
      [](const Tensor& a, int64_t dim, bool descending, bool stable) {
        return ops::argsort(a, dim, descending, stable);
      },
      "dim"_a = -1,
      "descending"_a = false,
      py::kw_only(),
      "stable"_a = false);
  def_function_and_method(m, cls, "msort", [](const Tensor& a) {
    return ops::sort(a, 0, false, std::nullopt).first;
  });
  def_function_and_method(
      m,
      cls,
      "topk",
      [](const Tensor& a, int64_t k, int64_t dim, bool largest, bool sorted) {
        return named_pair("topk", ops::topk(a, k, dim, largest, sorted));
      },
      "k"_a,
      "dim"_a = -1,
      "largest"_a = true,
      "sorted"_a = true);
  def_function_and_method(
      m,
      cls,
      "median",
      [](const Tensor& a, py::handle dim, bool keepdim) -> py::object {
        if (dim.is_none()) {
          return py::cast(ops::median(a));
        }
        return named_pair(
            "median", ops::median(a, dim.cast<int64_t>(), keepdim));
      },
      "dim"_a = py::none(),
      "keepdim"_a = false);
  def_function_and_method(
      m,
      cls,
      "kthvalue",
      [](const Tensor& a, int64_t k, int64_t dim, bool keepdim) {
        return named_pair("kthvalue", ops::kthvalue(a, k, dim, keepdim));
      },
      "k"_a,
      "dim"_a = -1,
      "keepdim"_a = false);
  // median(input) and median(input, dim): two torch overloads.
  mark_torch_overloaded(m.attr("median"), 2);
}

}  // namespace

// An int or a sequence of ints (torch's IntArrayRef[1]: roll's shifts,
// movedim's dims); `accepts_int` false for a plain "tuple of ints".
std::vector<int64_t> int_list_arg(
    py::handle v,
    const char* fn,
    const char* arg,
    int position,
    bool accepts_int = true) {
  if (accepts_int && is_int_arg(v)) {
    return {v.cast<int64_t>()};
  }
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    if (auto msg = unpack_error(v, fn, arg)) {
      throw TypeError(*msg);
    }
    return v.cast<std::vector<int64_t>>();
  }
  throw TypeError(
      detail::str_cat(
          fn,
          "(): argument '",
          arg,
          "' (position ",
          position,
          ") must be tuple of ints, not ",
          python_type_name(v)));
}

// shape_from_args for an argument torch requires (flip(*dims), repeat).
Shape required_shape_args(
    const py::args& args, const char* fn, const char* arg) {
  if (args.empty()) {
    throw TypeError(
        detail::str_cat(
            fn, "() missing 1 required positional arguments: \"", arg, "\""));
  }
  return shape_from_args(args, fn, arg);
}

std::optional<int64_t> optional_int(py::handle v) {
  if (v.is_none()) {
    return std::nullopt;
  }
  return v.cast<int64_t>();
}

// repeat_interleave(input, repeats: int | Tensor, dim=None, *, output_size).
Tensor repeat_interleave_impl(
    const Tensor& a,
    py::handle repeats,
    std::optional<int64_t> dim,
    std::optional<int64_t> output_size) {
  if (is_tensor(repeats)) {
    return ops::repeat_interleave(a, repeats.cast<Tensor>(), dim, output_size);
  }
  if (!is_int_arg(repeats)) {
    throw TypeError(
        detail::str_cat(
            "repeat_interleave() received an invalid combination of arguments "
            "- "
            "got (Tensor, ",
            python_type_name(repeats),
            "), but expected one of:\n * (Tensor input, Tensor repeats, int "
            "dim "
            "= None, *, SymInt output_size = None)\n * (Tensor input, SymInt "
            "repeats, int dim = None, *, SymInt output_size = None)\n"));
  }
  return ops::repeat_interleave(a, repeats.cast<int64_t>(), dim, output_size);
}

// narrow's start: an int or a 0-dim integer tensor.
int64_t narrow_start(py::handle start) {
  if (is_tensor(start)) {
    Tensor t = start.cast<Tensor>();
    NPGRAD_CHECK(
        t.dim() == 0 && t.dtype() == ScalarType::Int64,
        "start must be an 0-dim integral Tensor.");
    return static_cast<int64_t>(kernels::item(t));
  }
  return start.cast<int64_t>();
}

// flip, roll, repeat, tile, repeat_interleave, narrow, flatten, unflatten,
// movedim/moveaxis, swapaxes/swapdims, triu/tril(_), diag, diag_embed.
void bind_shape_ops(
    py::module_& m, py::class_<TensorImpl, std::shared_ptr<TensorImpl>>& cls) {
  m.def(
      "flip",
      [](const Tensor& a, py::handle dims) {
        return ops::flip(a, int_list_arg(dims, "flip", "dims", 2, false));
      },
      "input"_a,
      "dims"_a);
  cls.def("flip", [](const Tensor& a, const py::args& dims) {
    return ops::flip(a, required_shape_args(dims, "flip", "dims"));
  });
  def_function_and_method(m, cls, "fliplr", [](const Tensor& a) {
    NPGRAD_CHECK(a.dim() >= 2, "Input must be >= 2-d.");
    return ops::flip(a, {1});
  });
  def_function_and_method(m, cls, "flipud", [](const Tensor& a) {
    NPGRAD_CHECK(a.dim() >= 1, "Input must be >= 1-d.");
    return ops::flip(a, {0});
  });
  def_function_and_method(
      m,
      cls,
      "roll",
      [](const Tensor& a, py::handle shifts, py::handle dims) {
        return ops::roll(
            a,
            int_list_arg(shifts, "roll", "shifts", 2),
            dims.is_none() ? std::vector<int64_t>{}
                           : int_list_arg(dims, "roll", "dims", 3));
      },
      "shifts"_a,
      "dims"_a = py::tuple());
  cls.def("repeat", [](const Tensor& a, const py::args& repeats) {
    return ops::repeat(a, required_shape_args(repeats, "repeat", "repeats"));
  });
  m.def(
      "tile",
      [](const Tensor& a, py::handle dims) {
        return ops::tile(a, int_list_arg(dims, "tile", "dims", 2, false));
      },
      "input"_a,
      "dims"_a);
  cls.def("tile", [](const Tensor& a, const py::args& dims) {
    return ops::tile(a, required_shape_args(dims, "tile", "dims"));
  });
  def_function_and_method(
      m,
      cls,
      "repeat_interleave",
      &repeat_interleave_impl,
      "repeats"_a,
      "dim"_a = py::none(),
      py::kw_only(),
      "output_size"_a = py::none());
  // torch.repeat_interleave(repeats): the indices of repeats' entries.
  m.def(
      "repeat_interleave",
      [](const Tensor& repeats, std::optional<int64_t> output_size) {
        Tensor index = ops::repeat_interleave_index(repeats);
        NPGRAD_CHECK(
            !output_size || *output_size == index.numel(),
            "allocated size does not match required size");
        return index;
      },
      "input"_a,
      py::kw_only(),
      "output_size"_a = py::none());
  def_function_and_method(
      m,
      cls,
      "narrow",
      [](const Tensor& a, int64_t dim, py::handle start, int64_t length) {
        return ops::narrow(a, dim, narrow_start(start), length);
      },
      "dim"_a,
      "start"_a,
      "length"_a);
  def_function_and_method(
      m, cls, "flatten", &ops::flatten, "start_dim"_a = 0, "end_dim"_a = -1);
  def_function_and_method(
      m,
      cls,
      "unflatten",
      [](const Tensor& a, int64_t dim, py::handle sizes) {
        return ops::unflatten(
            a, dim, int_list_arg(sizes, "unflatten", "sizes", 2, false));
      },
      "dim"_a,
      "sizes"_a);
  for (const char* name : {"movedim", "moveaxis"}) {
    def_function_and_method(
        m,
        cls,
        name,
        [name](const Tensor& a, py::handle source, py::handle destination) {
          return ops::movedim(
              a,
              int_list_arg(source, name, "source", 2),
              int_list_arg(destination, name, "destination", 3));
        },
        "source"_a,
        "destination"_a);
  }
  def_function_and_method(
      m, cls, "swapaxes", &ops::transpose, "axis0"_a, "axis1"_a);
  def_function_and_method(
      m, cls, "swapdims", &ops::transpose, "dim0"_a, "dim1"_a);
  def_function_and_method(m, cls, "triu", &ops::triu, "diagonal"_a = 0);
  def_function_and_method(m, cls, "tril", &ops::tril, "diagonal"_a = 0);
  for (bool upper : {true, false}) {
    cls.def(
        upper ? "triu_" : "tril_",
        [upper](py::object self, int64_t diagonal) {
          ops::triu_(self.cast<Tensor>(), diagonal, upper);
          return self;
        },
        "diagonal"_a = 0);
  }
  def_function_and_method(m, cls, "diag", &ops::diag, "diagonal"_a = 0);
  def_function_and_method(
      m,
      cls,
      "diag_embed",
      &ops::diag_embed,
      "offset"_a = 0,
      "dim1"_a = -2,
      "dim2"_a = -1);
}

void bind_ops(py::module_& m) {
  auto cls = py::reinterpret_borrow<
      py::class_<TensorImpl, std::shared_ptr<TensorImpl>>>(m.attr("Tensor"));

  // ---- Operators ----
  def_binary_operator(cls, "__add__", [](const Tensor& a, const Tensor& b) {
    return ops::add(a, b);
  });
  def_binary_operator(cls, "__radd__", [](const Tensor& a, const Tensor& b) {
    return ops::add(a, b);
  });
  def_binary_operator(cls, "__sub__", [](const Tensor& a, const Tensor& b) {
    return ops::sub(a, b);
  });
  def_binary_operator(cls, "__rsub__", [](const Tensor& a, const Tensor& b) {
    return b.impl()->is_wrapped_number ? ops::rsub(a, b) : ops::sub(b, a);
  });
  def_binary_operator(cls, "__mul__", [](const Tensor& a, const Tensor& b) {
    return ops::mul(a, b);
  });
  def_binary_operator(cls, "__rmul__", [](const Tensor& a, const Tensor& b) {
    return ops::mul(a, b);
  });
  def_binary_operator(cls, "__truediv__", [](const Tensor& a, const Tensor& b) {
    return ops::div(a, b);
  });
  def_binary_operator(
      cls, "__rtruediv__", [](const Tensor& a, const Tensor& b) {
        return ops::mul(ops::reciprocal(a), b);
      });
  def_binary_operator(cls, "__pow__", [](const Tensor& a, const Tensor& b) {
    return ops::pow(a, b);
  });
  def_binary_operator(cls, "__rpow__", [](const Tensor& a, const Tensor& b) {
    return b.impl()->is_wrapped_number ? ops::pow(kernels::item(b), a)
                                       : ops::pow(b, a);
  });
  // % is torch's remainder; number % tensor is remainder(Scalar, Tensor),
  // whose derivative torch does not implement.
  def_binary_operator(cls, "__mod__", [](const Tensor& a, const Tensor& b) {
    return ops::binary<ops::binary_ops::Remainder>(a, b);
  });
  def_binary_operator(cls, "__rmod__", [](const Tensor& a, const Tensor& b) {
    Tensor value;
    {
      autograd::AutoGradMode no_grad(false);
      value = ops::binary<ops::binary_ops::Remainder>(b, a);
    }
    return ops::record_not_implemented(value, "aten::remainder", {a});
  });
  def_binary_operator(cls, "__matmul__", [](const Tensor& a, const Tensor& b) {
    return ops::matmul(a, b);
  });
  def_binary_operator(cls, "__rmatmul__", [](const Tensor& a, const Tensor& b) {
    return ops::matmul(b, a);
  });
  def_binary_operator(cls, "__eq__", [](const Tensor& a, const Tensor& b) {
    return ops::eq(a, b);
  });
  def_binary_operator(cls, "__ne__", [](const Tensor& a, const Tensor& b) {
    return ops::ne(a, b);
  });
  def_binary_operator(cls, "__lt__", [](const Tensor& a, const Tensor& b) {
    return ops::lt(a, b);
  });
  def_binary_operator(cls, "__le__", [](const Tensor& a, const Tensor& b) {
    return ops::le(a, b);
  });
  def_binary_operator(cls, "__gt__", [](const Tensor& a, const Tensor& b) {
    return ops::gt(a, b);
  });
  def_binary_operator(cls, "__ge__", [](const Tensor& a, const Tensor& b) {
    return ops::ge(a, b);
  });
  def_binary_operator(cls, "__and__", [](const Tensor& a, const Tensor& b) {
    return ops::logical_and(a, b);
  });
  def_inplace_operator(cls, "__iadd__", [](const Tensor& a, const Tensor& b) {
    ops::binary_<ops::binary_ops::Add>(a, b);
  });
  def_inplace_operator(cls, "__isub__", [](const Tensor& a, const Tensor& b) {
    ops::binary_<ops::binary_ops::Sub>(a, b);
  });
  def_inplace_operator(cls, "__imul__", [](const Tensor& a, const Tensor& b) {
    ops::binary_<ops::binary_ops::Mul>(a, b);
  });
  def_inplace_operator(
      cls, "__itruediv__", [](const Tensor& a, const Tensor& b) {
        ops::binary_<ops::binary_ops::Div>(a, b);
      });
  def_inplace_operator(cls, "__imod__", [](const Tensor& a, const Tensor& b) {
    ops::binary_<ops::binary_ops::Remainder>(a, b);
  });
  cls.def("__neg__", [](const Tensor& a) { return ops::neg(a); });
  cls.def("__bool__", [](const Tensor& a) {
    NPGRAD_CHECK(
        a.numel() == 1,
        "Boolean value of Tensor with more than one value is ambiguous");
    return kernels::item(a) != 0;
  });
  cls.def("__float__", [](const Tensor& a) {
    // torch warns once per process (TORCH_WARN_ONCE) when a tensor that
    // would record a graph becomes a Python float.
    if (autograd::GradMode::is_enabled() && autograd::requires_grad(a)) {
      static std::atomic<bool> warned{false};
      warn_once(
          warned,
          "Converting a tensor with requires_grad=True to a scalar may lead "
          "to unexpected behavior.\nConsider using tensor.detach() first.");
    }
    return kernels::item(a);
  });
  cls.def("__int__", [](const Tensor& a) {
    return static_cast<int64_t>(kernels::item(a));
  });
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);

  // ---- Methods ----
  cls.def(
      "pow",
      [](const Tensor& a, py::handle b) {
        Tensor exponent = as_operand(b);
        if (!exponent.defined()) {
          throw_invalid_combination("pow", {b}, kPowMethodSignatures);
        }
        return ops::pow(a, exponent);
      },
      "exponent"_a);
  cls.def("square", &ops::square);
  cls.def("sgn", &ops::sgn);
  cls.def(
      "pow_",
      [](py::object self, py::handle b) {
        Tensor exponent = as_operand(b);
        if (!exponent.defined()) {
          throw_invalid_combination("pow_", {b}, kPowMethodSignatures);
        }
        ops::pow_(self.cast<Tensor>(), exponent);
        return self;
      },
      "exponent"_a);
  cls.def("square_", [](py::object self) {
    ops::pow_(self.cast<Tensor>(), ops::wrapped_scalar(2, ScalarType::Int64));
    return self;
  });
  cls.def("sgn_", [](py::object self) {
    ops::sgn_(self.cast<Tensor>());
    return self;
  });
  cls.def(
      "matmul",
      [](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); },
      "other"_a);
  cls.def(
      "where",
      [](const Tensor& a, py::handle cond, py::handle b) {
        Tensor other = as_operand(b);
        if (!is_tensor(cond) || !other.defined()) {
          throw_invalid_combination("where", {cond, b}, kWhereMethodSignatures);
        }
        return ops::where(cond.cast<Tensor>(), a, other);
      },
      "condition"_a,
      "other"_a);
  cls.def(
      "masked_fill",
      [](py::object a, py::handle mask, py::handle value) {
        auto [m, v] = masked_fill_operands(
            a,
            mask,
            value,
            "masked_fill",
            {mask, value},
            kMaskedFillMethodSignatures);
        return ops::masked_fill(a.cast<Tensor>(), m, v);
      },
      "mask"_a,
      "value"_a);
  cls.def(
      "nan_to_num",
      &ops::nan_to_num,
      "nan"_a = py::none(),
      "posinf"_a = py::none(),
      "neginf"_a = py::none());
  cls.def("equal", &ops::equal, "other"_a);
  cls.def(
      "max",
      [](const Tensor& a, py::handle dim, bool keepdim) {
        return max_impl(a, dim, keepdim, true);
      },
      "dim"_a = py::none(),
      "keepdim"_a = false);
  cls.def(
      "min",
      [](const Tensor& a, py::handle dim, bool keepdim) {
        return max_impl(a, dim, keepdim, false);
      },
      "dim"_a = py::none(),
      "keepdim"_a = false);
  cls.def("softmax", &ops::softmax, "dim"_a);
  cls.def("log_softmax", &ops::log_softmax, "dim"_a);
  cls.def(
      "view_as",
      [](const Tensor& a, const Tensor& other) {
        return ops::view(a, other.sizes());
      },
      "other"_a);
  cls.def("reshape", [](const Tensor& a, const py::args& shape) {
    return ops::reshape(a, shape_from_args(shape, "reshape", "shape"));
  });
  cls.def(
      "expand_as",
      [](const Tensor& a, const Tensor& other) {
        return ops::expand(a, other.sizes());
      },
      "other"_a);
  cls.def("split", &split_impl, "split_size"_a, "dim"_a = 0);
  cls.def(
      "split_with_sizes",
      [](const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
        return as_tuple(ops::split_with_sizes(a, sizes, dim));
      },
      "split_sizes"_a,
      "dim"_a = 0);
  cls.def(
      "chunk",
      [](const Tensor& a, int64_t chunks, int64_t dim) {
        return as_tuple(ops::chunk(a, chunks, dim));
      },
      "chunks"_a,
      "dim"_a = 0);
  cls.def(
      "unbind",
      [](const Tensor& a, int64_t dim) {
        return as_tuple(ops::unbind(a, dim));
      },
      "dim"_a = 0);
  cls.def("clone", &ops::clone);
  cls.def("contiguous", &ops::contiguous);
  cls.def(
      "to", [](const Tensor& a, py::args args, py::kwargs kwargs) -> Tensor {
        py::object dtype = kwargs.contains("dtype")
                               ? py::object(kwargs["dtype"])
                               : py::object(py::none());
        for (py::handle arg : args) {
          if (py::isinstance<py::str>(arg) || py::hasattr(arg, "type") ||
              (PyLong_Check(arg.ptr()) && !PyBool_Check(arg.ptr()))) {
            check_device(arg);
          } else if (dtype.is_none()) {
            dtype = py::reinterpret_borrow<py::object>(arg);
          }
        }
        if (kwargs.contains("device") && !kwargs["device"].is_none()) {
          check_device(kwargs["device"]);
        }
        return dtype.is_none() ? a : ops::to_dtype(a, dtype_from_object(dtype));
      });
  // Tensor.float(), .half(), ...: one per row of the dtype table.
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto dtype = static_cast<ScalarType>(i);
    cls.def(dtype_info(dtype).method_name, [dtype](const Tensor& a) {
      return ops::to_dtype(a, dtype);
    });
  }

  // ---- In-place methods (return self) ----
  // transpose_'s aliases return self (Note [In-place view ops]).
  for (auto [name, first, second] :
       {std::tuple{"swapdims_", "dim0", "dim1"},
        std::tuple{"swapaxes_", "axis0", "axis1"}}) {
    cls.def(
        name,
        [](py::object self, int64_t dim0, int64_t dim1) {
          ops::transpose_(self.cast<Tensor>(), dim0, dim1);
          return self;
        },
        py::arg(first),
        py::arg(second));
  }
  cls.def("zero_", [](py::object self) {
    ops::zero_(self.cast<Tensor>());
    return self;
  });
  cls.def(
      "fill_",
      [](py::object self, py::handle value) {
        Tensor v = operand_or_throw(value);
        NPGRAD_CHECK(
            v.dim() == 0,
            "fill_ only supports 0-dimension value tensor but got tensor with ",
            v.dim(),
            " dimensions.");
        Tensor t = self.cast<Tensor>();
        if (v.impl()->is_wrapped_number) {
          ops::check_fill_value(kernels::item(v), t.dtype(), t.numel());
          ops::fill_(t, kernels::item(v));
        } else {
          ops::fill_(t, v);  // FillBackward3: the value gets a gradient too
        }
        return self;
      },
      "value"_a);
  cls.def(
      "copy_",
      [](py::object self, const Tensor& src) {
        ops::copy_(self.cast<Tensor>(), src);
        return self;
      },
      "other"_a);
  cls.def(
      "masked_fill_",
      [](py::object self, py::handle mask, py::handle value) {
        auto [m, v] = masked_fill_operands(
            self,
            mask,
            value,
            "masked_fill_",
            {mask, value},
            kMaskedFillMethodSignatures);
        ops::masked_fill_(self.cast<Tensor>(), m, v);
        return self;
      },
      "mask"_a,
      "value"_a);
  cls.def(
      "nan_to_num_",
      [](py::object self,
         std::optional<double> nan,
         std::optional<double> posinf,
         std::optional<double> neginf) {
        ops::nan_to_num_(self.cast<Tensor>(), nan, posinf, neginf);
        return self;
      },
      "nan"_a = py::none(),
      "posinf"_a = py::none(),
      "neginf"_a = py::none());

  // ---- Module functions ----
  // The random ops' graph recording (npgrad/_creation.py draws the values).
  m.def(
      "_random_fill_",
      [](const Tensor& self,
         const Tensor& values,
         const std::string& node,
         std::optional<Tensor> p) {
        ops::random_fill_(self, values, node, p ? *p : Tensor());
      },
      "self"_a,
      "values"_a,
      "node"_a,
      "p"_a = py::none());
  m.def(
      "_record_random",
      &ops::record_random,
      "result"_a,
      "node"_a,
      "inputs"_a,
      "size_attributes"_a);
  m.def(
      "_record_not_implemented",
      &ops::record_not_implemented,
      "result"_a,
      "forward_name"_a,
      "inputs"_a);
  m.def(
      "_check_fill_value",
      [](double value, py::handle dtype, int64_t numel) {
        ops::check_fill_value(value, dtype_from_object(dtype), numel);
      },
      "value"_a,
      "dtype"_a,
      "numel"_a);
  m.def(
      "pow",
      [](py::handle a, py::handle b) -> Tensor {
        if (is_tensor(a)) {
          Tensor exponent = as_operand(b);
          if (exponent.defined()) {
            return ops::pow(a.cast<Tensor>(), exponent);
          }
        } else if (is_tensor(b)) {
          Tensor base = as_operand(a);
          if (base.defined() && base.impl()->is_wrapped_number) {
            return ops::pow(kernels::item(base), b.cast<Tensor>());
          }
        }
        throw_invalid_combination("pow", {a, b}, kPowSignatures);
      },
      "input"_a,
      "exponent"_a);
  m.def("matmul", &ops::matmul, "input"_a, "other"_a);
  m.def("square", &ops::square, "input"_a);
  m.def("sgn", &ops::sgn, "input"_a);
  bind_products(m, cls);
  bind_indexing(m, cls);
  m.def("tensordot", &tensordot_impl, "a"_a, "b"_a, "dims"_a = 2);
  // torch._C._VariableFunctions.einsum; npgrad.einsum (functional.py) parses
  // torch.einsum's argument forms and calls it.
  m.def(
      "einsum",
      [](py::handle equation,
         py::handle tensors,
         std::optional<std::vector<int64_t>> path) {
        NPGRAD_CHECK_TYPE(
            py::isinstance<py::str>(equation),
            "einsum(): argument 'equation' (position 1) must be str, not ",
            python_type_name(equation));
        return ops::einsum(
            equation.cast<std::string>(),
            tensor_list(tensors, "einsum", 2),
            path);
      },
      "equation"_a,
      "tensors"_a,
      py::kw_only(),
      "path"_a = py::none());
  m.def(
      "masked_fill",
      [](py::handle a, py::handle mask, py::handle value) {
        auto [m, v] = masked_fill_operands(
            a,
            mask,
            value,
            "masked_fill",
            {a, mask, value},
            kMaskedFillSignatures);
        return ops::masked_fill(a.cast<Tensor>(), m, v);
      },
      "input"_a,
      "mask"_a,
      "value"_a);
  m.def(
      "nan_to_num",
      &ops::nan_to_num,
      "input"_a,
      "nan"_a = py::none(),
      "posinf"_a = py::none(),
      "neginf"_a = py::none());
  def_closeness(m, cls, "isclose", &ops::isclose);
  def_closeness(m, cls, "allclose", &ops::allclose);
  m.def("equal", &ops::equal, "input"_a, "other"_a);
  m.def(
      "where",
      [](const Tensor& cond, py::handle a, py::handle b) -> py::object {
        if (a.is_none() && b.is_none()) {
          return as_tuple(ops::nonzero_tuple(cond));
        }
        Tensor input = as_operand(a);
        Tensor other = as_operand(b);
        if (!input.defined() || !other.defined()) {
          py::object c = py::cast(cond);
          std::vector<py::handle> got = {c, a};
          if (!b.is_none()) {
            got.push_back(b);
          }
          throw_invalid_combination("where", got, kWhereSignatures);
        }
        return py::cast(ops::where(cond, input, other));
      },
      "condition"_a,
      "input"_a = py::none(),
      "other"_a = py::none());
  mark_torch_overloaded(m.attr("where"), 2);
  m.def(
      "max",
      [](const Tensor& a, py::handle dim, bool keepdim) {
        return max_impl(a, dim, keepdim, true);
      },
      "input"_a,
      "dim"_a = py::none(),
      "keepdim"_a = false);
  m.def(
      "min",
      [](const Tensor& a, py::handle dim, bool keepdim) {
        return max_impl(a, dim, keepdim, false);
      },
      "input"_a,
      "dim"_a = py::none(),
      "keepdim"_a = false);
  m.def("softmax", &ops::softmax, "input"_a, "dim"_a);
  m.def("log_softmax", &ops::log_softmax, "input"_a, "dim"_a);
  m.def(
      "reshape",
      [](const Tensor& a, const Shape& shape) {
        return ops::reshape(a, shape);
      },
      "input"_a,
      "shape"_a);
  m.def(
      "split",
      &split_impl,
      "tensor"_a,
      "split_size_or_sections"_a,
      "dim"_a = 0);
  m.def(
      "split_with_sizes",
      [](const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
        return as_tuple(ops::split_with_sizes(a, sizes, dim));
      },
      "input"_a,
      "split_sizes"_a,
      "dim"_a = 0);
  m.def(
      "chunk",
      [](const Tensor& a, int64_t chunks, int64_t dim) {
        return as_tuple(ops::chunk(a, chunks, dim));
      },
      "input"_a,
      "chunks"_a,
      "dim"_a = 0);
  m.def(
      "unbind",
      [](const Tensor& a, int64_t dim) {
        return as_tuple(ops::unbind(a, dim));
      },
      "input"_a,
      "dim"_a = 0);
  m.def("clone", &ops::clone, "input"_a);
  m.def(
      "cat",
      [](py::handle tensors, int64_t dim) {
        return ops::cat(tensor_list(tensors, "cat"), dim);
      },
      "tensors"_a,
      "dim"_a = 0);
  m.def(
      "stack",
      [](py::handle tensors, int64_t dim) {
        return ops::stack(tensor_list(tensors, "stack"), dim);
      },
      "tensors"_a,
      "dim"_a = 0);
  bind_reductions(m, cls);
  bind_shape_ops(m, cls);
  bind_sorting(m, cls);
  // max(input, dim | other), ...: several torch overloads.
  for (const char* name : {"max", "min"}) {
    mark_torch_overloaded(m.attr(name), 2);
  }
}

}  // namespace npgrad::bindings
