#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/cycle_collector.h"

#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/accumulate_grad.h"
#include "npgrad/autograd/nodes/view_nodes.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

void AutogradMetaDeleter::operator()(AutogradMeta* meta) const {
  delete meta;
}

AutogradMeta& materialize_autograd_meta(const Tensor& t) {
  auto& meta = t.impl()->autograd_meta;
  if (!meta) {
    meta.reset(new AutogradMeta());
  }
  return *meta;
}

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = get_autograd_meta(t);
  if (m != nullptr && (m->requires_grad || m->grad_fn)) {
    return true;
  }
  // A view made under no_grad of a base that requires grad still requires
  // grad (its grad_fn is built lazily).
  if (t.is_view()) {
    const AutogradMeta* bm = t.impl()->view_base->autograd_meta.get();
    return bm != nullptr && (bm->requires_grad || bm->grad_fn);
  }
  return false;
}

ViewGeometry view_geometry(const Tensor& view) {
  const TensorImpl* base = view.impl()->view_base.get();
  auto itemsize = static_cast<int64_t>(element_size(view.dtype()));
  int64_t offset = (static_cast<const char*>(view.data_ptr()) -
                    static_cast<const char*>(base->data)) /
                   itemsize;
  return {base->sizes, base->strides, view.sizes(), view.strides(), offset};
}

void check_view_rebase(const Tensor& view, bool indirect) {
  const CreationMeta creation = view.impl()->creation_meta;
  if (creation == CreationMeta::Default) {
    return;
  }
  const AutogradMeta* m = get_autograd_meta(view);
  const Node* fn = m ? m->grad_fn.get() : nullptr;
  const char* modified =
      indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (creation == CreationMeta::NoGradMode || fn == nullptr) {
    msg = fn ? "Output " + std::to_string(m->output_nr) + " of " +
                   forward_op_name(*fn) +
                   " is a view of a view which was created in"
             : std::string("A view was created in");
    msg += std::string(" no_grad mode and ") + modified +
           " modified inplace with grad mode enabled.";
  } else {
    msg = "Output " + std::to_string(m->output_nr) + " of " +
          forward_op_name(*fn) + " is a view and " + modified +
          " modified inplace.";
  }
  switch (creation) {
    case CreationMeta::MultiOutputNode:
      msg +=
          " This view is the output of a function that returns multiple "
          "views. Such functions do not allow the output views to be "
          "modified inplace. You should replace the inplace operation by an "
          "out-of-place one.";
      break;
    case CreationMeta::NoGradMode:
      msg +=
          " Given that this use case is ambiguous and error-prone, it is "
          "forbidden. You can clarify your code by moving both the view and "
          "the inplace either both inside the no_grad block (if you don't "
          "want the inplace to be tracked) or both outside (if you want the "
          "inplace to be tracked).";
      break;
    case CreationMeta::InCustomFunction:
      msg +=
          " This view was created inside a custom Function (or because an "
          "input was returned as-is) and the autograd logic to handle "
          "view+inplace would override the custom backward associated with "
          "the custom Function, leading to incorrect gradients. This "
          "behavior is forbidden. You can fix this by cloning the output of "
          "the custom Function.";
      break;
    case CreationMeta::Default:
      break;
  }
  throw Error(msg);
}

namespace {
// Note [Lazy grad_fn of views]
// When a view's base, or another view of it, is modified in place, the
// view's history is stale: its values now come from the modified base. On
// the next read of grad_fn the view gets an AsStridedBackward0 over the
// base's current history (torch's VariableHooks::grad_fn), unless it was
// made in a way that forbids this (torch's handle_view_on_rebase).
void regenerate_view_grad_fn(const Tensor& t) {
  TensorImpl* impl = t.impl();
  uint32_t current = impl->version_counter->version.load();
  Tensor base(impl->view_base);
  AutogradMeta* m = get_autograd_meta(t);
  if ((m == nullptr || !m->grad_fn) && !requires_grad(base)) {
    impl->attr_version = current;
    return;
  }
  check_view_rebase(t, true);
  auto fn = make_node<AsStridedBackward0>();
  fn->geometry = view_geometry(t);
  fn->set_next_edges({requires_grad(base) ? gradient_edge(base) : Edge()});
  fn->add_input_metadata(t);
  AutogradMeta& meta = materialize_autograd_meta(t);
  std::shared_ptr<Node> old_fn = std::move(meta.grad_fn);
  uint32_t old_nr = meta.output_nr;
  meta.grad_fn = std::move(fn);
  meta.output_nr = 0;
  impl->attr_version = current;
  move_retains_grad_hook(t, old_fn, old_nr, meta.grad_fn);
}
}  // namespace

const std::shared_ptr<Node>& grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  TensorImpl* impl = t.impl();
  if (impl->view_base &&
      impl->attr_version != impl->version_counter->version.load()) {
    regenerate_view_grad_fn(t);
  }
  const AutogradMeta* m = get_autograd_meta(t);
  return m ? m->grad_fn : none;
}

