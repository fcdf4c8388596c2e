#include "npgrad/autograd/graph_recording.h"

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/copy_nodes.h"
#include "npgrad/util/error.h"

namespace npgrad::autograd {

bool compute_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) {
    return false;
  }
  for (const Tensor* t : inputs) {
    if (t->defined() && requires_grad(*t)) {
      return true;
    }
  }
  return false;
}

bool compute_requires_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) {
    return false;
  }
  for (const Tensor& t : inputs) {
    if (t.defined() && requires_grad(t)) {
      return true;
    }
  }
  return false;
}

edge_list collect_next_edges(std::initializer_list<const Tensor*> inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    edges.push_back(
        t->defined() && requires_grad(*t) ? gradient_edge(*t) : Edge());
  }
  return edges;
}

edge_list collect_next_edges(const std::vector<Tensor>& inputs) {
  edge_list edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    edges.push_back(
        t.defined() && requires_grad(t) ? gradient_edge(t) : Edge());
  }
  return edges;
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn) {
  uint32_t nr = fn->add_input_metadata(out);
  set_gradient_edge(out, Edge(fn, nr));
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn) {
  if (self.is_view()) {
    Tensor base = self.base();
    NPGRAD_CHECK(
        fn->num_inputs() == 0,
        "Functions which modify views in-place must return a single Variable");
    fn->add_input_metadata(self);
    AutogradMeta& base_meta = materialize_autograd_meta(base);
    std::shared_ptr<Node> old_fn = base_meta.grad_fn;
    uint32_t old_nr = base_meta.output_nr;
    auto copy_slices = make_node<CopySlices>(base, view_geometry(self), fn);
    set_gradient_edge(base, Edge(copy_slices, 0));
    move_retains_grad_hook(base, old_fn, old_nr, base_meta.grad_fn);
    grad_fn(self);  // regenerate the view's grad_fn from the new base history
    return;
  }
  AutogradMeta& meta = materialize_autograd_meta(self);
  std::shared_ptr<Node> old_fn = meta.grad_fn;
  uint32_t old_nr = meta.output_nr;
  set_history(self, fn);
  move_retains_grad_hook(self, old_fn, old_nr, fn);
}

Tensor make_view(const Tensor& base, Tensor data) {
  TensorImpl* v = data.impl();
  v->version_counter = base.impl()->version_counter;
  v->view_base = base.is_view() ? base.impl()->view_base : base.impl_ptr();
  v->is_inference = base.impl()->is_inference;
  // The history this view gets now is current: only a later in-place write
  // makes it stale (Note [Lazy grad_fn of views]).
  v->attr_version = v->version_counter->version.load();
  if (!GradMode::is_enabled()) {
    v->creation_meta = CreationMeta::NoGradMode;
  } else {
    v->creation_meta = base.impl()->creation_meta;
  }
  return data;
}

}  // namespace npgrad::autograd
