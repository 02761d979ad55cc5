// Parquet file metadata (the Thrift structs of parquet.thrift that sluice reads
// and writes), with Thrift compact protocol (de)serialization.
//
// Only the fields sluice uses are modelled; unknown fields are skipped on read.
// Optional Thrift fields are std::optional (or a has_ flag). Field numbers in
// comments are those of parquet.thrift.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::parquet {

enum class PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};

// The legacy ConvertedType enum (still written by many writers, and by us for
// readers that do not know LogicalType).
enum class ConvertedType : int32_t {
  kUtf8 = 0,
  kMap = 1,
  kMapKeyValue = 2,
  kList = 3,
  kEnum = 4,
  kDecimal = 5,
  kDate = 6,
  kTimeMillis = 7,
  kTimeMicros = 8,
  kTimestampMillis = 9,
  kTimestampMicros = 10,
  kUint8 = 11,
  kUint16 = 12,
  kUint32 = 13,
  kUint64 = 14,
  kInt8 = 15,
  kInt16 = 16,
  kInt32 = 17,
  kInt64 = 18,
  kJson = 19,
  kBson = 20,
  kInterval = 21,
};

enum class Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };

enum class Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kBitPacked = 4,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};

enum class CompressionCodec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLzo = 3,
  kBrotli = 4,
  kLz4 = 5,  // the deprecated Hadoop-framed LZ4
  kZstd = 6,
  kLz4Raw = 7,
};

enum class PageType : int32_t {
  kDataPage = 0,
  kIndexPage = 1,
  kDictionaryPage = 2,
  kDataPageV2 = 3,
};

enum class TimeUnit : int32_t { kMillis, kMicros, kNanos };

// LogicalType union (parquet.thrift field numbers: STRING=1 MAP=2 LIST=3 ENUM=4
// DECIMAL=5 DATE=6 TIME=7 TIMESTAMP=8 INTEGER=10 UNKNOWN=11 JSON=12 BSON=13 UUID=14
// FLOAT16=15).
struct LogicalType {
  enum class Kind : int32_t {
    kNone = 0,
    kString = 1,
    kMap = 2,
    kList = 3,
    kEnum = 4,
    kDecimal = 5,
    kDate = 6,
    kTime = 7,
    kTimestamp = 8,
    kInteger = 10,
    kUnknown = 11,
    kJson = 12,
    kBson = 13,
    kUuid = 14,
    kFloat16 = 15,
  };
  Kind kind = Kind::kNone;
  int32_t precision = 0, scale = 0;   // kDecimal
  bool is_adjusted_to_utc = false;    // kTime, kTimestamp
  TimeUnit unit = TimeUnit::kMicros;  // kTime, kTimestamp
  int8_t bit_width = 0;               // kInteger
  bool is_signed = true;              // kInteger
};

struct SchemaElement {
  std::optional<PhysicalType> type;             // 1; absent for groups
  std::optional<int32_t> type_length;           // 2
  std::optional<Repetition> repetition_type;    // 3; absent for the root
  std::string name;                             // 4
  std::optional<int32_t> num_children;          // 5
  std::optional<ConvertedType> converted_type;  // 6
  std::optional<int32_t> scale;                 // 7
  std::optional<int32_t> precision;             // 8
  std::optional<int32_t> field_id;              // 9
  std::optional<LogicalType> logical_type;      // 10
};

struct Statistics {
  std::optional<std::string> max;          // 1 (deprecated, signed order)
  std::optional<std::string> min;          // 2 (deprecated, signed order)
  std::optional<int64_t> null_count;       // 3
  std::optional<int64_t> distinct_count;   // 4
  std::optional<std::string> max_value;    // 5 (column order)
  std::optional<std::string> min_value;    // 6 (column order)
  std::optional<bool> is_max_value_exact;  // 7
  std::optional<bool> is_min_value_exact;  // 8
};

struct DataPageHeader {
  int32_t num_values = 0;                               // 1
  Encoding encoding = Encoding::kPlain;                 // 2
  Encoding definition_level_encoding = Encoding::kRle;  // 3
  Encoding repetition_level_encoding = Encoding::kRle;  // 4
  std::optional<Statistics> statistics;                 // 5
};

