#include "sources/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <mutex>
#include <string_view>
#include <utility>

#include "common/clock.h"

namespace sluice::sources {
namespace {

struct ConfDeleter {
  void operator()(rd_kafka_conf_t* c) const { rd_kafka_conf_destroy(c); }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

// Settings the exactly-once protocol depends on: a user property may repeat
// them but not change them.
constexpr std::pair<std::string_view, std::string_view> kForcedProperties[] = {
    {"enable.auto.commit", "false"},  // positions live in the table, never in Kafka
    {"enable.auto.offset.store", "false"},
    // A fetch position that is no longer retained must stop the pipeline,
    // never silently jump to another offset.
    {"auto.offset.reset", "error"},
};

bool ChangesForcedProperty(const std::string& key, const std::string& value) {
  for (const auto& [forced_key, forced_value] : kForcedProperties) {
    if (key == forced_key && value != forced_value) return true;
  }
  return false;
}

Status SetConf(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
  char errstr[512];
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
      RD_KAFKA_CONF_OK) {
    return Status::Invalid("kafka property '{}'='{}': {}", key, value, errstr);
  }
  return Status::OK();
}

Result<int> ParsePartitionName(const std::string& name) {
  int p = -1;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), p);
  if (name.empty() || ec != std::errc() || ptr != name.data() + name.size() || p < 0 ||
      std::to_string(p) != name) {  // "01" and "+1" would alias "1"
    return Status::Invalid("partition '{}' is not a Kafka partition number", name);
  }
  return p;
}

}  // namespace

struct KafkaSource::ClientEvents {
  std::string what;  // Describe()
  std::mutex mu;
  int64_t brokers_down_since_ms = -1;  // steady clock; -1 while some broker is up
  Status error;                        // fatal or authentication failure
};

// error_cb: librdkafka reports client-level errors here, not as messages.
void KafkaSource::OnClientError(rd_kafka_s* rk, int err, const char* reason, void* opaque) {
  auto* events = static_cast<ClientEvents*>(opaque);
  std::lock_guard<std::mutex> lock(events->mu);
  switch (err) {
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
      if (events->brokers_down_since_ms < 0) events->brokers_down_since_ms = MonotonicMillis();
      break;
    case RD_KAFKA_RESP_ERR__FATAL: {
      char fatal[512];
      rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
      if (events->error.ok()) {
        events->error = Status::IOError("{}: fatal client error: {}", events->what, fatal);
      }
      break;
    }
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
      if (events->error.ok()) {
        events->error = Status::Invalid("{}: authentication failed: {}", events->what, reason);
      }
      break;
    default: break;  // transport and resolve errors: librdkafka retries by itself
  }
}

KafkaSource::KafkaSource(KafkaOptions options, rd_kafka_s* rk, std::unique_ptr<ClientEvents> events,
                         int partitions)
    : options_(std::move(options)),
      events_(std::move(events)),
      rk_(rk),
      next_(partitions, 0),
      seek_high_(partitions, 0) {
  names_.reserve(partitions);
  for (int p = 0; p < partitions; ++p) names_.push_back(std::to_string(p));
}

KafkaSource::~KafkaSource() {
  // Never commits: auto commit is off and there is no subscription to leave.
  rd_kafka_consumer_close(rk_);
  rd_kafka_destroy(rk_);
}

std::string KafkaSource::Describe() const {
  return "kafka:" + options_.topic + "@" + options_.brokers;
}

