// A strict JSON reader for tests: parses a rendered trace back and fails on
// anything RFC 8259 rejects (trailing commas, bad escapes, raw control
// characters, invalid UTF-8, NaN), so a test that reads a trace proves it is
// valid JSON.
#ifndef GPUCAP_TESTS_BUILDER_JSON_H_
#define GPUCAP_TESTS_BUILDER_JSON_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpucap::testing {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // string value, or a number as written
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  bool is(Type t) const { return type == t; }
  const Json* Find(std::string_view key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  const Json& operator[](std::string_view key) const {
    static const Json kNull;
    const Json* v = Find(key);
    return v ? *v : kNull;
  }
  bool has(std::string_view key) const { return Find(key) != nullptr; }
  int64_t i() const { return static_cast<int64_t>(number); }
  uint64_t u() const { return std::stoull(text); }
};

// Parses `text`; on failure returns false and says where in `error`.
bool ParseJson(std::string_view text, Json* out, std::string* error);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_JSON_H_