struct DictionaryPageHeader {
  int32_t num_values = 0;                // 1
  Encoding encoding = Encoding::kPlain;  // 2
  std::optional<bool> is_sorted;         // 3
};

struct DataPageHeaderV2 {
  int32_t num_values = 0;                     // 1
  int32_t num_nulls = 0;                      // 2
  int32_t num_rows = 0;                       // 3
  Encoding encoding = Encoding::kPlain;       // 4
  int32_t definition_levels_byte_length = 0;  // 5
  int32_t repetition_levels_byte_length = 0;  // 6
  bool is_compressed = true;                  // 7 (default true)
  std::optional<Statistics> statistics;       // 8
};

struct PageHeader {
  PageType type = PageType::kDataPage;                         // 1
  int32_t uncompressed_page_size = 0;                          // 2
  int32_t compressed_page_size = 0;                            // 3
  std::optional<int32_t> crc;                                  // 4
  std::optional<DataPageHeader> data_page_header;              // 5
  std::optional<DictionaryPageHeader> dictionary_page_header;  // 7
  std::optional<DataPageHeaderV2> data_page_header_v2;         // 8
};

struct KeyValue {
  std::string key;                   // 1
  std::optional<std::string> value;  // 2
};

struct ColumnMetaData {
  PhysicalType type = PhysicalType::kInt32;                  // 1
  std::vector<Encoding> encodings;                           // 2
  std::vector<std::string> path_in_schema;                   // 3
  CompressionCodec codec = CompressionCodec::kUncompressed;  // 4
  int64_t num_values = 0;                                    // 5
  int64_t total_uncompressed_size = 0;                       // 6
  int64_t total_compressed_size = 0;                         // 7
  std::vector<KeyValue> key_value_metadata;                  // 8
  int64_t data_page_offset = 0;                              // 9
  std::optional<int64_t> index_page_offset;                  // 10
  std::optional<int64_t> dictionary_page_offset;             // 11
  std::optional<Statistics> statistics;                      // 12
};

struct ColumnChunk {
  std::optional<std::string> file_path;     // 1
  int64_t file_offset = 0;                  // 2
  std::optional<ColumnMetaData> meta_data;  // 3
};

struct SortingColumn {
  int32_t column_idx = 0;    // 1
  bool descending = false;   // 2
  bool nulls_first = false;  // 3
};

struct RowGroup {
  std::vector<ColumnChunk> columns;              // 1
  int64_t total_byte_size = 0;                   // 2
  int64_t num_rows = 0;                          // 3
  std::vector<SortingColumn> sorting_columns;    // 4
  std::optional<int64_t> file_offset;            // 5
  std::optional<int64_t> total_compressed_size;  // 6
  std::optional<int16_t> ordinal;                // 7
};

// ColumnOrder is a union whose only member is TYPE_ORDER (an empty struct);
// `true` per leaf column means TYPE_DEFINED_ORDER.
struct FileMetaData {
  int32_t version = 1;                       // 1
  std::vector<SchemaElement> schema;         // 2 (depth-first, root first)
  int64_t num_rows = 0;                      // 3
  std::vector<RowGroup> row_groups;          // 4
  std::vector<KeyValue> key_value_metadata;  // 5
  std::optional<std::string> created_by;     // 6
  std::vector<bool> column_orders;           // 7
};

// Compact-protocol serialization. Deserializers reject truncated or malformed
// input with kCorruption, naming the struct and field; they never read past
// `data`. `*consumed` (when given) is set to the bytes the struct occupied.
void SerializeFileMetaData(const FileMetaData& md, std::string* out);
Result<FileMetaData> DeserializeFileMetaData(std::string_view data);
void SerializePageHeader(const PageHeader& header, std::string* out);
Result<PageHeader> DeserializePageHeader(std::string_view data, size_t* consumed);

std::string_view EncodingName(Encoding e);
std::string_view CodecName(CompressionCodec c);
std::string_view PhysicalTypeName(PhysicalType t);

}  // namespace sluice::parquet
