// `sluice avro cat|schema|meta`: inspect Avro object container files.
#include <cstdio>
#include <string>

#include "avro/reader.h"
#include "cli/commands.h"
#include "columnar/json_writer.h"

namespace sluice::cli {

namespace {

Result<std::unique_ptr<avro::AvroReader>> OpenAvro(const std::string& path) {
  auto io = MakeLocalFileIO();
  ASSIGN_OR_RETURN(auto file, io->OpenInput(path));
  return avro::AvroReader::Open(std::move(file));
}

Status Cat(const std::string& path, int64_t limit) {
  ASSIGN_OR_RETURN(auto reader, OpenAvro(path));
  Batch batch;
  std::string line;
  int64_t printed = 0;
  while (limit < 0 || printed < limit) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
    for (int64_t r = 0; r < batch.num_rows() && (limit < 0 || printed < limit); ++r, ++printed) {
      line.clear();
      AppendJsonRow(batch, r, &line);
      line.push_back('\n');
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
  }
  return Status::OK();
}

Status PrintAvroSchema(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, OpenAvro(path));
  std::string text = avro::AvroSchemaToJson(reader->avro_schema())
                         .dump(2, ' ', false, avro::Json::error_handler_t::replace);
  std::printf("%s\n", text.c_str());
  return Status::OK();
}

Status PrintAvroMeta(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, OpenAvro(path));
  avro::Json out = avro::Json::object();
  avro::Json meta = avro::Json::object();
  for (const auto& [key, value] : reader->metadata()) {
    if (key != "avro.schema") meta[key] = value;
  }
  Batch batch;
  for (;;) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&batch));
    if (!more) break;
  }
  out["codec"] = std::string(avro::CodecName(reader->codec()));
  out["blocks"] = reader->blocks_read();
  out["records"] = reader->rows_read();
  out["metadata"] = std::move(meta);
  std::printf("%s\n", out.dump(2, ' ', false, avro::Json::error_handler_t::replace).c_str());
  return Status::OK();
}

}  // namespace

void RegisterAvroCommands(CLI::App& app, int* exit_code) {
  auto* avro = app.add_subcommand("avro", "Inspect Avro object container files");
  avro->require_subcommand(1);

  struct Args {
    std::string file;
    int64_t limit = -1;
  };
  auto args = std::make_shared<Args>();

  auto* cat = avro->add_subcommand(
      "cat", "Print the records of an Avro file as JSON lines (Iceberg JSON value forms)");
  cat->add_option("FILE", args->file, "Avro object container file")->required();
  cat->add_option("--limit", args->limit, "Print at most N records (default: all)")
      ->check(AtLeast(0));
  cat->callback([args, exit_code] {
    Status st = Cat(args->file, args->limit);
    if (!st.ok()) *exit_code = ReportError("avro cat", st);
  });

  auto* schema = avro->add_subcommand(
      "schema", "Print the writer schema of an Avro file as pretty JSON (with Iceberg ids)");
  schema->add_option("FILE", args->file, "Avro object container file")->required();
  schema->callback([args, exit_code] {
    Status st = PrintAvroSchema(args->file);
    if (!st.ok()) *exit_code = ReportError("avro schema", st);
  });

  auto* meta = avro->add_subcommand(
      "meta",
      "Print the file metadata (all keys but avro.schema), codec, block and record counts as JSON");
  meta->add_option("FILE", args->file, "Avro object container file")->required();
  meta->callback([args, exit_code] {
    Status st = PrintAvroMeta(args->file);
    if (!st.ok()) *exit_code = ReportError("avro meta", st);
  });
}

}  // namespace sluice::cli
