#include "gpucap/tools/json/json_scan.h"

#include <cctype>
#include <cstring>

namespace gpucap::tools {
namespace {

// Containers deeper than this are refused: a hostile file must not exhaust
// the stack through recursion.
constexpr int kMaxDepth = 512;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class Scanner {
 public:
  explicit Scanner(std::string_view doc) : d_(doc) {}

  Status Value(size_t* pos, JsonValue* out, int depth) {
    SkipSpace(pos);
    if (*pos >= d_.size()) return Error(*pos, "a value");
    size_t begin = *pos;
    char c = d_[begin];
    Status s;
    JsonValue::Type type;
    switch (c) {
      case '{': type = JsonValue::Type::kObject; s = Container(pos, '}', true, depth); break;
      case '[': type = JsonValue::Type::kArray; s = Container(pos, ']', false, depth); break;
      case '"': type = JsonValue::Type::kString; s = String(pos); break;
      case 't': type = JsonValue::Type::kBool; s = Literal(pos, "true"); break;
      case 'f': type = JsonValue::Type::kBool; s = Literal(pos, "false"); break;
      case 'n': type = JsonValue::Type::kNull; s = Literal(pos, "null"); break;
      default: type = JsonValue::Type::kNumber; s = Number(pos); break;
    }
    if (!s.ok()) return s;
    *out = JsonValue{type, d_.substr(begin, *pos - begin), begin};
    return Status::Ok();
  }

  void SkipSpace(size_t* pos) const {
    while (*pos < d_.size() && IsSpace(d_[*pos])) ++*pos;
  }

  Status Error(size_t at, const char* expected) const {
    return Status::Corrupt("not valid JSON at byte offset " + std::to_string(at) + ": expected " + expected);
  }

  Status String(size_t* pos) {
    size_t i = *pos + 1;
    for (;;) {
      // Plain runs are most of a trace: find the next quote or backslash fast.
      // Both are remembered, so a run of escapes (or many strings after one
      // escape) does not search to the same far quote or backslash again.
      size_t quote = Next('"', i, &next_quote_);
      if (quote == std::string_view::npos) return Error(d_.size(), "the end of a string");
      size_t bs = Next('\\', i, &next_backslash_);
      if (bs == std::string_view::npos || bs > quote) {
        for (size_t k = i; k < quote; ++k) {
          if (static_cast<unsigned char>(d_[k]) < 0x20) return Error(k, "no control character inside a string");
        }
        *pos = quote + 1;
        return Status::Ok();
      }
      for (size_t k = i; k < bs; ++k) {
        if (static_cast<unsigned char>(d_[k]) < 0x20) return Error(k, "no control character inside a string");
      }
      if (bs + 1 >= d_.size()) return Error(bs, "an escape");
      char e = d_[bs + 1];
      if (e == 'u') {
        if (bs + 6 > d_.size()) return Error(bs, "four hex digits");
        for (size_t k = bs + 2; k < bs + 6; ++k) {
          if (!std::isxdigit(static_cast<unsigned char>(d_[k]))) return Error(k, "a hex digit");
        }
        i = bs + 6;
      } else if (std::strchr("\"\\/bfnrt", e) != nullptr && e != '\0') {
        i = bs + 2;
      } else {
        return Error(bs, "a valid escape");
      }
    }
  }

  // Where the last search for a character started and what it found.
  struct Found {
    size_t from = std::string_view::npos;
    size_t at = std::string_view::npos;
  };

  // The first `c` at or after `from`, searched again only when the last
  // search's answer does not hold for `from`.
  size_t Next(char c, size_t from, Found* last) const {
    if (last->from <= from && (last->at == std::string_view::npos || last->at >= from)) return last->at;
    const char* p = static_cast<const char*>(std::memchr(d_.data() + from, c, d_.size() - from));
    *last = {from, p == nullptr ? std::string_view::npos : static_cast<size_t>(p - d_.data())};
    return last->at;
  }

  Status Literal(size_t* pos, std::string_view word) {
    if (d_.substr(*pos, word.size()) != word) return Error(*pos, "true, false or null");
    *pos += word.size();
    return Status::Ok();
  }

  Status Number(size_t* pos) {
    size_t i = *pos;
    auto digits = [&] {
      size_t start = i;
      while (i < d_.size() && std::isdigit(static_cast<unsigned char>(d_[i]))) ++i;
      return i > start;
    };
    if (i < d_.size() && d_[i] == '-') ++i;
    if (!digits()) return Error(i, "a value");
    if (i < d_.size() && d_[i] == '.') {
      ++i;
      if (!digits()) return Error(i, "digits after the decimal point");
    }
    if (i < d_.size() && (d_[i] == 'e' || d_[i] == 'E')) {
      ++i;
      if (i < d_.size() && (d_[i] == '+' || d_[i] == '-')) ++i;
      if (!digits()) return Error(i, "exponent digits");
    }
    *pos = i;
    return Status::Ok();
  }

  Status Container(size_t* pos, char close, bool object, int depth) {
    if (depth >= kMaxDepth) return Error(*pos, "no more than 512 levels of nesting");
    ++*pos;
    SkipSpace(pos);
    if (*pos < d_.size() && d_[*pos] == close) {
      ++*pos;
      return Status::Ok();
    }
    for (;;) {
      JsonValue v;
      if (object) {
        SkipSpace(pos);
        if (*pos >= d_.size() || d_[*pos] != '"') return Error(*pos, "a member name");
        GPUCAP_RETURN_IF_ERROR(String(pos));
        SkipSpace(pos);
        if (*pos >= d_.size() || d_[*pos] != ':') return Error(*pos, "':'");
        ++*pos;
      }
      GPUCAP_RETURN_IF_ERROR(Value(pos, &v, depth + 1));
      SkipSpace(pos);
      if (*pos < d_.size() && d_[*pos] == ',') {
        ++*pos;
        continue;
      }
      if (*pos < d_.size() && d_[*pos] == close) {
        ++*pos;
        return Status::Ok();
      }
      return Error(*pos, object ? "',' or '}'" : "',' or ']'");
    }
  }

 private:
  std::string_view d_;
  Found next_quote_, next_backslash_;
};

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

uint32_t Hex4(std::string_view s) {
  uint32_t v = 0;
  for (char c : s) v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10);
  return v;
}

// Unescapes the inside of a string literal (already checked).
std::string Unescape(std::string_view s) {
  if (s.find('\\') == std::string_view::npos) return std::string(s);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        if (i + 4 >= s.size()) break;
        uint32_t cp = Hex4(s.substr(i + 1, 4));
        i += 4;
        if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < s.size() && s.substr(i + 1, 2) == "\\u") {
          uint32_t lo = Hex4(s.substr(i + 3, 4));
          if (lo >= 0xdc00 && lo < 0xe000) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i += 6;
          }
        }
        if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;  // a lone surrogate
        AppendUtf8(&out, cp);
        break;
      }
      default: out.push_back(e); break;  // " \ /
    }
  }
  return out;
}

}  // namespace

