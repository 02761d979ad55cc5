#include "columnar/column_ops.h"
#include "columnar/json_reader.h"
#include "columnar/single_value.h"
#include "iceberg/scan_internal.h"

namespace sluice::iceberg {

Result<Column> Reconcile(Column* file_col, const Field& field, int64_t rows,
                         const std::optional<std::string>& constant, bool take) {
  if (file_col == nullptr) {
    Column out(field.type);
    out.Reserve(rows);
    for (int64_t i = 0; i < rows; ++i) {
      if (constant) {
        RETURN_IF_ERROR(AppendFromSingleValue(*constant, &out));
      } else {
        out.AppendNull();
      }
    }
    return out;
  }
  const DataType& want = *field.type;
  if (file_col->type()->Equals(want)) {
    if (take) return std::move(*file_col);
    return CastColumn(*file_col, field.type);  // a copy
  }
  if (want.id() == TypeId::kStruct && file_col->type()->id() == TypeId::kStruct) {
    std::vector<Column> children;
    for (const Field& child : want.fields()) {
      Column* fc = nullptr;
      const auto& ff = file_col->type()->fields();
      for (size_t k = 0; k < ff.size(); ++k) {
        if (ff[k].id == child.id) fc = file_col->mutable_child(static_cast<int>(k));
      }
      ASSIGN_OR_RETURN(Column c, Reconcile(fc, child, rows, std::nullopt, take));
      children.push_back(std::move(c));
    }
    Column out(field.type);
    for (int64_t r = 0; r < rows; ++r) {
      if (file_col->IsNull(r)) {
        out.AppendNull();
        continue;
      }
      for (size_t k = 0; k < children.size(); ++k) {
        AppendRowFrom(children[k], r, out.mutable_child(static_cast<int>(k)));
      }
      out.FinishNested();
    }
    return out;
  }
  if ((want.id() == TypeId::kList || want.id() == TypeId::kMap) &&
      file_col->type()->id() == want.id()) {
    std::vector<Column> children;
    for (int k = 0; k < file_col->num_children(); ++k) {
      Column& fc = *file_col->mutable_child(k);
      ASSIGN_OR_RETURN(Column c, Reconcile(&fc, want.fields()[k], fc.size(), std::nullopt, take));
      children.push_back(std::move(c));
    }
    Column out(field.type);
    for (int64_t r = 0; r < rows; ++r) {
      if (file_col->IsNull(r)) {
        out.AppendNull();
        continue;
      }
      for (uint32_t e = file_col->ListBegin(r); e < file_col->ListEnd(r); ++e) {
        for (size_t k = 0; k < children.size(); ++k) {
          AppendRowFrom(children[k], e, out.mutable_child(static_cast<int>(k)));
        }
      }
      out.FinishNested();
    }
    return out;
  }
  auto cast = CastColumn(*file_col, field.type);
  if (!cast.ok()) {
    return Status::Invalid("field {} ({}): the file has type {}", field.name, want.ToString(),
                           file_col->type()->ToString());
  }
  return cast;
}

Result<std::string> DefaultValue(const Field& f, const std::string& json) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {Field{1, "v", f.type, false, ""}};
  ASSIGN_OR_RETURN(auto decoder, JsonDecoder::Make(schema));
  Batch b = Batch::Make(schema);
  RETURN_IF_ERROR(decoder->DecodeLine("{\"v\":" + json + "}", 1, &b));
  if (b.num_rows() != 1 || b.columns[0].IsNull(0)) return Status::Invalid("not a value: {}", json);
  std::string out;
  AppendSingleValue(b.columns[0], 0, &out);
  return out;
}

}  // namespace sluice::iceberg
