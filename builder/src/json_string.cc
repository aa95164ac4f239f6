#include "gpucap/builder/json_string.h"

#include <cstddef>

namespace gpucap::builder {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  if (i >= s.size()) return 0;
  return static_cast<unsigned char>(s[i]) < 0x80 ? 1 : Utf8Length(s, i);
}

void AppendJsonString(std::string* out, std::string_view s, JsonStringStyle style) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;
    while (run < s.size() && JsonPlainByte(static_cast<unsigned char>(s[run])) &&
           !(style.escape_del && s[run] == 0x7F)) {
      ++run;
    }
    out->append(s.data() + i, run - i);
    i = run;
    if (i == s.size()) break;
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out->append("\\\""); ++i; continue;
      case '\\': out->append("\\\\"); ++i; continue;
      case '\n': out->append("\\n"); ++i; continue;
      case '\t': out->append("\\t"); ++i; continue;
      case '\r': out->append("\\r"); ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7F) {
      static const char kHex[] = "0123456789abcdef";
      char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out->append(esc, 6);
      ++i;
      continue;
    }
    size_t n = Utf8Length(s, i);
    if (n == 0) {
      // Not UTF-8: say so rather than emit bad JSON.
      out->append(style.raw_replacement ? "\xef\xbf\xbd" : "\\ufffd");
      ++i;
    } else {
      out->append(s.data() + i, n);
      i += n;
    }
  }
  out->push_back('"');
}

}  // namespace gpucap::builder
