// `sluice parquet write`: JSON lines → one Parquet file, streaming in batches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/json_input.h"
#include "cli/progress.h"
#include "columnar/json_reader.h"
#include "columnar/sql_schema.h"
#include "io/file_io.h"
#include "parquet/compression.h"
#include "parquet/writer.h"

namespace sluice::cli {

namespace {

struct WriteArgs {
  std::string schema;
  std::string codec = "zstd";
  int level = 0;
  int64_t row_group_rows = parquet::WriterOptions{}.row_group_rows;
  int64_t page_size = 0;
  int64_t page_rows = parquet::WriterOptions{}.page_rows;
  bool no_dictionary = false;
  bool verbose = false;
  bool progress = false;
  std::string input;
  std::string output;
};

Status RunWrite(const WriteArgs& args) {
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Schema parsed, ParseColumnList(args.schema));
  auto schema = std::make_shared<const Schema>(std::move(parsed));
  parquet::WriterOptions options;
  ASSIGN_OR_RETURN(options.codec, parquet::ParseCodecName(args.codec));
  options.compression_level = args.level;
  options.row_group_rows = args.row_group_rows;
  if (args.page_size > 0) options.page_bytes = args.page_size;
  options.page_rows = args.page_rows;
  options.dictionary = !args.no_dictionary;

  ASSIGN_OR_RETURN(auto input, JsonLinesReader::Open(args.input, schema));
  auto io = MakeLocalFileIO();
  ASSIGN_OR_RETURN(auto out, io->OpenOutput(args.output, /*overwrite=*/true));
  // On any error below the writer is destroyed unclosed: nothing is left at OUT.
  ASSIGN_OR_RETURN(auto writer, parquet::ParquetWriter::Open(std::move(out), *schema, options));

  Batch batch;
  Progress progress("write " + args.output, args.progress);
  while (true) {
    ASSIGN_OR_RETURN(bool more, input->Next(&batch));
    if (!more) break;
    progress.Add(batch.num_rows());
    RETURN_IF_ERROR(writer->Write(batch));
  }
  progress.Finish();
  ASSIGN_OR_RETURN(parquet::FileMetrics metrics, writer->Close());
  if (args.verbose) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "%s: %lld rows, %lld bytes, %zu row groups, %.3f s (%.0f rows/s)\n",
                 args.output.c_str(), static_cast<long long>(metrics.record_count),
                 static_cast<long long>(metrics.file_size), metrics.split_offsets.size(), secs,
                 secs > 0 ? metrics.record_count / secs : 0.0);
  }
  return Status::OK();
}

}  // namespace

void RegisterParquetWriteCommand(CLI::App& parquet, int* exit_code) {
  auto args = std::make_shared<WriteArgs>();
  auto* cmd = parquet.add_subcommand("write", "Convert JSON lines to a Parquet file");
  cmd->add_option("--schema", args->schema,
                  "Columns as SQL, e.g. \"id BIGINT NOT NULL, name STRING\"")
      ->required();
  cmd->add_option("--codec", args->codec, "zstd, snappy, gzip, lz4_raw or uncompressed")
      ->capture_default_str();
  cmd->add_option("--level", args->level, "Compression level (zstd, gzip; 0 = codec default)");
  cmd->add_option("--row-group-size", args->row_group_rows,
                  "Rows per row group, at most (a row group also closes at 128 MiB of pages)")
      ->capture_default_str()
      ->check(AtLeast(1));
  cmd->add_option("--page-size", args->page_size, "Data page size in bytes (default 1 MiB)")
      ->check(AtLeast(1));
  cmd->add_option("--page-rows", args->page_rows, "Rows per data page, at most (0 = no limit)")
      ->capture_default_str()
      ->check(AtLeast(0));
  cmd->add_flag("--no-dictionary", args->no_dictionary, "Write PLAIN values only");
  cmd->add_flag("--verbose", args->verbose, "Print rows, bytes and time to stderr");
  cmd->add_flag("--progress", args->progress,
                "Show rows read on stderr even when it is not a terminal");
  cmd->add_option("IN", args->input, "JSON lines file, or - for stdin")->required();
  cmd->add_option("OUT", args->output, "Parquet file to write")->required();
  cmd->callback([args, exit_code] {
    Status st = RunWrite(*args);
    *exit_code = st.ok() ? 0 : ReportError("parquet write", st);
  });
}

}  // namespace sluice::cli
