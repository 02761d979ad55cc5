// Parquet writer throughput, without JSON parsing: decodes a JSON lines file
// into 64k-row batches in memory (untimed), then times ParquetWriter writing
// them to a file (best of N runs).
//   parquet_writer_benchmark --schema "id BIGINT, ..." IN.jsonl OUT.parquet [RUNS]
// Prints "write_seconds rows bytes cpu_seconds".
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "io/file_io.h"
#include "parquet/writer.h"

namespace {

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int Run(int argc, char** argv) {
  if (argc < 5 || std::string(argv[1]) != "--schema") {
    std::fprintf(stderr, "usage: %s --schema SQL IN.jsonl OUT.parquet [RUNS]\n", argv[0]);
    return 2;
  }
  auto parsed = sluice::ParseColumnList(argv[2]);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", parsed.status().ToString().c_str());
    return 1;
  }
  auto schema = std::make_shared<const sluice::Schema>(std::move(parsed).value());
  std::ifstream in(argv[3], std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto decoder = sluice::JsonDecoder::Make(schema);
  std::vector<sluice::Batch> batches;
  size_t pos = 0;
  int64_t line_no = 1, rows = 0;
  while (pos < text.size()) {
    size_t end = pos;
    int lines = 0;
    while (end < text.size() && lines < 65536) {
      size_t nl = text.find('\n', end);
      end = nl == std::string::npos ? text.size() : nl + 1;
      ++lines;
    }
    batches.push_back(sluice::Batch::Make(schema));
    sluice::Status st = (*decoder)->DecodeLines(std::string_view(text).substr(pos, end - pos),
                                                line_no, &batches.back());
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
    rows += batches.back().num_rows();
    line_no += lines;
    pos = end;
  }
  int runs = argc > 5 ? std::atoi(argv[5]) : 3;
  double best = 1e30, best_cpu = 0;
  int64_t bytes = 0;
  auto io = sluice::MakeLocalFileIO();
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = CpuSeconds();
    auto out = io->OpenOutput(argv[4], true);
    auto writer = sluice::parquet::ParquetWriter::Open(std::move(out).value(), *schema);
    if (!writer.ok()) {
      std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
      return 1;
    }
    for (const auto& b : batches) {
      sluice::Status st = (*writer)->Write(b);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
      }
    }
    auto metrics = (*writer)->Close();
    if (!metrics.ok()) {
      std::fprintf(stderr, "%s\n", metrics.status().ToString().c_str());
      return 1;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (secs < best) {
      best = secs;
      best_cpu = CpuSeconds() - c0;
    }
    bytes = metrics->file_size;
  }
  std::printf("%.6f %lld %lld %.6f\n", best, static_cast<long long>(rows),
              static_cast<long long>(bytes), best_cpu);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Run(argc, argv); }
