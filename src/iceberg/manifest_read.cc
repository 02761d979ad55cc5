// manifest.h's reading half: manifest lists and manifests, one or several at
// once. The writing half is manifest.cc.
#include <algorithm>
#include <atomic>
#include <optional>

#include "avro/reader.h"
#include "columnar/single_value.h"
#include "common/task_pool.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_schema.h"

namespace sluice::iceberg {

using internal::ChildById;
using internal::ColumnById;

namespace {

std::optional<int64_t> OptLong(const Column* c, int64_t row) {
  if (c == nullptr || c->IsNull(row)) return std::nullopt;
  return c->type()->id() == TypeId::kInt ? c->Value<int32_t>(row) : c->Value<int64_t>(row);
}

std::optional<std::string> OptBytes(const Column* c, int64_t row) {
  if (c == nullptr || c->IsNull(row)) return std::nullopt;
  return std::string(c->GetBytes(row));
}

template <typename V>
void ReadIntMap(const Column* c, int64_t row, std::map<int32_t, V>* out) {
  if (c == nullptr || c->IsNull(row)) return;
  const Column& keys = c->child(0);
  const Column& values = c->child(1);
  for (uint32_t i = c->ListBegin(row); i < c->ListEnd(row); ++i) {
    if constexpr (std::is_same_v<V, std::string>) {
      (*out)[keys.Value<int32_t>(i)] = std::string(values.GetBytes(i));
    } else {
      (*out)[keys.Value<int32_t>(i)] = *OptLong(&values, i);
    }
  }
}

template <typename V>
void ReadList(const Column* c, int64_t row, std::vector<V>* out) {
  if (c == nullptr || c->IsNull(row)) return;
  const Column& items = c->child(0);
  for (uint32_t i = c->ListBegin(row); i < c->ListEnd(row); ++i) {
    out->push_back(static_cast<V>(*OptLong(&items, i)));
  }
}

Result<std::unique_ptr<avro::AvroReader>> OpenAvro(FileIO& io, const std::string& path,
                                                   avro::ReaderOptions options = {}) {
  ASSIGN_OR_RETURN(auto file, io.OpenInput(path));
  return avro::AvroReader::Open(std::move(file), std::move(options));
}

// A data_file's column statistics (sizes, value, null and NaN counts, lower
// and upper bounds): most of an entry's bytes, read past when not wanted.
const std::vector<int32_t> kColumnStatsFieldIds = {108, 109, 110, 137, 125, 128};

Status Missing(const std::string& path, const char* field) {
  return Status::Corruption("{}: required field {} is missing", path, field);
}

}  // namespace

Result<std::vector<ManifestFile>> ReadManifestList(FileIO& io, const std::string& path,
                                                   int format_version) {
  ASSIGN_OR_RETURN(auto reader, OpenAvro(io, path));
  std::vector<ManifestFile> out;
  Batch batch;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    const Column* path_c = ColumnById(batch, 500);
    const Column* length_c = ColumnById(batch, 501);
    const Column* spec_c = ColumnById(batch, 502);
    const Column* snap_c = ColumnById(batch, 503);
    if (!path_c || !length_c || !spec_c || !snap_c) {
      return Missing(path, "manifest_path/manifest_length/partition_spec_id/added_snapshot_id");
    }
    const Column* parts = ColumnById(batch, 507);
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      ManifestFile m;
      m.manifest_path = std::string(path_c->GetBytes(r));
      m.manifest_length = OptLong(length_c, r).value_or(0);
      m.partition_spec_id = static_cast<int32_t>(OptLong(spec_c, r).value_or(0));
      m.added_snapshot_id = OptLong(snap_c, r).value_or(0);
      if (format_version >= 2) {
        m.content = static_cast<ManifestContent>(OptLong(ColumnById(batch, 517), r).value_or(0));
        m.sequence_number = OptLong(ColumnById(batch, 515), r).value_or(0);
        m.min_sequence_number = OptLong(ColumnById(batch, 516), r).value_or(0);
      }
      m.added_files_count = static_cast<int32_t>(OptLong(ColumnById(batch, 504), r).value_or(0));
      m.existing_files_count = static_cast<int32_t>(OptLong(ColumnById(batch, 505), r).value_or(0));
      m.deleted_files_count = static_cast<int32_t>(OptLong(ColumnById(batch, 506), r).value_or(0));
      m.added_rows_count = OptLong(ColumnById(batch, 512), r).value_or(0);
      m.existing_rows_count = OptLong(ColumnById(batch, 513), r).value_or(0);
      m.deleted_rows_count = OptLong(ColumnById(batch, 514), r).value_or(0);
      m.key_metadata = OptBytes(ColumnById(batch, 519), r);
      m.first_row_id = OptLong(ColumnById(batch, 520), r);
      if (parts != nullptr && parts->IsValid(r)) {
        const Column& s = parts->child(0);
        for (uint32_t i = parts->ListBegin(r); i < parts->ListEnd(r); ++i) {
          FieldSummary fs;
          const Column* cn = ChildById(s, 509);
          fs.contains_null = cn != nullptr && cn->IsValid(i) && cn->GetBool(i);
          if (const Column* nan = ChildById(s, 518); nan != nullptr && nan->IsValid(i)) {
            fs.contains_nan = nan->GetBool(i);
          }
          fs.lower_bound = OptBytes(ChildById(s, 510), i);
          fs.upper_bound = OptBytes(ChildById(s, 511), i);
          m.partitions.push_back(std::move(fs));
        }
      }
      out.push_back(std::move(m));
    }
  }
  return out;
}

