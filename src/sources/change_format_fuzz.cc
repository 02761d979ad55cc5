// libFuzzer target: an arbitrary record (value, message key, tombstone or
// not) is parsed as FORMAT UPSERT, FORMAT DEBEZIUM and a changelog record. No input may crash; a
// change that upserts or deletes must carry a braced JSON object as its image,
// and an error must say what is wrong. Build with -DSLUICE_FUZZ=ON (clang).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/change_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using sluice::sources::Change;
  const bool tombstone = (data[0] & 1) != 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t cut = rest.find('\n');
  std::string_view key = cut == std::string_view::npos ? std::string_view() : rest.substr(0, cut);
  std::string_view value = cut == std::string_view::npos ? rest : rest.substr(cut + 1);
  for (auto format :
       {sluice::sources::ChangeFormat::kUpsert, sluice::sources::ChangeFormat::kDebezium,
        sluice::sources::ChangeFormat::kChangelog}) {
    sluice::sources::ChangeParser parser(format);
    Change change;
    sluice::Status st = parser.Parse(
        tombstone ? std::nullopt : std::optional<std::string_view>(value), key, &change);
    if (!st.ok()) {
      if (st.message().empty()) std::abort();
      continue;
    }
    if (change.kind == Change::Kind::kNone) continue;
    // Braced like an object (what is inside is the row decoder's to check).
    if (change.image.size() < 2 || change.image.front() != '{' || change.image.back() != '}') {
      std::abort();
    }
  }
  return 0;
}
