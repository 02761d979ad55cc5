// date_trunc, extract and interval arithmetic on TIMESTAMP and TIMESTAMPTZ
// (µs since the epoch, UTC; the binder casts DATE arguments to TIMESTAMP).
#include "columnar/value_format.h"
#include "expr/kernels.h"

namespace sluice::expr::internal {
namespace {

constexpr int64_t kSecond = 1000000;
constexpr int64_t kDay = 86400 * kSecond;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

struct Civil {
  int64_t year;
  unsigned month, day;
  int64_t days;         // since the epoch
  int64_t time_of_day;  // µs
};

Civil ToCivil(int64_t micros) {
  Civil c;
  c.days = FloorDiv(micros, kDay);
  c.time_of_day = micros - c.days * kDay;
  CivilFromDays(c.days, &c.year, &c.month, &c.day);
  return c;
}

unsigned DaysInMonth(int64_t year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// ISO 8601 week number (weeks start on Monday; week 1 holds January 4th).
int64_t IsoWeek(int64_t days) {
  int64_t monday0 = FloorMod(days + 3, 7);  // 1970-01-01 was a Thursday
  int64_t thursday = days - monday0 + 3;    // the Thursday of this ISO week
  int64_t y;
  unsigned m, d;
  CivilFromDays(thursday, &y, &m, &d);
  return (thursday - DaysFromCivil(y, 1, 1)) / 7 + 1;
}

int64_t Truncate(TimeUnit unit, int64_t micros) {
  switch (unit) {
    case TimeUnit::kMicrosecond: return micros;
    case TimeUnit::kMillisecond: return FloorDiv(micros, 1000) * 1000;
    case TimeUnit::kSecond: return FloorDiv(micros, kSecond) * kSecond;
    case TimeUnit::kMinute: return FloorDiv(micros, 60 * kSecond) * 60 * kSecond;
    case TimeUnit::kHour: return FloorDiv(micros, 3600 * kSecond) * 3600 * kSecond;
    case TimeUnit::kDay: return FloorDiv(micros, kDay) * kDay;
    case TimeUnit::kWeek: {
      int64_t days = FloorDiv(micros, kDay);
      return (days - FloorMod(days + 3, 7)) * kDay;
    }
    default: break;
  }
  Civil c = ToCivil(micros);
  unsigned month = c.month;
  if (unit == TimeUnit::kYear) month = 1;
  if (unit == TimeUnit::kQuarter) month = (c.month - 1) / 3 * 3 + 1;
  return DaysFromCivil(c.year, month, 1) * kDay;
}

int64_t Extract(TimeUnit unit, int64_t micros) {
  Civil c = ToCivil(micros);
  switch (unit) {
    case TimeUnit::kYear: return c.year;
    case TimeUnit::kQuarter: return (c.month - 1) / 3 + 1;
    case TimeUnit::kMonth: return c.month;
    case TimeUnit::kDay: return c.day;
    case TimeUnit::kHour: return c.time_of_day / (3600 * kSecond);
    case TimeUnit::kMinute: return c.time_of_day / (60 * kSecond) % 60;
    case TimeUnit::kSecond: return c.time_of_day / kSecond % 60;
    case TimeUnit::kMillisecond: return c.time_of_day / 1000 % 60000;
    case TimeUnit::kMicrosecond: return c.time_of_day % (60 * kSecond);
    case TimeUnit::kDayOfWeek: return FloorMod(c.days + 4, 7);  // 0 = Sunday
    case TimeUnit::kDayOfYear: return c.days - DaysFromCivil(c.year, 1, 1) + 1;
    case TimeUnit::kWeek: return IsoWeek(c.days);
    case TimeUnit::kEpoch: return FloorDiv(micros, kSecond);
  }
  return 0;
}

// micros + interval; false on overflow.
bool AddInterval(int64_t micros, const Interval& iv, int64_t* out) {
  int64_t v = micros;
  if (iv.months != 0) {
    Civil c = ToCivil(micros);
    int64_t month0 = c.year * 12 + (c.month - 1) + iv.months;
    int64_t year = FloorDiv(month0, 12);
    unsigned month = static_cast<unsigned>(FloorMod(month0, 12)) + 1;
    if (year < -290000 || year > 290000) return false;
    unsigned day = std::min(c.day, DaysInMonth(year, month));
    int64_t days = DaysFromCivil(year, month, day);
    if (__builtin_mul_overflow(days, kDay, &v) || __builtin_add_overflow(v, c.time_of_day, &v)) {
      return false;
    }
  }
  return !__builtin_add_overflow(v, iv.micros, out);
}

}  // namespace

Result<Column> EvalTime(const Node& node, std::vector<Column>& args, RowErrors* errors,
                        const Active& active) {
  const Column& a = args[0];
  int64_t n = a.size();
  Column out(node.type);
  out.ResizeFixed(n);
  int64_t* o = out.mutable_data<int64_t>();
  const int64_t* x = a.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    if (!IsActive(active, i) || a.IsNull(i)) {
      out.SetNull(i);
      continue;
    }
    switch (node.op) {
      case Op::kDateTrunc: o[i] = Truncate(node.unit, x[i]); break;
      case Op::kExtract: o[i] = Extract(node.unit, x[i]); break;
      default:
        if (!AddInterval(x[i], node.interval, &o[i])) {
          RowError(errors, node, i, "timestamp out of range");
          out.SetNull(i);
        }
        break;
    }
  }
  return out;
}

}  // namespace sluice::expr::internal
