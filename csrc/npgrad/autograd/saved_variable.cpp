#include "npgrad/autograd/saved_variable.h"

#include "npgrad/autograd/autograd_meta.h"
#include "npgrad/autograd/node.h"
#include "npgrad/util/error.h"
#include "npgrad/util/error_messages.h"

namespace npgrad::autograd {

namespace {
// The forward op a node differentiates: "Tanh" for TanhBackward0, as torch's
// messages name it.
std::string forward_op_name(const Node& fn) {
  std::string name = fn.name();
  auto pos = name.rfind("::");
  if (pos != std::string::npos) {
    name = name.substr(pos + 2);
  }
  auto b = name.rfind("Backward");
  return b == std::string::npos || b == 0 ? name : name.substr(0, b);
}
}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) {
    return;
  }
  was_defined_ = true;
  saved_version_ = t.version();
  is_leaf_ = is_leaf(t);
  is_output_ = is_output;
  output_nr_ = output_nr(t);
  requires_grad_ = requires_grad(t);
  if (!is_output || is_leaf_) {
    // An input's producer is an older node, and a leaf holds its accumulator
    // only weakly: keeping the tensor itself makes no cycle.
    saved_original_ = true;
    data_ = t;
  } else {
    data_ = detach(t);
  }
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& saved_for) const {
  if (!was_defined_) {
    return Tensor();
  }
  NPGRAD_CHECK(data_.defined(), messages::kBackwardTwice);
  std::shared_ptr<Node> fn =
      saved_original_ ? grad_fn(data_) : (is_output_ ? saved_for : nullptr);
  if (saved_version_ != data_.version()) {
    std::string which;
    if (fn) {
      which = ", which is output " + std::to_string(output_nr_) + " of " +
              forward_op_name(*fn) + ",";
    }
    throw Error(detail::str_cat(
        messages::kModifiedByInplace,
        "[",
        legacy_type_name(data_.dtype()),
        " ",
        shape_str(data_.sizes()),
        "]",
        which,
        " is at version ",
        data_.version(),
        "; expected version ",
        saved_version_,
        " instead. ",
        messages::kAnomalyHint));
  }
  if (saved_original_) {
    return data_;
  }
  // Rebuild an output tensor: same data and version counter, history
  // (saved_for, output_nr).
  Tensor out = detach(data_);
  if (requires_grad_ && saved_for) {
    set_gradient_edge(out, Edge(saved_for, output_nr_));
  }
  return out;
}

void SavedVariable::reset_data() {
  data_ = Tensor();
  grad_accumulator_.reset();
}

}  // namespace npgrad::autograd
