#include "npgrad/autograd/saved_variable.h"

#include "npgrad/autograd/anomaly_mode.h"
#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/cycle_collector.h"
#include "npgrad/autograd/grad_mode.h"
#include "npgrad/autograd/mutation_provenance.h"
#include "npgrad/autograd/node.h"
#include "npgrad/autograd/saved_tensor_context.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

SavedVariable::SavedVariable(
    const Tensor& t, bool is_output, bool is_inplace_on_view) {
  if (!t.defined()) {
    return;
  }
  NPGRAD_CHECK(
      !t.impl()->is_inference || t.impl()->is_wrapped_number ||
          InferenceMode::is_enabled(),
      messages::kInferenceSaved);
  was_defined_ = true;
  if (is_output && is_inplace_on_view) {
    is_inplace_on_view_ = true;
    weak_grad_fn_ = grad_fn(t);
  }
  saved_version_ = t.version();
  is_leaf_ = is_leaf(t);
  is_output_ = is_output;
  output_nr_ = output_nr(t);
  requires_grad_ = requires_grad(t);
  // With default hooks active, the pack hook's result is stored instead of
  // the tensor (Python numbers are never packed).
  if (!t.impl()->is_wrapped_number) {
    if (auto hooks = SavedTensorDefaultHooks::get()) {
      // The pack hook runs once this SavedVariable is in its place, where
      // its node and name are known (Note [Pack-hook context]).
      save_metadata(t);
      hooks_ = std::move(hooks);
      data_ = t;
      pack_pending_ = true;
      return;
    }
  }
  if (!is_output || is_leaf_) {
    // An input's producer is an older node, and a leaf holds its accumulator
    // only weakly: keeping the tensor itself makes no cycle.
    saved_original_ = true;
    data_ = t;
  } else {
    data_ = detach(t);
  }
  if (LockSavedTensors::is_enabled() && !t.impl()->is_wrapped_number) {
    lock_ = std::make_unique<SavedLock>(data_);
  }
}

void SavedVariable::save_metadata(const Tensor& t) {
  output_nr_ = output_nr(t);
  if (is_leaf_) {
    if (requires_grad_) {
      grad_accumulator_ = grad_accumulator(t);
    }
  } else if (!is_output_) {
    grad_fn_ = grad_fn(t);
  }
}

SavedVariable::SavedVariable(SavedVariable&& other) noexcept
    : SavedVariableFields(std::move(other)) {
  other.pack_pending_ = false;
}

SavedVariable& SavedVariable::operator=(SavedVariable&& other) {
  if (this != &other) {
    SavedVariableFields::operator=(std::move(other));
    other.pack_pending_ = false;
    if (pack_pending_) {
      pack_where_placed();
    }
    if (lock_ && !lock_->named()) {
      name_lock_where_placed();
    }
  }
  return *this;
}

void SavedVariable::name_lock_where_placed() {
  std::shared_ptr<Node> node;
  std::string name;
  if (find_saved_owner(this, node, name)) {
    lock_->set_node_name(node->name());
  }
}

void SavedVariable::pack_where_placed() {
  std::shared_ptr<Node> node;
  std::string name;
  find_saved_owner(this, node, name);
  pack_pending(std::move(node), std::move(name));
}

void SavedVariable::pack_pending(std::shared_ptr<Node> node, std::string name) {
  NPGRAD_INTERNAL_ASSERT(pack_pending_, "no pack hook is pending");
  pack_pending_ = false;
  Tensor data = std::move(data_);
  try {
    set_hooks_and_pack_data(
        std::move(hooks_), data, std::move(node), std::move(name));
  } catch (...) {
    // As when torch's SavedVariable constructor throws: nothing is saved.
    static_cast<SavedVariableFields&>(*this) = SavedVariableFields();
    throw;
  }
}

