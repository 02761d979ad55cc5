// Status and Result<T>: the one error dialect of sluice.
//
// A Status is OK or carries a code and a message. Codes let callers decide what
// to do (retry a conflict, never delete files on kCommitStateUnknown, report
// corruption). Messages carry context, added at each layer boundary with
// WithContext(): "file a.parquet: column ts: page 3: invalid RLE run".
// No exceptions cross module boundaries.
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,     // bad input from a user or a caller: schema, SQL, config, record
  kNotFound,            // file, table, namespace, column missing
  kAlreadyExists,       // create of something that exists
  kConflict,            // concurrent modification; the caller may refresh and retry
  kIOError,             // storage failed; see retryable()
  kCommitStateUnknown,  // commit may or may not have happened: never delete its files
  kCorruption,          // stored bytes do not decode: truncated, bad magic, bad checksum
  kNotImplemented,      // valid input using a feature sluice does not support
  kOutOfRange,          // value does not fit the target type
  kInternal,            // a bug in sluice
  kFenced,              // a newer writer (epoch) took over: this one must stop, never commit
};

std::string_view StatusCodeName(StatusCode code);

// `text` with control bytes (NUL, newline, escape sequences...) written as \xNN, so
// that a message naming a user's bad input prints whole and on one line.
std::string PrintableText(std::string_view text);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message, bool retryable = false);

  static Status OK() { return Status(); }
  template <typename... Args>
  static Status Invalid(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status AlreadyExists(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kAlreadyExists, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status Conflict(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kConflict, fmt::format(f, std::forward<Args>(args)...), true);
  }
  template <typename... Args>
  static Status IOError(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kIOError, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status Corruption(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kCorruption, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status NotImplemented(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kNotImplemented, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status OutOfRange(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kOutOfRange, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status Fenced(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kFenced, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  static Status Internal(fmt::format_string<Args...> f, Args&&... args) {
    return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
  }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return ok() ? StatusCode::kOk : state_->code; }
  const std::string& message() const;
  bool retryable() const { return state_ != nullptr && state_->retryable; }

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;
  template <typename... Args>
  Status WithContextF(fmt::format_string<Args...> f, Args&&... args) const {
    if (ok()) return *this;
    return WithContext(fmt::format(f, std::forward<Args>(args)...));
  }

  // "Corruption: file x: bad magic"
  std::string ToString() const;

 private:
  struct State {
    StatusCode code;
    std::string message;
    bool retryable;
  };
  std::shared_ptr<const State> state_;  // null when OK; shared so copies are cheap
};

// Result<T> holds a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T ValueOr(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

namespace internal {
inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace internal

}  // namespace sluice

#define SLUICE_CONCAT_INNER(a, b) a##b
#define SLUICE_CONCAT(a, b) SLUICE_CONCAT_INNER(a, b)

// Returns the Status of `expr` (a Status or a Result) from the enclosing function if not OK.
#define RETURN_IF_ERROR(expr)                                     \
  do {                                                            \
    ::sluice::Status _st = ::sluice::internal::GetStatus((expr)); \
    if (!_st.ok()) return _st;                                    \
  } while (false)

// Like RETURN_IF_ERROR, adding context to the message.
#define RETURN_IF_ERROR_CTX(expr, ...)                            \
  do {                                                            \
    ::sluice::Status _st = ::sluice::internal::GetStatus((expr)); \
    if (!_st.ok()) return _st.WithContextF(__VA_ARGS__);          \
  } while (false)

#define SLUICE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// ASSIGN_OR_RETURN(auto x, MakeX()); declares/assigns x or returns the error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL(SLUICE_CONCAT(_result_, __LINE__), lhs, rexpr)
