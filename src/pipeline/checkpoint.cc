#include "pipeline/checkpoint.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace sluice::pipeline {
namespace {

Result<int64_t> ParseInt(const std::string& text, const std::string& what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return Status::Corruption("{} is '{}', not a non-negative integer", what, text);
  }
  return v;
}

}  // namespace

std::string EncodeOffsets(const SourceOffsets& offsets) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [source, parts] : offsets) {
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [partition, next] : parts) p[partition] = next;
    j[source] = std::move(p);
  }
  return j.dump();
}

Result<SourceOffsets> DecodeOffsets(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption("{} is not a JSON object: {}", kSummaryOffsets, text);
  }
  SourceOffsets out;
  for (const auto& [source, parts] : j.items()) {
    if (!parts.is_object()) {
      return Status::Corruption("{}: source {} does not map partitions to offsets", kSummaryOffsets,
                                source);
    }
    for (const auto& [partition, next] : parts.items()) {
      if (!next.is_number_integer() || next.get<int64_t>() < 0) {
        return Status::Corruption("{}: offset of {}/{} is {}", kSummaryOffsets, source, partition,
                                  next.dump());
      }
      out[source][partition] = next.get<int64_t>();
    }
  }
  return out;
}

std::string EncodeChangePositions(const ChangePositions& positions) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [partition, position] : positions) j[partition] = position;
  return j.dump();
}

Result<ChangePositions> DecodeChangePositions(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption("{} is not a JSON object: {}", kSummaryChangePositions, text);
  }
  ChangePositions out;
  for (const auto& [partition, position] : j.items()) {
    if (!position.is_string()) {
      return Status::Corruption("{}: position of partition {} is {}", kSummaryChangePositions,
                                partition, position.dump());
    }
    out[partition] = position.get<std::string>();
  }
  return out;
}

Result<std::optional<CommittedCheckpoint>> FindCheckpoint(const iceberg::TableMetadata& table,
                                                          const std::string& pipeline) {
  std::vector<const iceberg::Snapshot*> ancestry;
  if (table.current_snapshot_id) ancestry = table.Ancestry(*table.current_snapshot_id);
  for (const iceberg::Snapshot* s : ancestry) {
    auto it = s->summary.find(kSummaryPipeline);
    if (it == s->summary.end() || it->second != pipeline) continue;
    auto get = [&](const char* key) -> Result<std::string> {
      auto k = s->summary.find(key);
      if (k == s->summary.end()) return Status::Corruption("no {}", key);
      return k->second;
    };
    auto read = [&](CommittedCheckpoint* c) -> Status {
      c->snapshot_id = s->snapshot_id;
      ASSIGN_OR_RETURN(std::string epoch, get(kSummaryEpoch));
      ASSIGN_OR_RETURN(c->epoch, ParseInt(epoch, kSummaryEpoch));
      ASSIGN_OR_RETURN(std::string checkpoint, get(kSummaryCheckpoint));
      ASSIGN_OR_RETURN(c->checkpoint, ParseInt(checkpoint, kSummaryCheckpoint));
      ASSIGN_OR_RETURN(std::string offsets, get(kSummaryOffsets));
      ASSIGN_OR_RETURN(c->offsets, DecodeOffsets(offsets));
      if (auto k = s->summary.find(kSummaryChangePositions); k != s->summary.end()) {
        ASSIGN_OR_RETURN(c->change_positions, DecodeChangePositions(k->second));
      }
      return Status::OK();
    };
    CommittedCheckpoint c;
    RETURN_IF_ERROR_CTX(read(&c), "snapshot {} of pipeline {}", s->snapshot_id, pipeline);
    return std::optional<CommittedCheckpoint>(std::move(c));
  }
  auto prop = table.properties.find(CheckpointProperty(pipeline));
  if (prop == table.properties.end()) return std::optional<CommittedCheckpoint>();
  // The pipeline's snapshots are gone from the ancestry (expired): the
  // property, written by the same commits, still knows where it stopped.
  nlohmann::json j = nlohmann::json::parse(prop->second, nullptr, /*allow_exceptions=*/false);
  CommittedCheckpoint c;
  if (j.is_discarded() || !j.is_object() || !j.contains("epoch") || !j.contains("checkpoint") ||
      !j.contains("offsets") || !j["epoch"].is_number_integer() ||
      !j["checkpoint"].is_number_integer()) {
    return Status::Corruption("table property {} is not a checkpoint: {}",
                              CheckpointProperty(pipeline), prop->second);
  }
  c.epoch = j["epoch"].get<int64_t>();
  c.checkpoint = j["checkpoint"].get<int64_t>();
  auto offsets = DecodeOffsets(j["offsets"].dump());
  if (!offsets.ok()) {
    return offsets.status().WithContextF("table property {}", CheckpointProperty(pipeline));
  }
  c.offsets = std::move(*offsets);
  if (j.contains("change_positions")) {
    auto positions = DecodeChangePositions(j["change_positions"].dump());
    if (!positions.ok()) {
      return positions.status().WithContextF("table property {}", CheckpointProperty(pipeline));
    }
    c.change_positions = std::move(*positions);
  }
  return std::optional<CommittedCheckpoint>(std::move(c));
}

std::string CheckpointProperty(const std::string& pipeline) {
  return "sluice.checkpoint." + pipeline;
}

std::string EncodeCheckpointProperty(int64_t epoch, int64_t checkpoint,
                                     const SourceOffsets& offsets,
                                     const ChangePositions& change_positions) {
  nlohmann::json j;
  j["epoch"] = epoch;
  j["checkpoint"] = checkpoint;
  j["offsets"] = nlohmann::json::parse(EncodeOffsets(offsets));
  if (!change_positions.empty()) {
    j["change_positions"] = nlohmann::json::parse(EncodeChangePositions(change_positions));
  }
  return j.dump();
}

std::string EpochProperty(const std::string& pipeline) { return "sluice.epoch." + pipeline; }

Result<int64_t> CurrentEpoch(const iceberg::TableMetadata& table, const std::string& pipeline) {
  auto it = table.properties.find(EpochProperty(pipeline));
  if (it == table.properties.end()) return int64_t{0};
  return ParseInt(it->second, "table property " + EpochProperty(pipeline));
}

}  // namespace sluice::pipeline
