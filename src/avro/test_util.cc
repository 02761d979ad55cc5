#include "avro/test_util.h"

#include <cmath>
#include <limits>

#include "columnar/json_writer.h"
#include "columnar/value_format.h"

namespace sluice::avro::testing {

namespace {

using Rng = std::mt19937_64;

int Uniform(Rng* rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(*rng); }

TypePtr RandomType(Rng* rng, int depth);

Field RandomField(Rng* rng, int depth, int index) {
  Field f;
  f.name = fmt::format("f{}", index);
  f.type = RandomType(rng, depth);
  f.required = Uniform(rng, 0, 2) == 0;
  return f;
}

TypePtr RandomPrimitive(Rng* rng) {
  switch (Uniform(rng, 0, 15)) {
    case 0: return DataType::Boolean();
    case 1: return DataType::Int();
    case 2: return DataType::Long();
    case 3: return DataType::Float();
    case 4: return DataType::Double();
    case 5: {
      int p = Uniform(rng, 1, 38);
      return DataType::Decimal(p, Uniform(rng, 0, p));
    }
    case 6: return DataType::Date();
    case 7: return DataType::Time();
    case 8: return DataType::Timestamp();
    case 9: return DataType::TimestampTz();
    case 10: return DataType::TimestampNs();
    case 11: return DataType::TimestampTzNs();
    case 12: return DataType::String();
    case 13: return DataType::Uuid();
    case 14: return DataType::Fixed(Uniform(rng, 1, 20));
    default: return DataType::Binary();
  }
}

TypePtr RandomType(Rng* rng, int depth) {
  int pick = depth > 0 ? Uniform(rng, 0, 9) : 0;
  switch (pick) {
    case 7: {
      std::vector<Field> fields;
      int n = Uniform(rng, 1, 4);
      for (int i = 0; i < n; ++i) fields.push_back(RandomField(rng, depth - 1, i));
      return DataType::Struct(std::move(fields));
    }
    case 8: {
      Field element = RandomField(rng, depth - 1, 0);
      element.name.clear();  // List() names it "element"
      return DataType::List(element);
    }
    case 9: {
      Field key;
      static const TypePtr kKeys[] = {DataType::String(), DataType::Int(), DataType::Long(),
                                      DataType::Uuid(), DataType::Date()};
      key.type = kKeys[Uniform(rng, 0, 4)];
      Field value = RandomField(rng, depth - 1, 0);
      value.name.clear();  // Map() names it "value"
      return DataType::Map(key, value);
    }
    default: return RandomPrimitive(rng);
  }
}

std::string RandomBytes(Rng* rng, int n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(Uniform(rng, 0, 255));
  return s;
}

template <typename T>
T Pick(Rng* rng, std::initializer_list<T> extremes) {
  if (Uniform(rng, 0, 3) == 0) return *(extremes.begin() + Uniform(rng, 0, extremes.size() - 1));
  return static_cast<T>((*rng)());
}

void AppendRandom(Column* c, bool required, Rng* rng, int* budget);

void AppendValue(Column* c, Rng* rng, int* budget) {
  const DataType& t = *c->type();
  switch (t.id()) {
    case TypeId::kBoolean: c->AppendBool(Uniform(rng, 0, 1)); return;
    case TypeId::kInt:
    case TypeId::kDate:
      c->Append<int32_t>(Pick<int32_t>(rng, {INT32_MIN, INT32_MAX, 0, -1}));
      return;
    case TypeId::kLong:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      c->Append<int64_t>(Pick<int64_t>(rng, {INT64_MIN, INT64_MAX, 0, -1}));
      return;
    case TypeId::kTime: c->Append<int64_t>(Uniform(rng, 0, 86'399'999) * int64_t{1000}); return;
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      c->Append<int64_t>(std::uniform_int_distribution<int64_t>(-62'000'000'000'000'000,
                                                                250'000'000'000'000'000)(*rng));
      return;
    case TypeId::kFloat: {
      float extremes[] = {0.0f,
                          -0.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::denorm_min()};
      c->Append<float>(Uniform(rng, 0, 2) == 0
                           ? extremes[Uniform(rng, 0, 6)]
                           : std::uniform_real_distribution<float>(-1e6f, 1e6f)(*rng));
      return;
    }
    case TypeId::kDouble: {
      double extremes[] = {0.0,
                           -0.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::lowest(),
                           std::numeric_limits<double>::denorm_min()};
      c->Append<double>(Uniform(rng, 0, 2) == 0
                            ? extremes[Uniform(rng, 0, 6)]
                            : std::uniform_real_distribution<double>(-1e300, 1e300)(*rng));
      return;
    }
    case TypeId::kDecimal: {
      int128_t max = DecimalMaxUnscaled(t.precision());
      int128_t v;
      switch (Uniform(rng, 0, 3)) {
        case 0: v = max; break;
        case 1: v = -max; break;
        default: {
          unsigned __int128 r = (static_cast<unsigned __int128>((*rng)()) << 64) | (*rng)();
          v = static_cast<int128_t>(r % static_cast<unsigned __int128>(max + 1));
          if (Uniform(rng, 0, 1)) v = -v;
        }
      }
      c->Append<int128_t>(v);
      return;
    }
    case TypeId::kString: {
      static const char* kStrings[] = {"", "a", "héllo wörld", "\"quoted\"\n\t\\", "日本語"};
      if (Uniform(rng, 0, 1)) {
        c->AppendBytes(kStrings[Uniform(rng, 0, 4)]);
      } else {
        std::string s(Uniform(rng, 0, 40), 'x');
        for (char& ch : s) ch = static_cast<char>(Uniform(rng, 'a', 'z'));
        c->AppendBytes(s);
      }
      return;
    }
    case TypeId::kUuid: c->AppendBytes(RandomBytes(rng, 16)); return;
    case TypeId::kFixed: c->AppendBytes(RandomBytes(rng, t.width())); return;
    case TypeId::kBinary: c->AppendBytes(RandomBytes(rng, Uniform(rng, 0, 30))); return;
    case TypeId::kStruct:
      for (int i = 0; i < c->num_children(); ++i) {
        AppendRandom(c->mutable_child(i), t.fields()[i].required, rng, budget);
      }
      c->FinishNested();
      return;
    case TypeId::kList:
    case TypeId::kMap: {
      int n = *budget > 0 ? Uniform(rng, 0, 3) : 0;
      *budget -= n;
      for (int i = 0; i < n; ++i) {
        for (int k = 0; k < c->num_children(); ++k) {
          AppendRandom(c->mutable_child(k), t.fields()[k].required, rng, budget);
        }
      }
      c->FinishNested();
      return;
    }
  }
}

void AppendRandom(Column* c, bool required, Rng* rng, int* budget) {
  if (!required && Uniform(rng, 0, 4) == 0) {
    c->AppendNull();
  } else {
    AppendValue(c, rng, budget);
  }
}

}  // namespace

Schema RandomSchema(Rng* rng, int max_depth) {
  Schema s;
  int n = Uniform(rng, 1, 8);
  for (int i = 0; i < n; ++i) s.fields.push_back(RandomField(rng, max_depth, i));
  int32_t next = 1;
  AssignFreshIds(&s.fields, &next);
  return s;
}

Batch RandomBatch(const std::shared_ptr<const Schema>& schema, int64_t rows, Rng* rng) {
  Batch b = Batch::Make(schema);
  for (int64_t r = 0; r < rows; ++r) {
    int budget = 12;  // list/map elements per row
    for (size_t i = 0; i < b.columns.size(); ++i) {
      AppendRandom(&b.columns[i], schema->fields[i].required, rng, &budget);
    }
  }
  return b;
}

std::string JsonRows(const Batch& batch) {
  std::string out;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    AppendJsonRow(batch, r, &out);
    out.push_back('\n');
  }
  return out;
}

}  // namespace sluice::avro::testing
