// A primary-key pipeline's key index kept across a clean restart
// (docs/state.md "The key index"): a spilled index is a RocksDB store of
// every key, which a start would otherwise rebuild from the state files (at
// 10 M keys, seconds of CPU). A clean stop keeps the store and writes beside
// it, in the pipeline's state folder, `keys-kept`:
//
//   u32 CRC-32C of the rest, u32 the header's length, the header (JSON:
//   {"property": the key index property's value the store is the state of,
//    "sizes": the bytes of each state file it names}), then the index's
//   manifest (PrimaryKeyIndex::Keep).
//
// The next start removes the file, durably, before anything else, and takes
// the store only when the table's property is still that value and of the
// checkpoint it resumes. So a store is taken once, and only as the kept
// state: a run that changes it and is then killed leaves no file, and the
// run after it rebuilds the store from the state files.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/crc32c.h"
#include "common/endian.h"
#include "common/kill_point.h"
#include "io/file_io.h"
#include "io/posix.h"
#include "operators/primary_key_index.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

namespace {

constexpr char kKeptFile[] = "keys-kept";

struct Kept {
  std::string property;
  std::vector<int64_t> sizes;
  std::string manifest;
};

std::string EncodeKept(const Kept& k) {
  nlohmann::json header = {{"property", k.property}, {"sizes", k.sizes}};
  const std::string h = header.dump();
  std::string body;
  AppendLE<uint32_t>(&body, static_cast<uint32_t>(h.size()));
  body += h;
  body += k.manifest;
  std::string out;
  AppendLE<uint32_t>(&out, Crc32c(body));
  return out + body;
}

Result<Kept> DecodeKept(const std::string& path, std::string_view bytes) {
  auto corrupt = [&](std::string_view why) { return Status::Corruption("{}: {}", path, why); };
  if (bytes.size() < 8) return corrupt("truncated");
  std::string_view body = bytes.substr(4);
  if (LoadLE<uint32_t>(bytes.data()) != Crc32c(body)) return corrupt("checksum mismatch");
  const uint32_t n = LoadLE<uint32_t>(body.data());
  if (body.size() - 4 < n) return corrupt("truncated header");
  Kept k;
  try {
    auto header = nlohmann::json::parse(body.substr(4, n));
    k.property = header.at("property").get<std::string>();
    k.sizes = header.at("sizes").get<std::vector<int64_t>>();
  } catch (const nlohmann::json::exception& e) {
    return corrupt(e.what());
  }
  k.manifest.assign(body.substr(4 + n));
  return k;
}

}  // namespace

void Pipeline::KeepKeyIndex() {
  if (keys_ == nullptr || !keys_->spilled() || key_index_stale_ || !key_state_staged_.empty()) {
    return;
  }
  const iceberg::TableMetadata& md = table_->metadata();
  auto it = md.properties.find(state::KeyIndexProperty(options_.name));
  if (it == md.properties.end()) return;
  // (The property must name the files the index last saved: it is their
  // state that the store holds.)
  auto saved = state::StateProperty::Decode(it->first, it->second);
  if (!saved.ok() || saved->files != key_state_.files()) return;
  auto fail = [&](const Status& st) {
    fmt::print(stderr, "sluice: pipeline {}: the key index's store was not kept ({})\n",
               options_.name, st.ToString());
    std::error_code ec;
    std::filesystem::remove_all(options_.state_dir + "/keys-spill", ec);
  };
  Kept k{it->second, key_state_.sizes(), {}};
  auto kept = keys_->Keep(&k.manifest);
  if (kept.ok() && !*kept) return;
  key_index_stale_ = true;  // (emptied: a checkpoint after this loads it)
  if (!kept.ok()) return fail(kept.status());
  KillPoint("pipeline.key_index_kept_store");
  auto local = MakeLocalFileIO();
  Status st = local->WriteFile(options_.state_dir + "/" + kKeptFile, EncodeKept(k),
                               /*overwrite=*/true);
  if (!st.ok()) return fail(st);
  KillPoint("pipeline.after_key_index_kept");
}

Result<bool> Pipeline::ReopenKeptKeyIndex(const std::optional<CommittedCheckpoint>& committed) {
  const std::string path = options_.state_dir + "/" + kKeptFile;
  auto local = MakeLocalFileIO();
  auto bytes = local->ReadFile(path);
  if (bytes.status().code() == StatusCode::kNotFound) return false;
  // (Removed whether it reads or not.)
  RETURN_IF_ERROR_CTX(local->Delete(path), "pipeline {}", options_.name);
  RETURN_IF_ERROR_CTX(SyncDirectory(options_.state_dir), "pipeline {}", options_.name);
  if (!committed) return false;
  auto not_taken = [&](const Status& why) {
    fmt::print(stderr, "sluice: pipeline {}: the key index's kept store is not used ({})\n",
               options_.name, why.ToString());
    return false;
  };
  if (!bytes.ok()) return not_taken(bytes.status());
  auto kept = DecodeKept(path, *bytes);
  if (!kept.ok()) return not_taken(kept.status());
  auto saved = KeyIndexState(*committed);
  const iceberg::TableMetadata& md = table_->metadata();
  auto it = md.properties.find(state::KeyIndexProperty(options_.name));
  // (Another checkpoint's or none: the table moved on, or was rolled back,
  // since the stop; the state files decide, as without a kept store.)
  if (!saved.ok() || !saved->has_value() || it == md.properties.end() ||
      it->second != kept->property) {
    return false;
  }
  if (kept->sizes.size() != (*saved)->files.size()) {
    return not_taken(Status::Corruption("{}: {} sizes for {} state files", path, kept->sizes.size(),
                                        (*saved)->files.size()));
  }
  Status st = keys_->Reopen(kept->manifest);
  if (!st.ok()) return not_taken(st);
  for (size_t i = 0; i < kept->sizes.size(); ++i)
    key_state_.Add((*saved)->files[i], kept->sizes[i]);
  indexed_snapshot_ = committed->snapshot_id;
  key_index_stale_ = false;
  stats_.key_index_reopens += 1;
  CountKeyIndex();
  return true;
}

}  // namespace sluice::pipeline
