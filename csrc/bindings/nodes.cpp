// Every Node class as its own Python type (in npgrad._C._functions), with
// torch's names; name(), next_functions, metadata and `_saved_*` attributes.
// pybind11 returns the existing wrapper for a node while one is alive, so
// `t.grad_fn is t.grad_fn`; the metadata dict lives on the C++ node.
#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/accumulate_grad.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/autograd/nodes/clamp_nodes.h"
#include "npgrad/autograd/nodes/conv_nodes.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/autograd/nodes/distance_nodes.h"
#include "npgrad/autograd/nodes/embedding_bag_nodes.h"
#include "npgrad/autograd/nodes/indexing_nodes.h"
#include "npgrad/autograd/nodes/normalization_nodes.h"
#include "npgrad/autograd/nodes/pointwise_nodes.h"
#include "npgrad/autograd/nodes/reduction_nodes.h"
#include "npgrad/autograd/nodes/sorting_nodes.h"
#include "npgrad/autograd/nodes/view_nodes.h"
#include "npgrad/autograd/saved_variable.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_function.h"
#include "python_hooks.h"

namespace npgrad::bindings {

namespace {

using autograd::Node;
using autograd::SavedVariable;
using autograd::SavedVariableList;

struct NodeMetadata final : autograd::NodePyState {
  int traverse_python(autograd::PyVisitProc visit, void* arg) const override {
    return visit_object(dict, visit, arg);
  }
  void clear_python() override { dict.clear(); }
  py::dict dict;
};

}  // namespace

py::dict& node_metadata(Node& node) {
  if (!node.py_state) {
    node.py_state = std::make_unique<NodeMetadata>();
  }
  return static_cast<NodeMetadata&>(*node.py_state).dict;
}

namespace {

// Finds one saved attribute by name, or lists them all.
// `_raw_saved_x`: the SavedVariable itself, to register per-tensor hooks.
struct SavedTensorRef {
  std::shared_ptr<Node> node;  // keeps the SavedVariable (a node member) alive
  SavedVariable* saved;
  std::string name;  // the pack hook's context (Note [Pack-hook context])
};

// A saved integer (a dim, an index, a size) as torch shows it: torch's
// generated `_saved_*` getters convert int64 values as unsigned, so a negative
// dim the user passed (sum(dim=-1)) reads 2**64 - 1. Graph tools that compare
// or print these attributes see the same numbers on npgrad and torch.
py::int_ saved_int(int64_t v) {
  return py::int_(static_cast<uint64_t>(v));
}

class SavedLookup final : public autograd::SavedAttributeVisitor {
 public:
  SavedLookup(std::string want, std::shared_ptr<Node> node, bool raw = false)
      : want_(std::move(want)), node_(std::move(node)), raw_(raw) {}
  void tensor(const char* name, SavedVariable& v) override {
    tensor_names.emplace_back(name);
    if (hit(name)) {
      result = raw_ ? py::cast(SavedTensorRef{
                          node_, &v, autograd::saved_tensor_name(name)})
                    : py::cast(v.unpack(node_));
    }
  }
  void tensor_list(const char* name, SavedVariableList& list) override {
    tensor_names.emplace_back(name);
    if (hit(name)) {
      NPGRAD_CHECK(!list.released, messages::kBackwardTwice);
      auto& v = list.items;
      py::tuple t(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        t[i] = raw_ ? py::cast(SavedTensorRef{
                          node_,
                          &v[i],
                          autograd::saved_tensor_name(name) + "[" +
                              std::to_string(i) + "]"})
                    : py::cast(v[i].unpack(node_));
      }
      result = t;  // a tuple for _raw_saved_x too, as torch
    }
  }
  void integer(const char* name, int64_t v) override {
    if (hit(name)) {
      result = saved_int(v);
    }
  }
  void unsigned_integer(const char* name, int64_t v) override {
    if (hit(name)) {
      result = py::int_(static_cast<uint64_t>(v));
    }
  }
  void real(const char* name, double v) override {
    if (hit(name)) {
      // torch shows integral Python scalars as ints (e.g. _saved_alpha == 1)
      result = v == static_cast<double>(static_cast<int64_t>(v))
                   ? py::object(py::int_(static_cast<int64_t>(v)))
                   : py::object(py::float_(v));
    }
  }
  void boolean(const char* name, bool v) override {
    if (hit(name)) {
      result = py::bool_(v);
    }
  }
  void int_list(const char* name, const Shape& v) override {
    if (hit(name)) {
      py::tuple t(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        t[i] = saved_int(v[i]);
      }
      result = t;
    }
  }
  void none(const char* name) override {
    if (hit(name)) {
      result = py::none();
    }
  }
  void text(const char* name, const char* v) override {
    if (hit(name)) {
      result = py::str(v);
    }
  }
  bool found = false;
  py::object result;

