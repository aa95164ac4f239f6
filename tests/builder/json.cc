#include "json.h"

#include <cstdlib>

namespace gpucap::testing {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool Parse(Json* out, std::string* error) {
    bool ok = Value(out, 0);
    Space();
    if (ok && i_ != s_.size()) ok = Fail("trailing characters");
    if (!ok) *error = error_;
    return ok;
  }

 private:
  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = "offset " + std::to_string(i_) + ": " + what;
    return false;
  }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return Fail("bad literal");
    i_ += word.size();
    return true;
  }

  bool Value(Json* v, int depth) {
    if (depth > 512) return Fail("too deep");
    Space();
    if (i_ >= s_.size()) return Fail("unexpected end");
    char c = s_[i_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->type = Json::Type::kString;
      return String(&v->text);
    }
    if (c == 't') { v->type = Json::Type::kBool; v->boolean = true; return Literal("true"); }
    if (c == 'f') { v->type = Json::Type::kBool; return Literal("false"); }
    if (c == 'n') { v->type = Json::Type::kNull; return Literal("null"); }
    return Number(v);
  }

  bool Number(Json* v) {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return Fail("bad number");
    if (s_[i_] == '0' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1]))) {
      return Fail("leading zero");
    }
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return Fail("bad fraction");
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return Fail("bad exponent");
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    v->type = Json::Type::kNumber;
    v->text = std::string(s_.substr(start, i_ - start));
    v->number = std::strtod(v->text.c_str(), nullptr);
    return true;
  }

  bool String(std::string* out) {
    ++i_;  // opening quote
    while (true) {
      if (i_ >= s_.size()) return Fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return Fail("raw control character in string");
      if (c == '\\') {
        if (++i_ >= s_.size()) return Fail("unterminated escape");
        char e = s_[i_++];
        switch (e) {
          case '"': out->push_back('"'); break;
          case '\\': out->push_back('\\'); break;
          case '/': out->push_back('/'); break;
          case 'b': out->push_back('\b'); break;
          case 'f': out->push_back('\f'); break;
          case 'n': out->push_back('\n'); break;
          case 'r': out->push_back('\r'); break;
          case 't': out->push_back('\t'); break;
          case 'u': {
            if (i_ + 4 > s_.size()) return Fail("short \\u escape");
            unsigned cp = 0;
            for (int k = 0; k < 4; ++k) {
              char h = s_[i_++];
              cp <<= 4;
              if (h >= '0' && h <= '9') cp |= h - '0';
              else if (h >= 'a' && h <= 'f') cp |= h - 'a' + 10;
              else if (h >= 'A' && h <= 'F') cp |= h - 'A' + 10;
              else return Fail("bad hex in \\u escape");
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) return Fail("surrogate escapes are not used by gpucap");
            if (cp < 0x80) {
              out->push_back(static_cast<char>(cp));
            } else if (cp < 0x800) {
              out->push_back(static_cast<char>(0xC0 | cp >> 6));
              out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
            } else {
              out->push_back(static_cast<char>(0xE0 | cp >> 12));
              out->push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
              out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
            }
            break;
          }
          default: return Fail("bad escape");
        }
        continue;
      }
      // UTF-8: validate the sequence.
      size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
                 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
      if (n == 0 || i_ + n > s_.size()) return Fail("invalid UTF-8");
      for (size_t k = 1; k < n; ++k) {
        if ((static_cast<unsigned char>(s_[i_ + k]) & 0xC0) != 0x80) return Fail("invalid UTF-8");
      }
      out->append(s_.substr(i_, n));
      i_ += n;
    }
  }

  bool Array(Json* v, int depth) {
    v->type = Json::Type::kArray;
    ++i_;
    Space();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      v->items.emplace_back();
      if (!Value(&v->items.back(), depth + 1)) return false;
      Space();
      if (i_ >= s_.size()) return Fail("unterminated array");
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == ']') { ++i_; return true; }
      return Fail("expected , or ]");
    }
  }

  bool Object(Json* v, int depth) {
    v->type = Json::Type::kObject;
    ++i_;
    Space();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    while (true) {
      Space();
      if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a key");
      std::string key;
      if (!String(&key)) return false;
      Space();
      if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected :");
      ++i_;
      v->members.emplace_back(std::move(key), Json());
      if (!Value(&v->members.back().second, depth + 1)) return false;
      Space();
      if (i_ >= s_.size()) return Fail("unterminated object");
      if (s_[i_] == ',') { ++i_; continue; }
      if (s_[i_] == '}') { ++i_; return true; }
      return Fail("expected , or }");
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace

bool ParseJson(std::string_view text, Json* out, std::string* error) {
  return Parser(text).Parse(out, error);
}

}  // namespace gpucap::testing
