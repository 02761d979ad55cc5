#include "common/thread_name.h"

#include <pthread.h>

namespace sluice {

std::string ThreadName(std::string_view role, int index, std::string_view owner) {
  std::string name(role);
  if (index != 0) name += std::to_string(index);
  if (!owner.empty()) {
    name += ':';
    name += owner;
  }
  return name;
}

void NameThisThread(std::string_view name) {
  std::string cut(name.substr(0, kMaxThreadName));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

std::string ThisThreadName() {
  char name[kMaxThreadName + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return "";
  return name;
}

}  // namespace sluice
