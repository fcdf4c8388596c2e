// The Tensor class: storage interop with NumPy, shape, dtype and the autograd
// attributes. Ops and operators are bound in ops.cpp.
#include <pybind11/numpy.h>

#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/node.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_function.h"
#include "python_hooks.h"

namespace npgrad::bindings {

namespace {

struct DType {
  ScalarType type;
};

// Borrowed for the life of the process: a static py::object would be
// destroyed after the interpreter has finalized.
PyObject* dtype_objects[kNumScalarTypes];
PyTypeObject* tensor_type = nullptr;

}  // namespace

std::shared_ptr<TensorImpl>* tensor_holder(PyObject* self) {
  if (!holder_constructed(self)) {
    return nullptr;
  }
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  return &inst->get_value_and_holder().holder<std::shared_ptr<TensorImpl>>();
}

const py::detail::type_info* tensor_type_info() {
  // Registered once, for the life of the process; never cached while null.
  static const py::detail::type_info* info = nullptr;
  if (info == nullptr) {
    info = py::detail::get_type_info(typeid(TensorImpl));
  }
  return info;
}

namespace {

py::object array_of(const Tensor& t) {
  return py::reinterpret_borrow<py::object>(
      static_cast<PyObject*>(kernels::materialize_array(*t.impl())));
}

void set_grad(const Tensor& self, py::handle value) {
  autograd::AutogradMeta& meta = autograd::materialize_autograd_meta(self);
  if (value.is_none()) {
    meta.grad = Tensor();
    return;
  }
  NPGRAD_CHECK_TYPE(
      is_tensor(value),
      "assigned grad expected to be a Tensor or None but got grad of type ",
      python_type_name(value));
  Tensor g = value.cast<Tensor>();
  NPGRAD_CHECK(!g.is_same(self), "can't assign Variable as its own grad");
  NPGRAD_CHECK(
      g.dtype() == self.dtype(),
      "attempting to assign a gradient with dtype '",
      // torch names the gradient's dtype by its TypeMeta ('double') and the
      // tensor's grad_dtype by its ScalarType ('Float').
      type_meta_name(g.dtype()),
      "' to a tensor with grad_dtype '",
      scalar_type_name(self.dtype()),
      "'. The gradient must match the tensor's grad_dtype (defaults to the "
      "tensor's dtype). You can set the tensor's grad_dtype attribute with a "
      "specific dtype, or None to allow any dtype. Set grad_dtype with "
      "caution. Diverging the dtypes of a tensor and its gradient may break "
      "downstream systems that assume they match.");
  NPGRAD_CHECK(
      g.sizes() == self.sizes(),
      "attempting to assign a gradient of size '",
      shape_str(g.sizes()),
      "' to a tensor of size '",
      shape_str(self.sizes()),
      "'. Please ensure that the gradient and the tensor are the same size");
  meta.grad = g;
  autograd::note_grad_assigned(self);
}

py::object get_grad(const Tensor& self) {
  autograd::AutogradMeta* meta = autograd::get_autograd_meta(self);
  if (meta != nullptr && meta->grad_fn && !meta->retains_grad &&
      !meta->grad.defined()) {
    PyErr_WarnEx(
        PyExc_UserWarning,
        "The .grad attribute of a Tensor that is not a leaf Tensor is being "
        "accessed. Its .grad attribute won't be populated during "
        "autograd.backward(). If you indeed want the .grad field to be "
        "populated for a non-leaf Tensor, use .retain_grad() on the non-leaf "
        "Tensor. If you access the non-leaf Tensor by mistake, make sure you "
        "access the leaf Tensor instead. See "
        "github.com/pytorch/pytorch/pull/30531 for more informations.",
        1);
    if (PyErr_Occurred()) {
      throw py::error_already_set();
    }
  }
  return meta ? py::cast(meta->grad) : py::none();
}

// `t.data`: the same data under a fresh version counter and no history, so
// in-place changes through it are invisible to autograd.
Tensor variable_data(const Tensor& self) {
  Tensor d = autograd::detach(self);
  d.impl()->version_counter = std::make_shared<VersionCounter>();
  return d;
}

void set_data(const Tensor& self, const Tensor& other) {
  TensorImpl* dst = self.impl();
  const TensorImpl* src = other.impl();
  if (dst->dtype != src->dtype) {
    if (auto* meta = autograd::get_autograd_meta(self)) {
      meta->grad_accumulator.reset();
    }
  }
  kernels::materialize_array(*other.impl());  // dst shares src's ndarray
  dst->array = src->array;
  dst->data = src->data;
  dst->sizes = src->sizes;
  dst->strides = src->strides;
  dst->dtype = src->dtype;
}

// A tensor's Python-side hook dicts (torch keeps them on THPVariable).
struct TensorHookDicts final : autograd::TensorPyState {
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    if (int r = visit_object(backward_hooks, visit, arg)) {
      return r;
    }
    return visit_object(post_accumulate_grad_hooks, visit, arg);
  }
  void clear_python() override {
    backward_hooks = py::none();
    post_accumulate_grad_hooks = py::none();
  }
  py::object backward_hooks = py::none();
  py::object post_accumulate_grad_hooks = py::none();
};

TensorHookDicts& hook_dicts(const Tensor& t) {
  auto& state = autograd::materialize_autograd_meta(t).py_state;
  if (!state) {
    state = std::make_unique<TensorHookDicts>();
  }
  return static_cast<TensorHookDicts&>(*state);
}

py::object get_backward_hooks(const Tensor& t) {
  auto* meta = autograd::get_autograd_meta(t);
  return meta && meta->py_state
             ? static_cast<TensorHookDicts&>(*meta->py_state).backward_hooks
             : py::none();
}

// Setting the dict installs it as the tensor's single tensor pre-hook (used
// by a leaf's AccumulateGrad); a non-leaf's node gets it via
// grad_fn._register_hook_dict.
void set_backward_hooks(const Tensor& t, py::object dict) {
  hook_dicts(t).backward_hooks = dict;
  auto& hooks = autograd::materialize_autograd_meta(t).hooks;
  hooks.clear();
  if (!dict.is_none()) {
    hooks.push_back(std::make_shared<PyFunctionTensorPreHook>(dict, 0));
  }
}

py::object get_post_acc_hooks(const Tensor& t) {
  auto* meta = autograd::get_autograd_meta(t);
  return meta && meta->py_state ? static_cast<TensorHookDicts&>(*meta->py_state)
                                      .post_accumulate_grad_hooks
                                : py::none();
}

void set_post_acc_hooks(const Tensor& t, py::object dict) {
  hook_dicts(t).post_accumulate_grad_hooks = dict;
  auto& hooks = autograd::materialize_autograd_meta(t).post_acc_grad_hooks;
  hooks.clear();
  if (!dict.is_none()) {
    hooks.push_back(std::make_shared<PyPostAccumulateGradHooks>(dict));
  }
}

}  // namespace

