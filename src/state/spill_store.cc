#include "state/spill_store.h"

#include <fmt/format.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <filesystem>

namespace sluice::state {
namespace {

Status FromRocks(const rocksdb::Status& s, const std::string& dir) {
  if (s.ok()) return Status::OK();
  if (s.IsCorruption()) return Status::Corruption("spill store {}: {}", dir, s.ToString());
  return Status::IOError("spill store {}: {}", dir, s.ToString());
}

rocksdb::Slice Slice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

}  // namespace

struct SpillStore::Impl {
  rocksdb::Options options;  // (a sorted run's file is written with them)
  int64_t runs = 0;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteBatch pending;
  rocksdb::WriteOptions write;
  rocksdb::ReadOptions read;
  bool kept = false;  // Keep closed it: the folder stays
};

SpillStore::SpillStore(std::string dir, std::unique_ptr<Impl> impl)
    : dir_(std::move(dir)), impl_(std::move(impl)) {}

SpillStore::~SpillStore() {
  if (impl_->db) (void)impl_->db->Close();
  impl_->db.reset();
  std::error_code ec;
  if (!impl_->kept) std::filesystem::remove_all(dir_, ec);
}

namespace {

rocksdb::Options StoreOptions(int64_t memory_bytes) {
  rocksdb::Options o;
  o.max_open_files = 256;
  o.keep_log_file_num = 1;
  o.max_background_jobs = 2;
  size_t quarter = static_cast<size_t>(std::max<int64_t>(memory_bytes / 4, 1 << 20));
  o.write_buffer_size = quarter;
  o.max_write_buffer_number = 2;
  // Most reads are of keys that are not there (a new group): bloom filters in
  // the memtables too, and no checksums on reads of a local cache.
  o.memtable_prefix_bloom_size_ratio = 0.05;
  o.memtable_whole_key_filtering = true;
  o.compression = rocksdb::kNoCompression;  // a local cache: CPU over bytes
  // Leveled compaction, not universal, whatever it rewrites more: RocksDB
  // before 9.0 (Debian 12 packages 7.8), compacting universally over several
  // levels, gives a table file it takes in (WriteSorted) that fits a level
  // without overlapping its keys the sequence number of that level's newest
  // file, and keeps it when a level below holds values of the file's keys;
  // once a lower level holds newer data than an upper one, the file's values
  // are older than the ones they replace, and a read gives the replaced one
  // (facebook/rocksdb#12257). Found as a key index that forgot some keys'
  // changes of a checkpoint (spill_store_test.cc,
  // RunsOfRangesAndScatteredKeysAlwaysReadTheNewestValue); universal in one
  // level failed RocksDB's own consistency checks on such files instead.
  // Leveled, a file that overlaps any of the store's keys gets the next
  // sequence number, newer than all; one that overlaps none needs none.
  o.compaction_style = rocksdb::kCompactionStyleLevel;
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(2 * quarter);
  // Index and filter blocks stay with their table readers, outside the block
  // cache: a point read of a new key (a miss, the common case) then never
  // reads a filter block from disk. They take about 1.5 bytes a key.
  t.cache_index_and_filter_blocks = false;
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

}  // namespace

Result<std::unique_ptr<SpillStore>> SpillStore::OpenDb(const std::string& dir, int64_t memory_bytes,
                                                       bool fresh) {
  rocksdb::Options o = StoreOptions(memory_bytes);
  o.create_if_missing = fresh;
  o.error_if_exists = fresh;
  rocksdb::DB* db = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(o, dir, &db), dir));
  auto impl = std::make_unique<Impl>();
  impl->options = o;
  impl->db.reset(db);
  impl->write.disableWAL = true;
  impl->read.verify_checksums = false;
  return std::unique_ptr<SpillStore>(new SpillStore(dir, std::move(impl)));
}

Result<std::unique_ptr<SpillStore>> SpillStore::Open(const std::string& dir, int64_t memory_bytes) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("spill store {}: {}", dir, ec.message());
  return OpenDb(dir, memory_bytes, /*fresh=*/true);
}

Result<std::unique_ptr<SpillStore>> SpillStore::Reopen(const std::string& dir,
                                                       int64_t memory_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::NotFound("spill store {}: no store was kept there", dir);
  }
  return OpenDb(dir, memory_bytes, /*fresh=*/false);
}

Status SpillStore::Keep(std::unique_ptr<SpillStore> store) {
  RETURN_IF_ERROR(store->Flush());
  // (Writes bypass the write-ahead log: what the memtables hold goes into
  // table files, synced, before the store closes.)
  rocksdb::FlushOptions f;
  f.wait = true;
  RETURN_IF_ERROR(FromRocks(store->impl_->db->Flush(f), store->dir_));
  RETURN_IF_ERROR(FromRocks(store->impl_->db->Close(), store->dir_));
  store->impl_->db.reset();
  store->impl_->kept = true;
  return Status::OK();
}

