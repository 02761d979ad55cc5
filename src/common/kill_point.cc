#include "common/kill_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>

namespace sluice {
namespace {

struct Armed {
  std::string name;
  long hit = 1;  // act on this hit
};

// NAME[:N] from the environment variable `var`, if set.
std::optional<Armed> ReadArmed(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return std::nullopt;
  Armed a;
  std::string s = v;
  auto colon = s.rfind(':');
  a.name = s.substr(0, colon);
  if (colon != std::string::npos)
    a.hit = std::max(1L, std::strtol(s.c_str() + colon + 1, nullptr, 10));
  return a;
}

// (Never destroyed: a kill point may be reached while the process exits.)
const Armed* armed = [] {
  std::optional<Armed> a = ReadArmed("SLUICE_KILL_POINT");
  return a ? new Armed(std::move(*a)) : nullptr;
}();
std::atomic<long> hits{0};

// The armed fail point: hits counted under the lock, fired once.
std::mutex fail_mu;
Armed fail_armed;
long fail_hits = 0;
bool InitFailPoint() {
  std::optional<Armed> a = ReadArmed("SLUICE_FAIL_POINT");
  if (!a) return false;
  fail_armed = std::move(*a);
  return true;
}

}  // namespace

namespace internal {
const bool kill_points_armed = armed != nullptr;
std::atomic<bool> fail_points_armed{InitFailPoint()};
}  // namespace internal

void KillPointSlow(std::string_view name) {
  if (armed == nullptr || name != armed->name) return;
  if (hits.fetch_add(1) + 1 < armed->hit) return;
  std::string msg = "sluice: kill point " + armed->name + " reached, SIGKILL\n";
  (void)!::write(2, msg.data(), msg.size());
  ::kill(::getpid(), SIGKILL);
  ::_exit(137);  // not reached
}

Status FailPointSlow(std::string_view name) {
  std::lock_guard<std::mutex> lock(fail_mu);
  if (!internal::fail_points_armed.load() || name != fail_armed.name) return Status::OK();
  if (++fail_hits != fail_armed.hit) return Status::OK();
  internal::fail_points_armed = false;  // (once)
  return Status::IOError("fail point {} (hit {}, SLUICE_FAIL_POINT)", name, fail_hits);
}

void ArmFailPoint(std::string_view name, long hit) {
  std::lock_guard<std::mutex> lock(fail_mu);
  fail_armed = Armed{std::string(name), std::max(1L, hit)};
  fail_hits = 0;
  internal::fail_points_armed = !name.empty();
}

}  // namespace sluice
