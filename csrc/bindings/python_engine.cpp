// backward()/grad() entry: argument conversion and checks in torch's order
// (THPEngine_run_backward), then Engine::execute.
#include "bindings.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/engine.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/basic_nodes.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"
#include "python_function.h"

namespace npgrad::bindings {

namespace {

using autograd::Edge;
using autograd::edge_list;
using autograd::Node;

// A GradientEdge (node, output_nr) namedtuple, or nullopt.
std::optional<Edge> as_gradient_edge(py::handle obj, py::handle edge_type) {
  if (edge_type.is_none() || !py::isinstance(obj, edge_type)) {
    return std::nullopt;
  }
  py::tuple t = py::reinterpret_borrow<py::tuple>(obj);
  py::handle node = t[0];
  auto fn = node_from_py(node);
  NPGRAD_CHECK(
      fn != nullptr,
      "GradientEdge's first object must be an autograd.graph.Node but got ",
      python_type_name(node));
  // output_nr picks one of the node's inputs, i.e. one output of the forward
  // call that recorded it; anything else would index past its metadata.
  py::handle nr = t[1];
  NPGRAD_CHECK_TYPE(
      PyLong_Check(nr.ptr()) && !PyBool_Check(nr.ptr()),
      "GradientEdge's output_nr must be an int but got ",
      python_type_name(nr));
  int overflow = 0;
  long long output_nr = PyLong_AsLongLongAndOverflow(nr.ptr(), &overflow);
  const auto num_outputs = static_cast<long long>(fn->num_inputs());
  NPGRAD_CHECK(
      overflow == 0 && output_nr >= 0 && output_nr < num_outputs,
      "GradientEdge's output_nr ",
      py::str(nr).cast<std::string>(),
      " is out of range: its node ",
      fn->name(),
      " has ",
      num_outputs,
      num_outputs == 1 ? " output" : " outputs");
  return Edge(fn, static_cast<uint32_t>(output_nr));
}

// A flag parsed as THPEngine_run_backward's "b" format does: any integer
// (bool included); another type raises "'str' object cannot be interpreted
// as an integer".
bool flag_argument(py::handle value) {
  long v = PyLong_AsLong(value.ptr());
  if (v == -1 && PyErr_Occurred()) {
    throw py::error_already_set();
  }
  return v != 0;
}

py::object run_backward(
    py::sequence tensors,
    py::sequence grad_tensors,
    py::handle keep_graph_arg,
    py::handle create_graph_arg,
    py::sequence inputs,
    bool allow_unreachable,
    bool accumulate_grad,
    py::handle edge_type) {
  bool keep_graph = flag_argument(keep_graph_arg);
  bool create_graph = flag_argument(create_graph_arg);
  std::size_t n = py::len(tensors);
  NPGRAD_CHECK(
      py::len(grad_tensors) == n,
      "got ",
      n,
      " tensors and ",
      py::len(grad_tensors),
      " gradients");
  edge_list roots;
  variable_list grads;
  roots.reserve(n);
  grads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    py::handle out = tensors[i];
    bool out_is_tensor = is_tensor(out);
    Edge edge;
    if (out_is_tensor) {
      edge = autograd::gradient_edge(out.cast<Tensor>());
    } else if (auto e = as_gradient_edge(out, edge_type)) {
      edge = *e;
    } else {
      throw Error(detail::str_cat(
          "element ",
          i,
          " of tensors tuple is neither a Tensor nor a GradientEdge"));
    }
    NPGRAD_CHECK(edge.is_valid(), "element ", i, messages::kNoGradFn);
    py::handle g = grad_tensors[i];
    if (is_tensor(g)) {
      grads.push_back(g.cast<Tensor>());
    } else if (g.is_none()) {
      NPGRAD_CHECK(
          !out_is_tensor,
          "element ",
          i,
          " of gradients tuple is None, but the corresponding Tensor requires "
          "grad");
      throw Error(detail::str_cat(
          "element ",
          i,
          " of gradients tuple is None, but the corresponding output is a "
          "GradientEdge.This is not supported."));
    } else {
      throw Error(detail::str_cat(
          "element ", i, " of gradients tuple is not a Tensor or None"));
    }
    roots.push_back(std::move(edge));
  }

  edge_list output_edges;
  std::size_t num_inputs = py::len(inputs);
  output_edges.reserve(num_inputs);
  for (std::size_t i = 0; i < num_inputs; ++i) {
    py::handle in = inputs[i];
    if (is_tensor(in)) {
      Tensor t = in.cast<Tensor>();
      if (accumulate_grad) {
        autograd::retain_grad(t);
      }
      NPGRAD_CHECK(autograd::requires_grad(t), messages::kDifferentiatedNoGrad);
      const auto& fn = autograd::grad_fn(t);
      if (fn) {
        output_edges.emplace_back(fn, autograd::output_nr(t));
      } else if (auto acc = autograd::try_get_grad_accumulator(t)) {
        output_edges.emplace_back(acc, 0);
      } else {
        // Not reachable: a placeholder that is never executed.
        output_edges.emplace_back(autograd::make_node<autograd::Identity>(), 0);
      }
    } else if (auto e = as_gradient_edge(in, edge_type)) {
      output_edges.push_back(*e);
    } else {
      throw Error(
          "all inputs have to be Tensors or GradientEdges, but got " +
          python_type_name(in));
    }
  }

  variable_list results = autograd::Engine::execute(
      roots,
      std::move(grads),
      keep_graph,
      create_graph,
      accumulate_grad,
      output_edges);
  if (accumulate_grad) {
    return py::none();
  }
  py::tuple out(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    NPGRAD_CHECK(
        results[i].defined() || allow_unreachable,
        "The differentiated Tensor at index ",
        i,
        messages::kUnusedInput);
    out[i] = py::cast(results[i]);
  }
  return out;
}

}  // namespace

void bind_engine(py::module_& m) {
  m.def(
      "_run_backward",
      &run_backward,
      py::arg("tensors"),
      py::arg("grad_tensors"),
      py::arg("keep_graph"),
      py::arg("create_graph"),
      py::arg("inputs"),
      py::arg("allow_unreachable"),
      py::arg("accumulate_grad"),
      py::arg("edge_type") = py::none());
  // The checks _run_backward applies to a GradientEdge, for the Python code
  // that reads an edge's metadata before the engine sees it.
  m.def("_check_gradient_edge", [](py::handle edge) {
    as_gradient_edge(edge, py::type::handle_of(edge));
  });
  // loss.backward()'s implicit gradient in one call: a fresh tensor of ones
  // for an output that requires grad, has one element and a floating dtype;
  // None for anything else, which Python's general path checks (and raises
  // torch's errors for).
  m.def("_implicit_grad", [](const Tensor& out) -> py::object {
    if (!autograd::requires_grad(out) || out.numel() != 1 ||
        !is_floating(out.dtype())) {
      return py::none();
    }
    return py::cast(ops::ones_like(out));
  });
  // Any object: as in torch, a non-callable fails when the callback runs.
  m.def("_queue_callback", [](py::object cb) {
    autograd::Engine::queue_callback([cb]() { cb(); });
  });
}

}  // namespace npgrad::bindings
