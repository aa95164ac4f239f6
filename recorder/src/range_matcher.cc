#include "range_matcher.h"

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

}  // namespace

std::unique_ptr<RangeMatcher> RangeMatcher::Make(const std::string& pattern, std::string* error) {
  std::unique_ptr<RangeMatcher> m(new RangeMatcher());
  try {
    m->regex_ = std::regex(pattern, std::regex::optimize);
  } catch (const std::regex_error& e) {
    if (error) *error = e.what();
    return nullptr;
  }
  m->pattern_ = pattern;
  m->literal_ = LiteralPrefix(pattern);
  return m;
}

bool RangeMatcher::Matches(std::string_view name) const {
  if (!literal_.empty() && name.find(literal_) == std::string_view::npos) return false;
  return std::regex_search(name.begin(), name.end(), regex_);
}

}  // namespace gpucap::recorder
