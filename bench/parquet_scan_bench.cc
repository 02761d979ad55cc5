// Full-scan read throughput (not a test): decodes every row group of each
// file into column batches (all columns) and prints rows and seconds, best of
// N passes. bench/parquet_bench.sh compares it with DuckDB reading the same
// file in the same run.
//
//   build/bench/parquet_scan_bench FILE [PASSES=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "parquet/reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: parquet_scan_bench FILE [PASSES]\n");
    return 2;
  }
  int passes = argc > 2 ? std::atoi(argv[2]) : 3;
  auto io = sluice::MakeLocalFileIO();
  double best = 1e18;
  int64_t rows = 0;
  for (int p = 0; p < passes; ++p) {
    auto start = std::chrono::steady_clock::now();
    auto in = io->OpenInput(argv[1]);
    if (!in.ok()) return std::fprintf(stderr, "%s\n", in.status().ToString().c_str()), 1;
    auto reader = sluice::parquet::ParquetReader::Open(std::move(*in));
    if (!reader.ok()) return std::fprintf(stderr, "%s\n", reader.status().ToString().c_str()), 1;
    sluice::Batch b;
    rows = 0;
    while (true) {
      auto more = (*reader)->Next(&b);
      if (!more.ok()) return std::fprintf(stderr, "%s\n", more.status().ToString().c_str()), 1;
      if (!*more) break;
      rows += b.num_rows();
    }
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("%lld %.6f\n", static_cast<long long>(rows), best);
  return 0;
}