Result<std::vector<ManifestEntry>> ReadManifest(FileIO& io, const ManifestFile& manifest,
                                                int format_version,
                                                const ManifestReadOptions& options) {
  const std::string& path = manifest.manifest_path;
  avro::ReaderOptions read;
  if (!options.column_stats) read.skip_field_ids = kColumnStatsFieldIds;
  ASSIGN_OR_RETURN(auto reader, OpenAvro(io, path, std::move(read)));
  std::vector<ManifestEntry> out;
  // Row lineage (v3): a data file without a first_row_id inherits the
  // manifest's plus the rows of the files before it that had none.
  std::optional<int64_t> next_row_id;
  if (format_version >= 3 && manifest.content == ManifestContent::kData) {
    next_row_id = manifest.first_row_id;
  }
  Batch batch;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    const Column* status_c = ColumnById(batch, 0);
    const Column* file_c = ColumnById(batch, 2);
    if (!status_c || !file_c) return Missing(path, "status/data_file");
    const Column* path_c = ChildById(*file_c, 100);
    const Column* format_c = ChildById(*file_c, 101);
    const Column* part_c = ChildById(*file_c, 102);
    const Column* count_c = ChildById(*file_c, 103);
    const Column* size_c = ChildById(*file_c, 104);
    if (!path_c || !format_c || !count_c || !size_c) {
      return Missing(path, "data_file.file_path/file_format/record_count/file_size_in_bytes");
    }
    // A manifest written by a v1 writer (also inside a table upgraded to v2/v3)
    // has no sequence numbers: they are all 0.
    const bool v1_file = format_version < 2 || reader->Metadata("format-version") == "1" ||
                         ColumnById(batch, 3) == nullptr;
    // The columns, looked up once per block rather than once per entry.
    const Column* snapshot_c = ColumnById(batch, 1);
    const Column* seq_c = ColumnById(batch, 3);
    const Column* file_seq_c = ColumnById(batch, 4);
    const Column* content_c = ChildById(*file_c, 134);
    const Column* sizes_c = ChildById(*file_c, 108);
    const Column* values_c = ChildById(*file_c, 109);
    const Column* nulls_c = ChildById(*file_c, 110);
    const Column* nans_c = ChildById(*file_c, 137);
    const Column* lower_c = ChildById(*file_c, 125);
    const Column* upper_c = ChildById(*file_c, 128);
    const Column* key_metadata_c = ChildById(*file_c, 131);
    const Column* split_offsets_c = ChildById(*file_c, 132);
    const Column* equality_ids_c = ChildById(*file_c, 135);
    const Column* sort_order_c = ChildById(*file_c, 140);
    const Column* first_row_id_c = ChildById(*file_c, 142);
    const Column* referenced_c = ChildById(*file_c, 143);
    const Column* content_offset_c = ChildById(*file_c, 144);
    const Column* content_size_c = ChildById(*file_c, 145);
    // (Geometric: reserving each block's rows exactly moved every entry read
    // so far at each block, quadratic in a manifest's blocks.)
    const size_t need = out.size() + static_cast<size_t>(batch.num_rows());
    if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      ManifestEntry e;
      e.status = static_cast<EntryStatus>(*OptLong(status_c, r));
      if (options.live_only && e.status == EntryStatus::kDeleted) {
        // (Its rows still count toward the first_row_id the files after it
        // without one inherit, as when it is read.)
        if (next_row_id && !OptLong(first_row_id_c, r)) {
          *next_row_id += OptLong(count_c, r).value_or(0);
        }
        continue;
      }
      e.snapshot_id = OptLong(snapshot_c, r);
      if (!v1_file) {
        e.sequence_number = OptLong(seq_c, r);
        e.file_sequence_number = OptLong(file_seq_c, r);
      } else {
        e.sequence_number = 0;
        e.file_sequence_number = 0;
      }
      // Inheritance (spec §Sequence Number Inheritance).
      if (!e.snapshot_id) e.snapshot_id = manifest.added_snapshot_id;
      if (!e.sequence_number) {
        if (e.status != EntryStatus::kAdded) {
          return Status::Corruption("{}: entry {} is not ADDED but has no sequence number", path,
                                    r);
        }
        e.sequence_number = manifest.sequence_number;
      }
      if (!e.file_sequence_number) {
        e.file_sequence_number =
            e.status == EntryStatus::kAdded ? manifest.sequence_number : *e.sequence_number;
      }
      DataFile& f = e.file;
      f.spec_id = manifest.partition_spec_id;
      const int64_t content = OptLong(content_c, r).value_or(0);
      if (content < 0 || content > 2) {
        return Status::Corruption(
            "{}: entry {}: content {} is not data (0), position (1) or "
            "equality deletes (2)",
            path, r, content);
      }
      f.content = static_cast<FileContent>(content);
      f.file_path = std::string(path_c->GetBytes(r));
      f.file_format = std::string(format_c->GetBytes(r));
      f.record_count = OptLong(count_c, r).value_or(0);
      f.file_size_in_bytes = OptLong(size_c, r).value_or(0);
      if (part_c != nullptr) {
        for (int i = 0; i < part_c->num_children(); ++i) {
          const Column& pc = part_c->child(i);
          if (pc.IsNull(r) || part_c->IsNull(r)) {
            f.partition.push_back(std::nullopt);
          } else {
            std::string v;
            AppendSingleValue(pc, r, &v);
            f.partition.push_back(std::move(v));
          }
        }
      }
      if (options.column_stats) {  // (else read past: null)
        ReadIntMap(sizes_c, r, &f.column_sizes);
        ReadIntMap(values_c, r, &f.value_counts);
        ReadIntMap(nulls_c, r, &f.null_value_counts);
        ReadIntMap(nans_c, r, &f.nan_value_counts);
        ReadIntMap(lower_c, r, &f.lower_bounds);
        ReadIntMap(upper_c, r, &f.upper_bounds);
      }
      f.key_metadata = OptBytes(key_metadata_c, r);
      ReadList(split_offsets_c, r, &f.split_offsets);
      ReadList(equality_ids_c, r, &f.equality_ids);
      if (auto v = OptLong(sort_order_c, r)) f.sort_order_id = static_cast<int32_t>(*v);
      f.first_row_id = OptLong(first_row_id_c, r);
      if (!f.first_row_id && next_row_id) {
        f.first_row_id = *next_row_id;
        *next_row_id += f.record_count;
      }
      f.referenced_data_file = OptBytes(referenced_c, r);
      f.content_offset = OptLong(content_offset_c, r);
      f.content_size_in_bytes = OptLong(content_size_c, r);
      out.push_back(std::move(e));
    }
  }
  return out;
}

Result<std::vector<std::vector<ManifestEntry>>> ReadManifests(
    FileIO& io, const std::vector<ManifestFile>& manifests, int format_version,
    const ManifestReadOptions& options, int threads) {
  const size_t n = manifests.size();
  if (threads <= 0) threads = std::min(AvailableCores(), 8);
  const int workers = static_cast<int>(std::min(static_cast<size_t>(threads), n));
  std::vector<std::optional<Result<std::vector<ManifestEntry>>>> results(n);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&](int) {
    for (size_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      results[i] = ReadManifest(io, manifests[i], format_version, options);
      if (!results[i]->ok()) failed.store(true);
    }
  };
  if (workers <= 1) {
    work(0);
  } else {
    TaskPool pool(workers - 1);
    pool.Run(workers, work);
  }
  std::vector<std::vector<ManifestEntry>> out;
  out.reserve(n);
  for (auto& r : results) {
    // Manifests are taken in order, so those left unread follow a failure.
    if (!r) return Status::Internal("manifests left unread without a failure");
    if (!r->ok()) return r->status();
    out.push_back(std::move(*r).value());
  }
  return out;
}

}  // namespace sluice::iceberg
