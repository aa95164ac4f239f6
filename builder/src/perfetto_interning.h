// Interning for Perfetto traces. A string gets one iid for the whole trace;
// each packet sequence defines an iid (in interned_data) the first time one
// of its packets uses it, and remembers that it did.
#ifndef GPUCAP_BUILDER_SRC_PERFETTO_INTERNING_H_
#define GPUCAP_BUILDER_SRC_PERFETTO_INTERNING_H_

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpucap::builder {

// The iids a sequence has defined: dense small integers, so a bitset.
class IidSet {
 public:
  // True if `iid` was not in the set (and now is).
  bool Insert(uint64_t iid) {
    size_t word = iid >> 6;
    if (word >= bits_.size()) bits_.resize(word + 1 + bits_.size() / 2, 0);
    uint64_t bit = uint64_t{1} << (iid & 63);
    if (bits_[word] & bit) return false;
    bits_[word] |= bit;
    return true;
  }

 private:
  std::vector<uint64_t> bits_;
};

// Strings to iids 1, 2, ... for one trace. Most strings a renderer is handed
// (argument names, annotation names, API names) are the same few, passed
// again and again from the same storage: a small cache keyed by address and
// length, checked against the text, skips hashing them.
class StringIds {
 public:
  // The iid of `s`; `*added` says whether it is new to the trace.
  // `literal`: `s` is a string literal (static storage), so its address
  // alone names its text.
  uint64_t Id(std::string_view s, bool literal = false) {
    CacheEntry& c = cache_[CacheSlot(s)];
    if (c.data == s.data() && c.size == s.size() && c.iid != 0 &&
        (literal || std::memcmp(c.text, s.data(), s.size()) == 0)) {
      return c.iid;
    }
    auto it = ids_.find(s);
    uint64_t iid;
    if (it != ids_.end()) {
      iid = it->second;
    } else {
      text_.emplace_back(s);
      iid = text_.size();
      ids_.emplace(text_.back(), iid);
    }
    c = {s.data(), s.size(), iid, text_[iid - 1].data()};
    return iid;
  }
  std::string_view Text(uint64_t iid) const { return text_[iid - 1]; }

 private:
  struct CacheEntry {
    const char* data = nullptr;  // the caller's
    size_t size = 0;
    uint64_t iid = 0;
    const char* text = nullptr;  // ours
  };
  static constexpr size_t kCacheSlots = 1024;
  static size_t CacheSlot(std::string_view s) {
    uint64_t h = (reinterpret_cast<uintptr_t>(s.data()) ^ (s.size() << 48)) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h >> 54);  // top 10 bits
  }

  std::vector<CacheEntry> cache_ = std::vector<CacheEntry>(kCacheSlots);
  std::deque<std::string> text_;  // iid - 1 -> text; a deque keeps the keys below in place
  std::unordered_map<std::string_view, uint64_t> ids_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_PERFETTO_INTERNING_H_