void SpillStore::Put(std::string_view key, std::string_view value) {
  (void)impl_->pending.Put(Slice(key), Slice(value));
}

void SpillStore::Delete(std::string_view key) { (void)impl_->pending.Delete(Slice(key)); }

void SpillStore::DeleteRange(std::string_view begin, std::string_view end) {
  (void)impl_->pending.DeleteRange(Slice(begin), Slice(end));
}

Status SpillStore::Flush() {
  if (impl_->pending.Count() == 0) return Status::OK();
  rocksdb::Status s = impl_->db->Write(impl_->write, &impl_->pending);
  impl_->pending.Clear();
  return FromRocks(s, dir_);
}

Status SpillStore::WriteSorted(size_t n,
                               const std::function<SortedEntry(size_t, std::string*)>& entry) {
  if (n == 0) return Status::OK();
  RETURN_IF_ERROR(Flush());
  const std::string path = fmt::format("{}/run-{}.sst", dir_, ++impl_->runs);
  auto fail = [&](const rocksdb::Status& s) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    return FromRocks(s, dir_);
  };
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), impl_->options);
  rocksdb::Status s = writer.Open(path);
  if (!s.ok()) return fail(s);
  std::string buffer;
  for (size_t i = 0; i < n && s.ok(); ++i) {
    SortedEntry e = entry(i, &buffer);
    s = e.value ? writer.Put(Slice(e.key), Slice(*e.value)) : writer.Delete(Slice(e.key));
  }
  if (s.ok()) s = writer.Finish();
  if (!s.ok()) return fail(s);
  // Moved in (linked under the store's own name; RocksDB removes this one).
  // Its sequence number is kept in the store's manifest, not written into
  // the file: newer than all the store holds of its keys (StoreOptions, on
  // leveled compaction, says why).
  rocksdb::IngestExternalFileOptions o;
  o.move_files = true;
  o.write_global_seqno = false;
  s = impl_->db->IngestExternalFile({path}, o);
  if (!s.ok()) return fail(s);
  return Status::OK();
}

Result<std::string> SpillStore::Identity() const {
  std::string id;
  RETURN_IF_ERROR(FromRocks(impl_->db->GetDbIdentity(id), dir_));
  return id;
}

Result<bool> SpillStore::Get(std::string_view key, std::string* value) const {
  rocksdb::PinnableSlice v;
  rocksdb::Status s = impl_->db->Get(impl_->read, impl_->db->DefaultColumnFamily(), Slice(key), &v);
  if (s.IsNotFound()) return false;
  RETURN_IF_ERROR(FromRocks(s, dir_));
  value->assign(v.data(), v.size());
  return true;
}

Status SpillStore::GetSorted(
    const std::vector<std::string_view>& keys,
    const std::function<Status(size_t, const std::string_view*)>& fn) const {
  std::vector<rocksdb::Slice> slices(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) slices[i] = Slice(keys[i]);
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  impl_->db->MultiGet(impl_->read, impl_->db->DefaultColumnFamily(), keys.size(), slices.data(),
                      values.data(), statuses.data(), /*sorted_input=*/true);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].IsNotFound()) {
      RETURN_IF_ERROR(fn(i, nullptr));
      continue;
    }
    RETURN_IF_ERROR(FromRocks(statuses[i], dir_));
    std::string_view value(values[i].data(), values[i].size());
    RETURN_IF_ERROR(fn(i, &value));
  }
  return Status::OK();
}

namespace {

class RocksCursor : public SpillStore::Cursor {
 public:
  RocksCursor(rocksdb::DB* db, std::string lower, std::string upper, const std::string& dir)
      : lower_(std::move(lower)), upper_(std::move(upper)), dir_(dir) {
    lower_slice_ = rocksdb::Slice(lower_);
    upper_slice_ = rocksdb::Slice(upper_);
    rocksdb::ReadOptions r;
    r.iterate_lower_bound = &lower_slice_;
    if (!upper_.empty()) r.iterate_upper_bound = &upper_slice_;
    r.fill_cache = false;
    it_.reset(db->NewIterator(r));
    it_->Seek(lower_slice_);
  }
  bool Valid() const override { return it_->Valid(); }
  std::string_view key() const override { return {it_->key().data(), it_->key().size()}; }
  std::string_view value() const override { return {it_->value().data(), it_->value().size()}; }
  void Next() override { it_->Next(); }
  void Seek(std::string_view target) override { it_->Seek(Slice(target)); }
  Status status() const override { return FromRocks(it_->status(), dir_); }

 private:
  std::string lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  const std::string& dir_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace

std::unique_ptr<SpillStore::Cursor> SpillStore::Scan(std::string lower, std::string upper) const {
  return std::make_unique<RocksCursor>(impl_->db.get(), std::move(lower), std::move(upper), dir_);
}

}  // namespace sluice::state
