#include "gpucap/tools/json/json_out.h"

#include <cmath>
#include <cstdio>

namespace gpucap::tools {

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out->append("\\\""); break;
        case '\\': out->append("\\\\"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        case '\t': out->append("\\t"); break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out->append(buf);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A well-formed multi-byte sequence is copied; anything else becomes
    // U+FFFD, one per bad byte.
    size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    bool ok = n != 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && n == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);  // overlong, surrogates
    }
    if (ok && n == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (ok) {
      out->append(s.substr(i, n));
      i += n;
    } else {
      out->append("\xef\xbf\xbd");
      ++i;
    }
  }
  out->push_back('"');
}

void JsonOut::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  if (!levels_.back().empty) out_.push_back(',');
  levels_.back().empty = false;
  out_.push_back('\n');
  out_.append(levels_.size() * 2, ' ');
}

void JsonOut::Open(char bracket) {
  BeforeValue();
  out_.push_back(bracket);
  levels_.push_back({});
}

void JsonOut::Close(char bracket) {
  bool empty = levels_.empty() || levels_.back().empty;
  if (!levels_.empty()) levels_.pop_back();
  if (!empty) {
    out_.push_back('\n');
    out_.append(levels_.size() * 2, ' ');
  }
  out_.push_back(bracket);
}

JsonOut& JsonOut::BeginObject() { Open('{'); return *this; }
JsonOut& JsonOut::EndObject() { Close('}'); return *this; }
JsonOut& JsonOut::BeginArray() { Open('['); return *this; }
JsonOut& JsonOut::EndArray() { Close(']'); return *this; }

JsonOut& JsonOut::Key(std::string_view key) {
  BeforeValue();
  AppendJsonString(&out_, key);
  out_.append(": ");
  after_key_ = true;
  return *this;
}

JsonOut& JsonOut::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(&out_, value);
  return *this;
}

JsonOut& JsonOut::Int(int64_t value) {
  BeforeValue();
  out_.append(std::to_string(value));
  return *this;
}

JsonOut& JsonOut::Uint(uint64_t value) {
  BeforeValue();
  out_.append(std::to_string(value));
  return *this;
}

JsonOut& JsonOut::Double(double value, int decimals) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_.append("null");
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  out_.append(buf);
  return *this;
}

JsonOut& JsonOut::Bool(bool value) {
  BeforeValue();
  out_.append(value ? "true" : "false");
  return *this;
}

JsonOut& JsonOut::Null() {
  BeforeValue();
  out_.append("null");
  return *this;
}

std::string JsonOut::Take() {
  if (levels_.empty()) out_.push_back('\n');
  std::string s = std::move(out_);
  out_.clear();
  return s;
}

}  // namespace gpucap::tools
