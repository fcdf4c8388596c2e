#include "npgrad/autograd/nodes/embedding_bag_nodes.h"

#include "npgrad/util/error.h"

namespace npgrad::autograd {

void EmbeddingBagBackward0::compute(
    const variable_list& g, variable_list& out) {
  ops::EmbeddingBagSaved saved{
      indices_.unpack(),
      offsets_.unpack(),
      bag_size_.unpack(),
      max_indices_.unpack(),
      mode,
      padding_idx};
  Tensor psw = per_sample_weights_.unpack();
  if (should_compute_output(0)) {
    out[0] = ops::embedding_bag_backward(
        g[0], saved, psw, num_weights, weight_dtype, scale_grad_by_freq);
  }
  if (should_compute_output(1)) {
    out[1] = ops::embedding_bag_per_sample_weights_backward(
        g[0], weight_.unpack(), saved);
  }
}

void EmbeddingBagBackwardBackward0::compute(
    const variable_list&, variable_list&) {
  NPGRAD_CHECK_TYPED(
      NotImplementedError,
      false,
      "the derivative for '_embedding_bag_backward' is not implemented.");
}

}  // namespace npgrad::autograd
