// Deletion vectors (format v3): the deleted row positions of one data file as
// a `deletion-vector-v1` blob in a Puffin file.
//
// Blob bytes: [length u32 BE][magic D1 D3 39 64][portable 64-bit Roaring
// bitmap, LE][CRC-32 u32 BE over magic+bitmap]. The bitmap reader accepts
// array, bitset and run containers and empty/missing 32-bit buckets, and
// refuses positions that do not ascend (keys, values and runs must); the
// writer uses array and bitset containers.
//
// Puffin file: "PFA1" blobs footer, footer = "PFA1" JSON-payload
// payload-size(u32 LE) flags(4 bytes) "PFA1", written uncompressed. Reading a
// DV needs only the manifest entry's content offset and size, not the footer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/manifest.h"
#include "iceberg/positions.h"
#include "io/file_io.h"

namespace sluice::iceberg {

std::string SerializeDeletionVector(const PositionSet& positions);
Result<PositionSet> DeserializeDeletionVector(std::string_view blob);

// Reads the DV of a delete-file entry (content_offset/content_size_in_bytes
// into its Puffin file), checking length, magic, CRC and cardinality.
Result<PositionSet> ReadDeletionVector(FileIO& io, const std::string& puffin_path,
                                       const DataFile& entry);

// Writes one Puffin file holding a DV per data file; returns the delete-file
// entries (format puffin, referenced_data_file, content offset/size).
Result<std::vector<DataFile>> WriteDeletionVectors(
    FileIO& io, const std::string& path,
    const std::vector<std::pair<DataFile, PositionSet>>& vectors);

}  // namespace sluice::iceberg
