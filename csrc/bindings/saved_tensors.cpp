// npgrad.autograd.graph's pack-hook context and saved-tensor inventory
// (Note [Pack-hook context]): _C._current_saved_tensor() and
// _C._saved_tensors(roots) give the fields of a SavedTensorInfo as a tuple;
// the Python layer names them. The node is given as a _C._NodeRef, a weak
// reference: an info kept in a packed value (node -> packed -> info -> node)
// or in a list must not keep the graph alive, and a node owned by a tensor
// and by a wrapper is a cycle Python's GC cannot see (Note [GC visibility]).
#include <algorithm>
#include <unordered_set>

#include "bindings.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_tensor_context.h"
#include "npgrad/autograd/saved_variable.h"
#include "python_function.h"

namespace npgrad::bindings {

namespace {

using autograd::Node;
using autograd::SavedTensorDescription;
using autograd::SavedVariable;

// A weak reference to a node: calling it gives the node (a custom Function's
// ctx for its node) or None once the node is freed. Equal references name
// the same node, also after it is freed.
struct NodeRef {
  std::weak_ptr<Node> node;
  uintptr_t key;  // the node's address when referenced, for __hash__
};

// (node, name, is_output, is_leaf, requires_grad, storage, nbytes, shape,
// dtype, packed): SavedTensorInfo's field order.
py::tuple info_tuple(
    const std::shared_ptr<Node>& node,
    const std::string& name,
    const SavedTensorDescription& d) {
  int64_t numel = 1;
  for (int64_t s : d.sizes) {
    numel *= s;
  }
  py::object size =
      py::module_::import("npgrad").attr("Size")(py::tuple(py::cast(d.sizes)));
  return py::make_tuple(
      NodeRef{node, reinterpret_cast<uintptr_t>(node.get())},
      name,
      d.is_output,
      d.is_leaf,
      d.requires_grad,
      reinterpret_cast<uintptr_t>(d.storage),
      numel * static_cast<int64_t>(element_size(d.dtype)),
      size,
      dtype_object(d.dtype),
      d.packed);
}

py::object current_saved_tensor() {
  const autograd::SavedTensorContext* ctx =
      autograd::current_saved_tensor_context();
  if (ctx == nullptr) {
    return py::none();
  }
  const Tensor& t = *ctx->tensor;
  SavedTensorDescription d;
  d.sizes = t.sizes();
  d.dtype = t.dtype();
  d.storage = t.impl()->version_counter.get();
  d.is_output = ctx->is_output;
  d.is_leaf = ctx->is_leaf;
  d.requires_grad = ctx->requires_grad;
  d.packed = true;
  return info_tuple(ctx->node, ctx->name, d);
}

// Each saved tensor a node holds now, with its name: a custom Function's
// are on its ctx ("saved_tensors[i]"), the others' are what visit_saved
// declares.
template <typename Fn>
void for_each_saved(const std::shared_ptr<Node>& node, Fn&& fn) {
  if (auto* py_node = dynamic_cast<PyNode*>(node.get())) {
    if (!py_node->ctx) {
      return;  // cleared by the GC
    }
    auto& base = py_node->ctx.cast<FunctionBase&>();
    for (std::size_t i = 0; i < base.saved_variables.size(); ++i) {
      fn("saved_tensors[" + std::to_string(i) + "]", base.saved_variables[i]);
    }
    return;
  }
  autograd::for_each_named_saved_tensor(
      *node, [&](const std::string& name, SavedVariable& v) { fn(name, v); });
}

py::list saved_tensors(const py::sequence& roots) {
  // The nodes reachable from the roots, each once.
  std::vector<std::shared_ptr<Node>> nodes;
  std::unordered_set<const Node*> seen;
  std::vector<std::shared_ptr<Node>> stack;
  for (py::handle root : roots) {
    std::shared_ptr<Node> node = node_from_py(root);
    if (node && seen.insert(node.get()).second) {
      stack.push_back(std::move(node));
    }
  }
  while (!stack.empty()) {
    std::shared_ptr<Node> node = std::move(stack.back());
    stack.pop_back();
    for (const auto& edge : node->next_edges()) {
      if (edge.function && seen.insert(edge.function.get()).second) {
        stack.push_back(edge.function);
      }
    }
    nodes.push_back(std::move(node));
  }
  // Forward order: the order in which the ops ran (and saved).
  std::stable_sort(
      nodes.begin(),
      nodes.end(),
      [](const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) {
        return a->sequence_nr() < b->sequence_nr();
      });
  py::list out;
  for (const auto& node : nodes) {
    for_each_saved(node, [&](const std::string& name, const SavedVariable& v) {
      SavedTensorDescription d;
      if (v.describe(d)) {
        out.append(info_tuple(node, name, d));
      }
    });
  }
  return out;
}

}  // namespace

void bind_saved_tensors(py::module_& m) {
  py::class_<NodeRef>(m, "_NodeRef")
      .def(
          "__call__",
          [](const NodeRef& self) { return node_to_py(self.node.lock()); })
      .def(
          "__eq__",
          [](const NodeRef& self, py::handle other) -> py::object {
            if (!py::isinstance<NodeRef>(other)) {
              return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            }
            const auto& o = other.cast<const NodeRef&>().node;
            return py::bool_(
                !self.node.owner_before(o) && !o.owner_before(self.node));
          })
      .def(
          "__hash__",
          [](const NodeRef& self) { return std::hash<uintptr_t>()(self.key); })
      .def("__repr__", [](const NodeRef& self) {
        std::shared_ptr<Node> node = self.node.lock();
        return node ? "<NodeRef to " + node->name() + ">"
                    : std::string("<NodeRef to a freed node>");
      });
  m.def(
      "_current_saved_tensor",
      &current_saved_tensor,
      "The context of the pack hook running on this thread as a tuple of "
      "SavedTensorInfo's fields, or None.");
  m.def(
      "_saved_tensors",
      &saved_tensors,
      py::arg("roots"),
      "A tuple of SavedTensorInfo's fields for each saved tensor reachable "
      "from the root nodes, in forward order.");
}

}  // namespace npgrad::bindings
