// Test helpers for src/server: running `promtool check metrics` on a rendering.
#pragma once

#include <string>
#include <utility>

namespace sluice::server::testing {

// True when `promtool` is on the PATH.
bool HavePromtool();

// Runs `promtool check metrics` on `text`: its exit status (0: passed) and output.
std::pair<int, std::string> Promtool(const std::string& text);

}  // namespace sluice::server::testing
