// Carrying deletes that landed during a compaction: see compact_carry.h.
#include "maintenance/compact_carry.h"

#include <algorithm>
#include <vector>

#include "common/uuid.h"
#include "iceberg/delete_writer.h"
#include "iceberg/deletion_vector.h"
#include "iceberg/scan.h"

namespace sluice::maintenance::internal {
namespace {

// The output positions (by output path) of the rows of `runs` that were at
// input positions `positions`.
void MapPositions(std::vector<Run> runs, const iceberg::PositionSet& positions, const Staged& s,
                  std::map<std::string, std::vector<int64_t>>* out) {
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.in_pos < b.in_pos; });
  for (int64_t p : positions) {
    auto r = std::upper_bound(runs.begin(), runs.end(), p,
                              [](int64_t v, const Run& run) { return v < run.in_pos; });
    if (r == runs.begin()) continue;
    --r;
    if (p < r->in_pos + r->length) {
      (*out)[s.output_paths[static_cast<size_t>(r->output)]].push_back(r->out_pos +
                                                                       (p - r->in_pos));
    }
  }
}

// Whether every equality delete of input `t` applies to each of `s`'s new
// files too: they keep the data sequence number of the snapshot the rows
// were read from (u.data_sequence_number), below that of every delete
// committed since, and lie in the delete's partition (or it has none).
bool EqualityDeletesFollow(const iceberg::TableMetadata& md, const iceberg::FileScanTask& t,
                           const Staged& s, const catalog::SnapshotUpdate& u) {
  if (t.equality_deletes.empty()) return true;
  if (!u.data_sequence_number) return false;
  for (const iceberg::DataFile& d : t.equality_deletes) {
    const iceberg::PartitionSpec* spec = md.spec_by_id(d.spec_id);
    if (spec != nullptr && spec->unpartitioned()) continue;
    for (const iceberg::DataFile& f : s.added) {
      if (f.spec_id != d.spec_id || f.partition != d.partition) return false;
    }
  }
  return true;
}

}  // namespace

Result<bool> CarryNewDeletes(catalog::Table& table, const std::vector<Staged*>& group,
                             catalog::SnapshotUpdate* u, int64_t* rows) {
  RETURN_IF_ERROR(table.Refresh());
  auto md = std::make_shared<const iceberg::TableMetadata>(table.metadata());
  iceberg::ScanOptions so;
  for (const Staged* s : group)
    so.only_files.insert(s->plan->inputs.begin(), s->plan->inputs.end());
  ASSIGN_OR_RETURN(auto scan, iceberg::TableScan::Make(table.io(), md, so));
  RETURN_IF_ERROR(scan->Plan());
  std::map<std::string, const iceberg::FileScanTask*> live;
  for (const iceberg::FileScanTask& t : scan->tasks()) live[t.file.file_path] = &t;
  std::map<std::string, std::vector<int64_t>> mapped;  // output path -> positions
  std::vector<std::string> remove;
  std::map<std::string, const iceberg::DataFile*> outputs;
  iceberg::PositionDeleteCache delete_files(/*keep_all=*/true);
  for (const Staged* s : group) {
    for (const iceberg::DataFile& f : s->added) outputs[f.file_path] = &f;
    for (const std::string& input : s->plan->inputs) {
      const std::vector<Run>* origin = s->OriginOf(input);
      auto it = live.find(input);
      if (it != live.end()) {
        if (!EqualityDeletesFollow(*md, *it->second, *s, *u)) return false;
        remove.push_back(input);
      }
      if (origin == nullptr) continue;  // none of its rows was live
      if (it == live.end()) {
        for (const Run& r : *origin) {
          auto& d = mapped[s->output_paths[static_cast<size_t>(r.output)]];
          for (int64_t k = 0; k < r.length; ++k) d.push_back(r.out_pos + k);
        }
        continue;
      }
      ASSIGN_OR_RETURN(iceberg::PositionSet now,
                       iceberg::ReadDeletedPositions(table.io(), *it->second, {}, &delete_files));
      MapPositions(*origin, now, *s, &mapped);
    }
  }
  if (remove.empty()) return false;
  std::map<std::string, iceberg::PositionSet> deleted;
  for (auto& [path, positions] : mapped) deleted[path] = iceberg::PositionSet(std::move(positions));
  std::vector<iceberg::DataFile> carried;
  if (md->format_version >= 3) {
    std::vector<std::pair<iceberg::DataFile, iceberg::PositionSet>> vectors;
    for (auto& [path, positions] : deleted) vectors.emplace_back(*outputs.at(path), positions);
    if (!vectors.empty()) {
      const std::string puffin =
          fmt::format("{}/data/compact-{}-dv.puffin", md->location, NewUuid());
      ASSIGN_OR_RETURN(carried, iceberg::WriteDeletionVectors(table.io(), puffin, vectors));
    }
  } else if (!deleted.empty()) {
    std::map<std::string, iceberg::DataFile> files;
    for (const auto& [path, positions] : deleted) files[path] = *outputs.at(path);
    ASSIGN_OR_RETURN(carried, iceberg::WritePositionDeletes(table.io(), *md, deleted, files));
  }
  *rows = 0;
  for (const auto& [path, positions] : deleted) *rows += static_cast<int64_t>(positions.size());
  u->add_deletes = std::move(carried);
  u->remove_paths = std::move(remove);
  u->base_snapshot_id = md->current_snapshot_id;
  return true;
}

bool KeepsReadSequence(const iceberg::TableMetadata& md, const std::vector<Staged*>& group) {
  const iceberg::Snapshot* snap = md.current_snapshot();
  if (snap == nullptr) return false;
  auto it = snap->summary.find("total-equality-deletes");
  if (it != snap->summary.end() && it->second == "0") return false;
  for (const Staged* s : group) {
    if (s->plan->spec_id != md.default_spec_id) return false;
  }
  return true;
}

}  // namespace sluice::maintenance::internal
