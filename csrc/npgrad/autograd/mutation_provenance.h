#pragma once
// Note [Mutation provenance]
// npgrad's addition to torch's "modified by an inplace operation" error
// (torch has none; it is a common question, torch issue #15803): under
// anomaly mode every version bump of the mutation path also records, in the
// storage's version counter (shared by all aliases), the op ("add_",
// "__setitem__", "copy_") and the user's frame that called it (the innermost
// Python frame outside the npgrad package, through the anomaly handler, which
// already captures forward stacks for nodes). A saved tensor that refuses to
// unpack then appends, after torch's unchanged message,
//   The tensor was modified in place by add_ at File "x.py", line 12, in f
// naming the first write after the save (the one that broke it) and how many
// followed. With anomaly mode off nothing is recorded (the one cost is a
// branch per bump), so the message is torch's. Only the last
// kMutationRecords writes per storage are kept; when the first write after
// the save is no longer among them, the earliest one kept is named as such.
// What does not bump the version records nothing, as in torch: detach_(),
// `.data =`, and writes outside npgrad (through t.numpy()).

#include <cstdint>
#include <string>

#include "npgrad/tensor/tensor.h"

namespace npgrad::autograd {

/// Writes kept per storage under anomaly mode.
inline constexpr std::size_t kMutationRecords = 32;

/// Bumps t's version (the mutation path's step (4)); under anomaly mode also
/// records `op` and the user's frame.
void bump_version(const Tensor& t, const char* op);

/// The sentence appended to the "modified by an inplace operation" error for
/// a tensor saved at `saved_version`; empty when no write was recorded.
std::string mutation_provenance(
    const VersionCounter& counter, uint32_t saved_version);

/// Names the writes made in its scope on this thread `op` whatever op makes
/// them: `t[i] = v` writes through index_put_, copy_ or fill_, and the user
/// wrote __setitem__.
class MutationOpScope {
 public:
  explicit MutationOpScope(const char* op);
  ~MutationOpScope();
  MutationOpScope(const MutationOpScope&) = delete;
  MutationOpScope& operator=(const MutationOpScope&) = delete;

 private:
  const char* previous_;
};

}  // namespace npgrad::autograd
