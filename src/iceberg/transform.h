// Iceberg partition transforms (spec §Partition Transforms): identity,
// bucket[N], truncate[W], year, month, day, hour, void.
//
// Transforms apply to whole columns: Apply() maps a source Column to a Column
// of the result type, null in → null out. Unknown transform names parse (as
// kUnknown, keeping their text) so that tables using them can still be read,
// but Apply() refuses them and writers must not commit with them.
#pragma once

#include <string>
#include <string_view>

#include "columnar/column.h"
#include "common/status.h"

namespace sluice::iceberg {

struct Transform {
  enum class Kind { kIdentity, kBucket, kTruncate, kYear, kMonth, kDay, kHour, kVoid, kUnknown };
  Kind kind = Kind::kIdentity;
  int32_t param = 0;  // N for bucket, W for truncate
  std::string text;   // the original spelling of an unknown transform

  static Result<Transform> Parse(std::string_view text);
  std::string ToString() const;
  bool operator==(const Transform& o) const {
    return kind == o.kind && param == o.param && text == o.text;
  }

  // Whether the transform accepts this source type, and its result type.
  Status CheckSource(const DataType& source) const;
  Result<TypePtr> ResultType(const TypePtr& source) const;

  Result<Column> Apply(const Column& source) const;
};

// Bucket hash of one value (spec Appendix B), exposed for tests and for
// bucket-join style uses. `value` is the Column's physical value at `row`.
Result<int32_t> BucketHash(const Column& column, int64_t row);

}  // namespace sluice::iceberg
