// The native ops behind npgrad.nn.functional's normalizations and embedding,
// as private functions of _C (torch.native_layer_norm and its siblings):
// functional.py checks the Python-level arguments and calls these.
#include "npgrad/ops/normalization.h"

#include "npgrad/ops/attention.h"
#include "npgrad/ops/ops.h"

#include "bindings.h"

namespace npgrad::bindings {

using namespace py::literals;

void bind_normalization(py::module_& m) {
  m.def(
      "_native_layer_norm",
      [](const Tensor& input,
         const Shape& normalized_shape,
         const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias,
         double eps) {
        return ops::native_layer_norm(
            input,
            normalized_shape,
            weight.value_or(Tensor()),
            bias.value_or(Tensor()),
            eps);
      },
      "input"_a,
      "normalized_shape"_a,
      "weight"_a,
      "bias"_a,
      "eps"_a);
  m.def(
      "_native_group_norm",
      [](const Tensor& input,
         const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias,
         int64_t N,
         int64_t C,
         int64_t HxW,
         int64_t group,
         double eps) {
        return ops::native_group_norm(
            input,
            weight.value_or(Tensor()),
            bias.value_or(Tensor()),
            N,
            C,
            HxW,
            group,
            eps);
      },
      "input"_a,
      "weight"_a,
      "bias"_a,
      "N"_a,
      "C"_a,
      "HxW"_a,
      "group"_a,
      "eps"_a);
  m.def(
      "_native_batch_norm",
      [](const Tensor& input,
         const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias,
         const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var,
         bool training,
         double momentum,
         double eps) {
        return ops::native_batch_norm(
            input,
            weight.value_or(Tensor()),
            bias.value_or(Tensor()),
            running_mean.value_or(Tensor()),
            running_var.value_or(Tensor()),
            training,
            momentum,
            eps);
      },
      "input"_a,
      "weight"_a,
      "bias"_a,
      "running_mean"_a,
      "running_var"_a,
      "training"_a,
      "momentum"_a,
      "eps"_a);
  m.def("_add_scalar", &ops::add_scalar, "input"_a, "other"_a);
  m.def("_sub_scalar", &ops::sub_scalar, "input"_a, "other"_a);
  m.def(
      "_embedding",
      &ops::embedding,
      "weight"_a,
      "indices"_a,
      "padding_idx"_a,
      "scale_grad_by_freq"_a);
  m.def(
      "_embedding_bag",
      [](const Tensor& weight,
         const Tensor& indices,
         const Tensor& offsets,
         bool scale_grad_by_freq,
         int64_t mode,
         const std::optional<Tensor>& per_sample_weights,
         bool include_last_offset,
         int64_t padding_idx) {
        auto [out, offset2bag, bag_size, max_indices] = ops::embedding_bag(
            weight,
            indices,
            offsets,
            scale_grad_by_freq,
            mode,
            per_sample_weights.value_or(Tensor()),
            include_last_offset,
            padding_idx);
        return py::make_tuple(out, offset2bag, bag_size, max_indices);
      },
      "weight"_a,
      "indices"_a,
      "offsets"_a,
      "scale_grad_by_freq"_a,
      "mode"_a,
      "per_sample_weights"_a,
      "include_last_offset"_a,
      "padding_idx"_a);
  m.def(
      "_scaled_dot_product_flash_attention",
      [](const Tensor& query,
         const Tensor& key,
         const Tensor& value,
         const std::optional<Tensor>& attn_mask,
         bool is_causal,
         std::optional<double> scale) {
        return ops::scaled_dot_product_flash_attention(
            query, key, value, attn_mask.value_or(Tensor()), is_causal, scale);
      },
      "query"_a,
      "key"_a,
      "value"_a,
      "attn_mask"_a,
      "is_causal"_a,
      "scale"_a);
}

}  // namespace npgrad::bindings
