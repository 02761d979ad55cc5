// Reads Avro files written by other Iceberg implementations (Java, Spark,
// pyiceberg, DuckDB) and checks them against independent expectations: the
// decoded JSON icebird stores beside its fixtures, and the manifest-list
// counters of each table against the manifests they describe.
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "avro/reader.h"
#include "common/testing.h"

namespace sluice::avro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char kAvroDir[] = "../shared/fixtures/avro";
const char kIcebergDir[] = "../shared/fixtures/iceberg";

Result<std::vector<json>> ReadAll(const std::string& path, std::shared_ptr<const Schema>* schema,
                                  std::unique_ptr<AvroReader>* reader_out = nullptr);

// A value in the form of icebird's decoded JSON: bytes as arrays of numbers,
// maps as [{key, value}], structs as objects with null members left out.
json ToFixtureForm(const Column& c, int64_t row) {
  if (c.IsNull(row)) return nullptr;
  const DataType& t = *c.type();
  switch (t.id()) {
    case TypeId::kBoolean: return c.GetBool(row);
    case TypeId::kInt:
    case TypeId::kDate: return c.Value<int32_t>(row);
    case TypeId::kFloat: return c.Value<float>(row);
    case TypeId::kDouble: return c.Value<double>(row);
    case TypeId::kString: return std::string(c.GetBytes(row));
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid: {
      json a = json::array();
      for (unsigned char b : c.GetBytes(row)) a.push_back(static_cast<int>(b));
      return a;
    }
    case TypeId::kStruct: {
      json o = json::object();
      for (int i = 0; i < c.num_children(); ++i) {
        json v = ToFixtureForm(c.child(i), row);
        if (!v.is_null()) o[t.fields()[i].name] = std::move(v);
      }
      return o;
    }
    case TypeId::kList: {
      json a = json::array();
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) {
        a.push_back(ToFixtureForm(c.child(0), i));
      }
      return a;
    }
    case TypeId::kMap: {
      json a = json::array();
      for (uint32_t i = c.ListBegin(row); i < c.ListEnd(row); ++i) {
        a.push_back(
            {{"key", ToFixtureForm(c.child(0), i)}, {"value", ToFixtureForm(c.child(1), i)}});
      }
      return a;
    }
    case TypeId::kDecimal: return static_cast<double>(c.Value<int128_t>(row));
    default: return c.Value<int64_t>(row);  // long, time, timestamps
  }
}

// Equality up to the fixture's conventions: a missing key means null, and
// numbers went through JavaScript doubles (so 64-bit ids lost precision).
bool SameValue(const json& want, const json& got, const std::string& path, std::string* diff) {
  if (want.is_number() && got.is_number()) {
    if (want.get<double>() == got.get<double>()) return true;
  } else if (want.is_object() && got.is_object()) {
    std::set<std::string> keys;
    for (auto it = want.begin(); it != want.end(); ++it) keys.insert(it.key());
    for (auto it = got.begin(); it != got.end(); ++it) keys.insert(it.key());
    for (const std::string& k : keys) {
      json w = want.contains(k) ? want[k] : json();
      json g = got.contains(k) ? got[k] : json();
      if (!SameValue(w, g, path + "." + k, diff)) return false;
    }
    return true;
  } else if (want.is_array() && got.is_array() && want.size() == got.size()) {
    for (size_t i = 0; i < want.size(); ++i) {
      if (!SameValue(want[i], got[i], fmt::format("{}[{}]", path, i), diff)) return false;
    }
    return true;
  } else if (want == got) {
    return true;
  }
  *diff = fmt::format("{}: want {} got {}", path, want.dump(), got.dump());
  return false;
}

Result<std::vector<json>> ReadAll(const std::string& path, std::shared_ptr<const Schema>* schema,
                                  std::unique_ptr<AvroReader>* reader_out) {
  auto io = MakeLocalFileIO();
  ASSIGN_OR_RETURN(auto file, io->OpenInput(path));
  ASSIGN_OR_RETURN(auto reader, AvroReader::Open(std::move(file)));
  std::vector<json> rows;
  Batch batch;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      json o = json::object();
      for (size_t i = 0; i < batch.columns.size(); ++i) {
        json v = ToFixtureForm(batch.columns[i], r);
        // Keep nulls at the top level so tests can look fields up by name.
        o[batch.schema->fields[i].name] = std::move(v);
      }
      rows.push_back(std::move(o));
    }
  }
  *schema = reader->schema();
  if (reader_out) *reader_out = std::move(reader);
  return rows;
}

void ExpectMatchesJson(const std::string& avro_path) {
  std::string json_path = avro_path.substr(0, avro_path.size() - 5) + ".json";
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << json_path;
  json want = json::parse(in);
  std::shared_ptr<const Schema> schema;
  ASSERT_OK_AND_ASSIGN(std::vector<json> got, ReadAll(avro_path, &schema));
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::string diff;
    EXPECT_TRUE(SameValue(want[i], got[i], fmt::format("record {}", i), &diff))
        << avro_path << ": " << diff;
  }
}

TEST(AvroFixtureTest, JavaManifestMatchesDecodedJson) {
  ExpectMatchesJson(std::string(kAvroDir) + "/a85973e4-4009-4cba-875e-5278a2c6027d-m0.avro");
}