void SavedVariable::set_hooks_and_pack_data(
    std::unique_ptr<SavedVariableHooks> hooks,
    const Tensor& data,
    std::shared_ptr<Node> node,
    std::string name) {
  hooks_ = std::move(hooks);
  hooks_->packed_sizes = data.sizes();
  hooks_->packed_dtype = data.dtype();
  hooks_->packed_storage = data.impl()->version_counter;
  AutoGradMode no_grad(false);
  uint32_t version = data.version();
  SavedTensorContext context{
      std::move(node),
      std::move(name),
      &data,
      is_output_,
      is_leaf_,
      requires_grad_};
  {
    SavedTensorContextScope scope(context);
    hooks_->call_pack_hook(saved_original_ ? detach(data) : data);
  }
  NPGRAD_CHECK(
      version == data.version(),
      "A saved tensor pack hook is modifying its input in place. Tensors "
      "provided as input to pack hook cannot be modified by in-place "
      "operations as this can lead to unexpected side-effects. Please open an "
      "issue if you need to perform in-place operations on the input to a "
      "pack hook.");
}

void SavedVariable::register_hooks(
    std::unique_ptr<SavedVariableHooks> hooks,
    std::shared_ptr<Node> node,
    std::string name) {
  NPGRAD_CHECK(
      !hooks_,
      "Calling register_hooks on a saved tensor whose hooks have already been "
      "set. Hint: only one pair of hooks is allowed at a time.");
  if (!data_.defined()) {
    NPGRAD_CHECK(
        !was_defined_,
        "Calling register_hooks on a saved tensor after it has been freed. "
        "Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you "
        "need to backward through the graph a second time or if you need to "
        "access saved variables after calling backward.");
    throw Error(
        "Calling register_hooks on a saved tensor with value None is "
        "forbidden");
  }
  if (saved_original_) {
    save_metadata(data_);
  }
  set_hooks_and_pack_data(
      std::move(hooks), data_, std::move(node), std::move(name));
  data_ = Tensor();
  lock_.reset();
}

bool SavedVariable::describe(SavedTensorDescription& out) const {
  if (hooks_ && !pack_pending_) {
    out.sizes = hooks_->packed_sizes;
    out.dtype = hooks_->packed_dtype;
    out.storage = hooks_->packed_storage.get();
  } else if (data_.defined() && !data_.impl()->is_wrapped_number) {
    out.sizes = data_.sizes();
    out.dtype = data_.dtype();
    out.storage = data_.impl()->version_counter.get();
  } else {
    return false;
  }
  out.is_output = is_output_;
  out.is_leaf = is_leaf_;
  out.requires_grad = requires_grad_;
  out.packed = hooks_ && !pack_pending_;
  return true;
}

SavedVariableList::SavedVariableList(
    const std::vector<Tensor>& tensors, bool is_output) {
  items.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    items.emplace_back(t, is_output);
  }
}

SavedVariableList& SavedVariableList::operator=(SavedVariableList&& other) {
  items = std::move(other.items);
  released = other.released;
  for (SavedVariable& item : items) {
    if (item.lock_ && !item.lock_->named()) {
      item.name_lock_where_placed();
    }
    if (item.pack_is_pending()) {
      std::shared_ptr<Node> node;
      std::string name;
      find_saved_owner(&item, node, name);
      item.pack_pending(std::move(node), std::move(name));
    }
  }
  return *this;
}

// The history of a saved output: the node it is saved for, or for a view
// written in place, the view's grad_fn at save time while it lives.
std::shared_ptr<Node> SavedVariable::output_grad_fn(
    const std::shared_ptr<Node>& saved_for) const {
  if (is_inplace_on_view_) {
    if (auto fn = weak_grad_fn_.lock()) {
      return fn;
    }
  }
  return saved_for;
}

