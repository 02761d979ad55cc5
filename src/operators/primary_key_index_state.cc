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

Status PrimaryKeyIndex::Restore(StateReader* in, bool base) {
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
  if (kind == kFullState) {
    ClearCommitted();
    // (26 bytes a BIGINT key: no growing while a large index loads.)
    committed_.Reserve(static_cast<size_t>(in->unread() / 26));
  }
  std::vector<uint32_t> files;  // the file's ids -> interned ids
  // Rows are applied kBatch at a time, their slots prefetched first.
  constexpr size_t kBatch = 64;
  struct Change {
    uint8_t tag;
    RowLocation at;
    size_t key_end;  // in keys, after the previous change's key
    int64_t record;
  };
  std::vector<Change> batch;
  std::string keys;
  uint64_t hashes[kBatch];
  auto apply = [&]() -> Status {
    size_t begin = 0;
    for (size_t b = 0; b < batch.size(); ++b) {
      hashes[b] = committed_.HashOf(std::string_view(keys).substr(begin, batch[b].key_end - begin));
      committed_.Prefetch(hashes[b]);
      begin = batch[b].key_end;
    }
    begin = 0;
    for (size_t b = 0; b < batch.size(); ++b) {
      const Change& c = batch[b];
      std::string_view key = std::string_view(keys).substr(begin, c.key_end - begin);
      begin = c.key_end;
      if (c.tag == kExtraTag) {
        ASSIGN_OR_RETURN(auto row, committed_.Find(key, hashes[b]));
        if (!row) {
          return Status::Corruption("{}: record {}: an extra row of an unknown key", kWhat,
                                    c.record);
        }
        duplicates_.emplace(std::string(key), c.at);
        continue;
      }
      if (!duplicates_.empty()) duplicates_.erase(std::string(key));
      if (c.tag == kGoneTag) {
        RETURN_IF_ERROR(committed_.Erase(key, hashes[b]));
      } else if (kind == kFullState) {
        // (A base names each key once, into an emptied index: no store
        // reads.)
        RETURN_IF_ERROR(committed_.AddNew(key, hashes[b], c.at));
      } else {
        RETURN_IF_ERROR(committed_.Assign(key, hashes[b], c.at));
      }
    }
    batch.clear();
    keys.clear();
    return Status::OK();
  };
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
      keys.append(body);
      batch.push_back({tag, at, keys.size(), i});
      return Status::OK();
    }));
    if (tag == state::kEndTag || batch.size() == kBatch) RETURN_IF_ERROR(apply());
    if (tag == state::kEndTag) break;
  }
  RETURN_IF_ERROR(in->ExpectEnd(kWhat));
  MarkSaved();
  return Status::OK();
}

}  // namespace sluice::operators
