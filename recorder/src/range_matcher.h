// Which NVTX range names a pattern picks (--window-nvtx, --capture-range
// nvtx:REGEX): std::regex search, behind the literal the pattern starts
// with, because names without it cannot match and looking for it is far
// cheaper than the regex on every push. A pattern that is all literal is
// answered by the search for it alone.
//
// MatchCache keeps a matcher's answers for the names one thread saw last, so
// that a name that comes again (a registered string, a module's constant
// name) runs the regex once. It is keyed by the name's text, never by where
// the text lives: a buffer written again with another name (PyTorch formats
// each emit_nvtx name into a fresh string, often at the same address) is
// another key.
#ifndef GPUCAP_RECORDER_RANGE_MATCHER_H_
#define GPUCAP_RECORDER_RANGE_MATCHER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

namespace gpucap::recorder {

class RangeMatcher {
 public:
  // nullptr and *error set when the pattern is not a valid regex.
  static std::unique_ptr<RangeMatcher> Make(const std::string& pattern, std::string* error);
  bool Matches(std::string_view name) const { return MayMatch(name) && (literal_only_ || RegexMatches(name)); }
  // False when the name cannot match (it lacks the pattern's literal);
  // true means the regex must say.
  bool MayMatch(std::string_view name) const {
    return literal_.empty() || name.find(literal_) != std::string_view::npos;
  }
  // Whether MayMatch alone answers (the pattern is its literal).
  bool literal_only() const { return literal_only_; }
  bool RegexMatches(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }
  // Tells matchers apart for the lifetime of the process (an address may be
  // reused by a later recorder's matcher).
  uint64_t serial() const { return serial_; }

 private:
  RangeMatcher() = default;
  std::string pattern_;
  std::string literal_;
  bool literal_only_ = false;
  uint64_t serial_ = 0;
  std::regex regex_;
};

// One thread's answers of one matcher at a time (a different matcher
// empties it). Not thread-safe: one per thread.
class MatchCache {
 public:
  bool Matches(const RangeMatcher& m, std::string_view name);
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  static constexpr size_t kEntries = 64;
  struct Entry {
    uint64_t hash = 0;
    bool used = false;
    bool result = false;
    std::string text;
  };
  uint64_t serial_ = 0;
  std::array<Entry, kEntries> entries_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_MATCHER_H_
