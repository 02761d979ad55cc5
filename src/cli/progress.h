// Progress of long CLI work on stderr: "\r<what>: 1,200,000 rows (850,000 rows/s)",
// redrawn at most twice a second, finished with a newline. Shown only when
// stderr is a terminal (or when forced), so scripts and logs stay clean.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace sluice::cli {

class Progress {
 public:
  explicit Progress(std::string what, bool force = false)
      : what_(std::move(what)), enabled_(force || ::isatty(2) == 1) {}
  ~Progress() { Finish(); }

  void Add(int64_t rows) {
    rows_ += rows;
    if (!enabled_) return;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    Draw();
  }
  void Finish() {
    if (!enabled_ || finished_) return;
    finished_ = true;
    if (rows_ > 0) {
      Draw();
      std::fputc('\n', stderr);
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  void Draw() {
    double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    std::fprintf(stderr, "\r%s: %lld rows (%.0f rows/s)", what_.c_str(),
                 static_cast<long long>(rows_), secs > 0 ? rows_ / secs : 0.0);
    std::fflush(stderr);
  }

  std::string what_;
  bool enabled_;
  bool finished_ = false;
  int64_t rows_ = 0;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace sluice::cli
