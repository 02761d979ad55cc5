// Assembling Columns from definition/repetition levels and dense leaf values.
//
// A node of the projected schema is present at a level position when the
// definition level there reaches node.def; a list or map has elements when it
// reaches node.elem_def, and further elements follow while the repetition
// level equals node.rep. Every leaf beneath a node shares its shape, so the
// first leaf decides it and all leaves advance together.
#include <algorithm>
#include <cstring>

#include "parquet/reader_internal.h"

namespace sluice::parquet::internal {

namespace {

class Assembler {
 public:
  explicit Assembler(std::vector<ChunkData>& data) : data_(data), cursors_(data.size()) {}

  Status Row(const AssemblyNode& root, Column* out) {
    for (int s = root.first; s < root.first + root.count; ++s) {
      const ChunkData& c = data_[s];
      if (cursors_[s].level >= c.num_levels) {
        return Status::Corruption("column has fewer levels than rows");
      }
      if (!c.rep.empty() && c.rep[cursors_[s].level] != 0) {
        return Status::Corruption("a row starts with repetition level {}",
                                  c.rep[cursors_[s].level]);
      }
    }
    return Node(root, out);
  }

  Status Finish(const AssemblyNode& root) const {
    for (int s = root.first; s < root.first + root.count; ++s) {
      if (cursors_[s].level != data_[s].num_levels ||
          cursors_[s].value != static_cast<size_t>(data_[s].values->size())) {
        return Status::Corruption("levels of the columns of '{}' do not agree ({} of {} used)",
                                  root.field->name, cursors_[s].level, data_[s].num_levels);
      }
    }
    return Status::OK();
  }

 private:
  struct Cursor {
    size_t level = 0;
    size_t value = 0;
  };

  Status Def(int slot, int16_t* def) const {
    const ChunkData& c = data_[slot];
    size_t pos = cursors_[slot].level;
    if (pos >= c.num_levels) return Status::Corruption("levels end inside a row");
    *def = c.def.empty() ? 0 : c.def[pos];
    return Status::OK();
  }

  // Skips one level entry in every leaf beneath `node` (a null or empty value).
  void SkipEntry(const AssemblyNode& node) {
    for (int s = node.first; s < node.first + node.count; ++s) ++cursors_[s].level;
  }

  Status Node(const AssemblyNode& node, Column* out) {
    int16_t def = 0;
    RETURN_IF_ERROR(Def(node.first, &def));
    if (def < node.def) {
      if (node.required) {
        return Status::Corruption("required field '{}' is missing (definition level {} < {})",
                                  node.field->name, def, node.def);
      }
      out->AppendNull();
      SkipEntry(node);
      return Status::OK();
    }
    switch (node.kind) {
      case TypeId::kStruct:
        for (size_t i = 0; i < node.children.size(); ++i) {
          RETURN_IF_ERROR(Node(node.children[i], out->mutable_child(static_cast<int>(i))));
        }
        out->FinishNested();
        return Status::OK();
      case TypeId::kList:
      case TypeId::kMap: {
        if (def < node.elem_def) {  // present but empty
          SkipEntry(node);
          out->FinishNested();
          return Status::OK();
        }
        const ChunkData& first = data_[node.first];
        Cursor& cur = cursors_[node.first];
        while (true) {
          for (size_t i = 0; i < node.children.size(); ++i) {
            RETURN_IF_ERROR(Node(node.children[i], out->mutable_child(static_cast<int>(i))));
          }
          if (cur.level >= first.num_levels || first.rep.empty() ||
              first.rep[cur.level] != node.rep) {
            break;
          }
        }
        if (node.kind == TypeId::kMap) {
          // Keys and values were appended in step; check the value leaves kept up.
          if (out->child(0).size() != out->child(1).size()) {
            return Status::Corruption("map '{}' has {} keys but {} values", node.field->name,
                                      out->child(0).size(), out->child(1).size());
          }
        }
        out->FinishNested();
        return Status::OK();
      }
      default: {
        Cursor& cur = cursors_[node.first];
        const Column& values = *data_[node.first].values;
        if (cur.value >= static_cast<size_t>(values.size())) {
          return Status::Corruption("column '{}' has fewer values than its levels require",
                                    node.field->name);
        }
        if (values.type()->is_binary_like()) {
          out->AppendBytes(values.GetBytes(static_cast<int64_t>(cur.value)));
        } else {
          int w = values.type()->value_width();
          out->AppendRaw(values.data<uint8_t>() + cur.value * w, 1);
        }
        ++cur.value;
        ++cur.level;
        return Status::OK();
      }
    }
  }

  std::vector<ChunkData>& data_;
  std::vector<Cursor> cursors_;
};

// A top-level primitive without repetition: move or scatter the values.
Status AssembleFlat(const AssemblyNode& node, ChunkData& c, int64_t num_rows, Column* out) {
  if (static_cast<int64_t>(c.num_levels) != num_rows) {
    return Status::Corruption("column has {} values for {} rows", c.num_levels, num_rows);
  }
  Column& values = *c.values;
  const size_t n = c.num_levels;
  if (static_cast<size_t>(values.size()) == n) {
    *out = std::move(values);
    return Status::OK();
  }
  if (node.required) {
    return Status::Corruption("required column '{}' has {} nulls", node.field->name,
                              n - static_cast<size_t>(values.size()));
  }
  const int16_t max = node.def;
  size_t j = 0;
  if (n == 0) return Status::OK();
  if (values.type()->is_binary_like()) {
    out->Reserve(static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      if (c.def[i] == max) {
        out->AppendBytes(values.GetBytes(static_cast<int64_t>(j++)));
      } else {
        out->AppendNull();
      }
    }
  } else {
    const size_t w = static_cast<size_t>(values.type()->value_width());
    out->ResizeFixed(static_cast<int64_t>(n));
    uint8_t* dst = out->mutable_data<uint8_t>();
    const uint8_t* src = values.data<uint8_t>();
    std::memset(dst, 0, n * w);
    for (size_t i = 0; i < n; ++i) {
      if (c.def[i] == max) {
        std::memcpy(dst + i * w, src + j * w, w);
        ++j;
      } else {
        out->SetNull(static_cast<int64_t>(i));
      }
    }
  }
  if (j != static_cast<size_t>(values.size())) {
    return Status::Internal("scattered {} of {} values", j, values.size());
  }
  return Status::OK();
}

}  // namespace

Status AssembleColumn(const AssemblyNode& node, std::vector<ChunkData>& data, int64_t num_rows,
                      Column* out) {
  if (node.kind != TypeId::kStruct && node.kind != TypeId::kList && node.kind != TypeId::kMap &&
      data[node.first].rep.empty()) {
    return AssembleFlat(node, data[node.first], num_rows, out);
  }
  Assembler a(data);
  // Each row takes at least one level entry; never trust num_rows alone.
  out->Reserve(std::min<int64_t>(num_rows, static_cast<int64_t>(data[node.first].num_levels)));
  for (int64_t r = 0; r < num_rows; ++r) RETURN_IF_ERROR_CTX(a.Row(node, out), "row {}", r);
  return a.Finish(node);
}

}  // namespace sluice::parquet::internal
