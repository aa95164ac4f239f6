// Interns slice names for one trace.
#ifndef GPUCAP_BUILDER_SRC_NAME_TABLE_H_
#define GPUCAP_BUILDER_SRC_NAME_TABLE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace gpucap::builder {

// Equal names get equal ids, so renderers can intern and cache escaping.
class NameTable {
 public:
  std::pair<uint32_t, std::string_view> Intern(std::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return {it->second, it->first};
    store_.emplace_back(s);
    std::string_view v = store_.back();
    uint32_t id = static_cast<uint32_t>(store_.size());
    ids_.emplace(v, id);
    return {id, v};
  }

 private:
  std::deque<std::string> store_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_NAME_TABLE_H_
