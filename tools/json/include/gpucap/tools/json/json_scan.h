// Reads JSON that other tools wrote (torch.profiler traces) without building
// a tree: a value is found as a span of the text, checked for well-formedness
// as it is skipped, so a trace of hundreds of MB is read in place and what is
// not looked at is copied through byte for byte.
#ifndef GPUCAP_TOOLS_JSON_SCAN_H_
#define GPUCAP_TOOLS_JSON_SCAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "gpucap/status.h"

namespace gpucap::tools {

struct JsonValue {
  enum class Type : uint8_t { kObject, kArray, kString, kNumber, kBool, kNull };
  Type type = Type::kNull;
  std::string_view text;  // the value's bytes: quotes and brackets included
  size_t offset = 0;      // of text in the document, for messages
};

// The value at `*pos` (after whitespace) of `doc`; `*pos` moves past it.
// Errors say at which byte offset and what was expected.
Result<JsonValue> ScanJsonValue(std::string_view doc, size_t* pos);
// A whole document: one value, then only whitespace.
Result<JsonValue> ScanJsonDocument(std::string_view doc);

// The members of an object, in order, until `visit` returns false. `key` is
// unescaped. The values are spans of the same document.
Status ForEachMember(const JsonValue& object,
                     const std::function<bool(const std::string& key, const JsonValue& value)>& visit);
// The elements of an array, in order, until `visit` returns false.
Status ForEachElement(const JsonValue& array, const std::function<bool(const JsonValue& value)>& visit);

// A string value's text, unescaped (invalid escapes read as U+FFFD).
std::string JsonString(const JsonValue& value);
// An integer literal, exactly; false for fractions, exponents, overflow.
bool JsonInt(const JsonValue& value, int64_t* out);
// Microseconds as Chrome traces write them ("123.456") to nanoseconds,
// exactly for up to three decimals, rounded beyond; false when not a plain
// decimal number.
bool JsonMicrosToNanos(const JsonValue& value, int64_t* out);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_JSON_SCAN_H_