void SavedVariable::throw_modified_by_inplace(
    ScalarType dtype,
    const Shape& sizes,
    const VersionCounter& counter,
    const Node* fn) const {
  std::string which;
  if (fn) {
    which = ", which is output " + std::to_string(output_nr_) + " of " +
            forward_op_name(*fn) + ",";
  }
  throw Error(detail::str_cat(
      messages::kModifiedByInplace,
      "[",
      type_string(dtype),
      " ",
      shape_str(sizes),
      "]",
      which,
      " is at version ",
      counter.version.load(),
      "; expected version ",
      saved_version_,
      " instead. ",
      AnomalyMode::is_enabled() ? messages::kAnomalyHintEnabled
                                : messages::kAnomalyHint,
      mutation_provenance(counter, saved_version_)));
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!was_defined_) {
    return Tensor();
  }
  NPGRAD_INTERNAL_ASSERT(
      !pack_pending_, "a saved tensor unpacked before its pack hook ran");
  if (hooks_) {
    std::shared_ptr<Node> fn =
        is_output_ && !is_leaf_ ? output_grad_fn(saved_for) : grad_fn_;
    // No version check through plain hooks (the hooks own what was saved);
    // dedup hooks check, as without hooks (Note [Storage dedup of saved
    // tensors]).
    if (hooks_->checks_versions()) {
      uint32_t current = hooks_->packed_storage->version.load();
      if (current != saved_version_) {
        throw_modified_by_inplace(
            hooks_->packed_dtype,
            hooks_->packed_sizes,
            *hooks_->packed_storage,
            fn.get());
      }
    }
    Tensor data = hooks_->call_unpack_hook();
    if (!fn && !requires_grad_ && !requires_grad(data)) {
      return data;
    }
    Tensor out = detach(data);
    if (fn) {
      set_gradient_edge(out, Edge(fn, output_nr_));
    } else if (requires_grad_) {
      AutogradMeta& meta = materialize_autograd_meta(out);
      meta.requires_grad = true;
      meta.grad_accumulator = grad_accumulator_;
    }
    return out;
  }
  NPGRAD_CHECK(data_.defined(), messages::kBackwardTwice);
  std::shared_ptr<Node> fn =
      saved_original_ ? grad_fn(data_)
                      : (is_output_ ? output_grad_fn(saved_for) : nullptr);
  // A saved input that had history and has none now was detached in place.
  // Formulas unpack their inputs without saved_for and so refuse it, as
  // torch's do; the `_saved_*` attributes pass their node and still read it.
  NPGRAD_CHECK(
      !(saved_original_ && !is_leaf_ && !fn && !saved_for),
      "Trying to use a saved tensor that has been detached in-place, i.e. "
      "with .detach_().This is not supported, please use out-of-place "
      "`.detach()` instead");
  if (saved_version_ != data_.version()) {
    throw_modified_by_inplace(
        data_.dtype(),
        data_.sizes(),
        *data_.impl()->version_counter,
        fn.get());
  }
  if (saved_original_) {
    return data_;
  }
  // Rebuild an output tensor: same data and version counter, history
  // (saved_for, output_nr).
  Tensor out = detach(data_);
  if (requires_grad_ && fn) {
    set_gradient_edge(out, Edge(fn, output_nr_));
  }
  return out;
}

void SavedVariable::reset_data() {
  pack_pending_ = false;
  lock_.reset();
  data_ = Tensor();
  hooks_.reset();
  grad_fn_.reset();
  grad_accumulator_.reset();
  weak_grad_fn_.reset();
}

}  // namespace npgrad::autograd

namespace npgrad::autograd {

int SavedVariable::traverse_python(PyVisitProc visit, void* arg) const {
  if (hooks_) {
    if (int r = hooks_->traverse_python(visit, arg)) {
      return r;
    }
  }
  return traverse_if_owned_alone(data_.impl_ptr(), visit, arg);
}

void SavedVariable::clear_python() {
  if (hooks_) {
    hooks_->clear_python();
  }
  clear_if_owned_alone(data_.impl_ptr());
}

void SavedVariable::visit_strong_refs(StrongRefVisitor& v) const {
  if (data_.defined()) {
    v.tensor(data_.impl_ptr());
  }
  if (grad_fn_) {
    v.node(grad_fn_);
  }
  if (grad_accumulator_) {
    v.node(grad_accumulator_);
  }
}

}  // namespace npgrad::autograd
