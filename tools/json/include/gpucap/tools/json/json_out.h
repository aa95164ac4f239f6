// Writes JSON for the tools' machine-readable outputs (info --json, stats
// --format json, diff --json, fixture manifests): keys in the order the code
// writes them, two-space indentation, strings escaped to valid UTF-8, so the
// same input always gives the same bytes and goldens diff line by line.
#ifndef GPUCAP_TOOLS_JSON_OUT_H_
#define GPUCAP_TOOLS_JSON_OUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpucap::tools {

class JsonOut {
 public:
  JsonOut() = default;
  // Compact: no newlines or indentation (data embedded in a page, where
  // size counts and nobody diffs).
  explicit JsonOut(bool compact) : compact_(compact) {}

  JsonOut& BeginObject();
  JsonOut& EndObject();
  JsonOut& BeginArray();
  JsonOut& EndArray();
  // Inside an object: the next value's key.
  JsonOut& Key(std::string_view key);

  JsonOut& String(std::string_view value);
  JsonOut& Int(int64_t value);
  JsonOut& Uint(uint64_t value);
  // Fixed-point with `decimals` digits; not-a-number and infinities as null.
  JsonOut& Double(double value, int decimals = 3);
  JsonOut& Bool(bool value);
  JsonOut& Null();
  // A value already written as JSON (another tool's document), as it is.
  JsonOut& Raw(std::string_view json);

  // Key and value in one call, for the common case.
  JsonOut& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonOut& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonOut& Field(std::string_view key, uint64_t value) { return Key(key).Uint(value); }
  JsonOut& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonOut& Field(std::string_view key, uint32_t value) { return Key(key).Uint(value); }
  JsonOut& Field(std::string_view key, int32_t value) { return Key(key).Int(value); }
  JsonOut& Field(std::string_view key, bool value) { return Key(key).Bool(value); }

  // The document, with a final newline once everything opened was closed.
  std::string Take();

 private:
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);

  std::string out_;
  struct Level {
    bool empty = true;
  };
  std::vector<Level> levels_;
  bool after_key_ = false;
  bool compact_ = false;
};

// Appends `text` as a JSON string literal: quotes, escapes, control
// characters as \u00XX, invalid UTF-8 as U+FFFD.
void AppendJsonString(std::string* out, std::string_view text);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_JSON_OUT_H_
