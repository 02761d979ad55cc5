#include "columnar/single_value.h"

#include <cstring>

#include "common/endian.h"

namespace sluice {

std::string DecimalToBigEndian(int128_t v) {
  char be[16];
  auto u = static_cast<unsigned __int128>(v);
  for (int i = 15; i >= 0; --i) {
    be[i] = static_cast<char>(static_cast<uint8_t>(u));
    u >>= 8;
  }
  int start = 0;
  while (start < 15) {
    auto b = static_cast<uint8_t>(be[start]);
    auto next = static_cast<uint8_t>(be[start + 1]);
    if ((b == 0x00 && !(next & 0x80)) || (b == 0xff && (next & 0x80))) {
      ++start;
    } else {
      break;
    }
  }
  return std::string(be + start, 16 - start);
}

int128_t DecimalFromBigEndian(std::string_view bytes) {
  unsigned __int128 u = (!bytes.empty() && (static_cast<uint8_t>(bytes[0]) & 0x80))
                            ? ~static_cast<unsigned __int128>(0)
                            : 0;
  for (char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
  return static_cast<int128_t>(u);
}

void AppendSingleValue(const Column& c, int64_t row, std::string* out) {
  switch (c.type()->id()) {
    case TypeId::kBoolean: out->push_back(c.GetBool(row) ? 1 : 0); return;
    case TypeId::kInt:
    case TypeId::kDate: AppendLE<int32_t>(out, c.Value<int32_t>(row)); return;
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: AppendLE<int64_t>(out, c.Value<int64_t>(row)); return;
    case TypeId::kFloat: AppendLE<float>(out, c.Value<float>(row)); return;
    case TypeId::kDouble: AppendLE<double>(out, c.Value<double>(row)); return;
    case TypeId::kDecimal: out->append(DecimalToBigEndian(c.Value<int128_t>(row))); return;
    case TypeId::kString:
    case TypeId::kUuid:
    case TypeId::kFixed:
    case TypeId::kBinary: out->append(c.GetBytes(row)); return;
    default: return;  // nested types have no single-value form
  }
}

Status AppendFromSingleValue(std::string_view b, Column* c) {
  const DataType& t = *c->type();
  auto wrong = [&]() {
    return Status::Corruption("a {} value of {} bytes is not a valid {} single value", t.ToString(),
                              b.size(), t.ToString());
  };
  switch (t.id()) {
    case TypeId::kBoolean:
      if (b.size() != 1) return wrong();
      c->AppendBool(b[0] != 0);
      return Status::OK();
    case TypeId::kInt:
    case TypeId::kDate:
      if (b.size() != 4) return wrong();
      c->Append<int32_t>(LoadLE<int32_t>(b.data()));
      return Status::OK();
    case TypeId::kLong:
    case TypeId::kTime:
      if (b.size() == 4) {  // promoted from int
        c->Append<int64_t>(LoadLE<int32_t>(b.data()));
        return Status::OK();
      }
      if (b.size() != 8) return wrong();
      c->Append<int64_t>(LoadLE<int64_t>(b.data()));
      return Status::OK();
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      if (b.size() == 4) {  // promoted from date (v3)
        int64_t per_day = (t.id() == TypeId::kTimestampNs || t.id() == TypeId::kTimestampTzNs)
                              ? 86400LL * 1000000000
                              : 86400LL * 1000000;
        c->Append<int64_t>(LoadLE<int32_t>(b.data()) * per_day);
        return Status::OK();
      }
      if (b.size() != 8) return wrong();
      c->Append<int64_t>(LoadLE<int64_t>(b.data()));
      return Status::OK();
    }
    case TypeId::kFloat:
      if (b.size() != 4) return wrong();
      c->Append<float>(LoadLE<float>(b.data()));
      return Status::OK();
    case TypeId::kDouble:
      if (b.size() == 4) {  // promoted from float
        c->Append<double>(LoadLE<float>(b.data()));
        return Status::OK();
      }
      if (b.size() != 8) return wrong();
      c->Append<double>(LoadLE<double>(b.data()));
      return Status::OK();
    case TypeId::kDecimal:
      if (b.empty() || b.size() > 16) return wrong();
      c->Append<int128_t>(DecimalFromBigEndian(b));
      return Status::OK();
    case TypeId::kUuid:
      if (b.size() != 16) return wrong();
      c->AppendBytes(b);
      return Status::OK();
    case TypeId::kFixed:
      if (static_cast<int>(b.size()) != t.width()) return wrong();
      c->AppendBytes(b);
      return Status::OK();
    case TypeId::kString:
    case TypeId::kBinary: c->AppendBytes(b); return Status::OK();
    default: return Status::Invalid("type {} has no single-value serialization", t.ToString());
  }
}

namespace {
template <typename T>
int Cmp(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}
}  // namespace

int CompareSingleValues(const DataType& t, std::string_view a, std::string_view b) {
  switch (t.id()) {
    case TypeId::kBoolean: return Cmp(a[0] != 0, b[0] != 0);
    case TypeId::kInt:
    case TypeId::kDate:
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      auto load = [](std::string_view s) -> int64_t {
        return s.size() == 4 ? LoadLE<int32_t>(s.data()) : LoadLE<int64_t>(s.data());
      };
      return Cmp(load(a), load(b));
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      auto load = [](std::string_view s) -> double {
        return s.size() == 4 ? LoadLE<float>(s.data()) : LoadLE<double>(s.data());
      };
      return Cmp(load(a), load(b));
    }
    case TypeId::kDecimal: return Cmp(DecimalFromBigEndian(a), DecimalFromBigEndian(b));
    default: {
      int r = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
      if (r != 0) return r < 0 ? -1 : 1;
      return Cmp(a.size(), b.size());
    }
  }
}

}  // namespace sluice
