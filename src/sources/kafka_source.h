// KafkaSource: a pipeline Source reading every partition of one Kafka topic
// with librdkafka (docs/kafka.md).
//
// Contract (on top of sources/source.h):
// - Partitions are found with a metadata query at Open() and are assigned
//   directly with rd_kafka_assign: no subscription, no consumer-group
//   rebalancing, and no offset commits to Kafka ever (enable.auto.commit and
//   enable.auto.offset.store are forced off). Positions live in the table.
// - Partition names are the decimal partition numbers: "0", "1", ...
// - A freshly opened source is positioned as after Seek({}): every partition at
//   its earliest retained offset.
// - Seek() to an offset below a partition's low watermark (deleted by retention)
//   or above its high watermark is kOutOfRange; a partition name the topic does
//   not have is kInvalidArgument.
// - Poll() returns kNotFound when the topic disappears, kOutOfRange when the
//   broker reports the fetch position out of range, and kIOError (retryable)
//   when no broker has been reachable for longer than
//   KafkaOptions::brokers_down_timeout_ms. Other client errors are transient
//   and retried by librdkafka. Errors other than brokers-down stick: every
//   later Poll() returns them until the next Seek().
// - Lag() uses the high watermarks cached from fetch responses (no broker
//   round trip), or those queried at the last Seek() when none arrived yet.
//
// Thread-safety: like every Source, one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "sources/source.h"

struct rd_kafka_s;  // rd_kafka_t from <librdkafka/rdkafka.h>

namespace sluice::sources {

struct KafkaOptions {
  std::string brokers;  // bootstrap.servers, "host:port[,host:port...]"
  std::string topic;
  std::string client_id = "sluice";
  // Extra librdkafka properties (security.protocol, sasl.*, fetch.*...), applied
  // after sluice's defaults. Values that would make the client commit offsets
  // to Kafka or skip lost records (enable.auto.commit, enable.auto.offset.store
  // other than false, auto.offset.reset other than error) are rejected.
  std::map<std::string, std::string> properties;
  int metadata_timeout_ms = 10000;  // Open(), Seek() watermark queries
  // Poll() fails when every broker has been down for longer than this.
  int brokers_down_timeout_ms = 30000;
};

class KafkaSource final : public Source {
 public:
  static Result<std::unique_ptr<KafkaSource>> Open(const KafkaOptions& options);
  ~KafkaSource() override;
  KafkaSource(const KafkaSource&) = delete;
  KafkaSource& operator=(const KafkaSource&) = delete;

  std::string Describe() const override;  // "kafka:<topic>@<brokers>"
  Status Seek(const Positions& positions) override;
  Result<int64_t> Poll(int64_t max_bytes, int timeout_ms,
                       const std::function<void(const SourceRecord&)>& sink) override;
  Positions CurrentPositions() const override;
  Positions Lag() const override;

  int partition_count() const { return static_cast<int>(names_.size()); }

 private:
  // Client-level events (error_cb), reported from inside rd_kafka_consumer_poll.
  struct ClientEvents;
  static void OnClientError(rd_kafka_s* rk, int err, const char* reason, void* opaque);

  KafkaSource(KafkaOptions options, rd_kafka_s* rk, std::unique_ptr<ClientEvents> events,
              int partitions);
  Result<std::pair<int64_t, int64_t>> QueryWatermarks(int partition) const;
  // Turns a consumer error event into a Status, or OK for transient errors.
  Status HandleError(int err, int partition, int64_t offset, const std::string& what);
  Status CheckBrokersDown();

  KafkaOptions options_;
  std::unique_ptr<ClientEvents> events_;  // the error_cb opaque; destroyed after rk_
  rd_kafka_s* rk_;
  std::vector<std::string> names_;  // partition -> "0", "1", ...
  std::vector<int64_t> next_;       // partition -> next offset to deliver
  std::vector<int64_t> seek_high_;  // partition -> high watermark at the last Seek
  Status error_;  // a non-transient consumer error: every Poll returns it until a Seek
};

// The factory the pipeline runner uses for `connector='kafka'`.
Result<std::unique_ptr<Source>> OpenKafkaSource(const KafkaOptions& options);

}  // namespace sluice::sources
