#include "gpucap/builder/name_matcher.h"

#include <re2/re2.h>

namespace gpucap::builder {

Result<NameMatcher> NameMatcher::Compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  // The DFA's memory: RE2 falls back to a slower engine when it runs out,
  // it never grows past this.
  options.set_max_mem(64 << 20);
  NameMatcher m;
  m.pattern_ = std::string(pattern);
  m.re_ = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!m.re_->ok()) {
    return Status::InvalidArgument("bad regular expression '" + m.pattern_ + "': " + m.re_->error());
  }
  return m;
}

NameMatcher::NameMatcher(NameMatcher&&) noexcept = default;
NameMatcher& NameMatcher::operator=(NameMatcher&&) noexcept = default;
NameMatcher::~NameMatcher() = default;

bool NameMatcher::Matches(std::string_view name) const {
  return RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

}  // namespace gpucap::builder
