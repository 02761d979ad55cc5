#include "parquet/writer_shred.h"

namespace sluice::parquet {

namespace {

void AddLeaves(const Field& f, LeafPath path, std::vector<LeafPath>* out) {
  if (!path.name.empty()) path.name += '.';
  path.name += f.name;
  const DataType& t = *f.type;
  LeafPath::Step step{t.id(), !f.required, 0};
  if (step.optional) ++path.max_definition_level;
  if (!t.is_nested()) {
    path.steps.push_back(step);
    path.field_id = f.id;
    out->push_back(std::move(path));
    return;
  }
  if (t.id() != TypeId::kStruct) {
    ++path.max_definition_level;  // the repeated group
    ++path.max_repetition_level;
  }
  for (size_t i = 0; i < t.fields().size(); ++i) {
    LeafPath p = path;
    step.child = static_cast<int>(i);
    p.steps.push_back(step);
    AddLeaves(t.fields()[i], std::move(p), out);
  }
}

}  // namespace

std::vector<LeafPath> BuildLeafPaths(const Schema& schema) {
  std::vector<LeafPath> out;
  for (size_t c = 0; c < schema.fields.size(); ++c) {
    LeafPath p;
    p.top_column = static_cast<int>(c);
    AddLeaves(schema.fields[c], std::move(p), &out);
  }
  return out;
}

void Shredder::Visit(const LeafPath& p, size_t k, const Column& c, int64_t i, int16_t def,
                     int16_t rep, int16_t depth) {
  const LeafPath::Step& s = p.steps[k];
  if (c.IsNull(i)) {
    if (!s.optional) required_null_ = true;
    def_.push_back(def);
    rep_.push_back(rep);
    return;
  }
  if (s.optional) ++def;
  switch (s.kind) {
    case TypeId::kStruct: Visit(p, k + 1, c.child(s.child), i, def, rep, depth); return;
    case TypeId::kList:
    case TypeId::kMap: {
      uint32_t b = c.ListBegin(i), e = c.ListEnd(i);
      if (b == e) {
        def_.push_back(def);
        rep_.push_back(rep);
        return;
      }
      const Column& child = c.child(s.child);
      for (uint32_t j = b; j < e; ++j) {
        Visit(p, k + 1, child, j, static_cast<int16_t>(def + 1),
              j == b ? rep : static_cast<int16_t>(depth + 1), static_cast<int16_t>(depth + 1));
      }
      return;
    }
    default:
      leaf_ = &c;
      def_.push_back(def);
      rep_.push_back(rep);
      positions_.push_back(static_cast<uint32_t>(i));
  }
}

Status Shredder::Shred(const LeafPath& p, const Column& top, int64_t begin, int64_t end,
                       LeafSlice* out) {
  def_.clear();
  rep_.clear();
  positions_.clear();
  *out = LeafSlice();
  out->num_rows = end - begin;
  if (p.steps.size() == 1) {
    // A top-level primitive: levels straight from the validity bitmap.
    out->values = &top;
    out->num_levels = end - begin;
    const bool has_nulls = top.null_count() > 0;
    if (!p.steps[0].optional) {
      if (has_nulls) {
        for (int64_t i = begin; i < end; ++i) {
          if (top.IsNull(i)) {
            return Status::Invalid("column {}: null in required field at row {}", p.name, i);
          }
        }
      }
      out->first = begin;
      out->num_values = end - begin;
      return Status::OK();
    }
    def_.resize(static_cast<size_t>(end - begin));
    if (!has_nulls) {
      std::fill(def_.begin(), def_.end(), 1);
      out->first = begin;
      out->num_values = end - begin;
    } else {
      for (int64_t i = begin; i < end; ++i) {
        bool valid = top.IsValid(i);
        def_[i - begin] = valid ? 1 : 0;
        if (valid) positions_.push_back(static_cast<uint32_t>(i));
      }
      out->positions = positions_.data();
      out->num_values = static_cast<int64_t>(positions_.size());
    }
    out->def_levels = def_.data();
    return Status::OK();
  }
  required_null_ = false;
  leaf_ = nullptr;
  for (int64_t i = begin; i < end; ++i) Visit(p, 0, top, i, 0, 0, 0);
  if (required_null_) {
    return Status::Invalid("column {}: null in a required field in rows {}..{}", p.name, begin,
                           end - 1);
  }
  out->num_levels = static_cast<int64_t>(def_.size());
  out->def_levels = p.max_definition_level > 0 ? def_.data() : nullptr;
  out->rep_levels = p.max_repetition_level > 0 ? rep_.data() : nullptr;
  out->values = leaf_ != nullptr ? leaf_ : &top;
  out->positions = positions_.data();
  out->num_values = static_cast<int64_t>(positions_.size());
  return Status::OK();
}

std::pair<LeafSlice, LeafSlice> SplitLeafSlice(const LeafSlice& s, int64_t rows, int max_def) {
  int64_t levels = rows;
  if (s.rep_levels != nullptr) {
    int64_t row = 0;
    for (levels = 0; levels < s.num_levels; ++levels) {
      if (s.rep_levels[levels] == 0 && row++ == rows) break;
    }
  }
  int64_t values = levels;
  if (s.def_levels != nullptr) {
    values = 0;
    for (int64_t i = 0; i < levels; ++i) values += s.def_levels[i] == max_def ? 1 : 0;
  }
  LeafSlice head = s, tail = s;
  head.num_levels = levels;
  head.num_rows = rows;
  head.num_values = values;
  tail.num_levels = s.num_levels - levels;
  tail.num_rows = s.num_rows - rows;
  tail.num_values = s.num_values - values;
  if (s.def_levels != nullptr) tail.def_levels = s.def_levels + levels;
  if (s.rep_levels != nullptr) tail.rep_levels = s.rep_levels + levels;
  if (s.positions != nullptr) {
    tail.positions = s.positions + values;
  } else {
    tail.first = s.first + values;
  }
  return {head, tail};
}

}  // namespace sluice::parquet
