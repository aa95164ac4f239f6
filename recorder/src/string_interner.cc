#include "string_interner.h"

#include <cstring>

namespace gpucap::recorder {

// Longer names are cut: a definition is a label, not a payload.
constexpr size_t kMaxNameBytes = 64 << 10;

void StringInterner::Note(const char* pointer, std::vector<format::SmallMessage>* out) {
  if (!pointer) return;
  auto key = reinterpret_cast<uintptr_t>(pointer);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!known_.insert(key).second) return;
  }
  format::StringDef def;
  def.pointer = key;
  def.text.assign(pointer, strnlen(pointer, kMaxNameBytes));
  out->emplace_back(std::move(def));
}

void StringInterner::Forget(const std::vector<format::SmallMessage>& defs) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& m : defs) {
    if (auto* d = std::get_if<format::StringDef>(&m)) known_.erase(d->pointer);
  }
}

void StringInterner::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  known_.clear();
}

size_t StringInterner::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return known_.size();
}

}  // namespace gpucap::recorder
