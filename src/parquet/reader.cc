#include "parquet/reader.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/endian.h"
#include "parquet/reader_internal.h"

namespace sluice::parquet {

using internal::AssemblyNode;
using internal::ChunkData;

namespace {

std::string JoinPath(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) {
    if (!s.empty()) s += '.';
    s += p;
  }
  return s;
}

bool AnySelected(const Field& f, const std::unordered_set<int32_t>& ids) {
  if (ids.count(f.id)) return true;
  for (const Field& c : f.type->fields()) {
    if (AnySelected(c, ids)) return true;
  }
  return false;
}

bool HasLeaves(const DataType& t) {
  if (!t.is_nested()) return true;
  for (const Field& c : t.fields()) {
    if (HasLeaves(*c.type)) return true;
  }
  return false;
}

// The projection of `f`: whole when selected (or `all`), structs pruned to
// their selected members, lists and maps whole when anything inside is selected.
std::optional<Field> Prune(const Field& f, const std::unordered_set<int32_t>& ids, bool all) {
  if (!HasLeaves(*f.type)) return std::nullopt;
  if (all || ids.count(f.id)) return f;
  switch (f.type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> members;
      for (const Field& c : f.type->fields()) {
        if (auto p = Prune(c, ids, false)) members.push_back(std::move(*p));
      }
      if (members.empty()) return std::nullopt;
      Field out = f;
      out.type = DataType::Struct(std::move(members));
      return out;
    }
    case TypeId::kList:
    case TypeId::kMap:
      if (AnySelected(f, ids)) return f;
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

ParquetReader::ParquetReader(std::unique_ptr<InputFile> file, ReaderOptions options)
    : file_(std::move(file)), options_(std::move(options)) {}

ParquetReader::~ParquetReader() = default;

Result<std::unique_ptr<ParquetReader>> ParquetReader::Open(std::unique_ptr<InputFile> file,
                                                           ReaderOptions options) {
  std::unique_ptr<ParquetReader> r(new ParquetReader(std::move(file), std::move(options)));
  RETURN_IF_ERROR_CTX(r->Init(), "file {}", r->path());
  return r;
}

Status ParquetReader::Init() {
  const int64_t size = file_->size();
  if (size < 12) {
    return Status::Corruption("{} bytes is too small for a Parquet file (at least 12)", size);
  }
  std::string tail;
  RETURN_IF_ERROR(file_->ReadAt(size - 8, 8, &tail));
  if (tail.compare(4, 4, "PARE") == 0) {
    return Status::NotImplemented("encrypted Parquet footers are not supported");
  }
  if (tail.compare(4, 4, "PAR1") != 0) {
    return Status::Corruption("bad magic at the end of the file (not a Parquet file?)");
  }
  std::string head;
  RETURN_IF_ERROR(file_->ReadAt(0, 4, &head));
  if (head != "PAR1") return Status::Corruption("bad magic at the start of the file");
  uint32_t len = LoadLE<uint32_t>(tail.data());
  if (len == 0 || static_cast<int64_t>(len) > size - 12) {
    return Status::Corruption("footer length {} does not fit in a file of {} bytes", len, size);
  }
  footer_start_ = size - 8 - len;
  std::string footer;
  RETURN_IF_ERROR(file_->ReadAt(footer_start_, len, &footer));
  auto md = DeserializeFileMetaData(footer);
  if (!md.ok()) return md.status().WithContext("footer");
  metadata_ = std::move(*md);
  RETURN_IF_ERROR_CTX(
      FromParquetSchema(metadata_.schema, &schema_, &leaves_,
                        options_.name_mapping.empty() ? nullptr : &options_.name_mapping),
      "schema");
  for (size_t i = 0; i < metadata_.row_groups.size(); ++i) {
    const RowGroup& rg = metadata_.row_groups[i];
    if (rg.columns.size() != leaves_.size()) {
      return Status::Corruption("row group {} has {} columns, the schema {}", i, rg.columns.size(),
                                leaves_.size());
    }
    if (rg.num_rows < 0) return Status::Corruption("row group {}: {} rows", i, rg.num_rows);
  }
  return BuildProjection();
}

Status ParquetReader::BuildProjection() {
  std::unordered_set<int32_t> ids(options_.field_ids.begin(), options_.field_ids.end());
  auto projected = std::make_shared<Schema>();
  projected->schema_id = schema_.schema_id;
  for (const Field& f : schema_.fields) {
    if (auto p = Prune(f, ids, ids.empty())) projected->fields.push_back(std::move(*p));
  }
  projected_ = projected;
  std::unordered_map<int32_t, int> leaf_by_id;
  for (size_t i = 0; i < leaves_.size(); ++i) leaf_by_id[leaves_[i].field_id] = static_cast<int>(i);

  std::function<Status(const Field&, int16_t, int16_t, AssemblyNode*)> build =
      [&](const Field& f, int16_t parent_def, int16_t parent_rep, AssemblyNode* node) -> Status {
    node->field = &f;
    node->kind = f.type->id();
    node->required = f.required;
    node->def = static_cast<int16_t>(parent_def + (f.required ? 0 : 1));
    node->first = static_cast<int>(needed_leaves_.size());
    switch (node->kind) {
      case TypeId::kStruct:
      case TypeId::kList:
      case TypeId::kMap: {
        int16_t d = node->def, r = parent_rep;
        if (node->kind != TypeId::kStruct) {
          node->elem_def = d = static_cast<int16_t>(node->def + 1);
          node->rep = r = static_cast<int16_t>(parent_rep + 1);
        }
        node->children.resize(f.type->fields().size());
        for (size_t i = 0; i < node->children.size(); ++i) {
          RETURN_IF_ERROR(build(f.type->fields()[i], d, r, &node->children[i]));
        }
        break;
      }
      default: {
        auto it = leaf_by_id.find(f.id);
        if (it == leaf_by_id.end()) return Status::Internal("no leaf column for field {}", f.id);
        const ColumnDescriptor& d = leaves_[it->second];
        if (d.max_definition_level != node->def || d.max_repetition_level != parent_rep) {
          return Status::Internal("levels of column {} disagree with its schema", JoinPath(d.path));
        }
        node->leaf = it->second;
        needed_leaves_.push_back(it->second);
      }
    }
    node->count = static_cast<int>(needed_leaves_.size()) - node->first;
    return Status::OK();
  };
  roots_.resize(projected_->fields.size());
  for (size_t i = 0; i < roots_.size(); ++i) {
    RETURN_IF_ERROR(build(projected_->fields[i], 0, 0, &roots_[i]));
  }
  return Status::OK();
}

bool ParquetReader::RowGroupMatches(int index) const {
  const RowGroup& rg = metadata_.row_groups[index];
  if (options_.row_group_filter && !options_.row_group_filter(index, rg)) return false;
  for (const IntRangePredicate& p : options_.int_ranges) {
    for (size_t i = 0; i < leaves_.size(); ++i) {
      if (leaves_[i].field_id != p.field_id) continue;
      const auto& meta = rg.columns[i].meta_data;
      if (!meta || !meta->statistics) continue;
      auto stats =
          DecodeIntStats(leaves_[i], metadata_.schema[leaves_[i].schema_index], *meta->statistics);
      if (stats && (stats->max < p.lower || stats->min > p.upper)) return false;
    }
  }
  return true;
}

Result<bool> ParquetReader::Next(Batch* out) {
  while (next_row_group_ < num_row_groups() && !RowGroupMatches(next_row_group_)) {
    ++next_row_group_;
  }
  if (next_row_group_ >= num_row_groups()) return false;
  RETURN_IF_ERROR(ReadRowGroup(next_row_group_++, out));
  return true;
}

Status ParquetReader::ReadRowGroup(int index, Batch* out) {
  if (index < 0 || index >= num_row_groups()) {
    return Status::Invalid("file {}: row group {} out of range ({} row groups)", path(), index,
                           num_row_groups());
  }
  const RowGroup& rg = metadata_.row_groups[index];
  std::vector<ChunkData> data(needed_leaves_.size());
  for (size_t slot = 0; slot < needed_leaves_.size(); ++slot) {
    const ColumnDescriptor& d = leaves_[needed_leaves_[slot]];
    RETURN_IF_ERROR_CTX(
        internal::ReadColumnChunk(*file_, footer_start_, rg.columns[needed_leaves_[slot]], d,
                                  metadata_.schema[d.schema_index], &data[slot]),
        "file {}: row group {}: column {}", path(), index, JoinPath(d.path));
  }
  *out = Batch::Make(projected_);
  for (size_t k = 0; k < roots_.size(); ++k) {
    RETURN_IF_ERROR_CTX(internal::AssembleColumn(roots_[k], data, rg.num_rows, &out->columns[k]),
                        "file {}: row group {}: column {}", path(), index,
                        projected_->fields[k].name);
    if (out->columns[k].size() != rg.num_rows) {
      return Status::Corruption("file {}: row group {}: column {} has {} rows, footer says {}",
                                path(), index, projected_->fields[k].name, out->columns[k].size(),
                                rg.num_rows);
    }
  }
  return Status::OK();
}

}  // namespace sluice::parquet
