// LogSource: a pipeline source reading one stream's durable log (the log that
// HTTP ingest appends to). One partition, "0"; offsets are log offsets.
#pragma once

#include <memory>
#include <string>

#include "log/stream_log.h"
#include "sources/source.h"

namespace sluice::sources {

class LogSource : public Source {
 public:
  // `log` must outlive the source; `name` is the SQL source's name.
  LogSource(std::string name, log::StreamLog* log) : name_(std::move(name)), log_(log) {}

  std::string Describe() const override { return "log:" + name_; }
  Status Seek(const Positions& positions) override;
  Result<int64_t> Poll(int64_t max_bytes, int timeout_ms,
                       const std::function<void(const SourceRecord&)>& sink) override;
  Positions CurrentPositions() const override { return {{kPartition, next_}}; }
  Positions Lag() const override { return {{kPartition, log_->end_offset() - next_}}; }

  static inline const std::string kPartition = "0";

 private:
  std::string name_;
  log::StreamLog* log_;
  int64_t next_ = 0;
};

}  // namespace sluice::sources
