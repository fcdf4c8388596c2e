#include "npgrad/autograd/thread_local_state.h"

#include "npgrad/autograd/grad_mode.h"

namespace npgrad::autograd {

ThreadLocalState::ThreadLocalState()
    : grad_enabled_(GradMode::is_enabled()),
      saved_hooks_(SavedTensorDefaultHooks::get_state()),
      inplace_observer_(ops::get_inplace_observer()) {}

ThreadLocalState::Guard::Guard(ThreadLocalState state) {
  GradMode::set_enabled(state.grad_enabled_);
  SavedTensorDefaultHooks::set_state(std::move(state.saved_hooks_));
  ops::set_inplace_observer(std::move(state.inplace_observer_));
}

ThreadLocalState::Guard::~Guard() {
  GradMode::set_enabled(true);
  SavedTensorDefaultHooks::set_state({});
  ops::set_inplace_observer(nullptr);
}

}  // namespace npgrad::autograd
