#include "range_matcher.h"

#include <atomic>
#include <cstring>

namespace gpucap::recorder {
namespace {

std::string LiteralPrefix(const std::string& pattern) {
  std::string out;
  for (char c : pattern) {
    if (std::strchr("\\^$.|?*+()[]{}", c)) break;
    out += c;
  }
  // A quantifier after the literal applies to its last character only.
  if (out.size() < pattern.size() && std::strchr("?*{", pattern[out.size()]) && !out.empty()) {
    out.pop_back();
  }
  return out;
}

// FNV-1a over 8 bytes at a time: names are short, and a collision only
// costs a comparison of the texts.
uint64_t HashOf(std::string_view s) {
  uint64_t h = 1469598103934665603ull ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 1099511628211ull;
  return h ^ (h >> 32);
}

}  // namespace

std::unique_ptr<RangeMatcher> RangeMatcher::Make(const std::string& pattern, std::string* error) {
  static std::atomic<uint64_t> next_serial{1};
  std::unique_ptr<RangeMatcher> m(new RangeMatcher());
  try {
    m->regex_ = std::regex(pattern, std::regex::optimize);
  } catch (const std::regex_error& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  m->pattern_ = pattern;
  m->literal_ = LiteralPrefix(pattern);
  m->literal_only_ = !m->literal_.empty() && m->literal_ == pattern;
  m->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  return m;
}

bool RangeMatcher::RegexMatches(std::string_view name) const {
  return std::regex_search(name.begin(), name.end(), regex_);
}

bool MatchCache::Matches(const RangeMatcher& m, std::string_view name) {
  if (!m.MayMatch(name)) return false;
  if (m.literal_only()) return true;
  if (serial_ != m.serial()) {
    serial_ = m.serial();
    for (Entry& e : entries_) e.used = false;
  }
  uint64_t h = HashOf(name);
  Entry& e = entries_[h % kEntries];
  if (e.used && e.hash == h && e.text == name) {
    ++hits_;
    return e.result;
  }
  ++misses_;
  e.used = true;
  e.hash = h;
  e.text.assign(name.data(), name.size());
  e.result = m.RegexMatches(name);
  return e.result;
}

}  // namespace gpucap::recorder
