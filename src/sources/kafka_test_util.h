// Helpers for the Kafka source tests: an in-process librdkafka mock cluster, a
// producer that writes records to chosen partitions and waits for every ack,
// the standalone mock program as a child process, and a reader that drains a
// Source into a list of records.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sources/source.h"

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace sluice::sources::testing {

// A mock Kafka cluster living in this process (its brokers listen on random
// local ports).
class MockCluster {
 public:
  static Result<std::unique_ptr<MockCluster>> Start(int brokers = 3);
  ~MockCluster();
  Status CreateTopic(const std::string& name, int partitions);
  // Takes every broker down (or up again): connections are refused.
  Status SetAllBrokersUp(bool up);
  const std::string& bootstraps() const { return bootstraps_; }

 private:
  MockCluster(rd_kafka_s* rk, rd_kafka_mock_cluster_s* mc, int brokers);
  rd_kafka_s* rk_;
  rd_kafka_mock_cluster_s* mc_;
  int brokers_;
  std::string bootstraps_;
};

// Produces (partition, value) pairs in order with acks=all, one batch per
// call unless `flush_each` (one broker message set per record), and fails
// unless every record was acknowledged.
Status Produce(const std::string& bootstraps, const std::string& topic,
               const std::vector<std::pair<int, std::string>>& records, bool flush_each = false);

// One delivered record, copied out of the sink callback.
struct Got {
  std::string partition;
  int64_t offset;
  int64_t timestamp_ms;
  std::string value;
};

// Polls `source` (max_bytes per call) until `want` records arrived or
// `deadline_ms` passed; then polls `quiet_ms` longer to catch extra records.
Result<std::vector<Got>> Drain(Source& source, size_t want, int64_t max_bytes = 1 << 20,
                               int deadline_ms = 20000, int quiet_ms = 300);

// A child process whose stdout is readable line by line.
class Child {
 public:
  static Result<std::unique_ptr<Child>> Spawn(const std::vector<std::string>& argv);
  ~Child();  // SIGKILLs the child if it still runs
  Result<std::string> ReadLine();
  // Sends SIGTERM and returns the exit status (as from waitpid).
  Result<int> Terminate();

 private:
  Child(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  pid_t pid_;
  int fd_;
};

// True when `program` is found on $PATH.
bool OnPath(const std::string& program);

}  // namespace sluice::sources::testing
