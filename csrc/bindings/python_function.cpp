// autograd.Function: apply() builds a PyNode around the ctx, runs forward
// under no_grad, wires the outputs (dirty inputs rebased, inputs returned
// as-is turned into views, non-differentiable outputs left alone) and saves
// tensors as SavedVariables. PyNode::apply calls the user's backward and
// checks what it returns with torch's messages.
#include "python_function.h"

#include <unordered_set>

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/graph_recording.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_hooks.h"

namespace npgrad::bindings {

using autograd::Node;

namespace {

// Raises when differentiated: the outputs of a once_differentiable backward.
struct ErrorNode final : autograd::Node {
  explicit ErrorNode(std::string msg) : msg(std::move(msg)) {}
  variable_list apply(variable_list&&) override { throw Error(msg); }
  std::string name() const override { return "torch::autograd::Error"; }
  std::string msg;
};

std::unordered_set<TensorImpl*> impl_set(py::object ctx, const char* attr) {
  std::unordered_set<TensorImpl*> out;
  if (!py::hasattr(ctx, attr)) {
    return out;
  }
  bool dirty = std::string(attr) == "dirty_tensors";
  for (py::handle t : ctx.attr(attr)) {
    // torch's messages (their type name is never filled in).
    NPGRAD_CHECK(
        is_tensor(t),
        dirty ? "mark_dirty can only accept variables, but argument "
              : "mark_non_differentiable only accepts variable arguments, but "
                "got ");
    out.insert(t.cast<Tensor>().impl());
  }
  return out;
}

py::object function_apply(
    py::object cls, py::tuple args, bool setup_context_style) {
  py::object ctx = cls.attr("_backward_cls")();
  auto& base = ctx.cast<FunctionBase&>();

  std::vector<Tensor> tensor_inputs;
  std::vector<bool> is_tensor_arg;
  py::tuple needs_input_grad(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    bool t = is_tensor(args[i]);
    is_tensor_arg.push_back(t);
    bool needs = false;
    if (t) {
      tensor_inputs.push_back(args[i].cast<Tensor>());
      needs = autograd::requires_grad(tensor_inputs.back());
    }
    needs_input_grad[i] = py::bool_(needs);
  }
  bool is_executable = autograd::compute_requires_grad(tensor_inputs);
  std::shared_ptr<PyNode> node;
  if (is_executable) {
    // The sequence number is taken here, before forward, as in torch.
    node = autograd::make_node<PyNode>(ctx);
    node->set_next_edges(autograd::collect_next_edges(tensor_inputs));
    node->is_tensor_arg = is_tensor_arg;
    base.cdata = node;
  }
  ctx.attr("needs_input_grad") = needs_input_grad;
  ctx.attr("materialize_grads") = py::bool_(true);

  py::object outputs;
  {
    autograd::AutoGradMode no_grad(false);
    if (setup_context_style) {
      outputs = cls.attr("forward")(*args);
      cls.attr("setup_context")(ctx, args, outputs);
    } else {
      outputs = cls.attr("forward")(ctx, *args);
    }
  }

  bool is_tuple = PyTuple_Check(outputs.ptr());
  py::tuple outs = is_tuple ? py::reinterpret_borrow<py::tuple>(outputs)
                            : py::make_tuple(outputs);
  py::list wrapped;
  auto dirty = impl_set(ctx, "dirty_tensors");
  auto non_differentiable = impl_set(ctx, "non_differentiable");
  std::unordered_set<TensorImpl*> inputs;
  for (const auto& t : tensor_inputs) {
    inputs.insert(t.impl());
  }
  for (py::handle o : outs) {
    if (!is_tensor(o)) {
      if (node) {
        node->add_input_metadata_undefined();
        node->output_info.emplace_back(std::nullopt);
      }
      wrapped.append(o);
      continue;
    }
    Tensor t = o.cast<Tensor>();
    bool is_input = inputs.count(t.impl()) > 0;
    bool is_modified = dirty.count(t.impl()) > 0;
    bool differentiable = node && non_differentiable.count(t.impl()) == 0 &&
                          is_floating(t.dtype());
    if (node) {
      node->output_info.emplace_back(OutputInfo{t.sizes(), t.dtype()});
    }
    if (is_modified) {
      NPGRAD_CHECK(
          is_input,
          "mark_dirty only accepts input tensors, but argument was not one");
      if (differentiable) {
        NPGRAD_CHECK(
            !(autograd::is_leaf(t) && autograd::requires_grad(t)),
            "a leaf Variable that requires grad has been used in an in-place "
            "operation.");
      }
      autograd::bump_version(t, "mark_dirty");
      if (differentiable) {
        autograd::rebase_history(t, node);
        wrapped.append(py::cast(t));
        continue;
      }
    } else if (is_input && differentiable) {
      // An input returned as-is becomes a view of it, so that the output has
      // its own history.
      autograd::AutoGradMode no_grad(false);
      Tensor v = ops::alias(t);
      v.impl()->creation_meta = CreationMeta::InCustomFunction;
      t = v;
    }
    if (differentiable) {
      autograd::set_history(t, node);
      if (t.is_view()) {
        t.impl()->attr_version = t.version();
      }
    } else if (node) {
      node->add_input_metadata_undefined();
    }
    wrapped.append(py::cast(t));
  }

  for (TensorImpl* d : dirty) {
    bool returned = false;
    for (py::handle o : outs) {
      returned = returned || (is_tensor(o) && o.cast<Tensor>().impl() == d);
    }
    NPGRAD_CHECK(
        returned,
        "Some elements marked as dirty during the forward method were not "
        "returned as output. "
        "The inputs that are modified inplace must all be outputs of the "
        "Function.");
  }
  if (node && py::hasattr(ctx, "to_save")) {
    std::unordered_set<TensorImpl*> output_impls;
    for (py::handle o : wrapped) {
      if (is_tensor(o)) {
        output_impls.insert(o.cast<Tensor>().impl());
      }
    }
    py::object to_save = ctx.attr("to_save");
    std::size_t i = 0;
    for (py::handle t : to_save) {
      if (t.is_none()) {
        base.saved_variables.emplace_back();
      } else {
        NPGRAD_CHECK_TYPE(
            is_tensor(t),
            "save_for_backward can only save variables, but argument ",
            i,
            " is of type ",
            python_type_name(t));
        Tensor tensor = t.cast<Tensor>();
        base.saved_variables.emplace_back(
            tensor, output_impls.count(tensor.impl()) > 0);
      }
      ++i;
    }
    // The pack hooks run now that the list is in place, in save order, each
    // told its node and name (Note [Pack-hook context]).
    try {
      for (std::size_t k = 0; k < base.saved_variables.size(); ++k) {
        base.saved_variables[k].name_lock(node->name());
        if (base.saved_variables[k].pack_is_pending()) {
          base.saved_variables[k].pack_pending(
              node, "saved_tensors[" + std::to_string(k) + "]");
        }
      }
    } catch (...) {
      base.saved_variables.clear();
      throw;
    }
    py::delattr(ctx, "to_save");
  }
  if (!is_tuple) {
    return wrapped[0];
  }
  return py::tuple(wrapped);
}

}  // namespace

PyNode::~PyNode() {
  py::gil_scoped_acquire gil;
  ctx = py::object();
}

namespace {
// Only a ctx this node alone holds dies with it: its saved tensors are then
// the node's to report and to drop. A ctx Python also holds outlives the
// node, and keeps its saved tensors (torch's ctx does too).
FunctionBase* ctx_owned_alone(const py::object& ctx) {
  return ctx && Py_REFCNT(ctx.ptr()) == 1 ? &ctx.cast<FunctionBase&>()
                                          : nullptr;
}
}  // namespace

void PyNode::visit_strong_refs(autograd::StrongRefVisitor& v) {
  Node::visit_strong_refs(v);
  py::gil_scoped_acquire gil;
  if (FunctionBase* base = ctx_owned_alone(ctx)) {
    for (const auto& sv : base->saved_variables) {
      sv.visit_strong_refs(v);
    }
  }
}

// The ctx (and what it holds, saved tensors included) belongs to this node:
// the ctx refers back to it only weakly (Note [GC visibility]).
int PyNode::traverse_python(autograd::PyVisitProc visit, void* arg) const {
  return visit_object(ctx, visit, arg);
}

void PyNode::clear_python() {
  clear_object(ctx);
}

std::string PyNode::name() const {
  py::gil_scoped_acquire gil;
  return ctx ? python_type_name(ctx) : std::string("PyNode");
}

// After a backward without retain_graph: the ctx's saved tensors are freed
// and it remembers it (torch's THPFunction has_freed_buffers).
void PyNode::release_variables() {
  py::gil_scoped_acquire gil;
  if (!ctx) {
    return;  // cleared by the GC
  }
  auto& base = ctx.cast<FunctionBase&>();
  for (auto& sv : base.saved_variables) {
    sv.reset_data();
  }
  base.has_freed_buffers = true;
}

bool PyNode::prefetch_saved_variables() {
  py::gil_scoped_acquire gil;
  if (!ctx) {
    return false;  // cleared by the GC
  }
  bool any = false;
  auto& saved = ctx.cast<FunctionBase&>().saved_variables;
  // Indexed: each prefetch hook is user code that may touch the ctx.
  for (std::size_t i = 0; i < saved.size(); ++i) {
    any |= saved[i].prefetch();
  }
  return any;
}

// The node is going: drop the saved tensors only if the ctx goes with it, so
// that a chain of Functions saving their inputs is torn down iteratively
// (Note [Iterative graph teardown]); a ctx kept by the user keeps them, and
// its node's place in the graph (Note [A ctx keeps its node]).
void PyNode::release_for_destruction() {
  py::gil_scoped_acquire gil;
  if (ctx && !owned_by_ctx && Py_REFCNT(ctx.ptr()) > 1 &&
      !ctx.cast<FunctionBase&>().cleared_by_gc) {
    auto heir = autograd::make_node<PyNode>(ctx);
    hand_over_to(*heir);
    heir->is_tensor_arg = std::move(is_tensor_arg);
    heir->output_info = std::move(output_info);
    heir->owned_by_ctx = true;
    auto& base = ctx.cast<FunctionBase&>();
    base.cdata = heir;
    base.owner = std::move(heir);
    // This node is an empty shell now: destroy_node may call this again
    // (a node taken from a dying parent's edges is gathered twice), and it
    // must not hand over a second time.
    ctx = py::object();
    return;
  }
  if (FunctionBase* base = ctx_owned_alone(ctx)) {
    for (auto& sv : base->saved_variables) {
      sv.reset_data();
    }
  }
}

variable_list PyNode::apply(variable_list&& grads) {
  py::gil_scoped_acquire gil;
  bool materialize = py::hasattr(ctx, "materialize_grads") &&
                     ctx.attr("materialize_grads").cast<bool>();
  py::tuple args(grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    Tensor g = grads[i];
    // Outputs that were tensors (non-differentiable ones included) get zeros.
    if (!g.defined() && materialize && i < output_info.size() &&
        output_info[i]) {
      g = ops::zeros(output_info[i]->shape, output_info[i]->dtype);
    }
    args[i] = py::cast(g);
  }
  py::object r = ctx.attr("apply")(*args);
  py::tuple results = PyTuple_Check(r.ptr())
                          ? py::reinterpret_borrow<py::tuple>(r)
                          : py::make_tuple(r);
  std::size_t num_forward_inputs = is_tensor_arg.size();
  std::size_t num_outputs_given = results.size();
  if (num_outputs_given > num_forward_inputs) {
    bool all_none = true;
    for (std::size_t i = num_forward_inputs; i < num_outputs_given; ++i) {
      all_none = all_none && results[i].is_none();
    }
    if (all_none) {
      num_outputs_given = num_forward_inputs;
    }
  }
  NPGRAD_CHECK(
      num_outputs_given == num_forward_inputs,
      "function ",
      name(),
      " returned an incorrect number of gradients (expected ",
      num_forward_inputs,
      ", got ",
      num_outputs_given,
      ")");
  variable_list out;
  for (std::size_t i = 0; i < num_forward_inputs; ++i) {
    py::handle g = results[i];
    if (!is_tensor_arg[i]) {
      NPGRAD_CHECK(
          g.is_none(),
          "function ",
          name(),
          " returned a gradient different than None at position ",
          i + 1,
          ", but the corresponding forward input was not a Variable");
      continue;
    }
    if (g.is_none()) {
      out.emplace_back();
    } else {
      NPGRAD_CHECK(
          is_tensor(g),
          "expected Variable or None (got ",
          python_type_name(g),
          ")");
      out.push_back(g.cast<Tensor>());
    }
  }
  return out;
}

py::object node_to_py(const std::shared_ptr<Node>& node) {
  if (!node) {
    return py::none();
  }
  if (auto* py_node = dynamic_cast<PyNode*>(node.get())) {
    return py_node->ctx;
  }
  return py::cast(node);
}

std::shared_ptr<Node> node_from_py(py::handle obj) {
  if (py::isinstance<Node>(obj)) {
    return obj.cast<std::shared_ptr<Node>>();
  }
  if (py::isinstance<FunctionBase>(obj)) {
    return obj.cast<FunctionBase&>().cdata.lock();
  }
  return nullptr;
}

void bind_function(py::module_& m) {
  py::module_ fm = m.attr("_functions");
  py::class_<ErrorNode, Node, std::shared_ptr<ErrorNode>>(
      fm, "Error", py::custom_type_setup(setup_node_type_gc));
  py::class_<FunctionBase>(
      m,
      "_FunctionBase",
      py::dynamic_attr(),
      py::custom_type_setup(setup_function_base_type_gc))
      .def(py::init<>())
      .def(
          "name",
          [](FunctionBase& self) -> py::object {
            auto node = self.cdata.lock();
            return node ? py::object(py::str(node->name()))
                        : py::object(py::none());
          })
      .def_property_readonly(
          "_cdata_node",
          [](FunctionBase& self) -> py::object {
            auto node = self.cdata.lock();
            return node ? py::cast(std::static_pointer_cast<Node>(node))
                        : py::object(py::none());
          })
      .def_property_readonly(
          "saved_tensors", [](FunctionBase& self) -> py::object {
            NPGRAD_CHECK(!self.has_freed_buffers, messages::kBackwardTwice);
            // Saved outputs get their history from the node, while it lives.
            std::shared_ptr<Node> node = self.cdata.lock();
            py::tuple out(self.saved_variables.size());
            for (std::size_t i = 0; i < self.saved_variables.size(); ++i) {
              out[i] = py::cast(self.saved_variables[i].unpack(node));
            }
            return out;
          });
  fm.def("_function_apply", &function_apply);
  fm.def("_delayed_error", [](const std::string& msg, py::tuple outputs) {
    std::vector<Tensor> tensors;
    for (py::handle o : outputs) {
      tensors.push_back(o.is_none() ? Tensor() : o.cast<Tensor>());
    }
    auto node = autograd::make_node<ErrorNode>(msg);
    node->set_next_edges(autograd::collect_next_edges(tensors));
    py::tuple result(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].defined()) {
        node->add_input_metadata_undefined();
        result[i] = py::none();
        continue;
      }
      Tensor out = autograd::detach(tensors[i]);
      autograd::set_history(out, node);
      result[i] = py::cast(out);
    }
    return result;
  });
}

}  // namespace npgrad::bindings
