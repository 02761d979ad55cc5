// A primary-key pipeline's key index kept across a clean restart
// (docs/state.md "The key index"): a spilled index is a RocksDB store of
// every key, which a start would otherwise rebuild from the state files (at
// 10 M keys, seconds of CPU). A clean stop keeps the store and writes beside
// it, in the pipeline's state folder, `keys-kept`:
//
//   u32 CRC-32C of the rest, u32 the header's length, the header (JSON:
//   {"format": 1, "property": the key index property's value the store is
//    the state of, "sizes": the bytes of each state file it names}), then
//   the index's manifest (PrimaryKeyIndex::Keep; it names the store's
//   RocksDB identity).
//
// The next start removes the file, durably, before anything else, and takes
// the store only when the table's property is still that value and of the
// checkpoint it resumes, and the store is the one the manifest names. So a
// store is taken once, and only as the kept state: a run that changes it and
// is then killed leaves no file, and the run after it rebuilds the store
// from the state files.
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

// The marker's own format: a binary that reads another refuses it. 2: the
// store compacts by levels (state/spill_store.cc, StoreOptions); a store
// kept as format 1 compacted universally, may read values its newer ones
// replaced, and is not taken.
constexpr int kKeptFormat = 2;

struct Kept {
  std::string property;
  std::vector<int64_t> sizes;
  std::string manifest;
};

std::string EncodeKept(const Kept& k) {
  nlohmann::json header = {{"format", kKeptFormat}, {"property", k.property}, {"sizes", k.sizes}};
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
    const int format = header.at("format").get<int>();
    if (format != kKeptFormat) {
      return corrupt(fmt::format("format {}, this sluice reads {}", format, kKeptFormat));
    }
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
  Kept k{it->second, key_state_.sizes(), {}};
  auto kept = keys_->Keep(&k.manifest);
  if (kept.ok() && !*kept) return;
  // (The index is emptied, and its store is the kept one's or gone: this
  // run must not go on, and make a store of its own in its place.)
  key_index_stale_ = true;
  if (checkpoint_failed_.ok()) {
    checkpoint_failed_ = Status::Internal(
        "pipeline {}: stopped: its key index was closed to be kept for the next run",
        options_.name);
  }
  Status st = kept.status();
  if (st.ok()) {
    KillPoint("pipeline.key_index_kept_store");
    st = MakeLocalFileIO()->WriteFile(KeptKeyIndexPath(), EncodeKept(k), /*overwrite=*/true);
  }
  if (!st.ok()) {
    fmt::print(stderr, "sluice: pipeline {}: the key index's store was not kept ({})\n",
               options_.name, st.ToString());
    std::error_code ec;
    std::filesystem::remove_all(KeySpillDir(), ec);
    return;
  }
  KillPoint("pipeline.after_key_index_kept");
}

Result<bool> Pipeline::ReopenKeptKeyIndex(const std::optional<CommittedCheckpoint>& committed) {
  const std::string path = KeptKeyIndexPath();
  auto local = MakeLocalFileIO();
  // (A write a kill cut short leaves its temporary file.)
  std::error_code ec;
  for (std::filesystem::directory_iterator it(options_.state_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().filename().string().rfind("keys-kept.tmp-", 0) == 0) {
      std::error_code ignored;
      std::filesystem::remove(it->path(), ignored);
    }
  }
  auto bytes = local->ReadFile(path);
  if (bytes.status().code() == StatusCode::kNotFound) return false;
  // (Removed whether it reads or not.)
  RETURN_IF_ERROR_CTX(local->Delete(path), "pipeline {}", options_.name);
  RETURN_IF_ERROR_CTX(SyncDirectory(options_.state_dir), "pipeline {}", options_.name);
  // (An unbounded budget keeps the index in memory, as a restore would.)
  if (!committed || StateMemoryShare() <= 0) return false;
  auto not_taken = [&](const Status& why) {
    fmt::print(stderr, "sluice: pipeline {}: the key index's kept store is not used ({})\n",
               options_.name, why.ToString());
    return false;
  };
  if (!bytes.ok()) return not_taken(bytes.status());
  auto kept = DecodeKept(path, *bytes);
  if (!kept.ok()) return not_taken(kept.status());
  // (Another checkpoint's or none: the table moved on, or was rolled back,
  // since the stop; the state files decide, as without a kept store.)
  auto saved = SavedKeyIndexProperty(*committed);
  if (!saved.ok() || !saved->has_value() || (*saved)->value != kept->property) return false;
  const std::vector<std::string>& files = (*saved)->property.files;
  if (kept->sizes.size() != files.size()) {
    return not_taken(Status::Corruption("{}: {} sizes for {} state files", path, kept->sizes.size(),
                                        files.size()));
  }
  Status st = keys_->Reopen(kept->manifest);
  if (!st.ok()) return not_taken(st);
  for (size_t i = 0; i < files.size(); ++i) key_state_.Add(files[i], kept->sizes[i]);
  indexed_snapshot_ = committed->snapshot_id;
  key_index_stale_ = false;
  stats_.key_index_reopens += 1;
  CountKeyIndex();
  return true;
}

}  // namespace sluice::pipeline
