#include "gpucap/tools/json/json_read.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpucap::tools {
namespace {

using simdjson::error_code;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

const char* Describe(error_code e) {
  switch (e) {
    case simdjson::TAPE_ERROR: return "a malformed structure (a missing or extra ',', ':', bracket or brace)";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "the end of the text inside an object or array (cut short, or more after the value)";
    case simdjson::EMPTY: return "no value: the document is empty";
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    case simdjson::UNESCAPED_CHARS: return "a control character (NUL included) inside a string";
    case simdjson::UNCLOSED_STRING: return "a string that is never closed";
    case simdjson::STRING_ERROR: return "a string with an invalid escape or a lone UTF-16 surrogate";
    case simdjson::NUMBER_ERROR: return "a malformed number, or one beyond a 64-bit integer or a finite double";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return "a value that is not true, false or null as spelt";
    case simdjson::INCORRECT_TYPE: return "a value of another type than the one expected";
    case simdjson::DEPTH_ERROR: return "more than 512 levels of nesting";
    case simdjson::TRAILING_CONTENT: return "more after the document's value";
    case simdjson::CAPACITY: return "a document larger than simdjson reads (4 GiB)";
    default: return simdjson::error_message(e);
  }
}

// The first byte that does not begin a valid UTF-8 sequence (simdjson
// judges each sequence; ASCII is skipped here).
size_t FirstBadUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size() || !simdjson::validate_utf8(s.data() + i, n)) return i;
    i += n;
  }
  return s.size();
}

// Where a string goes wrong: the first control character inside one, or the
// opening quote of the one never closed.
size_t FirstBadString(std::string_view s, error_code e) {
  bool in = false;
  size_t opened = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!in) {
      if (c == '"') {
        in = true;
        opened = i;
      }
    } else if (c == '\\') {
      ++i;
    } else if (c == '"') {
      in = false;
    } else if (static_cast<unsigned char>(c) < 0x20 && e == simdjson::UNESCAPED_CHARS) {
      return i;
    }
  }
  return in ? opened : s.size();
}

}  // namespace

Status JsonError(std::string_view text, error_code error, const char* at) {
  size_t offset = text.size();
  if (error == simdjson::UTF8_ERROR) {
    offset = FirstBadUtf8(text);
  } else if (error == simdjson::UNESCAPED_CHARS || error == simdjson::UNCLOSED_STRING) {
    offset = FirstBadString(text, error);
  } else if (error == simdjson::EMPTY) {
    offset = 0;
  } else if (error != simdjson::INCOMPLETE_ARRAY_OR_OBJECT && at != nullptr && at >= text.data() &&
             at <= text.data() + text.size()) {
    offset = static_cast<size_t>(at - text.data());
  }
  return Status::Corrupt("not valid JSON at byte offset " + std::to_string(offset) + ": " + Describe(error));
}

const char* JsonWhere(ondemand::document& doc) {
  const char* at = nullptr;
  return doc.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
}

const char* JsonWhere(ondemand::value& value) {
  const char* at = nullptr;
  return value.current_location().get(at) == simdjson::SUCCESS ? at : nullptr;
}

Status OpenJsonObject(ondemand::parser& parser, const JsonText& text, const char* what, ondemand::document* doc,
                      ondemand::value* root) {
  if (auto e = parser.iterate(Padded(text)).get(*doc)) return JsonError(text.view(), e, nullptr);
  const char* at = JsonWhere(*doc);
  ondemand::json_type type = ondemand::json_type::object;
  auto e = doc->get_value().get(*root);
  if (!e) e = root->type().get(type);
  if (e == simdjson::SCALAR_DOCUMENT_AS_VALUE || type != ondemand::json_type::object) {
    return Status::Corrupt(std::string("not ") + what + ": the document is not an object");
  }
  if (e) return JsonError(text.view(), e, at);
  // What simdjson checks of a root it is asked for as an object: its last
  // token closes it. Else the text was cut short, or more follows.
  std::string_view v = text.view();
  size_t last = v.find_last_not_of(" \t\n\r");
  if (last == std::string_view::npos || v[last] != '}') return JsonError(v, simdjson::INCOMPLETE_ARRAY_OR_OBJECT, nullptr);
  return Status::Ok();
}

Status CloseJson(std::string_view text, ondemand::document& doc) {
  if (const char* more = JsonWhere(doc)) return JsonError(text, simdjson::TRAILING_CONTENT, more);
  return Status::Ok();
}

