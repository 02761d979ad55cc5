#include "server/test_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sluice::server::testing {

bool HavePromtool() { return std::system("promtool --version > /dev/null 2>&1") == 0; }

std::pair<int, std::string> Promtool(const std::string& text) {
  static int counter = 0;
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("sluice-metrics-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
          .string();
  {
    std::ofstream out(path);
    out << text;
  }
  std::string cmd = "promtool check metrics < " + path + " 2>&1";
  std::string output;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) output += buf;
  int status = p != nullptr ? pclose(p) : -1;
  std::filesystem::remove(path);
  return {status, output};
}

}  // namespace sluice::server::testing
