#include "pipeline/state_files.h"

#include <fmt/format.h>

#include <algorithm>

namespace sluice::pipeline {

void StateFileChain::Clear() {
  files_.clear();
  sizes_.clear();
  staged_files_.clear();
  staged_sizes_.clear();
}

void StateFileChain::Add(std::string path, int64_t bytes) {
  files_.push_back(std::move(path));
  sizes_.push_back(bytes);
}

bool StateFileChain::NextIsBase() const {
  int64_t delta_bytes = 0;
  for (size_t i = 1; i < sizes_.size(); ++i) delta_bytes += sizes_[i];
  return files_.empty() || files_.size() > kMaxDeltas || delta_bytes >= sizes_[0];
}

const std::vector<std::string>& StateFileChain::Stage(std::string path, int64_t bytes, bool base) {
  staged_files_ = base ? std::vector<std::string>{} : files_;
  staged_sizes_ = base ? std::vector<int64_t>{} : sizes_;
  staged_files_.push_back(std::move(path));
  staged_sizes_.push_back(bytes);
  return staged_files_;
}

const std::vector<std::string>& StateFileChain::Stage() {
  staged_files_ = files_;
  staged_sizes_ = sizes_;
  return staged_files_;
}

std::vector<std::string> StateFileChain::Commit() {
  std::vector<std::string> retired;
  for (const std::string& f : files_) {
    if (std::find(staged_files_.begin(), staged_files_.end(), f) == staged_files_.end()) {
      retired.push_back(f);
    }
  }
  files_ = std::move(staged_files_);
  sizes_ = std::move(staged_sizes_);
  staged_files_.clear();
  staged_sizes_.clear();
  return retired;
}

std::string StateFilePath(std::string_view location, std::string_view pipeline, int64_t epoch,
                          int64_t checkpoint, std::string_view prefix, bool base) {
  return fmt::format("{}/state/{}/{:06d}-{:08d}-{}{}.state", location, pipeline, epoch, checkpoint,
                     prefix, base ? "base" : "delta");
}

}  // namespace sluice::pipeline
