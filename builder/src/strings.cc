#include "gpucap/builder/strings.h"

#include <algorithm>
#include <tuple>

namespace gpucap::builder {

StringResolver::StringResolver(const std::vector<format::SequencedString>& strings) {
  entries_.reserve(strings.size());
  for (size_t i = 0; i < strings.size(); ++i) {
    entries_.push_back({strings[i].def.pointer, strings[i].sequence, static_cast<uint32_t>(i)});
  }
  // Stable on index so that two definitions in one frame keep file order.
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.pointer, a.sequence, a.index) < std::tie(b.pointer, b.sequence, b.index);
  });
}

StringResolver::Resolution StringResolver::Resolve(uint64_t pointer, uint32_t sequence) const {
  if (pointer == 0) return {};
  auto first = std::lower_bound(entries_.begin(), entries_.end(), pointer,
                                [](const Entry& e, uint64_t p) { return e.pointer < p; });
  if (first == entries_.end() || first->pointer != pointer) return {};
  auto after = std::lower_bound(first, entries_.end(), std::pair{pointer, sequence},
                                [](const Entry& e, const std::pair<uint64_t, uint32_t>& k) {
                                  return std::tie(e.pointer, e.sequence) < std::tie(k.first, k.second);
                                });
  if (after != first) return {std::prev(after)->index, false};
  return {first->index, true};
}

}  // namespace gpucap::builder
