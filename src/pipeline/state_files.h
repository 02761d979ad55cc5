// StateFileChain: the files one kind of a pipeline's state is checkpointed
// in, a base and the deltas after it, from checkpoint to checkpoint
// (docs/state.md): whether the next file must be a base, the list the
// checkpoint's commit references, and the files that commit retires.
//
// A checkpoint stages its file (or none, when nothing changed); if its
// commit succeeds, Commit() makes the staged list the committed one and
// returns the files no checkpoint refers to any more (to delete); if it
// fails, the next Stage replaces the staged list.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::pipeline {

class StateFileChain {
 public:
  // A base is written again once the deltas since the last one hold as many
  // bytes as it (so a checkpoint writes at most about twice what changed,
  // amortized, however large the state), or once there are this many of
  // them (a restore reads at most this many files after the base).
  static constexpr size_t kMaxDeltas = 32;

  // Forgets every file (no state committed yet).
  void Clear();
  // A committed file, in order (while restoring).
  void Add(std::string path, int64_t bytes);
  bool NextIsBase() const;
  // The checkpoint being taken wrote `path` (`bytes` long; a base when
  // `base`), or nothing (Stage()): the files its commit must reference.
  const std::vector<std::string>& Stage(std::string path, int64_t bytes, bool base);
  const std::vector<std::string>& Stage();
  // The staged files are committed; the files the commit retired.
  std::vector<std::string> Commit();

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  std::vector<std::string> files_, staged_files_;  // base first
  std::vector<int64_t> sizes_, staged_sizes_;
};

// `<table location>/state/<pipeline>/<epoch>-<checkpoint>-<kind>.state`,
// kind `prefix` + "base" or "delta".
std::string StateFilePath(std::string_view location, std::string_view pipeline, int64_t epoch,
                          int64_t checkpoint, std::string_view prefix, bool base);

}  // namespace sluice::pipeline
