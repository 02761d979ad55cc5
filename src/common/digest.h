// Digests and secrets: hex encoding, SHA-256, random tokens, and comparing
// secrets without leaking their content through timing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// `bytes` as lower-case hex.
std::string HexLower(std::string_view bytes);
// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);
// `n` bytes from the operating system's secure random source, as hex (2n
// characters): session tokens, nonces.
std::string RandomHex(size_t n);
// Standard base64 (RFC 4648, padded) to bytes; nullopt when malformed.
std::optional<std::string> DecodeBase64(std::string_view text);
// Whether `a` equals `b`, in time that depends on their lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace sluice
