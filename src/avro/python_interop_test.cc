// Differential test against an independent Avro implementation, Debian's
// python3-avro (tests/interop/avro_read.py): it must read files sluice writes
// (records and Iceberg id attributes identical), and sluice must read the
// Iceberg fixtures exactly as it does.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "avro/iceberg_schema.h"
#include "avro/reader.h"
#include "avro/test_util.h"
#include "avro/writer.h"
#include "columnar/sql_schema.h"
#include "common/testing.h"

namespace sluice::avro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char kPython[] = "/usr/bin/python3";
const char kScript[] = "tests/interop/avro_read.py";

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

json Floating(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// A value in avro_read.py's raw form (the Avro value without logical types).
json Raw(const Column& c, int64_t row) {
  if (c.IsNull(row)) return nullptr;
  const DataType& t = *c.type();
  switch (t.id()) {
    case TypeId::kBoolean: return c.GetBool(row);
    case TypeId::kInt:
    case TypeId::kDate: return c.Value<int32_t>(row);
    case TypeId::kFloat: return Floating(c.Value<float>(row));
    case TypeId::kDouble: return Floating(c.Value<double>(row));
    case TypeId::kString: return std::string(c.GetBytes(row));
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid: return Hex(c.GetBytes(row));
    case TypeId::kDecimal: {
      auto u = static_cast<unsigned __int128>(c.Value<int128_t>(row));
      std::string bytes;
      for (int i = DecimalFixedSize(t.precision()) - 1; i >= 0; --i) {
        bytes.push_back(static_cast<char>(u >> (8 * i)));
      }
      return Hex(bytes);
    }
    case TypeId::kStruct: {
      json o = json::object();
      for (int i = 0; i < c.num_children(); ++i) o[t.fields()[i].name] = Raw(c.child(i), row);
      return o;
    }
    case TypeId::kList: {
      json a = json::array();
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) a.push_back(Raw(c.child(0), i));
      return a;
    }
    case TypeId::kMap: {
      bool string_keys = t.fields()[0].type->id() == TypeId::kString;
      json m = string_keys ? json::object() : json::array();
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) {
        if (string_keys) {
          m[std::string(c.child(0).GetBytes(i))] = Raw(c.child(1), i);
        } else {
          m.push_back({{"key", Raw(c.child(0), i)}, {"value", Raw(c.child(1), i)}});
        }
      }
      return m;
    }
    default: return c.Value<int64_t>(row);
  }
}

void AppendRaw(const Batch& b, json* records) {
  for (int64_t r = 0; r < b.num_rows(); ++r) {
    json o = json::object();
    for (size_t i = 0; i < b.columns.size(); ++i)
      o[b.schema->fields[i].name] = Raw(b.columns[i], r);
    records->push_back(std::move(o));
  }
}

void TypeIds(const DataType& t, const std::string& path, json* out);
void FieldIds(const std::vector<Field>& fields, const std::string& prefix, json* out) {
  for (const Field& f : fields) {
    std::string path = prefix.empty() ? f.name : prefix + "." + f.name;
    (*out)[path] = f.id;
    TypeIds(*f.type, path, out);
  }
}
void TypeIds(const DataType& t, const std::string& path, json* out) {
  switch (t.id()) {
    case TypeId::kStruct: FieldIds(t.fields(), path, out); break;
    case TypeId::kList:
    case TypeId::kMap:
      for (const Field& f : t.fields()) {
        (*out)[path + "." + f.name] = f.id;
        TypeIds(*f.type, path + "." + f.name, out);
      }
      break;
    default: break;
  }
}

class PythonAvroTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import avro' >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "python3-avro is not installed (scripts/install-deps.sh)";
    }
    dir_ = fs::temp_directory_path() / fmt::format("sluice_avro_interop_{}", getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs avro_read.py over `files`; one parsed JSON object per file.
  std::vector<json> RunPython(const std::vector<std::string>& files) {
    std::string cmd = fmt::format("{} {}", kPython, kScript);
    for (const auto& f : files) cmd += " '" + f + "'";
    std::string out = (dir_ / "python.out").string();
    cmd += " > '" + out + "' 2> '" + (dir_ / "python.err").string() + "'";
    int rc = std::system(cmd.c_str());
    std::ifstream err(dir_ / "python.err");
    std::string err_text((std::istreambuf_iterator<char>(err)), {});
    EXPECT_EQ(rc, 0) << err_text;
    std::vector<json> results;
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) results.push_back(json::parse(line));
    return results;
  }

  fs::path dir_;
};

