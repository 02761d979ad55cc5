// Kill points: named places where a crash is interesting (a data file written
// but not committed, a metadata file written but not swapped, ...). Tests make
// the process die there on purpose, besides killing it at random moments.
// Fail points (below) make a call fail there instead.
//
// The environment variable SLUICE_KILL_POINT=NAME[:N] makes the N-th (default
// the first) hit of KillPoint("NAME") end the process with SIGKILL, as a
// `kill -9` would: no destructors, no flushing of user-space buffers. Without
// the variable a kill point costs one predictable branch.
//
// Names in use (docs/pipelines.md lists them with what each one tests):
//   pipeline.after_data_files   staged files closed, nothing committed
//   catalog.after_metadata      new metadata file written, pointer not swapped
//   catalog.before_swap         just before the catalog transaction
//   catalog.after_swap          committed, before the writer learns it
//   pipeline.after_commit       committed, journal not yet cleared
//   pipeline.mid_recovery       recovery deleted some staged files, not all
//   pipeline.key_index_kept_store, pipeline.after_key_index_kept
//                               a clean stop keeping the key index's store
//   maintenance.compact.before_commit  compaction's files written, not committed
//   maintenance.expire.before_delete   expiry committed, no file deleted yet
#pragma once

#include <atomic>
#include <string_view>

#include "common/status.h"

namespace sluice {

void KillPointSlow(std::string_view name);

namespace internal {
extern const bool kill_points_armed;
extern std::atomic<bool> fail_points_armed;
}  // namespace internal

inline void KillPoint(std::string_view name) {
  if (__builtin_expect(internal::kill_points_armed, 0)) KillPointSlow(name);
}

// Fail points: named places where an error that storage gives rarely, and
// never on cue, is made to happen, to prove what the caller does with it.
// SLUICE_FAIL_POINT=NAME[:N] (or ArmFailPoint in a test's process) makes the
// N-th (default the first) hit of FailPoint("NAME") return kIOError naming
// the point, once; every other hit returns OK. Unarmed, a fail point costs one
// predictable branch.
//
// Names in use:
//   key_index.commit   a primary-key index writing one key of a commit into
//                      its committed layer (a spill store's write)
//   pipeline.lane      a pipeline's lane taking a run of records (a lane
//                      error that no writer or index remembers)
//   window_stage.batch a windowed pipeline's window stage taking a batch
//   write_stage.batch  a windowed pipeline's write stage taking a batch of
//                      window rows (two lanes or more)
Status FailPointSlow(std::string_view name);
inline Status FailPoint(std::string_view name) {
  if (__builtin_expect(!internal::fail_points_armed.load(std::memory_order_relaxed), 1)) {
    return Status::OK();
  }
  return FailPointSlow(name);
}
// Arms `name` to fail on its `hit`-th hit from now (counting again), in place
// of any armed fail point; an empty name disarms.
void ArmFailPoint(std::string_view name, long hit = 1);

}  // namespace sluice