py::object dtype_object(ScalarType t) {
  return py::reinterpret_borrow<py::object>(dtype_objects[static_cast<int>(t)]);
}

ScalarType dtype_from_object(py::handle obj) {
  NPGRAD_CHECK_TYPE(
      py::isinstance<DType>(obj),
      "expected a dtype (npgrad.float32, float64, int64, bool, ...), "
      "got ",
      python_type_name(obj));
  return obj.cast<DType&>().type;
}

std::string python_type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

bool is_tensor(py::handle obj) {
  return PyObject_TypeCheck(obj.ptr(), tensor_type);
}

Tensor tensor_or_undefined(py::handle obj) {
  return obj.is_none() ? Tensor() : obj.cast<Tensor>();
}

Tensor as_operand(py::handle obj) {
  if (is_tensor(obj)) {
    return obj.cast<Tensor>();
  }
  if (PyBool_Check(obj.ptr())) {
    return ops::wrapped_scalar(obj.ptr() == Py_True ? 1 : 0, ScalarType::Bool);
  }
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow == 0) {
      return ops::wrapped_scalar(static_cast<double>(v), ScalarType::Int64);
    }
    // torch reads an int past int64 as unsigned, and raises Python's
    // OverflowError ("can't convert negative int to unsigned", "int too big
    // to convert") for what that cannot hold.
    unsigned long long u = PyLong_AsUnsignedLongLong(obj.ptr());
    if (PyErr_Occurred()) {
      throw py::error_already_set();
    }
    return ops::wrapped_scalar(static_cast<double>(u), ScalarType::Int64);
  }
  if (PyFloat_Check(obj.ptr())) {
    return ops::wrapped_scalar(
        PyFloat_AS_DOUBLE(obj.ptr()), ScalarType::Float64);
  }
  // NumPy scalars (np.float32(2), np.int64(2)) count as Python numbers.
  static PyObject* numpy_generic =
      py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  if (PyObject_IsInstance(obj.ptr(), numpy_generic) == 1) {
    return as_operand(obj.attr("item")());
  }
  return Tensor();
}

