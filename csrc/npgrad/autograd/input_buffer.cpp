#include "npgrad/autograd/input_buffer.h"

#include "npgrad/autograd/grad_mode.h"
#include "npgrad/kernels/kernels.h"
#include "npgrad/ops/ops.h"

namespace npgrad::autograd {

void InputBuffer::add(std::size_t pos, Tensor&& var) {
  if (!var.defined()) {
    return;
  }
  Tensor& old = buffer_[pos];
  if (!old.defined()) {
    old = std::move(var);
    return;
  }
  // In place only when nobody else can see `old` and no graph is being
  // recorded; otherwise out of place (the sum may be differentiated).
  if (!GradMode::is_enabled() && old.sizes() == var.sizes() &&
      old.dtype() == var.dtype() && kernels::is_exclusively_owned(old)) {
    kernels::binary_out(kernels::Binary::Add, old, var, old);
    return;
  }
  old = ops::add(old, var);
}

}  // namespace npgrad::autograd
