// Content codings of request bodies (RFC 9110 section 8.4): gzip, deflate (zlib,
// or raw deflate as some clients send it) and br, decoded with a limit on the
// decoded size so that a small compressed body cannot expand without bound.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::server {

// Decodes `body` by the Content-Encoding field value `encoding` (a list, applied in
// order; "identity" and "" leave it). kInvalidArgument for a corrupt body,
// kNotImplemented for an unknown coding, kOutOfRange when the decoded body would
// pass `max_bytes`.
Result<std::string> DecodeContent(std::string_view encoding, std::string body, int64_t max_bytes);

}  // namespace sluice::server