void bind_tensor(py::module_& m) {
  py::class_<DType>(m, "dtype")
      .def("__repr__", [](const DType& d) { return dtype_name(d.type); })
      .def_property_readonly(
          "is_floating_point",
          [](const DType& d) { return is_floating(d.type); })
      .def_property_readonly(
          "is_signed",
          [](const DType& d) {
            return dtype_info(d.type).category != DtypeCategory::Bool &&
                   d.type != ScalarType::UInt8;
          })
      .def_property_readonly(
          "itemsize", [](const DType& d) { return element_size(d.type); })
      .def_property_readonly(
          "_numpy_name",
          [](const DType& d) { return dtype_info(d.type).numpy_name; })
      .def_property_readonly(
          "_scalar_type_name",
          [](const DType& d) { return scalar_type_name(d.type); })
      .def_property_readonly(
          "_log_abbrev", [](const DType& d) { return dtype_abbrev(d.type); })
      .def_property_readonly(
          "_legacy_type_name",
          [](const DType& d) { return legacy_type_name(d.type); })
      // As torch's: the name, which pickle looks up as a global of the
      // type's module (npgrad._C holds every dtype object).
      .def(
          "__reduce__", [](const DType& d) { return dtype_info(d.type).name; });
  py::tuple all_dtypes(kNumScalarTypes);
  for (int i = 0; i < kNumScalarTypes; ++i) {
    auto type = static_cast<ScalarType>(i);
    py::object d = py::cast(DType{type});
    m.attr(dtype_info(type).name) = d;
    all_dtypes[i] = d;
    dtype_objects[i] = d.release().ptr();
  }
  m.attr("_dtypes") = all_dtypes;

  py::class_<TensorImpl, std::shared_ptr<TensorImpl>> cls(
      m,
      "Tensor",
      py::dynamic_attr(),
      py::custom_type_setup(setup_tensor_type_gc));
  tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());
  // After PyType_Ready, which sets the dealloc it wraps.
  install_pyobject_preservation(tensor_type);

  cls.def_static(
         "_from_numpy",
         [](py::handle arr) {
           NPGRAD_CHECK_TYPE(
               py::isinstance<py::array>(arr),
               "expected np.ndarray (got ",
               python_type_name(arr),
               ")");
           return kernels::from_array(arr.ptr());
         })
      .def(
          "numpy",
          [](const Tensor& self, bool force) {
            if (!force) {
              NPGRAD_CHECK(
                  !autograd::requires_grad(self), messages::kNumpyRequiresGrad);
            }
            py::object view = array_of(self).attr("view")();
            // Note [lock_saved_tensors]: read-only while a save holds any
            // alias's storage.
            if (self.impl()->version_counter->saved_locks.load() != 0) {
              view.attr("flags").attr("writeable") = false;
            }
            return view;
          },
          py::arg("force") = false)
      .def_property_readonly(
          "_array",
          [](const Tensor& self) { return array_of(self).attr("view")(); })
      .def_property_readonly(
          "_shape",
          [](const Tensor& self) { return py::tuple(py::cast(self.sizes())); })
      .def_property_readonly(
          "dtype",
          [](const Tensor& self) { return dtype_object(self.dtype()); })
      .def("dim", [](const Tensor& self) { return self.dim(); })
      .def_property_readonly(
          "ndim", [](const Tensor& self) { return self.dim(); })
      .def("numel", [](const Tensor& self) { return self.numel(); })
      .def("nelement", [](const Tensor& self) { return self.numel(); })
      .def(
          "element_size",
          [](const Tensor& self) { return element_size(self.dtype()); })
      .def(
          "is_floating_point",
          [](const Tensor& self) { return is_floating(self.dtype()); })
      .def(
          "is_contiguous",
          [](const Tensor& self) { return self.is_contiguous(); })
      .def(
          "stride",
          [](const Tensor& self, py::object dim) -> py::object {
            if (dim.is_none()) {
              return py::tuple(py::cast(self.strides()));
            }
            return py::int_(self.strides()[maybe_wrap_dim(
                dim.cast<int64_t>(), self.dim())]);
          },
          py::arg("dim") = py::none())
      .def(
          "item",
          [](const Tensor& self) -> py::object {
            double v = kernels::item(self);
            switch (self.dtype()) {
              case ScalarType::Bool:
                return py::bool_(v != 0);
              case ScalarType::Int64:
                return py::int_(*static_cast<const int64_t*>(self.data_ptr()));
              default:
                // The narrower integer types are exact in a double.
                if (is_integral(self.dtype(), false)) {
                  return py::int_(static_cast<int64_t>(v));
                }
                return py::float_(v);
            }
          })
      .def(
          "__len__",
          [](const Tensor& self) {
            NPGRAD_CHECK_TYPE(self.dim() > 0, "len() of a 0-d tensor");
            return self.sizes()[0];
          })
      .def(
          "__hash__",
          [](py::handle self) {
            return reinterpret_cast<intptr_t>(self.ptr());
          })
      .def(
          "data_ptr",
          [](const Tensor& self) {
            return reinterpret_cast<uintptr_t>(self.data_ptr());
          })
      .def_property_readonly(
          "_version",
          [](const Tensor& self) {
            NPGRAD_CHECK(
                !self.impl()->is_inference, messages::kInferenceVersion);
            return self.version();
          })
      .def(
          "is_inference",
          [](const Tensor& self) { return self.impl()->is_inference; })
      .def_property_readonly(
          "_base",
          [](const Tensor& self) -> py::object {
            return self.is_view() ? py::cast(self.base()) : py::none();
          })
      .def("_is_view", [](const Tensor& self) { return self.is_view(); })
      // ---- autograd attributes ----
      .def_property(
          "requires_grad",
          [](const Tensor& self) { return autograd::requires_grad(self); },
          [](const Tensor& self, py::handle v) {
            NPGRAD_CHECK(PyBool_Check(v.ptr()), "requires_grad must be a bool");
            autograd::set_requires_grad(self, v.ptr() == Py_True);
          })
      .def(
          "requires_grad_",
          [](py::object self, bool v) {
            Tensor t = self.cast<Tensor>();
            NPGRAD_CHECK(
                !v || is_floating(t.dtype()) || !autograd::is_leaf(t),
                "only Tensors of floating point dtype can require gradients");
            autograd::set_requires_grad(t, v);
            return self;
          },
          py::arg("requires_grad") = true)
      .def_property("grad", &get_grad, &set_grad)
      .def_property(
          "grad_fn",
          [](const Tensor& self) {
            return node_to_py(autograd::grad_fn(self));
          },
          not_writable("grad_fn"))
      .def_property(
          "_grad_fn",
          [](const Tensor& self) {
            return node_to_py(autograd::grad_fn(self));
          },
          [](const Tensor& self, py::handle v) {
            NPGRAD_CHECK(v.is_none(), "_grad_fn can be only set to None");
            if (auto* meta = autograd::get_autograd_meta(self)) {
              meta->grad_fn.reset();
              meta->output_nr = 0;
            }
          })
      .def_property(
          "is_leaf",
          [](const Tensor& self) { return autograd::is_leaf(self); },
          not_writable("is_leaf"))
      .def_property_readonly(
          "output_nr",
          [](const Tensor& self) { return autograd::output_nr(self); })
      .def_property_readonly(
          "retains_grad",
          [](const Tensor& self) {
            auto* meta = autograd::get_autograd_meta(self);
            return meta != nullptr && meta->retains_grad &&
                   meta->grad_fn != nullptr;
          })
      .def(
          "retain_grad",
          [](const Tensor& self) { autograd::retain_grad(self); })
      .def("detach", [](const Tensor& self) { return autograd::detach(self); })
      .def(
          "detach_",
          [](py::object self) {
            Tensor t = self.cast<Tensor>();
            NPGRAD_CHECK(
                !t.is_view(),
                "Can't detach views in-place. Use detach() instead. If you are "
                "using DistributedDataParallel (DDP) for training, and "
                "gradient_as_bucket_view is set as True, gradients are views "
                "of "
                "DDP buckets, and hence detach_() cannot be called on these "
                "gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as "
                "the solution.");
            if (auto* meta = autograd::get_autograd_meta(t)) {
              meta->grad_fn.reset();
              meta->output_nr = 0;
              meta->requires_grad = false;
            }
            return self;
          })
      .def_property("_backward_hooks", &get_backward_hooks, &set_backward_hooks)
      .def_property(
          "_post_accumulate_grad_hooks",
          &get_post_acc_hooks,
          &set_post_acc_hooks)
      .def_property_readonly(
          "_storage_id",
          [](const Tensor& self) {
            // Shared by every alias of the data (views, detach): the key under
            // which allow_mutation_on_saved_tensors tracks saved storage.
            return reinterpret_cast<uintptr_t>(
                self.impl()->version_counter.get());
          })
      .def_property(
          "data",
          [](const Tensor& self) { return variable_data(self); },
          [](const Tensor& self, py::handle other) {
            NPGRAD_CHECK_TYPE(
                is_tensor(other),
                "Variable data has to be a tensor, but got ",
                python_type_name(other));
            set_data(self, other.cast<Tensor>());
          });
}

}  // namespace npgrad::bindings
