#include "npgrad/autograd/autograd_meta.h"

#include "npgrad/autograd/node.h"
#include "npgrad/autograd/nodes/accumulate_grad.h"
#include "npgrad/ops/ops.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

AutogradMeta& materialize_autograd_meta(const Tensor& t) {
  auto& meta = t.impl()->autograd_meta;
  if (!meta) {
    meta = std::make_unique<AutogradMeta>();
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

const std::shared_ptr<Node>& grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  const AutogradMeta* m = get_autograd_meta(t);
  return m ? m->grad_fn : none;
}

uint32_t output_nr(const Tensor& t) {
  const AutogradMeta* m = get_autograd_meta(t);
  return m ? m->output_nr : 0;
}

Edge gradient_edge(const Tensor& t) {
  const AutogradMeta* m = get_autograd_meta(t);
  if (m != nullptr && m->grad_fn) {
    return Edge(m->grad_fn, m->output_nr);
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
  std::lock_guard<std::mutex> lock(m->mutex);
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
    std::lock_guard<std::mutex> lock(meta.mutex);
    if (!meta.grad.defined()) {
      meta.grad = ops::clone(g);
    } else {
      meta.grad = ops::add(meta.grad, g);
    }
    return grads;
  }

 private:
  std::weak_ptr<TensorImpl> tensor_;
  uint32_t idx_;
};
}  // namespace

void retain_grad(const Tensor& t) {
  NPGRAD_CHECK(requires_grad(t), messages::kRetainGradNoGrad);
  if (is_leaf(t)) {
    return;
  }
  AutogradMeta& meta = materialize_autograd_meta(t);
  if (meta.retains_grad) {
    return;
  }
  meta.grad_fn->retains_grad_hooks()[meta.output_nr] =
      std::make_shared<RetainGradHook>(t, meta.output_nr);
  meta.retains_grad = true;
}

Tensor detach(const Tensor& t) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl* src = t.impl();
  impl->array = src->array;
  impl->data = src->data;
  impl->sizes = src->sizes;
  impl->strides = src->strides;
  impl->dtype = src->dtype;
  impl->version_counter = src->version_counter;
  return Tensor(std::move(impl));
}

}  // namespace npgrad::autograd
