// libFuzzer target: the input is a whole Parquet file, opened from memory and
// read to the end (all columns, all row groups, each row rendered as JSON).
// Any crash, sanitizer report, hang or huge allocation is a bug; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "columnar/json_writer.h"
#include "io/file_io.h"
#include "parquet/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  auto io = MakeMemoryFileIO();
  if (!io->WriteFile("fuzz.parquet", std::string_view(reinterpret_cast<const char*>(data), size))
           .ok()) {
    return 0;
  }
  auto file = io->OpenInput("fuzz.parquet");
  if (!file.ok()) return 0;
  auto reader = parquet::ParquetReader::Open(std::move(*file));
  if (!reader.ok()) return 0;
  Batch batch;
  std::string line;
  while (true) {
    auto more = (*reader)->Next(&batch);
    if (!more.ok() || !*more) break;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      line.clear();
      AppendJsonRow(batch, r, &line);
    }
  }
  return 0;
}
