#include "common/kill_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sluice {
namespace {

struct Armed {
  std::string name;
  long hit = 1;  // die on this hit
};

const Armed* ReadArmed() {
  const char* v = std::getenv("SLUICE_KILL_POINT");
  if (v == nullptr || *v == '\0') return nullptr;
  auto* a = new Armed;  // lives for the whole process
  std::string s = v;
  auto colon = s.rfind(':');
  a->name = s.substr(0, colon);
  if (colon != std::string::npos)
    a->hit = std::max(1L, std::strtol(s.c_str() + colon + 1, nullptr, 10));
  return a;
}

const Armed* armed = ReadArmed();
std::atomic<long> hits{0};

}  // namespace

namespace internal {
const bool kill_points_armed = armed != nullptr;
}

void KillPointSlow(std::string_view name) {
  if (armed == nullptr || name != armed->name) return;
  if (hits.fetch_add(1) + 1 < armed->hit) return;
  std::string msg = "sluice: kill point " + armed->name + " reached, SIGKILL\n";
  (void)!::write(2, msg.data(), msg.size());
  ::kill(::getpid(), SIGKILL);
  ::_exit(137);  // not reached
}

}  // namespace sluice