  std::vector<std::string> names;
  std::vector<std::string> tensor_names;  // also listed as _raw_saved_*

 private:
  bool hit(const char* name) {
    names.emplace_back(name);
    if (want_ == name) {
      found = true;
      return true;
    }
    return false;
  }
  std::string want_;
  std::shared_ptr<Node> node_;
  bool raw_;
};

// torch's registerFunctionHook: one OrderedDict per node and hook kind,
// wrapped once in a hook object; later registrations add to the same dict.
template <typename HookT, typename List>
py::object register_node_hook(List& hooks, py::object hook) {
  py::object dict;
  for (const auto& h : hooks) {
    if (auto* py_hook = dynamic_cast<HookT*>(h.get())) {
      dict = py_hook->dict;
      break;
    }
  }
  if (!dict) {
    dict = new_hook_dict();
    hooks.push_back(std::make_unique<HookT>(dict));
  }
  py::object handle = make_handle(dict);
  dict[handle.attr("id")] = hook;
  return handle;
}

template <typename T>
void bind_node(py::module_& m, const char* name) {
  py::class_<T, Node, std::shared_ptr<T>>(
      m, name, py::custom_type_setup(setup_node_type_gc));
}

}  // namespace

void bind_nodes(py::module_& m) {
  py::module_ am =
      m.def_submodule("_autograd", "Saved tensors and their hooks");
  py::class_<SavedTensorRef>(am, "SavedTensor")
      .def(py::init([]() -> SavedTensorRef {
        throw Error(
            "Trying to create a SavedTensor object from Python is forbidden.");
      }))
      .def(
          "register_hooks",
          [](SavedTensorRef& self, py::function pack, py::function unpack) {
            self.saved->register_hooks(
                std::make_unique<PySavedVariableHooks>(pack, unpack),
                self.node,
                self.name);
          },
          py::arg("pack_hook"),
          py::arg("unpack_hook"));

  py::class_<autograd::InputMetadata>(am, "_InputMetadata")
      .def_property_readonly(
          "shape",
          [](const autograd::InputMetadata& self) {
            return py::module_::import("npgrad").attr("Size")(
                py::tuple(py::cast(self.shape)));
          })
      .def_property_readonly(
          "dtype",
          [](const autograd::InputMetadata& self) {
            return dtype_object(self.dtype);
          })
      .def_property_readonly(
          "device",
          [](const autograd::InputMetadata&) {
            return py::module_::import("npgrad").attr("_cpu");
          })
      .def_property_readonly(
          "is_nested_tensor",
          [](const autograd::InputMetadata&) { return false; })
      .def_property_readonly(
          "is_cpp_nested_tensor",
          [](const autograd::InputMetadata&) { return false; });

  py::module_ fm = m.def_submodule("_functions", "Backward node classes");
  py::class_<Node, std::shared_ptr<Node>>(
      fm, "_NodeBase", py::custom_type_setup(setup_node_type_gc))
      .def("name", &Node::name)
      .def(
          "__repr__",
          [](py::handle self) {
            return "<" + python_type_name(self) + " object at " +
                   py::str(py::module_::import("builtins")
                               .attr("hex")(
                                   reinterpret_cast<uintptr_t>(self.ptr())))
                       .cast<std::string>() +
                   ">";
          })
      .def_property(
          "next_functions",
          [](Node& self) {
            const auto& edges = self.next_edges();
            py::tuple out(edges.size());
            for (std::size_t i = 0; i < edges.size(); ++i) {
              py::object fn = node_to_py(edges[i].function);
              out[i] = py::make_tuple(fn, edges[i].input_nr);
            }
            return out;
          },
          not_writable("next_functions"))
      .def_property(
          "metadata",
          [](Node& self) { return node_metadata(self); },
          not_writable("metadata"))
      .def_property_readonly(
          "_input_metadata",
          [](Node& self) {
            py::tuple out(self.num_inputs());
            for (std::size_t i = 0; i < self.num_inputs(); ++i) {
              out[i] = py::cast(self.input_metadata(i));
            }
            return out;
          })
      .def("_sequence_nr", &Node::sequence_nr)
      .def("_set_sequence_nr", &Node::set_sequence_nr)
      .def("_topological_nr", &Node::topological_nr)
      .def(
          "register_hook",
          [](Node& self, py::object hook) {
            return register_node_hook<PyFunctionPostHook>(
                self.post_hooks(), std::move(hook));
          },
          py::arg("fn"))
      .def(
          "register_prehook",
          [](Node& self, py::object hook) {
            return register_node_hook<PyFunctionPreHook>(
                self.pre_hooks(), std::move(hook));
          },
          py::arg("fn"))
      .def(
          "_register_hook_dict",
          [](Node& self, py::object tensor) {
            py::object dict = tensor.attr("_backward_hooks");
            self.tensor_pre_hooks().push_back(
                std::make_shared<PyFunctionTensorPreHook>(
                    dict, autograd::output_nr(tensor.cast<Tensor>())));
          })
      .def(
          "__getattr__",
          [](std::shared_ptr<Node> self,
             const std::string& attr) -> py::object {
            bool raw = attr.rfind("_raw_saved_", 0) == 0;
            SavedLookup lookup(
                raw ? "_saved_" + attr.substr(11) : attr, self, raw);
            self->visit_saved(lookup);
            if (!lookup.found) {
              throw py::attribute_error(
                  "'" + python_type_name(py::cast(self)) +
                  "' object has no attribute '" + attr + "'");
            }
            return lookup.result;
          })
      .def("__dir__", [](py::object self) {
        auto node = self.cast<std::shared_ptr<Node>>();
        SavedLookup lookup("", node);
        node->visit_saved(lookup);
        py::list names = py::module_::import("builtins")
                             .attr("object")
                             .attr("__dir__")(self);
        for (const auto& n : lookup.names) {
          names.append(py::str(n));
        }
        for (const auto& n : lookup.tensor_names) {
          names.append(py::str("_raw" + n));  // _saved_x -> _raw_saved_x
        }
        return names;
      });

  using namespace autograd;
  py::class_<AccumulateGrad, Node, std::shared_ptr<AccumulateGrad>>(
      fm, "AccumulateGrad", py::custom_type_setup(setup_node_type_gc))
      .def_property_readonly(
          "variable", [](AccumulateGrad& self) { return self.variable(); });
  bind_node<GraphRoot>(fm, "GraphRoot");
  bind_node<Identity>(fm, "Identity");
  bind_node<NotImplemented>(fm, "NotImplemented");
  bind_node<RsubBackward1>(fm, "RsubBackward1");
  bind_node<PowBackward0>(fm, "PowBackward0");
  bind_node<PowBackward1>(fm, "PowBackward1");
  bind_node<PowBackward2>(fm, "PowBackward2");
  bind_node<SgnBackward0>(fm, "SgnBackward0");
  bind_node<ThresholdBackwardBackward0>(fm, "ThresholdBackwardBackward0");
  bind_node<ClampBackward1>(fm, "ClampBackward1");
  bind_node<ClampBackward0>(fm, "ClampBackward0");
  bind_node<ClampMinBackward0>(fm, "ClampMinBackward0");
  bind_node<ClampMinBackward1>(fm, "ClampMinBackward1");
  bind_node<ClampMaxBackward0>(fm, "ClampMaxBackward0");
  bind_node<ClampMaxBackward1>(fm, "ClampMaxBackward1");
  bind_node<WhereBackward0>(fm, "WhereBackward0");
  bind_node<MaskedFillBackward0>(fm, "MaskedFillBackward0");
  bind_node<MaskedFillBackward1>(fm, "MaskedFillBackward1");
  bind_node<NanToNumBackward0>(fm, "NanToNumBackward0");
  bind_node<ToCopyBackward0>(fm, "ToCopyBackward0");
  bind_node<MaxBackward1>(fm, "MaxBackward1");
  bind_node<MinBackward1>(fm, "MinBackward1");
  bind_node<MaxBackward0>(fm, "MaxBackward0");
  bind_node<MinBackward0>(fm, "MinBackward0");
  bind_node<MedianBackward0>(fm, "MedianBackward0");
  bind_node<MedianBackward1>(fm, "MedianBackward1");
  bind_node<KthvalueBackward0>(fm, "KthvalueBackward0");
  bind_node<CumsumBackward0>(fm, "CumsumBackward0");
  bind_node<CumprodBackward0>(fm, "CumprodBackward0");
  bind_node<SortBackward0>(fm, "SortBackward0");
  bind_node<SortBackward1>(fm, "SortBackward1");
  bind_node<TopkBackward0>(fm, "TopkBackward0");
  bind_node<SoftmaxBackward0>(fm, "SoftmaxBackward0");
  bind_node<VarMeanBackward0>(fm, "VarMeanBackward0");
  bind_node<StdMeanBackward0>(fm, "StdMeanBackward0");
  bind_node<LogSoftmaxBackward0>(fm, "LogSoftmaxBackward0");
  bind_node<SoftmaxBackwardDataBackward0>(fm, "SoftmaxBackwardDataBackward0");
  bind_node<LogSoftmaxBackwardDataBackward0>(
      fm, "LogSoftmaxBackwardDataBackward0");
  bind_node<UnsafeViewBackward0>(fm, "UnsafeViewBackward0");
  bind_node<ReshapeAliasBackward0>(fm, "ReshapeAliasBackward0");
  bind_node<SliceBackward0>(fm, "SliceBackward0");
  bind_node<SplitBackward0>(fm, "SplitBackward0");
  bind_node<SplitWithSizesBackward0>(fm, "SplitWithSizesBackward0");
  bind_node<UnbindBackward0>(fm, "UnbindBackward0");
  bind_node<AliasBackward0>(fm, "AliasBackward0");
  bind_node<SelectBackwardBackward0>(fm, "SelectBackwardBackward0");
  bind_node<SliceBackwardBackward0>(fm, "SliceBackwardBackward0");
  bind_node<CloneBackward0>(fm, "CloneBackward0");
  bind_node<CatBackward0>(fm, "CatBackward0");
  bind_node<StackBackward0>(fm, "StackBackward0");
  bind_node<IndexBackward0>(fm, "IndexBackward0");
  bind_node<IndexPutImplBackward0>(fm, "IndexPutImplBackward0");
  bind_node<CopyBackwards>(fm, "CopyBackwards");
  bind_node<CopySlices>(fm, "CopySlices");
  bind_node<FillBackward3>(fm, "FillBackward3");
  bind_node<IndexPutBackward0>(fm, "IndexPutBackward0");
  bind_node<DiagonalBackward0_copy>(fm, "DiagonalBackward0_copy");
  bind_node<DiagonalBackwardBackward0>(fm, "DiagonalBackwardBackward0");
  bind_node<UnfoldBackwardBackward0>(fm, "UnfoldBackwardBackward0");
  bind_node<FlipBackward0>(fm, "FlipBackward0");
  bind_node<RollBackward0>(fm, "RollBackward0");
  bind_node<RepeatBackward0>(fm, "RepeatBackward0");
  bind_node<TriuBackward0>(fm, "TriuBackward0");
  bind_node<TrilBackward0>(fm, "TrilBackward0");
  bind_node<DiagEmbedBackward0>(fm, "DiagEmbedBackward0");
  bind_node<AsStridedBackward0>(fm, "AsStridedBackward0");
  bind_node<AsStridedScatterBackward0>(fm, "AsStridedScatterBackward0");
#define NPGRAD_BIND_ZERO_GRADIENT_NODE(N) bind_node<N>(fm, #N);
  NPGRAD_FORALL_ZERO_GRADIENT_NODES(NPGRAD_BIND_ZERO_GRADIENT_NODE)
#undef NPGRAD_BIND_ZERO_GRADIENT_NODE
  bind_node<GatherBackward0>(fm, "GatherBackward0");
  bind_node<ScatterBackward0>(fm, "ScatterBackward0");
  bind_node<ScatterBackward1>(fm, "ScatterBackward1");
  bind_node<ScatterAddBackward0>(fm, "ScatterAddBackward0");
  bind_node<ScatterReduceBackward0>(fm, "ScatterReduceBackward0");
  bind_node<IndexSelectBackward0>(fm, "IndexSelectBackward0");
  bind_node<IndexAddBackward0>(fm, "IndexAddBackward0");
  bind_node<IndexCopyBackward0>(fm, "IndexCopyBackward0");
  bind_node<MaskedSelectBackward0>(fm, "MaskedSelectBackward0");
  bind_node<MaskedScatterBackward0>(fm, "MaskedScatterBackward0");
  bind_node<ConvolutionBackward0>(fm, "ConvolutionBackward0");
  bind_node<ConvolutionBackwardBackward0>(fm, "ConvolutionBackwardBackward0");
  bind_node<Im2ColBackward0>(fm, "Im2ColBackward0");
  bind_node<Col2ImBackward0>(fm, "Col2ImBackward0");
  bind_node<NativeLayerNormBackward0>(fm, "NativeLayerNormBackward0");
  bind_node<NativeLayerNormBackwardBackward0>(
      fm, "NativeLayerNormBackwardBackward0");
  bind_node<NativeGroupNormBackward0>(fm, "NativeGroupNormBackward0");
  bind_node<NativeBatchNormBackward0>(fm, "NativeBatchNormBackward0");
  bind_node<NativeBatchNormBackwardBackward0>(
      fm, "NativeBatchNormBackwardBackward0");
  bind_node<EmbeddingBackward0>(fm, "EmbeddingBackward0");
  bind_node<EmbeddingDenseBackwardBackward0>(
      fm, "EmbeddingDenseBackwardBackward0");
  bind_node<EmbeddingBagBackward0>(fm, "EmbeddingBagBackward0");
  bind_node<EmbeddingBagBackwardBackward0>(fm, "EmbeddingBagBackwardBackward0");
  bind_node<AddBackward1>(fm, "AddBackward1");
  bind_node<SubBackward1>(fm, "SubBackward1");
  bind_node<TrilinearBackward0>(fm, "TrilinearBackward0");
  bind_node<CdistBackward0>(fm, "CdistBackward0");
  bind_node<CdistBackwardBackward0>(fm, "CdistBackwardBackward0");
  bind_node<EuclideanDistBackward0>(fm, "EuclideanDistBackward0");
  bind_node<ScaledDotProductFlashAttentionForCpuBackward0>(
      fm, "ScaledDotProductFlashAttentionForCpuBackward0");
}

}  // namespace npgrad::bindings