Result<std::unique_ptr<KafkaSource>> KafkaSource::Open(const KafkaOptions& options) {
  const std::string what = "kafka:" + options.topic + "@" + options.brokers;
  if (options.brokers.empty()) return Status::Invalid("{}: no brokers given", what);
  if (options.topic.empty()) return Status::Invalid("{}: no topic given", what);

  std::unique_ptr<rd_kafka_conf_t, ConfDeleter> conf(rd_kafka_conf_new());
  const std::pair<const char*, std::string> defaults[] = {
      {"bootstrap.servers", options.brokers},
      {"client.id", options.client_id},
      // assign() needs a group handle; the group never joins, commits or rebalances.
      {"group.id", "sluice-" + options.client_id},
      {"enable.partition.eof", "false"},
      {"allow.auto.create.topics", "false"},
  };
  for (const auto& [key, value] : defaults) {
    RETURN_IF_ERROR_CTX(SetConf(conf.get(), key, value), "{}", what);
  }
  for (const auto& [key, value] : kForcedProperties) {
    RETURN_IF_ERROR_CTX(SetConf(conf.get(), std::string(key), std::string(value)), "{}", what);
  }
  for (const auto& [key, value] : options.properties) {
    if (ChangesForcedProperty(key, value)) {
      return Status::Invalid(
          "{}: kafka property '{}'='{}' is not allowed: sluice keeps positions in the table, "
          "never commits offsets to Kafka and never skips records it lost",
          what, key, value);
    }
    RETURN_IF_ERROR_CTX(SetConf(conf.get(), key, value), "{}", what);
  }

  auto events = std::make_unique<ClientEvents>();
  events->what = what;
  rd_kafka_conf_set_error_cb(conf.get(), OnClientError);
  rd_kafka_conf_set_opaque(conf.get(), events.get());

  char errstr[512];
  std::unique_ptr<rd_kafka_t, HandleDeleter> rk(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr, sizeof(errstr)));
  if (rk == nullptr) return Status::Invalid("{}: creating the consumer: {}", what, errstr);
  conf.release();  // owned by rk now
  rd_kafka_poll_set_consumer(rk.get());

  // All topics: a request naming the topic could auto-create it on brokers
  // older than the client's first ApiVersion exchange (and on the mock).
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk.get(), 1, nullptr, &md, options.metadata_timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status(StatusCode::kIOError,
                  fmt::format("{}: metadata request for topic '{}' failed: {}", what, options.topic,
                              rd_kafka_err2str(err)),
                  /*retryable=*/true);
  }
  std::unique_ptr<const rd_kafka_metadata_t, void (*)(const rd_kafka_metadata_t*)> md_guard(
      md, rd_kafka_metadata_destroy);
  const rd_kafka_metadata_topic_t* t = nullptr;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (options.topic == md->topics[i].topic) t = &md->topics[i];
  }
  if (t == nullptr || t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
      (t->err == RD_KAFKA_RESP_ERR_NO_ERROR && t->partition_cnt == 0)) {
    return Status::NotFound("{}: topic '{}' does not exist", what, options.topic);
  }
  if (t->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status(StatusCode::kIOError,
                  fmt::format("{}: metadata for topic '{}': {}", what, options.topic,
                              rd_kafka_err2str(t->err)),
                  /*retryable=*/true);
  }
  int partitions = 0;
  for (int i = 0; i < t->partition_cnt; ++i) {
    partitions = std::max(partitions, t->partitions[i].id + 1);
  }
  if (partitions != t->partition_cnt) {
    return Status::Internal("{}: topic '{}' has {} partitions with ids up to {}", what,
                            options.topic, t->partition_cnt, partitions - 1);
  }
  md_guard.reset();

  std::unique_ptr<KafkaSource> source(
      new KafkaSource(options, rk.release(), std::move(events), partitions));
  RETURN_IF_ERROR(source->Seek({}));
  return source;
}

Result<std::pair<int64_t, int64_t>> KafkaSource::QueryWatermarks(int partition) const {
  int64_t low = 0;
  int64_t high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk_, options_.topic.c_str(), partition, &low, &high, options_.metadata_timeout_ms);
  if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
    return Status::NotFound("{}: topic '{}' partition {} does not exist", Describe(),
                            options_.topic, partition);
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status(StatusCode::kIOError,
                  fmt::format("{}: watermarks of topic '{}' partition {}: {}", Describe(),
                              options_.topic, partition, rd_kafka_err2str(err)),
                  /*retryable=*/true);
  }
  return std::make_pair(low, high);
}

