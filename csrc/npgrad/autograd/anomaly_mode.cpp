#include "npgrad/autograd/anomaly_mode.h"

#include <atomic>

namespace npgrad::autograd {

namespace {
// Process-global, as in torch (not thread-local).
std::atomic<bool> enabled{false};
std::atomic<bool> check_nan_enabled{true};
AnomalyHandler* handler = nullptr;  // set once at module import
}  // namespace

bool AnomalyMode::is_enabled() {
  return enabled.load(std::memory_order_relaxed);
}
bool AnomalyMode::should_check_nan() {
  return check_nan_enabled.load(std::memory_order_relaxed);
}
void AnomalyMode::set_enabled(bool on, bool check_nan) {
  enabled = on;
  check_nan_enabled = check_nan;
}

void set_anomaly_handler(AnomalyHandler* h) {
  handler = h;
}
AnomalyHandler* anomaly_handler() {
  return handler;
}

}  // namespace npgrad::autograd
