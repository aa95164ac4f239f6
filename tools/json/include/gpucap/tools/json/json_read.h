// Reads JSON through simdjson's On-Demand API: torch.profiler traces that
// other programs wrote (untrusted input, up to hundreds of MB) and the few
// small documents of our own that are read back. The text is walked in
// place, checked as it is walked, and a value's bytes can be had as a span
// of the text, so what is not looked at is copied through byte for byte.
//
// What every reader shares is here: the text with the padding simdjson reads
// past its end, the walk that checks a value nobody reads (so a document is
// read whole or refused, as a strict parser would), errors that name the
// byte offset and what was wrong, and Chrome's numbers read exactly from
// their text. Only readers include this header: it brings simdjson.h.
#ifndef GPUCAP_TOOLS_JSON_READ_H_
#define GPUCAP_TOOLS_JSON_READ_H_

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "gpucap/status.h"
#include "gpucap/tools/json/json_text.h"

namespace gpucap::tools {

namespace ondemand = simdjson::ondemand;

// Containers deeper than this are refused: the checking walk recurses, and a
// hostile file must not exhaust the stack.
inline constexpr int kMaxJsonDepth = 512;

// "not valid JSON at byte offset N: <what was wrong>". `at` is where the walk
// was (a value's first byte, or the document's current location), null when
// unknown. Errors simdjson finds before any walk (invalid UTF-8, a control
// character or an unclosed string) carry no place: they are located here
// by looking for them.
Status JsonError(std::string_view text, simdjson::error_code error, const char* at);
// Where the walk is now, null when nowhere (at the end, or broken off).
const char* JsonWhere(ondemand::document& doc);
const char* JsonWhere(ondemand::value& value);

inline simdjson::padded_string_view Padded(const JsonText& text) {
  static_assert(JsonText::kPadding == simdjson::SIMDJSON_PADDING);
  return simdjson::padded_string_view(text.view().data(), text.view().size(), text.view().size() + JsonText::kPadding);
}

// Starts the walk of `text`, whose value must be an object: "not <what>:
// the document is not an object" when it is something else.
Status OpenJsonObject(ondemand::parser& parser, const JsonText& text, const char* what, ondemand::document* doc,
                      ondemand::value* root);
// Ends it: nothing but whitespace may follow the root's value.
Status CloseJson(std::string_view text, ondemand::document& doc);

// The members of the object `value`, in order: visit(std::string_view key,
// ondemand::value) returns a Status; keys are unescaped (and checked).
template <typename Visit>
Status ForEachJsonMember(std::string_view text, ondemand::value value, Visit&& visit) {
  ondemand::object object;
  if (auto e = value.get_object().get(object)) return JsonError(text, e, value.raw_json_token().data());
  for (auto field : object) {
    std::string_view key;
    ondemand::value v;
    if (auto e = field.unescaped_key().get(key)) return JsonError(text, e, JsonWhere(value));
    if (auto e = field.value().get(v)) return JsonError(text, e, JsonWhere(value));
    GPUCAP_RETURN_IF_ERROR(visit(key, v));
  }
  return Status::Ok();
}

// The elements of the array `value`, in order: visit(ondemand::value).
template <typename Visit>
Status ForEachJsonElement(std::string_view text, ondemand::value value, Visit&& visit) {
  ondemand::array array;
  if (auto e = value.get_array().get(array)) return JsonError(text, e, value.raw_json_token().data());
  for (auto element : array) {
    ondemand::value v;
    if (auto e = element.get(v)) return JsonError(text, e, JsonWhere(value));
    GPUCAP_RETURN_IF_ERROR(visit(v));
  }
  return Status::Ok();
}

// Walks a value nobody reads, checking everything a strict parser checks:
// structure, escapes, numbers (simdjson's: within a 64-bit integer or a
// finite double), true/false/null, nesting within kMaxJsonDepth.
Status CheckJsonValue(std::string_view text, ondemand::value value, int depth = 0);

// A string value, unescaped and checked; anything else is checked and reads
// as "" (a trace's field of another type is as good as absent).
// The view lasts while the document is walked (simdjson's string buffer).
// `depth`: the value's, for the nesting bound.
Status ReadJsonString(std::string_view text, ondemand::value value, std::string_view* out, int depth = 0);
// A number's text, checked (trailing whitespace not included); "" for a
// value of another type, which is checked too.
Status ReadJsonNumberText(std::string_view text, ondemand::value value, std::string_view* out, int depth = 0);
// A value's bytes as they are in the text (quotes and brackets included),
// checked as CheckJsonValue does (`depth`: the value's).
Result<std::string_view> JsonSpan(std::string_view text, ondemand::value value, int depth = 0);

// An integer literal, exactly; false for fractions, exponents, overflow.
bool JsonInt(std::string_view number, int64_t* out);
// Microseconds as Chrome traces write them ("123.456") to nanoseconds,
// exactly for up to three decimals, rounded beyond; false when not a plain
// decimal number.
bool JsonMicrosToNanos(std::string_view number, int64_t* out);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_JSON_READ_H_
