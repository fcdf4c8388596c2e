#include "npgrad/autograd/saved_variable_hooks.h"

#include <vector>

#include "npgrad/util/error.h"

namespace npgrad::autograd {

namespace {
// Per thread, like torch: work done in other threads does not see the hooks.
thread_local std::vector<SavedHooksFactory> stack;
thread_local std::optional<std::string> disabled_message;
}  // namespace

void SavedTensorDefaultHooks::push(SavedHooksFactory factory) {
  NPGRAD_CHECK(!disabled_message, *disabled_message);
  stack.push_back(std::move(factory));
}

void SavedTensorDefaultHooks::pop() {
  NPGRAD_INTERNAL_ASSERT(
      !stack.empty(), "pop of an empty saved tensors hooks stack");
  stack.pop_back();
}

std::unique_ptr<SavedVariableHooks> SavedTensorDefaultHooks::get() {
  if (disabled_message || stack.empty()) {
    return nullptr;
  }
  return stack.back()();
}

bool SavedTensorDefaultHooks::active() {
  return !disabled_message && !stack.empty();
}

void SavedTensorDefaultHooks::disable(const std::string& message) {
  disabled_message = message;
  NPGRAD_CHECK(stack.empty(), message);
}

void SavedTensorDefaultHooks::enable() {
  disabled_message.reset();
}

std::optional<std::string> SavedTensorDefaultHooks::disabled_error_message() {
  return disabled_message;
}

SavedTensorDefaultHooks::State SavedTensorDefaultHooks::get_state() {
  return State{stack, disabled_message};
}

void SavedTensorDefaultHooks::set_state(State state) {
  stack = std::move(state.stack);
  disabled_message = std::move(state.disabled_message);
}

}  // namespace npgrad::autograd
