// Physical Parquet values → the Column layout of the leaf's Iceberg type.
#include <cmath>
#include <cstring>

#include "common/endian.h"
#include "parquet/reader_internal.h"

namespace sluice::parquet::internal {

namespace {

using uint128_t = unsigned __int128;

bool IsUnsigned(const SchemaElement& e) {
  if (e.logical_type && e.logical_type->kind == LogicalType::Kind::kInteger) {
    return !e.logical_type->is_signed;
  }
  return e.converted_type == ConvertedType::kUint8 || e.converted_type == ConvertedType::kUint16 ||
         e.converted_type == ConvertedType::kUint32 || e.converted_type == ConvertedType::kUint64;
}

// Multiplier from the file's time unit to the Column's (µs, or ns for _ns).
int64_t TimeScale(const SchemaElement& e, bool target_nanos) {
  TimeUnit unit = TimeUnit::kMicros;
  if (e.logical_type && (e.logical_type->kind == LogicalType::Kind::kTimestamp ||
                         e.logical_type->kind == LogicalType::Kind::kTime)) {
    unit = e.logical_type->unit;
  } else if (e.converted_type == ConvertedType::kTimestampMillis ||
             e.converted_type == ConvertedType::kTimeMillis) {
    unit = TimeUnit::kMillis;
  }
  switch (unit) {
    case TimeUnit::kMillis: return target_nanos ? 1000000 : 1000;
    case TimeUnit::kMicros: return target_nanos ? 1000 : 1;
    case TimeUnit::kNanos: return 1;  // nanos only map to the _ns types
  }
  return 1;
}

// Sign-extends n (1..8) big-endian bytes.
int64_t BigEndianToInt64(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(reinterpret_cast<uint8_t*>(&v) + (8 - n), p, n);
  v = __builtin_bswap64(v);  // the n big-endian bytes, now in the low bits
  int shift = static_cast<int>(64 - 8 * n);
  return static_cast<int64_t>(v << shift) >> shift;
}

// Sign-extends n (0..16) big-endian bytes.
int128_t BigEndianToInt128(const uint8_t* p, size_t n) {
  if (n == 0) return 0;
  if (n <= 8) return BigEndianToInt64(p, n);
  uint64_t lo = __builtin_bswap64(LoadLE<uint64_t>(p + n - 8));
  int128_t hi = BigEndianToInt64(p, n - 8);
  return static_cast<int128_t>((static_cast<uint128_t>(hi) << 64) | lo);
}

float HalfToFloat(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::nanf("") : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

template <typename Src, typename Dst, typename F>
void Transform(const ValueBuffer& in, Column* out, F f) {
  const size_t n = in.size();
  out->ResizeFixed(static_cast<int64_t>(n));
  Dst* dst = out->mutable_data<Dst>();
  const uint8_t* src = in.fixed.data();
  for (size_t i = 0; i < n; ++i) dst[i] = f(LoadLE<Src>(src + i * sizeof(Src)));
}

}  // namespace

Status ConvertValues(ValueBuffer& in, const ColumnDescriptor& desc, const SchemaElement& element,
                     Column* out) {
  const TypeId target = desc.type->id();
  const size_t n = in.size();
  if (n == 0) return Status::OK();
  switch (in.type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kFloat:
    case PhysicalType::kDouble:
      if (desc.type->value_width() != in.width) break;
      out->AppendRaw(std::move(in.fixed), static_cast<int64_t>(n));
      return Status::OK();
    case PhysicalType::kInt32:
      switch (target) {
        case TypeId::kInt:
        case TypeId::kDate: out->AppendRaw(std::move(in.fixed), static_cast<int64_t>(n)); return {};
        case TypeId::kLong:  // UINT_32
          Transform<uint32_t, int64_t>(in, out, [](uint32_t v) { return int64_t{v}; });
          return Status::OK();
        case TypeId::kTime: {
          int64_t scale = TimeScale(element, false);
          Transform<int32_t, int64_t>(in, out, [scale](int32_t v) { return v * scale; });
          return Status::OK();
        }
        case TypeId::kDecimal:
          Transform<int32_t, int128_t>(in, out, [](int32_t v) { return int128_t{v}; });
          return Status::OK();
        default: break;
      }
      break;
    case PhysicalType::kInt64:
      switch (target) {
        case TypeId::kLong: out->AppendRaw(std::move(in.fixed), static_cast<int64_t>(n)); return {};
        case TypeId::kTime:
        case TypeId::kTimestamp:
        case TypeId::kTimestampTz:
        case TypeId::kTimestampNs:
        case TypeId::kTimestampTzNs: {
          bool nanos = target == TypeId::kTimestampNs || target == TypeId::kTimestampTzNs;
          if (target == TypeId::kTime && element.logical_type &&
              element.logical_type->unit == TimeUnit::kNanos) {
            // Iceberg has no nanosecond time: floor to µs.
            Transform<int64_t, int64_t>(
                in, out, [](int64_t v) { return v >= 0 ? v / 1000 : -((-(v + 1)) / 1000) - 1; });
            return Status::OK();
          }
          int64_t scale = TimeScale(element, nanos);
          if (scale == 1) {
            out->AppendRaw(std::move(in.fixed), static_cast<int64_t>(n));
          } else {
            Transform<int64_t, int64_t>(in, out, [scale](int64_t v) {
              return static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(scale));
            });
          }
          return Status::OK();
        }
        case TypeId::kDecimal:
          if (IsUnsigned(element)) {
            Transform<uint64_t, int128_t>(in, out, [](uint64_t v) { return int128_t{v}; });
          } else {
            Transform<int64_t, int128_t>(in, out, [](int64_t v) { return int128_t{v}; });
          }
          return Status::OK();
        default: break;
      }
      break;
    case PhysicalType::kInt96: {
      if (target != TypeId::kTimestampTz && target != TypeId::kTimestamp &&
          target != TypeId::kTimestampNs && target != TypeId::kTimestampTzNs) {
        break;
      }
      bool nanos = target == TypeId::kTimestampNs || target == TypeId::kTimestampTzNs;
      out->ResizeFixed(static_cast<int64_t>(n));
      int64_t* dst = out->mutable_data<int64_t>();
      constexpr int64_t kUnixEpochJulianDay = 2440588;
      constexpr int64_t kNanosPerDay = 86400LL * 1000000000LL;
      for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = in.fixed.data() + i * 12;
        int64_t nanos_of_day = LoadLE<int64_t>(p);
        int64_t day = LoadLE<int32_t>(p + 8);
        uint64_t ns =
            static_cast<uint64_t>(day - kUnixEpochJulianDay) * static_cast<uint64_t>(kNanosPerDay) +
            static_cast<uint64_t>(nanos_of_day);
        int64_t v = static_cast<int64_t>(ns);
        if (!nanos) v = v >= 0 ? v / 1000 : -((-(v + 1)) / 1000) - 1;  // floor division
        dst[i] = v;
      }
      return Status::OK();
    }
    case PhysicalType::kFixedLenByteArray:
      if (target == TypeId::kDecimal) {
        const size_t w = static_cast<size_t>(in.width);
        if (w > 16) break;
        out->ResizeFixed(static_cast<int64_t>(n));
        int128_t* dst = out->mutable_data<int128_t>();
        for (size_t i = 0; i < n; ++i) dst[i] = BigEndianToInt128(in.fixed.data() + i * w, w);
        return Status::OK();
      }
      if (target == TypeId::kFloat && in.width == 2) {
        Transform<uint16_t, float>(in, out, HalfToFloat);
        return Status::OK();
      }
      if (desc.type->is_binary_like()) {
        const size_t w = static_cast<size_t>(in.width);
        out->Reserve(static_cast<int64_t>(n));
        for (size_t i = 0; i < n; ++i) {
          out->AppendBytes(
              std::string_view(reinterpret_cast<const char*>(in.fixed.data()) + i * w, w));
        }
        return Status::OK();
      }
      break;
    case PhysicalType::kByteArray:
      if (target == TypeId::kDecimal) {
        out->ResizeFixed(static_cast<int64_t>(n));
        int128_t* dst = out->mutable_data<int128_t>();
        for (size_t i = 0; i < n; ++i) {
          std::string_view b = in.Bytes(i);
          size_t skip = 0;
          // Tolerate redundant sign bytes beyond 16.
          while (b.size() - skip > 16) {
            uint8_t lead = static_cast<uint8_t>(b[skip]);
            bool next_negative = static_cast<uint8_t>(b[skip + 1]) & 0x80;
            if (!((lead == 0 && !next_negative) || (lead == 0xff && next_negative))) break;
            ++skip;
          }
          if (b.size() - skip > 16) {
            return Status::Corruption("decimal value of {} bytes does not fit 128 bits", b.size());
          }
          dst[i] =
              BigEndianToInt128(reinterpret_cast<const uint8_t*>(b.data()) + skip, b.size() - skip);
        }
        return Status::OK();
      }
      if (desc.type->is_binary_like()) {
        out->AppendBytesBulk(std::move(in.heap), std::move(in.offsets), static_cast<int64_t>(n));
        return Status::OK();
      }
      break;
  }
  return Status::NotImplemented("reading {} values as {}", PhysicalTypeName(in.type),
                                desc.type->ToString());
}

}  // namespace sluice::parquet::internal
