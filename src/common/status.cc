#include "common/status.h"

namespace sluice {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "Invalid argument";
    case StatusCode::kNotFound: return "Not found";
    case StatusCode::kAlreadyExists: return "Already exists";
    case StatusCode::kConflict: return "Conflict";
    case StatusCode::kIOError: return "IO error";
    case StatusCode::kCommitStateUnknown: return "Commit state unknown";
    case StatusCode::kCorruption: return "Corruption";
    case StatusCode::kNotImplemented: return "Not implemented";
    case StatusCode::kOutOfRange: return "Out of range";
    case StatusCode::kInternal: return "Internal error";
    case StatusCode::kFenced: return "Fenced";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string message, bool retryable) {
  if (code != StatusCode::kOk) {
    state_ = std::make_shared<const State>(State{code, std::move(message), retryable});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return ok() ? kEmpty : state_->message;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(state_->code, fmt::format("{}: {}", context, state_->message), state_->retryable);
}

std::string PrintableText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", StatusCodeName(state_->code), state_->message);
}

}  // namespace sluice
