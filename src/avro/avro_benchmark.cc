// Avro encode/decode throughput on manifest-like rows and on wide primitive
// rows, for the null and deflate codecs. Run: build/src/avro/avro_benchmark
#include <benchmark/benchmark.h>

#include <random>

#include "avro/reader.h"
#include "avro/test_util.h"
#include "avro/writer.h"
#include "columnar/sql_schema.h"

namespace sluice::avro {
namespace {

constexpr int64_t kRows = 100'000;

std::shared_ptr<const Schema> BenchSchema(int which) {
  const char* sql =
      which == 0 ? "status INT NOT NULL, snapshot_id BIGINT, file_path STRING NOT NULL, "
                   "record_count BIGINT NOT NULL, sizes MAP<INT, BIGINT>, bounds MAP<INT, BINARY>, "
                   "splits ARRAY<BIGINT>"
                 : "a BIGINT NOT NULL, b BIGINT, c INT NOT NULL, d DOUBLE NOT NULL, e STRING, "
                   "f TIMESTAMPTZ, g BOOLEAN NOT NULL, h DECIMAL(18,2)";
  return std::make_shared<const Schema>(ParseColumnList(sql).value());
}

std::string WriteBench(const std::shared_ptr<const Schema>& schema, Codec codec, FileIO* io) {
  std::mt19937_64 rng(1);
  Batch batch = testing::RandomBatch(schema, kRows, &rng);
  WriterOptions options;
  options.codec = codec;
  auto writer = AvroWriter::Open(io->OpenOutput("b.avro", true).value(), *schema, options).value();
  if (!writer->Write(batch).ok()) std::abort();
  (void)writer->Close();
  return "b.avro";
}

void BM_Decode(benchmark::State& state) {
  auto schema = BenchSchema(static_cast<int>(state.range(0)));
  Codec codec = state.range(1) ? Codec::kDeflate : Codec::kNull;
  auto io = MakeMemoryFileIO();
  std::string path = WriteBench(schema, codec, io.get());
  int64_t size = io->OpenInput(path).value()->size();
  for (auto _ : state) {
    auto reader = AvroReader::Open(io->OpenInput(path).value()).value();
    Batch batch;
    int64_t rows = 0;
    while (reader->Next(&batch).value()) rows += batch.num_rows();
    if (rows != kRows) std::abort();
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_Decode)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state) {
  auto schema = BenchSchema(static_cast<int>(state.range(0)));
  Codec codec = state.range(1) ? Codec::kDeflate : Codec::kNull;
  std::mt19937_64 rng(1);
  Batch batch = testing::RandomBatch(schema, kRows, &rng);
  auto io = MakeMemoryFileIO();
  int64_t size = 0;
  for (auto _ : state) {
    WriterOptions options;
    options.codec = codec;
    auto writer =
        AvroWriter::Open(io->OpenOutput("e.avro", true).value(), *schema, options).value();
    if (!writer->Write(batch).ok()) std::abort();
    size = writer->Close().value();
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_Encode)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::avro

BENCHMARK_MAIN();