void move_retains_grad_hook(
    const Tensor& t,
    const std::shared_ptr<Node>& old_fn,
    uint32_t old_nr,
    const std::shared_ptr<Node>& new_fn) {
  AutogradMeta* meta = get_autograd_meta(t);
  if (meta == nullptr) {
    return;
  }
  // Hooks registered from now on bind to the new grad_fn.
  meta->py_state.reset();
  if (old_fn && meta->retains_grad && old_fn != new_fn) {
    old_fn->retains_grad_hooks().erase(old_nr);
    new_fn->retains_grad_hooks()[meta->output_nr] =
        make_retain_grad_hook(t, meta->output_nr);
  }
}

uint32_t output_nr(const Tensor& t) {
  const AutogradMeta* m = get_autograd_meta(t);
  return m ? m->output_nr : 0;
}

Edge gradient_edge(const Tensor& t) {
  // Through grad_fn(): a stale view's history is regenerated first.
  const std::shared_ptr<Node>& fn = grad_fn(t);
  if (fn) {
    return Edge(fn, output_nr(t));
  }
  return Edge(grad_accumulator(t), 0);
}

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  AutogradMeta* m = get_autograd_meta(t);
  if (m == nullptr || !m->requires_grad) {
    return nullptr;
  }
  NPGRAD_INTERNAL_ASSERT(
      !m->grad_fn,
      "grad_accumulator() should be only called on leaf Variables");
  // The mutex may be held by a thread inside a NumPy call that dropped the
  // GIL (Note [GIL and shared autograd state]).
  kernels::lock_releasing_gil(m->mutex);
  std::lock_guard<std::mutex> lock(m->mutex, std::adopt_lock);
  if (auto acc = m->grad_accumulator.lock()) {
    return acc;
  }
  auto acc = make_node<AccumulateGrad>(t);
  m->grad_accumulator = acc;
  return acc;
}

std::shared_ptr<Node> try_get_grad_accumulator(const Tensor& t) {
  AutogradMeta* m = get_autograd_meta(t);
  return m ? m->grad_accumulator.lock() : nullptr;
}

void set_requires_grad(const Tensor& t, bool value) {
  AutogradMeta* m = get_autograd_meta(t);
  if (m != nullptr && m->grad_fn) {
    NPGRAD_CHECK(
        value,
        messages::kNonLeafRequiresGrad,
        " If you want to use a computed variable in a subgraph that doesn't "
        "require differentiation use var_no_grad = var.detach().");
    return;
  }
  NPGRAD_CHECK(!value || is_floating(t.dtype()), messages::kRequiresGradFloat);
  NPGRAD_CHECK(
      !value || !t.impl()->is_inference || InferenceMode::is_enabled(),
      messages::kInferenceRequiresGrad);
  if (m == nullptr && !value) {
    return;
  }
  materialize_autograd_meta(t).requires_grad = value;
}

void set_gradient_edge(const Tensor& t, Edge edge) {
  AutogradMeta& m = materialize_autograd_meta(t);
  m.grad_fn = std::move(edge.function);
  m.output_nr = edge.input_nr;
}

namespace {
// Writes the gradient flowing into a non-leaf to its .grad; never changes
// the gradient itself. Holds the tensor weakly: the graph must not keep it.
class RetainGradHook final : public FunctionPreHook {
 public:
  RetainGradHook(const Tensor& t, uint32_t idx)
      : tensor_(t.impl_ptr()), idx_(idx) {}
  variable_list operator()(const variable_list& grads) override {
    auto impl = tensor_.lock();
    const Tensor& g = grads[idx_];
    if (!impl || !g.defined()) {
      return grads;
    }
    Tensor t(impl);
    AutogradMeta& meta = materialize_autograd_meta(t);
    // Freed after the mutex (see AccumulateGrad::apply).
    Tensor old_grad;
    kernels::lock_releasing_gil(meta.mutex);
    std::lock_guard<std::mutex> lock(meta.mutex, std::adopt_lock);
    old_grad = meta.grad;
    if (!meta.grad.defined()) {
      meta.grad = ops::clone(g);
    } else {
      meta.grad = ops::add(meta.grad, g);
    }
    note_grad_assigned(t);
    return grads;
  }

 private:
  std::weak_ptr<TensorImpl> tensor_;
  uint32_t idx_;
};
}  // namespace

std::shared_ptr<FunctionPreHook> make_retain_grad_hook(
    const Tensor& t, uint32_t idx) {
  return std::make_shared<RetainGradHook>(t, idx);
}

void retain_grad(const Tensor& t) {
  NPGRAD_CHECK(requires_grad(t), messages::kRetainGradNoGrad);
  if (is_leaf(t)) {
    return;
  }
  AutogradMeta& meta = materialize_autograd_meta(t);
  if (meta.retains_grad) {
    return;
  }
  grad_fn(t)->retains_grad_hooks()[meta.output_nr] =
      make_retain_grad_hook(t, meta.output_nr);
  meta.retains_grad = true;
}

Tensor detach(const Tensor& t) {
  auto impl = make_tensor_impl();
  const TensorImpl* src = t.impl();
  kernels::materialize_array(*t.impl());  // the alias shares the ndarray
  impl->array = src->array;
  impl->data = src->data;
  impl->sizes = src->sizes;
  impl->strides = src->strides;
  impl->dtype = src->dtype;
  impl->version_counter = src->version_counter;
  return Tensor(std::move(impl));
}

}  // namespace npgrad::autograd