Status CheckJsonValue(std::string_view text, ondemand::value value, int depth) {
  const char* at = value.raw_json_token().data();
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return JsonError(text, e, at);
  switch (type) {
    case ondemand::json_type::object: {
      if (depth >= kMaxJsonDepth) return JsonError(text, simdjson::DEPTH_ERROR, at);
      return ForEachJsonMember(text, value, [&](std::string_view, ondemand::value v) {
        return CheckJsonValue(text, v, depth + 1);
      });
    }
    case ondemand::json_type::array: {
      if (depth >= kMaxJsonDepth) return JsonError(text, simdjson::DEPTH_ERROR, at);
      return ForEachJsonElement(text, value, [&](ondemand::value v) { return CheckJsonValue(text, v, depth + 1); });
    }
    case ondemand::json_type::string: {
      std::string_view s;
      if (auto e = value.get_string().get(s)) return JsonError(text, e, at);
      return Status::Ok();
    }
    case ondemand::json_type::number: {
      ondemand::number n;
      if (auto e = value.get_number().get(n)) return JsonError(text, e, at);
      return Status::Ok();
    }
    case ondemand::json_type::boolean: {
      bool b;
      if (auto e = value.get_bool().get(b)) return JsonError(text, e == simdjson::INCORRECT_TYPE ? simdjson::T_ATOM_ERROR : e, at);
      return Status::Ok();
    }
    case ondemand::json_type::null: {
      bool null = false;
      if (auto e = value.is_null().get(null); e || !null) return JsonError(text, simdjson::N_ATOM_ERROR, at);
      return Status::Ok();
    }
  }
  return JsonError(text, simdjson::TAPE_ERROR, at);
}

Status ReadJsonString(std::string_view text, ondemand::value value, std::string_view* out, int depth) {
  *out = {};
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return JsonError(text, e, value.raw_json_token().data());
  if (type != ondemand::json_type::string) return CheckJsonValue(text, value, depth);
  if (auto e = value.get_string().get(*out)) return JsonError(text, e, value.raw_json_token().data());
  return Status::Ok();
}

Status ReadJsonNumberText(std::string_view text, ondemand::value value, std::string_view* out, int depth) {
  *out = {};
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return JsonError(text, e, value.raw_json_token().data());
  if (type != ondemand::json_type::number) return CheckJsonValue(text, value, depth);
  std::string_view token = value.raw_json_token();
  while (!token.empty() && IsSpace(token.back())) token.remove_suffix(1);
  ondemand::number n;
  if (auto e = value.get_number().get(n)) return JsonError(text, e, token.data());
  *out = token;
  return Status::Ok();
}

Result<std::string_view> JsonSpan(std::string_view text, ondemand::value value, int depth) {
  const char* begin = value.raw_json_token().data();
  ondemand::json_type type;
  if (auto e = value.type().get(type)) return JsonError(text, e, begin);
  const char* end = text.data() + text.size();
  if (type == ondemand::json_type::object || type == ondemand::json_type::array) {
    GPUCAP_RETURN_IF_ERROR(CheckJsonValue(text, value, depth));
    // The walk stopped at the token after the closing bracket: only
    // whitespace lies between.
    if (const char* next = JsonWhere(value)) end = next;
  } else {
    end = begin + value.raw_json_token().size();
    GPUCAP_RETURN_IF_ERROR(CheckJsonValue(text, value, depth));
  }
  while (end > begin && IsSpace(end[-1])) --end;
  return std::string_view(begin, static_cast<size_t>(end - begin));
}

bool JsonInt(std::string_view t, int64_t* out) {
  bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  if (t.empty() || t.size() > 19) return false;
  uint64_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

bool JsonMicrosToNanos(std::string_view t, int64_t* out) {
  bool negative = !t.empty() && t[0] == '-';
  if (negative) t.remove_prefix(1);
  size_t dot = t.find('.');
  std::string_view whole = t.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : t.substr(dot + 1);
  if (whole.empty() || whole.size() > 15) return false;
  int64_t ns = 0;
  for (char c : whole) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    ns = ns * 10 + (c - '0');
  }
  ns *= 1000;
  int64_t place = 100;
  for (size_t i = 0; i < frac.size(); ++i) {
    char c = frac[i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    if (i < 3) {
      ns += place * (c - '0');
      place /= 10;
    } else if (i == 3 && c >= '5') {
      ns += 1;  // round half up at the first digit below a nanosecond
    }
  }
  *out = negative ? -ns : ns;
  return true;
}

}  // namespace gpucap::tools
