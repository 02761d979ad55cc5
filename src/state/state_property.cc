#include "state/state_property.h"

#include <nlohmann/json.hpp>

namespace sluice::state {

std::string WindowStateProperty(std::string_view pipeline) {
  return std::string(kWindowStatePrefix) + std::string(pipeline);
}

std::string KeyIndexProperty(std::string_view pipeline) {
  return std::string(kKeyIndexPrefix) + std::string(pipeline);
}

bool IsStateProperty(std::string_view name) {
  return name.starts_with(kWindowStatePrefix) || name.starts_with(kKeyIndexPrefix);
}

std::string StateProperty::Encode() const {
  nlohmann::json j;
  j["checkpoint"] = checkpoint;
  if (epoch) j["epoch"] = *epoch;
  j["files"] = files;
  if (watermark) j["watermark"] = *watermark;
  if (plan) j["plan"] = *plan;
  if (key) j["key"] = *key;
  return j.dump();
}

Result<StateProperty> StateProperty::Decode(std::string_view name, std::string_view value) {
  auto bad = [&](std::string_view why) {
    return Status::Corruption("table property {} is not the state sluice writes: {}", name, why);
  };
  auto j = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not an object");
  StateProperty p;
  auto it = j.find("checkpoint");
  if (it == j.end() || !it->is_number_integer()) return bad("no integer \"checkpoint\"");
  p.checkpoint = it->get<int64_t>();
  if (it = j.find("epoch"); it != j.end()) {
    if (!it->is_number_integer()) return bad("\"epoch\" is not an integer");
    p.epoch = it->get<int64_t>();
  }
  it = j.find("files");
  if (it == j.end() || !it->is_array()) return bad("no array \"files\"");
  for (const auto& f : *it) {
    if (!f.is_string()) return bad("a file name is not a string");
    p.files.push_back(f.get<std::string>());
  }
  for (auto [field, out] : {std::pair{"watermark", &p.watermark}, std::pair{"plan", &p.plan},
                            std::pair{"key", &p.key}}) {
    it = j.find(field);
    if (it == j.end()) continue;
    if (!it->is_string()) return bad(fmt::format("\"{}\" is not a string", field));
    *out = it->get<std::string>();
  }
  return p;
}

}  // namespace sluice::state
