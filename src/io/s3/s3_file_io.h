// S3FileIO: the FileIO contract (io/file_io.h) over S3 objects named
// s3://bucket/key (s3a:// and s3n:// too).
//
// How each part of the contract holds on a store without rename:
// - Nothing is visible until Close: an OutputFile keeps what is appended in memory
//   up to one part (S3Options::part_size), then streams parts of a multipart upload;
//   Close is one PutObject or the CompleteMultipartUpload, each atomic in S3. An
//   unclosed or aborted file aborts its upload (a store that cannot leaves the
//   parts to its lifecycle rules; they are never an object).
// - Create never replaces: Close of a non-overwriting file checks the key is free
//   and sends If-None-Match: * (AWS S3 refuses with 412 -> kAlreadyExists). A store
//   that ignores the condition (s3rver, older MinIO) leaves a window between the
//   check and the write; sluice's commits never depend on it (the catalog's
//   compare-and-swap is the commit point, and every data, manifest and state file
//   name is unique).
// - Reads are ranged GETs; an InputFile knows its size from one HEAD, and keeps
//   the file's last 64 KiB after the first read there (Parquet footers, Avro
//   tails are read in several small pieces).
// - Delete of a missing object is kNotFound (one HEAD first: S3 itself answers
//   204 either way); DeleteAll sends DeleteObjects, 1,000 keys a request.
// - List is ListObjectsV2 over the key prefix, every page.
#pragma once

#include <memory>

#include "io/file_io.h"
#include "io/s3/s3_client.h"

namespace sluice::s3 {

std::unique_ptr<FileIO> MakeS3FileIO(std::shared_ptr<S3Client> client);

}  // namespace sluice::s3

namespace sluice {

// The FileIO of sluice's commands and pipelines: s3:// (s3a://, s3n://)
// locations go to S3 with options from the environment (io/s3/s3_options.h; read
// on the first S3 path, so a local warehouse needs no AWS settings), everything
// else to the local file system.
std::unique_ptr<FileIO> MakeStorageFileIO();

}  // namespace sluice
