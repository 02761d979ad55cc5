// NameThisThread: the name `top -H`, `ps -L`, `perf` and gdb show for the
// calling thread, so that an operator can tell a pipeline's lanes, shards and
// stages from the maintenance service and the HTTP server.
//
// Names follow "<role>:<owner>" ("lane2:orders", "window:q5", "maint1"),
// role first, because Linux keeps only the first 15 bytes of a name: a long
// pipeline name is cut, the role is not. Naming never fails the caller: a
// name the system refuses is left unset.
//
// Thread-safety: names the calling thread only.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// The longest name Linux keeps, in bytes (without the terminating NUL).
constexpr size_t kMaxThreadName = 15;

// "<role><index>:<owner>": the index left out when 0, the owner (and its
// colon) when empty.
std::string ThreadName(std::string_view role, int index, std::string_view owner);
void NameThisThread(std::string_view name);
// The calling thread's name ("" where the system does not say).
std::string ThisThreadName();

}  // namespace sluice
