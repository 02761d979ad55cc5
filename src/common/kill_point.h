// Kill points: named places where a crash is interesting (a data file written
// but not committed, a metadata file written but not swapped, ...). Tests make
// the process die there on purpose, besides killing it at random moments.
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
//   maintenance.compact.before_commit  compaction's files written, not committed
//   maintenance.expire.before_delete   expiry committed, no file deleted yet
#pragma once

#include <string_view>

namespace sluice {

void KillPointSlow(std::string_view name);

namespace internal {
extern const bool kill_points_armed;
}

inline void KillPoint(std::string_view name) {
  if (__builtin_expect(internal::kill_points_armed, 0)) KillPointSlow(name);
}

}  // namespace sluice
