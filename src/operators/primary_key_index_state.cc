// PrimaryKeyIndex's state files (docs/state.md "The key index"):
//
//   u32 magic "SLK1", u8 kind (0 base, 1 delta), then records framed as
//   state/state_stream.h frames them:
//     1 file:  u32 id, the path (the rest of the body); ids are the file's own
//     2 row:   u32 file id, i64 position, the key: the key's only row
//     3 extra: u32 file id, i64 position, the key: one more row of a key a
//              row record of the same file gave (a key another engine wrote
//              twice; bases only)
//     4 gone:  the key: it has no row
//   and the end (tag 0). A file record precedes the first record that names
//   its id.
//
// and what Keep leaves beside a kept store for Reopen (a local file of the
// pipeline's, never in the warehouse):
//
//   u32 magic "SLKK", u64 the committed keys, u32 the file ids (one past the
//   highest), u32 length + the store's RocksDB identity, then records framed
//   likewise:
//     1 file:  u32 id, i64 the committed keys whose row is in it, the path;
//              each file a committed row or a duplicate is in, by id (the
//              ids of others are gaps: the store's values hold ids)
//     3 extra: u32 file id, i64 position, the key: a duplicate row
//   and the end (tag 0).
#include <algorithm>

#include "operators/bytes.h"
#include "operators/primary_key_index.h"

