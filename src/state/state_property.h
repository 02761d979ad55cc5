// StateProperty: the table property through which a checkpoint names the
// state files it committed (docs/state.md): `sluice.state.<pipeline>` for a
// windowed pipeline's operator state, `sluice.keys.<pipeline>` for a
// primary-key pipeline's key index. Its value is a JSON object
//
//   {"checkpoint": N, "epoch": E, "files": [base, delta, ...],
//    "watermark": "...", "plan": "...",   (window state)
//    "key": "..."}                        (key index)
//
// set in the same catalog commit as checkpoint N's snapshot, so the files it
// names are the state of exactly that checkpoint, the base first and then
// the deltas in the order they apply.
//
// One grammar, one parser: pipelines write the property and restore from
// it, orphan cleanup keeps the files it names. Decode refuses, as
// kCorruption naming the property, a value that is not such an object: not
// JSON, no integer "checkpoint", no array "files" of strings, or a field
// of the wrong type. Which fields a kind requires (a window state's
// watermark, say) is its reader's to check.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sluice::state {

inline constexpr std::string_view kWindowStatePrefix = "sluice.state.";
inline constexpr std::string_view kKeyIndexPrefix = "sluice.keys.";

std::string WindowStateProperty(std::string_view pipeline);
std::string KeyIndexProperty(std::string_view pipeline);
// Whether a table property of this name is either kind's.
bool IsStateProperty(std::string_view name);

struct StateProperty {
  int64_t checkpoint = 0;
  std::optional<int64_t> epoch;
  std::vector<std::string> files;        // the base first
  std::optional<std::string> watermark;  // window state: the watermarks' encoding
  std::optional<std::string> plan;       // window state: the definition's fingerprint
  std::optional<std::string> key;        // key index: the key columns' fingerprint

  std::string Encode() const;
  // `name` is the property's, for the error.
  static Result<StateProperty> Decode(std::string_view name, std::string_view value);
};

}  // namespace sluice::state
