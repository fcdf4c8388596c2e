#include "npgrad/autograd/nodes/upsample_nodes.h"

namespace npgrad::autograd {

void UpsampleNode::visit_args(SavedAttributeVisitor& v) {
  if (args.mode == ops::UpsampleMode::Linear) {
    v.boolean("_saved_align_corners", args.align_corners);
  }
  v.int_list("_saved_output_size", args.output_size);
  auto scale = [&](const char* name, const std::optional<double>& s) {
    if (s) {
      v.real(name, *s);
    } else {
      v.none(name);
    }
  };
  if (args.scales.size() == 1) {
    scale("_saved_scales", args.scales[0]);
  } else {
    scale("_saved_scales_h", args.scales[0]);
    scale("_saved_scales_w", args.scales[1]);
  }
}

void UpsampleBackwardNode::compute(const variable_list& g, variable_list& out) {
  out[0] = ops::upsample_backward(g[0], args, self_sizes);
}

void UpsampleBackwardBackwardNode::compute(
    const variable_list& g, variable_list& out) {
  out[0] = ops::upsample(g[0], args);
}

}  // namespace npgrad::autograd
