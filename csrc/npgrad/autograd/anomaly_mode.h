#pragma once
#include <string>

// Anomaly mode (torch/csrc/autograd/anomaly_mode.h): process-global flags.
// While on, every new node records the forward stack (through the handler
// the bindings install), an error in backward reports the stack of the node
// that failed, and, with check_nan, a node returning NaN is an error.

namespace npgrad::autograd {

class Node;

struct AnomalyMode {
  static bool is_enabled();
  static bool should_check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
};

/// Records and reports forward stacks; implemented with Python's traceback.
struct AnomalyHandler {
  virtual ~AnomalyHandler() = default;
  virtual void store_stack(Node& node) = 0;
  virtual void print_stack(Node& node) = 0;
  /// `File "x.py", line 12, in f`: the innermost Python frame outside the
  /// npgrad package (Note [Mutation provenance]); empty if there is none.
  virtual std::string user_frame() = 0;
};

void set_anomaly_handler(AnomalyHandler* handler);
AnomalyHandler* anomaly_handler();

}  // namespace npgrad::autograd
