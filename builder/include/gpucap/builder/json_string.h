// JSON string literals, for the traces and for the tools' JSON outputs: the
// one escaper and UTF-8 check in gpucap. Text from the recorded process is
// not always UTF-8 (kernel names, NVTX strings); a byte that does not start a
// valid sequence becomes U+FFFD, so what is written always parses.
#ifndef GPUCAP_BUILDER_JSON_STRING_H_
#define GPUCAP_BUILDER_JSON_STRING_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace gpucap::builder {

// The two spellings gpucap's outputs have always used, kept so that their
// bytes do not change: traces copy U+007F as it is and write U+FFFD as the
// escape \ufffd; the tools' documents (info --json, stats, manifests) escape
// U+007F and write U+FFFD as its UTF-8 bytes.
struct JsonStringStyle {
  bool escape_del = false;        // U+007F as \u007f
  bool raw_replacement = false;   // U+FFFD as EF BF BD rather than \ufffd
};
inline constexpr JsonStringStyle kTraceStringStyle{};
inline constexpr JsonStringStyle kDocumentStringStyle{true, true};

// Bytes copied into a JSON string as they are, in every style but for DEL.
constexpr bool JsonPlainByte(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// Appends `s` as a JSON string literal, quotes included: quote, backslash,
// \n \t \r escaped, other control characters as \u00XX, invalid UTF-8 as
// U+FFFD (one per bad byte).
void AppendJsonString(std::string* out, std::string_view s, JsonStringStyle style = kTraceStringStyle);

// Length of the UTF-8 sequence that starts at s[i] (1 for ASCII), or 0 where
// s[i] starts none: the check AppendJsonString makes, for other escapers
// (the HTML report's).
size_t Utf8SequenceLength(std::string_view s, size_t i);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_JSON_STRING_H_
