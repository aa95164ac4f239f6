// Whole-name matching of range names against a user's pattern (window specs
// nvtx:REGEX, trim's names to keep). RE2 runs in time linear in the name
// and without recursion, so no name (50,000 bytes) or pattern ((a+)+$) can
// overflow the stack or run away, as std::regex did. The syntax is RE2's:
// ECMAScript's common subset (\d, classes, groups, alternation, counted
// repetition); backreferences and lookaround are refused when compiled.
#ifndef GPUCAP_BUILDER_NAME_MATCHER_H_
#define GPUCAP_BUILDER_NAME_MATCHER_H_

#include <memory>
#include <string>
#include <string_view>

#include "gpucap/status.h"

namespace re2 {
class RE2;
}

namespace gpucap::builder {

class NameMatcher {
 public:
  // InvalidArgument naming the problem when `pattern` does not compile.
  static Result<NameMatcher> Compile(std::string_view pattern);
  NameMatcher(NameMatcher&&) noexcept;
  NameMatcher& operator=(NameMatcher&&) noexcept;
  ~NameMatcher();

  // The whole of `name` matches.
  bool Matches(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  NameMatcher() = default;
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_NAME_MATCHER_H_