Result<JsonValue> ScanJsonValue(std::string_view doc, size_t* pos) {
  Scanner s(doc);
  JsonValue v;
  Status st = s.Value(pos, &v, 0);
  if (!st.ok()) return st;
  return v;
}

Result<JsonValue> ScanJsonDocument(std::string_view doc) {
  size_t pos = 0;
  Scanner s(doc);
  JsonValue v;
  Status st = s.Value(&pos, &v, 0);
  if (!st.ok()) return st;
  s.SkipSpace(&pos);
  if (pos != doc.size()) return s.Error(pos, "the end of the document");
  return v;
}

Status ForEachMember(const JsonValue& object,
                     const std::function<bool(const std::string& key, const JsonValue& value)>& visit) {
  if (object.type != JsonValue::Type::kObject) {
    return Status::InvalidArgument("expected a JSON object at byte offset " + std::to_string(object.offset));
  }
  std::string_view d = object.text;
  Scanner s(d);
  size_t pos = 1;
  for (;;) {
    s.SkipSpace(&pos);
    if (pos >= d.size() || d[pos] == '}') return Status::Ok();
    size_t key_begin = pos;
    GPUCAP_RETURN_IF_ERROR(s.String(&pos));
    std::string key = Unescape(d.substr(key_begin + 1, pos - key_begin - 2));
    s.SkipSpace(&pos);
    ++pos;  // ':'
    JsonValue v;
    GPUCAP_RETURN_IF_ERROR(s.Value(&pos, &v, 1));
    v.offset += object.offset;
    if (!visit(key, v)) return Status::Ok();
    s.SkipSpace(&pos);
    if (pos < d.size() && d[pos] == ',') ++pos;
  }
}

Status ForEachElement(const JsonValue& array, const std::function<bool(const JsonValue& value)>& visit) {
  if (array.type != JsonValue::Type::kArray) {
    return Status::InvalidArgument("expected a JSON array at byte offset " + std::to_string(array.offset));
  }
  std::string_view d = array.text;
  Scanner s(d);
  size_t pos = 1;
  for (;;) {
    s.SkipSpace(&pos);
    if (pos >= d.size() || d[pos] == ']') return Status::Ok();
    JsonValue v;
    GPUCAP_RETURN_IF_ERROR(s.Value(&pos, &v, 1));
    v.offset += array.offset;
    if (!visit(v)) return Status::Ok();
    s.SkipSpace(&pos);
    if (pos < d.size() && d[pos] == ',') ++pos;
  }
}

std::string JsonString(const JsonValue& value) {
  if (value.type != JsonValue::Type::kString || value.text.size() < 2) return {};
  return Unescape(value.text.substr(1, value.text.size() - 2));
}

bool JsonInt(const JsonValue& value, int64_t* out) {
  if (value.type != JsonValue::Type::kNumber) return false;
  std::string_view t = value.text;
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

bool JsonMicrosToNanos(const JsonValue& value, int64_t* out) {
  if (value.type != JsonValue::Type::kNumber) return false;
  std::string_view t = value.text;
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
