// Which NVTX range names a pattern picks (--window-nvtx, --capture-range
// nvtx:REGEX): std::regex search, behind the literal the pattern starts
// with, because names without it cannot match and looking for it is far
// cheaper than the regex on every push.
#ifndef GPUCAP_RECORDER_RANGE_MATCHER_H_
#define GPUCAP_RECORDER_RANGE_MATCHER_H_

#include <memory>
#include <regex>
#include <string>
#include <string_view>

namespace gpucap::recorder {

class RangeMatcher {
 public:
  // nullptr and *error set when the pattern is not a valid regex.
  static std::unique_ptr<RangeMatcher> Make(const std::string& pattern, std::string* error);
  bool Matches(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  RangeMatcher() = default;
  std::string pattern_;
  std::string literal_;
  std::regex regex_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_MATCHER_H_
