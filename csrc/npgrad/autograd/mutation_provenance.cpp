#include "npgrad/autograd/mutation_provenance.h"

#include <mutex>

#include "npgrad/autograd/anomaly_mode.h"

namespace npgrad::autograd {

namespace {
// Guards every counter's `mutations` (anomaly mode only; contention there
// is no concern).
std::mutex records_mutex;
thread_local const char* scope_op = nullptr;

void record_mutation(const Tensor& t, const char* op) {
  AnomalyHandler* handler = anomaly_handler();
  std::string where = handler ? handler->user_frame() : std::string();
  VersionCounter& counter = *t.impl()->version_counter;
  std::lock_guard<std::mutex> lock(records_mutex);
  if (!counter.mutations) {
    counter.mutations = std::make_unique<std::vector<MutationRecord>>();
  }
  auto& records = *counter.mutations;
  if (records.size() == kMutationRecords) {
    records.erase(records.begin());
  }
  records.push_back(MutationRecord{
      counter.version.load(),
      scope_op ? scope_op : (op ? op : "an in-place op"),
      std::move(where)});
}
}  // namespace

void bump_version(const Tensor& t, const char* op) {
  t.bump_version();
  if (AnomalyMode::is_enabled()) {
    record_mutation(t, op);
  }
}

std::string mutation_provenance(
    const VersionCounter& counter, uint32_t saved_version) {
  std::lock_guard<std::mutex> lock(records_mutex);
  if (!counter.mutations) {
    return {};
  }
  const MutationRecord* first = nullptr;
  for (const MutationRecord& r : *counter.mutations) {
    if (r.version > saved_version && (!first || r.version < first->version)) {
      first = &r;
    }
  }
  if (!first) {
    return {};
  }
  std::string where = first->where.empty() ? "" : " at " + first->where;
  const uint32_t writes = counter.version.load() - saved_version;
  if (first->version != saved_version + 1) {
    return "\nThe earliest in-place write recorded since the tensor was saved "
           "(older ones were not recorded) was " +
           first->op + where;
  }
  std::string out =
      "\nThe tensor was modified in place by " + first->op + where;
  if (writes > 1) {
    out += " (the first of " + std::to_string(writes) +
           " in-place writes since it was saved)";
  }
  return out;
}

MutationOpScope::MutationOpScope(const char* op) : previous_(scope_op) {
  scope_op = op;
}

MutationOpScope::~MutationOpScope() {
  scope_op = previous_;
}

}  // namespace npgrad::autograd
