#include "gpucap/tools/export/kernel_base_name.h"

#include "gpucap/builder/budgets.h"

namespace gpucap::tools::sqlite {

std::string_view KernelBaseName(std::string_view name) {
  bool truncated = name.ends_with(builder::kTruncatedMarker);
  if (truncated) name.remove_suffix(builder::kTruncatedMarker.size());
  // The parameters: the balanced "(...)" the name ends with. A truncated
  // name has lost its end, so its parameters (if it got that far) start at
  // the first top-level '(' the left-to-right scan below stops at.
  if (!truncated && !name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      char ch = name[i];
      if (ch == ')') depth++;
      else if (ch == '(' && --depth == 0) {
        if (i > 0) name = name.substr(0, i);
        break;
      }
    }
  }
  // Left to right at nesting depth 0: a space ends the return type, "::"
  // a namespace, and the first '<' after the last of those starts the
  // template arguments. "(anonymous namespace)" is a namespace's name.
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  size_t begin = 0, end = std::string_view::npos;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char ch = name[i];
    if (depth == 0 && ch == '(' && name.substr(i, kAnonymous.size()) == kAnonymous) {
      i += kAnonymous.size() - 1;
    } else if (ch == '<' || ch == '(') {
      if (depth == 0) {
        if (ch == '(') break;  // parameters (a truncated name's)
        if (end == std::string_view::npos) end = i;
      }
      depth++;
    } else if (ch == '>' || ch == ')') {
      if (depth > 0) depth--;
    } else if (depth == 0 && ch == ' ') {
      begin = i + 1, end = std::string_view::npos;
    } else if (depth == 0 && ch == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      begin = i + 2, end = std::string_view::npos;
      i++;
    }
  }
  if (end == std::string_view::npos) {
    end = name.size();
    // Stopped at a truncated name's parameters.
    for (size_t i = begin; i < name.size(); ++i) {
      if (name[i] == '(' && name.substr(i, kAnonymous.size()) != kAnonymous) {
        end = i;
        break;
      }
    }
  }
  std::string_view base = name.substr(begin, end - begin);
  return base.empty() ? name : base;
}

}  // namespace gpucap::tools::sqlite