Status KafkaSource::Seek(const Positions& positions) {
  std::vector<int64_t> wanted(names_.size(), RD_KAFKA_OFFSET_BEGINNING);
  for (const auto& [name, offset] : positions) {
    Result<int> parsed = ParsePartitionName(name);
    if (!parsed.ok()) return parsed.status().WithContextF("{}: seek", Describe());
    const int p = *parsed;
    if (p >= partition_count()) {
      return Status::Invalid("{}: seek: topic '{}' has no partition {} (it has {})", Describe(),
                             options_.topic, name, partition_count());
    }
    if (offset < 0) {
      return Status::Invalid("{}: seek: negative offset {} for partition {}", Describe(), offset,
                             name);
    }
    wanted[p] = offset;
  }

  std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter> list(
      rd_kafka_topic_partition_list_new(partition_count()));
  std::vector<int64_t> next(names_.size());
  std::vector<int64_t> high(names_.size());
  for (int p = 0; p < partition_count(); ++p) {
    ASSIGN_OR_RETURN(auto marks, QueryWatermarks(p));
    auto [low, hi] = marks;
    if (wanted[p] != RD_KAFKA_OFFSET_BEGINNING && wanted[p] < low) {
      return Status::OutOfRange(
          "{}: topic '{}' partition {}: position {} is no longer retained (earliest offset is "
          "{}): records {}..{} were deleted by retention",
          Describe(), options_.topic, p, wanted[p], low, wanted[p], low - 1);
    }
    if (wanted[p] > hi) {
      return Status::OutOfRange(
          "{}: topic '{}' partition {}: position {} is beyond the end of the partition (next "
          "offset {}); was the topic recreated?",
          Describe(), options_.topic, p, wanted[p], hi);
    }
    next[p] = wanted[p] == RD_KAFKA_OFFSET_BEGINNING ? low : wanted[p];
    high[p] = hi;
    rd_kafka_topic_partition_list_add(list.get(), options_.topic.c_str(), p)->offset = wanted[p];
  }

  // Drop the old assignment (and with it every message fetched for it) first.
  rd_kafka_resp_err_t err = rd_kafka_assign(rk_, nullptr);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) err = rd_kafka_assign(rk_, list.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IOError("{}: assign: {}", Describe(), rd_kafka_err2str(err));
  }
  next_ = std::move(next);
  seek_high_ = std::move(high);
  error_ = Status::OK();
  return Status::OK();
}

Status KafkaSource::HandleError(int err_code, int partition, int64_t offset,
                                const std::string& what) {
  auto err = static_cast<rd_kafka_resp_err_t>(err_code);
  switch (err) {
    case RD_KAFKA_RESP_ERR__PARTITION_EOF: return Status::OK();
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      return Status::OutOfRange(
          "{}: topic '{}' partition {}: fetch position {} is out of range (deleted by "
          "retention?): {}",
          Describe(), options_.topic, partition, offset, what);
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return Status::NotFound("{}: topic '{}' partition {}: {}", Describe(), options_.topic,
                              partition, what);
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
      return Status::Invalid("{}: topic '{}': not authorized: {}", Describe(), options_.topic,
                             what);
    case RD_KAFKA_RESP_ERR__FATAL: {
      char reason[512];
      rd_kafka_fatal_error(rk_, reason, sizeof(reason));
      return Status::IOError("{}: fatal client error: {}", Describe(), reason);
    }
    default: return Status::OK();  // transient: librdkafka retries by itself
  }
}