namespace sluice::operators {

namespace {

using internal::Get;
using internal::kFullState;
using internal::kStateDelta;
using internal::Put;
using state::StateReader;
using state::StateWriter;

constexpr uint32_t kKeysMagic = 0x314B4C53;  // "SLK1"
constexpr uint32_t kKeptMagic = 0x4B4B4C53;  // "SLKK"
// Keep keeps an index whose file ids are mostly gaps only below this many.
constexpr size_t kKeptFileIdsWithoutGaps = 4096;
constexpr uint8_t kFileTag = 1, kRowTag = 2, kExtraTag = 3, kGoneTag = 4;
constexpr char kWhat[] = "key index state";

// Numbers the index's files as a state file names them: in the order the
// file first needs them, each announced by a file record.
class FileNumbers {
 public:
  explicit FileNumbers(const PrimaryKeyIndex& index) : index_(index) {}
  uint32_t Of(uint32_t file, std::string* out) {
    if (file >= ids_.size()) ids_.resize(file + 1, kNone);
    if (ids_[file] == kNone) {
      ids_[file] = next_++;
      size_t at = state::BeginRecord(out, kFileTag);
      Put<uint32_t>(out, ids_[file]);
      out->append(index_.FilePath(file));
      state::EndRecord(out, at);
    }
    return ids_[file];
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  const PrimaryKeyIndex& index_;
  std::vector<uint32_t> ids_;
  uint32_t next_ = 0;
};

void PutRow(std::string* out, uint8_t tag, uint32_t file, int64_t pos, std::string_view key) {
  size_t at = state::BeginRecord(out, tag);
  Put<uint32_t>(out, file);
  Put<int64_t>(out, pos);
  out->append(key);
  state::EndRecord(out, at);
}

void PutGone(std::string* out, std::string_view key) {
  size_t at = state::BeginRecord(out, kGoneTag);
  out->append(key);
  state::EndRecord(out, at);
}

}  // namespace

Status PrimaryKeyIndex::WriteState(bool full, StateWriter* out) const {
  if (!full && unsaved_all_) {
    return Status::Internal("{}: a delta cannot follow a rebuilt index", kWhat);
  }
  std::string* buf = out->buffer();
  Put<uint32_t>(buf, kKeysMagic);
  Put<uint8_t>(buf, full ? kFullState : kStateDelta);
  FileNumbers numbers(*this);
  // A committed key the pending changes leave alone: its row and any extra.
  auto put_rows = [&](std::string_view key, RowLocation at) {
    PutRow(buf, kRowTag, numbers.Of(at.file, buf), at.pos, key);
    if (duplicates_.empty()) return;
    auto [begin, end] = duplicates_.equal_range(std::string(key));
    for (auto d = begin; d != end; ++d) {
      PutRow(buf, kExtraTag, numbers.Of(d->second.file, buf), d->second.pos, key);
    }
  };
  Status st;
  if (full) {
    RETURN_IF_ERROR(committed_.ForEach([&](std::string_view key, RowLocation at) {
      if (!st.ok() || (!pending_.empty() && pending_.Find(key) != nullptr)) return;
      put_rows(key, at);
      st = out->MaybeFlush();
    }));
  } else {
    for (const std::string& key : unsaved_) {
      if (!st.ok()) break;
      if (pending_.Find(key) != nullptr) continue;
      ASSIGN_OR_RETURN(auto at, committed_.Find(key, committed_.HashOf(key)));
      if (at) {
        put_rows(key, *at);
      } else {
        PutGone(buf, key);
      }
      st = out->MaybeFlush();
    }
  }
  pending_.ForEach([&](std::string_view key, const RowLocation& at) {
    if (!st.ok()) return;
    if (at != kGone) {
      PutRow(buf, kRowTag, numbers.Of(at.file, buf), at.pos, key);
    } else if (!full) {
      PutGone(buf, key);
    }
    st = out->MaybeFlush();
  });
  RETURN_IF_ERROR(st);
  state::PutEnd(buf);
  return out->Flush();
}

void PrimaryKeyIndex::MarkSaved() {
  unsaved_.clear();
  unsaved_all_ = false;
}

namespace {

// Reads a state file's header: its kind, which must be a base when `base`
// and a delta otherwise.
Result<uint8_t> ReadHeader(StateReader* in, bool base) {
  uint32_t magic = 0;
  uint8_t kind = 0;
  RETURN_IF_ERROR(in->Next([&](std::string_view* v) {
    if (!Get(v, &magic) || !Get(v, &kind)) return StateReader::Short("{}: no header", kWhat);
    if (magic != kKeysMagic || kind > kStateDelta) {
      return Status::Corruption("{}: bad header", kWhat);
    }
    if ((kind == kFullState) != base) {
      return Status::Corruption("{}: a {} where a {} belongs", kWhat,
                                kind == kFullState ? "base" : "delta", base ? "base" : "delta");
    }
    return Status::OK();
  }));
  return kind;
}

}  // namespace

Status PrimaryKeyIndex::Restore(StateReader* in, bool base) {
  RETURN_IF_ERROR(ReadHeader(in, base).status());
  if (base) {
    ClearCommitted();
    // (26 bytes a BIGINT key: no growing while a large index loads. The
    // keys' bytes are taken to be about the file's, so that longer keys do
    // not reserve slots their arena then has no room beside.)
    committed_.Reserve(static_cast<size_t>(in->unread() / 26), 26);
  }
  std::vector<uint32_t> files;  // the file's ids -> interned ids
  // Rows are applied a batch at a time: 64, their slots prefetched first;
  // a delta's into a spilled index in key order, kSortedBatch at a time.
  constexpr size_t kBatch = 64;
  RestoredRows rows;
  for (int64_t i = 0;; ++i) {
    uint8_t tag = 0;
    RETURN_IF_ERROR(in->NextRecord(kWhat, i, kGoneTag, &tag, [&](std::string_view body) {
      RowLocation at;
      if (tag != kGoneTag) {
        uint32_t file = 0;
        if (!Get(&body, &file)) return Status::Corruption("no file id");
        if (tag == kFileTag) {
          if (file != files.size()) return Status::Corruption("file id {} out of order", file);
          files.push_back(InternFile(std::string(body)));
          return Status::OK();
        }
        if (!Get(&body, &at.pos)) return Status::Corruption("no position");
        if (file >= files.size()) return Status::Corruption("file id {} was not named", file);
        at.file = files[file];
      }
      if (tag == kExtraTag && !base) return Status::Corruption("an extra row in a delta");
      rows.keys.append(body);
      rows.rows.push_back({tag, at, rows.keys.size(), i});
      return Status::OK();
    }));
    const bool sorted = !base && committed_.spilled();
    if (tag == state::kEndTag || rows.rows.size() >= (sorted ? kSortedBatch : kBatch)) {
      RETURN_IF_ERROR(sorted ? ApplyRestoredInKeyOrder(rows) : ApplyRestored(rows, base));
      rows.rows.clear();
      rows.keys.clear();
    }
    if (tag == state::kEndTag) break;
  }
  RETURN_IF_ERROR(in->ExpectEnd(kWhat));
  MarkSaved();
  return Status::OK();
}

Result<bool> PrimaryKeyIndex::Keep(std::string* manifest) {
  manifest->clear();
  // (Only an index that is its last saved state: a restart takes it for that.)
  if (!committed_.spilled() || unsaved_all_ || !unsaved_.empty() || !pending_.empty() ||
      !superseded_.empty()) {
    return false;
  }
  // The files a row of the store or a duplicate is in. Ids keep their
  // numbers (the store's values hold them), so the files of rows long
  // compacted away leave gaps: past a few thousand ids mostly gaps, the
  // index is not kept, and the next start's restore numbers the files anew.
  std::vector<bool> live(files_.size());
  size_t lives = 0;
  auto mark = [&](uint32_t id) {
    if (id >= live.size() || live[id]) return;
    live[id] = true;
    ++lives;
  };
  for (uint32_t id = 0; id < rows_in_file_.size(); ++id) {
    if (rows_in_file_[id] > 0) mark(id);
  }
  for (const auto& [key, at] : duplicates_) mark(at.file);
  if (files_.size() > kKeptFileIdsWithoutGaps && lives * 4 < files_.size()) return false;
  // (Emptied whatever the outcome: a store that failed to be kept is removed.)
  const size_t keys = committed_.size();
  std::string identity;
  Result<bool> kept = committed_.Keep(&identity);
  if (kept.ok() && !*kept) return false;  // (not spilled after all: unchanged)
  if (kept.ok()) {
    std::string* buf = manifest;
    Put<uint32_t>(buf, kKeptMagic);
    Put<uint64_t>(buf, keys);
    Put<uint32_t>(buf, static_cast<uint32_t>(files_.size()));
    internal::PutBytes(buf, identity);
    for (uint32_t id = 0; id < files_.size(); ++id) {
      if (!live[id]) continue;
      size_t at = state::BeginRecord(buf, kFileTag);
      Put<uint32_t>(buf, id);
      Put<int64_t>(buf, id < rows_in_file_.size() ? rows_in_file_[id] : 0);
      buf->append(files_[id]);
      state::EndRecord(buf, at);
    }
    for (const auto& [key, at] : duplicates_) PutRow(buf, kExtraTag, at.file, at.pos, key);
    state::PutEnd(buf);
  }
  ClearCommitted();
  return kept;
}

Status PrimaryKeyIndex::Reopen(std::string_view manifest) {
  constexpr char kKept[] = "kept key index";
  DiscardPending();
  ClearCommitted();
  auto fail = [&](Status st) {
    ClearCommitted();
    return st;
  };
  StateReader in = StateReader::Of(manifest);
  uint64_t keys = 0;
  uint32_t ids = 0;
  std::string identity;
  Status st = in.Next([&](std::string_view* v) {
    uint32_t magic = 0;
    if (!Get(v, &magic) || !Get(v, &keys) || !Get(v, &ids) || !internal::GetBytes(v, &identity)) {
      return StateReader::Short("{}: no header", kKept);
    }
    if (magic != kKeptMagic) return Status::Corruption("{}: bad header", kKept);
    if (ids > CommittedKeys::kMaxFile) return Status::Corruption("{}: {} file ids", kKept, ids);
    return Status::OK();
  });
  if (!st.ok()) return fail(st);
  // (Files no row is in are nameless gaps, found by no path.)
  files_.assign(ids, std::string());
  std::vector<int64_t> counts(ids);
  std::unordered_multimap<std::string, RowLocation> duplicates;
  for (int64_t i = 0;; ++i) {
    uint8_t tag = 0;
    st = in.NextRecord(kKept, i, kExtraTag, &tag, [&](std::string_view body) {
      uint32_t file = 0;
      int64_t number = 0;
      if (!Get(&body, &file) || !Get(&body, &number)) return Status::Corruption("short record");
      if (file >= ids) return Status::Corruption("file id {} of {}", file, ids);
      if (tag == kFileTag) {
        if (!files_[file].empty() || body.empty()) {
          return Status::Corruption("file id {} named twice or empty", file);
        }
        files_[file].assign(body);
        file_ids_.emplace(files_[file], file);
        counts[file] = number;
      } else if (tag == kExtraTag) {
        if (files_[file].empty()) return Status::Corruption("file id {} was not named", file);
        duplicates.emplace(std::string(body), RowLocation{file, number});
      } else {
        return Status::Corruption("record {} has tag {}", i, tag);
      }
      return Status::OK();
    });
    if (!st.ok()) return fail(st);
    if (tag == state::kEndTag) break;
  }
  st = in.ExpectEnd(kKept);
  if (st.ok()) st = committed_.Reopen(static_cast<size_t>(keys), identity);
  if (!st.ok()) return fail(st);
  rows_in_file_ = std::move(counts);
  duplicates_ = std::move(duplicates);
  MarkSaved();
  return Status::OK();
}

std::string_view PrimaryKeyIndex::RestoredRows::key(size_t i) const {
  size_t begin = i == 0 ? 0 : rows[i - 1].key_end;
  return std::string_view(keys).substr(begin, rows[i].key_end - begin);
}

Status PrimaryKeyIndex::ApplyRestored(const RestoredRows& rows, bool base) {
  std::vector<uint64_t> hashes(rows.rows.size());
  for (size_t i = 0; i < hashes.size(); ++i) {
    hashes[i] = committed_.HashOf(rows.key(i));
    committed_.Prefetch(hashes[i]);
  }
  for (size_t i = 0; i < hashes.size(); ++i) {
    const RestoredRows::Row& r = rows.rows[i];
    std::string_view key = rows.key(i);
    if (r.tag == kExtraTag) {
      ASSIGN_OR_RETURN(auto row, committed_.Find(key, hashes[i]));
      if (!row) {
        return Status::Corruption("{}: record {}: an extra row of an unknown key", kWhat, r.record);
      }
      duplicates_.emplace(std::string(key), r.at);
      continue;
    }
    if (!duplicates_.empty()) duplicates_.erase(std::string(key));
    std::optional<RowLocation> was;
    if (r.tag == kGoneTag) {
      RETURN_IF_ERROR(committed_.Erase(key, hashes[i], &was));
    } else if (base) {
      // (A base names each key once, into an emptied index: no store reads.)
      RETURN_IF_ERROR(committed_.AddNew(key, hashes[i], r.at, &was));
    } else {
      RETURN_IF_ERROR(committed_.Assign(key, hashes[i], r.at, &was));
    }
    Recount(FileOf(was), r.tag == kGoneTag ? kNoFile : r.at.file);
  }
  return Status::OK();
}

Status PrimaryKeyIndex::ApplyRestoredInKeyOrder(const RestoredRows& rows) {
  // A delta names each key once (and no extra row): the keys' rows are read
  // from the store in order, in one pass, then changed.
  std::vector<size_t> order(rows.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  SortByKeyPrefix(&order, [&](size_t i) { return rows.key(i); });
  std::vector<std::string_view> keys(order.size());
  std::vector<uint64_t> hashes(order.size());
  for (size_t j = 0; j < order.size(); ++j) {
    keys[j] = rows.key(order[j]);
    if (j > 0 && keys[j] == keys[j - 1]) {
      return Status::Corruption("{}: record {}: a key a delta names twice", kWhat,
                                rows.rows[std::max(order[j], order[j - 1])].record);
    }
    hashes[j] = committed_.HashOf(keys[j]);
  }
  std::vector<uint32_t> was_file(order.size());
  RETURN_IF_ERROR(committed_.FindSorted(
      keys, hashes,
      [&](size_t j, const std::optional<RowLocation>& at) { was_file[j] = FileOf(at); }));
  // (Distinct keys, none changed since it was read: Put reads no store.)
  constexpr size_t kAhead = CommittedKeys::kPrefetchAhead;
  for (size_t j = 0; j < kAhead && j < order.size(); ++j) committed_.Prefetch(hashes[j]);
  for (size_t j = 0; j < order.size(); ++j) {
    if (j + kAhead < order.size()) committed_.Prefetch(hashes[j + kAhead]);
    const RestoredRows::Row& r = rows.rows[order[j]];
    if (!duplicates_.empty()) duplicates_.erase(std::string(keys[j]));
    std::optional<RowLocation> to;
    if (r.tag != kGoneTag) to = r.at;
    RETURN_IF_ERROR(committed_.Put(keys[j], hashes[j], to, /*was_live=*/was_file[j] != kNoFile));
    Recount(was_file[j], FileOf(to));
  }
  return Status::OK();
}

}  // namespace sluice::operators