TEST_F(PythonAvroTest, PythonReadsWhatSluiceWrites) {
  auto io = MakeLocalFileIO();
  std::vector<std::string> files;
  std::vector<json> want_records, want_ids;
  std::vector<std::shared_ptr<const Schema>> schemas;
  std::mt19937_64 rng(2024);
  schemas.push_back(std::make_shared<const Schema>(
      ParseColumnList("id BIGINT NOT NULL, b BOOLEAN, i INT, f FLOAT, d DOUBLE, "
                      "dec DECIMAL(38,6), small DECIMAL(3,2), dt DATE, t TIME, ts TIMESTAMP, "
                      "tz TIMESTAMPTZ, ns TIMESTAMP_NS, s STRING, u UUID, fx FIXED(5), "
                      "bin BINARY, tags ARRAY<STRING>, attrs MAP<STRING, BIGINT>, "
                      "sizes MAP<INT, BIGINT>, loc STRUCT<lat: DOUBLE NOT NULL, lon DOUBLE>")
          .value()));
  for (int i = 0; i < 12; ++i) {
    schemas.push_back(std::make_shared<const Schema>(testing::RandomSchema(&rng)));
  }
  for (size_t i = 0; i < schemas.size(); ++i) {
    const auto& schema = schemas[i];
    Batch batch = testing::RandomBatch(schema, 40, &rng);
    WriterOptions options;
    options.codec = i % 2 ? Codec::kDeflate : Codec::kNull;
    options.block_bytes = 700;
    options.record_name = "row";
    options.metadata = {{"format-version", "2"}, {"test-index", std::to_string(i)}};
    std::string path = (dir_ / fmt::format("w{}.avro", i)).string();
    ASSERT_OK_AND_ASSIGN(auto out, io->OpenOutput(path));
    ASSERT_OK_AND_ASSIGN(auto writer, AvroWriter::Open(std::move(out), *schema, options));
    ASSERT_OK(writer->Write(batch));
    ASSERT_OK(writer->Close().status());
    files.push_back(path);
    json records = json::array();
    AppendRaw(batch, &records);
    want_records.push_back(std::move(records));
    json ids = json::object();
    FieldIds(schema->fields, "", &ids);
    want_ids.push_back(std::move(ids));
  }
  std::vector<json> got = RunPython(files);
  ASSERT_EQ(got.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(fmt::format("{}: {}", files[i], schemas[i]->ToString()));
    EXPECT_EQ(got[i]["ids"], want_ids[i]);
    ASSERT_EQ(got[i]["records"].size(), want_records[i].size());
    for (size_t r = 0; r < want_records[i].size(); ++r) {
      ASSERT_EQ(got[i]["records"][r], want_records[i][r]) << "record " << r;
    }
    EXPECT_EQ(got[i]["metadata"]["test-index"], std::to_string(i));
    EXPECT_EQ(got[i]["metadata"]["avro.codec"], i % 2 ? "deflate" : "null");
  }
}

TEST_F(PythonAvroTest, SluiceReadsFixturesAsPythonDoes) {
  std::vector<std::string> files;
  for (const char* dir : {"../shared/fixtures/avro", "../shared/fixtures/iceberg"}) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.path().extension() == ".avro") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 50u);
  std::vector<json> got = RunPython(files);
  ASSERT_EQ(got.size(), files.size());
  auto io = MakeLocalFileIO();
  int64_t records = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(files[i]);
    ASSERT_OK_AND_ASSIGN(auto file, io->OpenInput(files[i]));
    ASSERT_OK_AND_ASSIGN(auto reader, AvroReader::Open(std::move(file)));
    json mine = json::array();
    Batch batch;
    for (;;) {
      ASSERT_OK_AND_ASSIGN(bool more, reader->Next(&batch));
      if (!more) break;
      AppendRaw(batch, &mine);
    }
    ASSERT_EQ(mine, got[i]["records"]);
    records += static_cast<int64_t>(mine.size());
    json ids = json::object();
    FieldIds(reader->schema()->fields, "", &ids);
    for (auto it = got[i]["ids"].begin(); it != got[i]["ids"].end(); ++it) {
      if (!it.value().is_null()) {
        EXPECT_EQ(ids[it.key()], it.value()) << it.key();
      }
    }
  }
  EXPECT_GT(records, 5000);
}

}  // namespace
}  // namespace sluice::avro