TEST(AvroFixtureTest, JavaManifestListMatchesDecodedJson) {
  ExpectMatchesJson(std::string(kAvroDir) +
                    "/snap-8656952484400131532-1-a85973e4-4009-4cba-875e-5278a2c6027d.avro");
}

TEST(AvroFixtureTest, JavaManifestMetadataAndFieldIds) {
  auto io = MakeLocalFileIO();
  ASSERT_OK_AND_ASSIGN(auto file, io->OpenInput(std::string(kAvroDir) +
                                                "/a85973e4-4009-4cba-875e-5278a2c6027d-m0.avro"));
  ASSERT_OK_AND_ASSIGN(auto reader, AvroReader::Open(std::move(file)));
  EXPECT_EQ(reader->codec(), Codec::kDeflate);
  EXPECT_EQ(reader->Metadata("format-version"), "2");
  EXPECT_EQ(reader->Metadata("content"), "data");
  EXPECT_NE(reader->Metadata("schema").find("\"fields\""), std::string::npos);
  EXPECT_FALSE(reader->Metadata("partition-spec").empty());
  const Schema& s = *reader->schema();
  ASSERT_NE(s.FindById(2), nullptr);
  EXPECT_EQ(s.FindById(2)->name, "data_file");
  EXPECT_EQ(s.FindById(0)->name, "status");
  EXPECT_TRUE(s.FindById(0)->required);
  EXPECT_FALSE(s.FindById(1)->required);  // snapshot_id is ["null", long]
  const Field* sizes = s.FindById(108);
  ASSERT_NE(sizes, nullptr);
  ASSERT_EQ(sizes->type->id(), TypeId::kMap);
  EXPECT_EQ(sizes->type->fields()[0].id, 117);
  EXPECT_EQ(sizes->type->fields()[1].id, 118);
  EXPECT_EQ(sizes->type->fields()[0].type->id(), TypeId::kInt);
  const Field* splits = s.FindById(132);
  ASSERT_NE(splits, nullptr);
  ASSERT_EQ(splits->type->id(), TypeId::kList);
  EXPECT_EQ(splits->type->fields()[0].id, 133);
}

std::vector<std::string> IcebergAvroFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kIcebergDir)) {
    if (e.is_regular_file() && e.path().extension() == ".avro") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const json* FieldById(const Schema& schema, const json& row, int32_t id) {
  for (const Field& f : schema.fields) {
    if (f.id == id) return row.contains(f.name) ? &row[f.name] : nullptr;
  }
  return nullptr;
}

// Every manifest and manifest list of every fixture table decodes, and each
// manifest list's counters agree with the manifests it points at.
TEST(AvroFixtureTest, AllIcebergMetadataFilesDecodeAndAgree) {
  std::vector<std::string> files = IcebergAvroFiles();
  ASSERT_GT(files.size(), 50u);
  int lists = 0, checked_manifests = 0, total_rows = 0, length_matches = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    std::shared_ptr<const Schema> schema;
    ASSERT_OK_AND_ASSIGN(std::vector<json> rows, ReadAll(path, &schema));
    total_rows += static_cast<int>(rows.size());
    if (schema->FindById(500) == nullptr) continue;  // a manifest, not a list
    ++lists;
    for (const json& m : rows) {
      std::string manifest = fs::path(FieldById(*schema, m, 500)->get<std::string>()).filename();
      // Manifests sit beside their list (names repeat across tables).
      std::string mpath = (fs::path(path).parent_path() / manifest).string();
      if (!fs::exists(mpath)) continue;  // not shipped with the fixture
      SCOPED_TRACE(manifest);
      // Some fixture manifests were rewritten after their list was written,
      // so lengths may differ; count matches and require most to agree.
      if (FieldById(*schema, m, 501)->get<int64_t>() ==
          static_cast<int64_t>(fs::file_size(mpath))) {
        ++length_matches;
      }
      std::shared_ptr<const Schema> mschema;
      ASSERT_OK_AND_ASSIGN(std::vector<json> entries, ReadAll(mpath, &mschema));
      int64_t files = 0, rows = 0;
      for (const json& e : entries) {
        int status = FieldById(*mschema, e, 0)->get<int>();
        ASSERT_GE(status, 0);
        ASSERT_LE(status, 2);
        ++files;
        rows += (*FieldById(*mschema, e, 2))["record_count"].get<int64_t>();
      }
      // ids 504/505/506: added/existing/deleted files; 512/513/514: their rows.
      // Writers disagree on which status a rewritten entry counts under
      // (e.g. the v1 repro table), so compare the totals.
      int64_t want_files = 0, want_rows = 0;
      bool have_counts = true;
      for (int32_t id : {504, 505, 506, 512, 513, 514}) {
        const json* v = FieldById(*schema, m, id);
        if (v == nullptr || v->is_null()) {
          have_counts = false;
          break;
        }
        (id < 510 ? want_files : want_rows) += v->get<int64_t>();
      }
      if (have_counts) {
        EXPECT_EQ(want_files, files);
        EXPECT_EQ(want_rows, rows);
      }
      ++checked_manifests;
    }
  }
  EXPECT_GT(lists, 20);
  EXPECT_GT(checked_manifests, 20);
  EXPECT_GE(length_matches, checked_manifests * 8 / 10);
  EXPECT_GT(total_rows, 5000);
}

}  // namespace
}  // namespace sluice::avro
