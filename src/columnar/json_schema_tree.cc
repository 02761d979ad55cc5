#include "columnar/json_schema_tree.h"

#include <algorithm>

namespace sluice::json_internal {
namespace {

std::unique_ptr<Node> Compile(const std::vector<Field>& members, const Field* self,
                              const DataType* type);

std::unique_ptr<Node> CompileField(const Field& f) {
  if (f.type->id() == TypeId::kStruct) return Compile(f.type->fields(), &f, f.type.get());
  auto n = std::make_unique<Node>();
  n->field = &f;
  n->id = f.type->id();
  n->type = f.type.get();
  n->required = f.required;
  for (const Field& c : f.type->fields()) n->children.push_back(CompileField(c));
  return n;
}

std::unique_ptr<Node> Compile(const std::vector<Field>& members, const Field* self,
                              const DataType* type) {
  auto n = std::make_unique<Node>();
  n->field = self;
  n->type = type;
  n->required = self != nullptr && self->required;
  for (size_t i = 0; i < members.size(); ++i) {
    n->children.push_back(CompileField(members[i]));
    n->names.push_back(members[i].name);
    n->index.emplace(members[i].name, static_cast<int>(i));
    bool simple = true;
    for (unsigned char c : members[i].name) simple = simple && c >= 0x20 && c != '"' && c != '\\';
    n->simple.push_back(simple ? 1 : 0);
    uint64_t word = 0, mask = 0;
    size_t len = std::min<size_t>(members[i].name.size(), 8);
    std::memcpy(&word, members[i].name.data(), len);
    std::memset(&mask, 0xff, len);
    n->prefix_word.push_back(word);
    n->prefix_mask.push_back(mask);
  }
  if (members.size() > 64) n->seen_wide.resize((members.size() - 64 + 511) / 512);
  return n;
}

}  // namespace

std::unique_ptr<Node> CompileSchemaTree(const std::vector<Field>& fields) {
  return Compile(fields, nullptr, nullptr);
}

}  // namespace sluice::json_internal
