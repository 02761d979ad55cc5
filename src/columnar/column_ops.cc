#include "columnar/column_ops.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace sluice {

namespace {
const Column* FindInStruct(const Column& s, int32_t id) {
  const auto& fields = s.type()->fields();
  for (size_t k = 0; k < fields.size(); ++k) {
    const Column& c = s.child(static_cast<int>(k));
    if (fields[k].id == id) return &c;
    if (fields[k].type->id() == TypeId::kStruct) {
      if (const Column* found = FindInStruct(c, id)) return found;
    }
  }
  return nullptr;
}
}  // namespace

const Column* FindColumnById(const Batch& batch, int32_t id) {
  for (size_t i = 0; i < batch.columns.size(); ++i) {
    const Field& f = batch.schema->fields[i];
    if (f.id == id) return &batch.columns[i];
    if (f.type->id() == TypeId::kStruct) {
      if (const Column* found = FindInStruct(batch.columns[i], id)) return found;
    }
  }
  return nullptr;
}

Column* FindColumnById(Batch& batch, int32_t id) {
  return const_cast<Column*>(FindColumnById(std::as_const(batch), id));
}

void AppendRowFrom(const Column& src, int64_t row, Column* dst) {
  if (src.IsNull(row)) {
    dst->AppendNull();
    return;
  }
  const DataType& t = *src.type();
  switch (t.id()) {
    case TypeId::kStruct:
      for (int i = 0; i < src.num_children(); ++i) {
        AppendRowFrom(src.child(i), row, dst->mutable_child(i));
      }
      dst->FinishNested();
      return;
    case TypeId::kList:
    case TypeId::kMap:
      for (uint32_t e = src.ListBegin(row); e < src.ListEnd(row); ++e) {
        for (int i = 0; i < src.num_children(); ++i) {
          AppendRowFrom(src.child(i), e, dst->mutable_child(i));
        }
      }
      dst->FinishNested();
      return;
    case TypeId::kBoolean: dst->AppendBool(src.GetBool(row)); return;
    default:
      if (t.is_binary_like()) {
        dst->AppendBytes(src.GetBytes(row));
      } else {
        dst->AppendRaw(src.data<uint8_t>() + row * t.value_width(), 1);
      }
  }
}

void AppendRowsFrom(const Column& src, int64_t begin, int64_t n, Column* dst) {
  const DataType& t = *src.type();
  const int w = t.value_width();
  if (n <= 0) return;
  // (With nulls, row by row: a null slot of `src` may hold a stale value,
  // which AppendRowFrom does not copy.)
  if (src.null_count() == 0 && w > 0 && t.id() != TypeId::kBoolean) {
    dst->AppendRaw(src.data<uint8_t>() + begin * w, n);
  } else if (src.null_count() == 0 && t.is_binary_like()) {
    dst->AppendBytesBulk(src.heap(), src.offsets().data() + begin, n);
  } else {
    for (int64_t r = begin; r < begin + n; ++r) AppendRowFrom(src, r, dst);
  }
}

void AppendBatch(const Batch& src, Batch* dst) {
  for (size_t c = 0; c < dst->columns.size(); ++c) {
    AppendRowsFrom(src.columns[c], 0, src.num_rows(), &dst->columns[c]);
  }
}

Column TakeRows(const Column& src, const std::vector<uint32_t>& rows) {
  Column out(src.type());
  out.Reserve(static_cast<int64_t>(rows.size()));
  const DataType& t = *src.type();
  int w = t.value_width();
  if (w > 0 && t.id() != TypeId::kBoolean && src.null_count() == 0) {
    // Fast path: gather fixed-width values.
    out.ResizeFixed(static_cast<int64_t>(rows.size()));
    uint8_t* dst = out.mutable_data<uint8_t>();
    const uint8_t* base = src.data<uint8_t>();
    for (size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(dst + i * w, base + static_cast<size_t>(rows[i]) * w, w);
    }
    return out;
  }
  if (t.is_binary_like() && src.null_count() == 0) {
    // Gather the byte values into buffers sized once.
    const std::vector<uint32_t>& from = src.offsets();
    size_t bytes = 0;
    for (uint32_t r : rows) bytes += from[r + 1] - from[r];
    std::string heap;
    heap.reserve(bytes);
    std::vector<uint32_t> offsets;
    offsets.reserve(rows.size() + 1);
    offsets.push_back(0);
    for (uint32_t r : rows) {
      heap.append(src.heap(), from[r], from[r + 1] - from[r]);
      offsets.push_back(static_cast<uint32_t>(heap.size()));
    }
    out.AppendBytesBulk(std::move(heap), std::move(offsets), static_cast<int64_t>(rows.size()));
    return out;
  }
  for (uint32_t r : rows) AppendRowFrom(src, r, &out);
  return out;
}

