#include "sql/ast.h"

namespace sluice::sql {

std::string QualifiedName::ToString() const {
  std::string out;
  for (const Identifier& part : parts) {
    if (!out.empty()) out += '.';
    out += part.name;
  }
  return out;
}

const Option* Options::Find(std::string_view key) const {
  for (const Option& o : items) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::map<std::string, std::string> Options::ToMap() const {
  std::map<std::string, std::string> out;
  for (const Option& o : items) out[o.key] = o.value;
  return out;
}

std::string CreateTable::PartitionSpecText() const {
  std::string out;
  for (const PartitionTerm& term : partition_by) {
    if (!out.empty()) out += ", ";
    out += term.text;
  }
  return out;
}

}  // namespace sluice::sql
