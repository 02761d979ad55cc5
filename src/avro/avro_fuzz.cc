// libFuzzer target: the input is a whole Avro object container file, read
// through MemoryFileIO; every record is decoded (or some fields read past)
// and rendered as JSON.
// Build with -DSLUICE_FUZZ=ON (clang); seed it with ../shared/fixtures/**/*.avro.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "avro/reader.h"
#include "columnar/json_writer.h"
#include "io/file_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  auto io = MakeMemoryFileIO();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!io->WriteFile("fuzz.avro", bytes, true).ok()) return 0;
  auto file = io->OpenInput("fuzz.avro");
  if (!file.ok()) return 0;
  avro::ReaderOptions options;
  options.max_block_bytes = 16 << 20;
  options.batch_rows = size % 2 ? 3 : 0;  // exercise partial blocks too
  // Every third input reads past some fields (by id; manifests' column
  // statistics are 108-137) instead of decoding them.
  if (size % 3 == 0) options.skip_field_ids = {1, 2, 3, 102, 108, 109, 110, 125, 128, 137};
  auto reader = avro::AvroReader::Open(std::move(file).value(), options);
  if (!reader.ok()) return 0;
  Batch batch;
  std::string json;
  for (;;) {
    auto more = (*reader)->Next(&batch);
    if (!more.ok() || !*more) break;
    for (int64_t r = 0; r < batch.num_rows(); ++r) {
      json.clear();
      AppendJsonRow(batch, r, &json);
    }
  }
  return 0;
}