void KeepRows(Column* c, const std::vector<uint32_t>& rows) {
  if (2 * static_cast<int64_t>(rows.size()) < c->size() || !c->KeepRowsInPlace(rows)) {
    *c = TakeRows(*c, rows);
  }
}

Batch TakeRows(const Batch& src, const std::vector<uint32_t>& rows) {
  Batch out;
  out.schema = src.schema;
  for (const auto& c : src.columns) out.columns.push_back(TakeRows(c, rows));
  return out;
}

int CompareRows(const Column& a, int64_t i, const Column& b, int64_t j) {
  if (a.type()->is_binary_like()) {
    int c = a.GetBytes(i).compare(b.GetBytes(j));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.type()->is_nested()) return 0;
  return VisitFixed(a.type()->id(), [&](auto t) {
    using T = decltype(t);
    return ThreeWay(a.Value<T>(i), b.Value<T>(j));
  });
}

std::vector<uint32_t> SortedRows(const std::vector<SortKey>& keys, int64_t rows) {
  std::vector<uint32_t> order(static_cast<size_t>(rows));
  for (size_t r = 0; r < order.size(); ++r) order[r] = static_cast<uint32_t>(r);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    for (const SortKey& k : keys) {
      const Column& c = *k.column;
      const bool xn = c.IsNull(x), yn = c.IsNull(y);
      if (xn || yn) {
        if (xn == yn) continue;
        return xn == k.nulls_first;
      }
      int cmp = CompareRows(c, x, c, y);
      if (cmp != 0) return k.descending ? cmp > 0 : cmp < 0;
    }
    return false;
  });
  return order;
}

Batch FilterRows(const Batch& src, const std::vector<bool>& keep) {
  std::vector<uint32_t> rows;
  for (size_t i = 0; i < keep.size(); ++i) {
    if (keep[i]) rows.push_back(static_cast<uint32_t>(i));
  }
  return TakeRows(src, rows);
}

Result<Column> CastColumn(const Column& src, const TypePtr& target) {
  const DataType& from = *src.type();
  const DataType& to = *target;
  Column out(target);
  out.Reserve(src.size());
  auto each = [&](auto&& convert) {
    for (int64_t i = 0; i < src.size(); ++i) {
      if (src.IsNull(i)) {
        out.AppendNull();
      } else {
        convert(i);
      }
    }
  };
  if (from.id() == TypeId::kInt && to.id() == TypeId::kLong) {
    each([&](int64_t i) { out.Append<int64_t>(src.Value<int32_t>(i)); });
  } else if (from.id() == TypeId::kFloat && to.id() == TypeId::kDouble) {
    each([&](int64_t i) { out.Append<double>(src.Value<float>(i)); });
  } else if (from.id() == TypeId::kDecimal && to.id() == TypeId::kDecimal &&
             from.scale() == to.scale() && to.precision() >= from.precision()) {
    each([&](int64_t i) { out.Append<int128_t>(src.Value<int128_t>(i)); });
  } else if (from.id() == TypeId::kDate &&
             (to.id() == TypeId::kTimestamp || to.id() == TypeId::kTimestampTz ||
              to.id() == TypeId::kTimestampNs || to.id() == TypeId::kTimestampTzNs)) {
    int64_t per_day = (to.id() == TypeId::kTimestampNs || to.id() == TypeId::kTimestampTzNs)
                          ? 86400LL * 1000000000
                          : 86400LL * 1000000;
    each([&](int64_t i) { out.Append<int64_t>(src.Value<int32_t>(i) * per_day); });
  } else if (from.is_binary_like() && to.is_binary_like() &&
             (to.id() == TypeId::kString || to.id() == TypeId::kBinary ||
              (from.id() == TypeId::kFixed &&
               from.width() == (to.id() == TypeId::kUuid ? 16 : to.width())))) {
    // Bytes annotated differently by another writer (uuid as fixed[16], a
    // string without its UTF8 annotation): the same bytes.
    each([&](int64_t i) { out.AppendBytes(src.GetBytes(i)); });
  } else if (from.Equals(to) || (from.id() == to.id() && !from.is_nested())) {
    // The same type, or the same physical representation (a file annotating
    // a fixed width or timestamp zone differently): copy.
    each([&](int64_t i) { AppendRowFrom(src, i, &out); });
  } else {
    return Status::Invalid("cannot read a {} column as {}", from.ToString(), to.ToString());
  }
  return out;
}

}  // namespace sluice
