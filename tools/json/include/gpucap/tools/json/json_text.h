// A JSON document's text as the reader (json_read.h, simdjson) wants it: in
// one buffer followed by kPadding zero bytes, which simdjson may read (never
// write) past the end. Holds the text for as long as spans of it are used
// (the splice copies the profiler's trace through from it). Kept apart from
// json_read.h so that holders of a text need not include simdjson.h.
#ifndef GPUCAP_TOOLS_JSON_TEXT_H_
#define GPUCAP_TOOLS_JSON_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "gpucap/status.h"

namespace gpucap::tools {

class JsonText {
 public:
  static constexpr size_t kPadding = 64;  // simdjson::SIMDJSON_PADDING, checked where both are seen

  JsonText() : JsonText(std::string()) {}
  // Pads `text` in place: copied only when its capacity is short.
  explicit JsonText(std::string text);
  // A file's text, gunzipped when it is gzipped (zlib passes plain files
  // through), read straight into the padded buffer.
  static Result<JsonText> Read(const std::string& path);

  std::string_view view() const { return {bytes_.data(), size_}; }

 private:
  std::string bytes_;  // the text, then the padding
  size_t size_ = 0;
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_JSON_TEXT_H_