Status KafkaSource::CheckBrokersDown() {
  {
    std::lock_guard<std::mutex> lock(events_->mu);
    if (events_->brokers_down_since_ms < 0 ||
        MonotonicMillis() - events_->brokers_down_since_ms <= options_.brokers_down_timeout_ms) {
      return Status::OK();
    }
  }
  // Brokers coming back produce no event: ask one before giving up. (All
  // topics, so that the request can never auto-create a deleted topic.)
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 1, nullptr, &md, 1000);
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(md);
    std::lock_guard<std::mutex> lock(events_->mu);
    events_->brokers_down_since_ms = -1;
    return Status::OK();
  }
  return Status(
      StatusCode::kIOError,
      fmt::format("{}: topic '{}': all brokers down for more than {} ms ({})", Describe(),
                  options_.topic, options_.brokers_down_timeout_ms, rd_kafka_err2str(err)),
      /*retryable=*/true);
}

Result<int64_t> KafkaSource::Poll(int64_t max_bytes, int timeout_ms,
                                  const std::function<void(const SourceRecord&)>& sink) {
  if (!error_.ok()) return error_;
  const int64_t deadline = MonotonicMillis() + std::max(timeout_ms, 0);
  int64_t delivered = 0;
  int64_t bytes = 0;
  while (delivered == 0 || bytes < max_bytes) {
    int wait = 0;
    if (delivered == 0) wait = static_cast<int>(std::max<int64_t>(deadline - MonotonicMillis(), 0));
    std::unique_ptr<rd_kafka_message_t, MessageDeleter> m(rd_kafka_consumer_poll(rk_, wait));
    {
      std::lock_guard<std::mutex> lock(events_->mu);
      if (m != nullptr && m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        events_->brokers_down_since_ms = -1;
      }
      if (!events_->error.ok()) error_ = events_->error;
    }
    if (!error_.ok()) {
      if (delivered > 0) break;
      return error_;
    }
    if (m == nullptr) {
      if (delivered > 0 || MonotonicMillis() >= deadline) break;
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      error_ = HandleError(m->err, m->partition, m->offset, rd_kafka_message_errstr(m.get()));
      if (error_.ok()) continue;
      if (delivered > 0) break;  // report what was delivered; the error comes next time
      return error_;
    }
    const int p = m->partition;
    if (p < 0 || p >= partition_count()) continue;  // not assigned by us
    if (m->offset < next_[p]) continue;             // already delivered: never twice
    rd_kafka_timestamp_type_t ts_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    int64_t ts = rd_kafka_message_timestamp(m.get(), &ts_type);
    if (ts_type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE || ts < 0) ts = WallMillis();
    SourceRecord record{names_[p], m->offset, ts,
                        std::string_view(static_cast<const char*>(m->payload), m->len)};
    if (m->key != nullptr) {
      record.key = std::string_view(static_cast<const char*>(m->key), m->key_len);
    }
    record.has_value = m->payload != nullptr;
    sink(record);
    next_[p] = m->offset + 1;
    bytes += static_cast<int64_t>(m->len + m->key_len);
    ++delivered;
  }
  if (delivered == 0) RETURN_IF_ERROR(CheckBrokersDown());
  return delivered;
}

Positions KafkaSource::CurrentPositions() const {
  Positions out;
  for (int p = 0; p < partition_count(); ++p) out[names_[p]] = next_[p];
  return out;
}

Positions KafkaSource::Lag() const {
  Positions out;
  for (int p = 0; p < partition_count(); ++p) {
    int64_t low = 0;
    int64_t high = -1;
    if (rd_kafka_get_watermark_offsets(rk_, options_.topic.c_str(), p, &low, &high) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      high = -1;
    }
    high = std::max(high, seek_high_[p]);
    out[names_[p]] = std::max<int64_t>(high - next_[p], 0);
  }
  return out;
}

Result<std::unique_ptr<Source>> OpenKafkaSource(const KafkaOptions& options) {
  ASSIGN_OR_RETURN(auto source, KafkaSource::Open(options));
  return std::unique_ptr<Source>(std::move(source));
}

}  // namespace sluice::sources
