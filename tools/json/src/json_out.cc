#include "gpucap/tools/json/json_out.h"

#include <cmath>
#include <cstdio>

#include "gpucap/builder/json_string.h"

namespace gpucap::tools {

void AppendJsonString(std::string* out, std::string_view text) {
  builder::AppendJsonString(out, text, builder::kDocumentStringStyle);
}

void JsonOut::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  if (!levels_.back().empty) out_.push_back(',');
  levels_.back().empty = false;
  if (compact_) return;
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
  if (!empty && !compact_) {
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
  out_.append(compact_ ? ":" : ": ");
  after_key_ = true;
  return *this;
}

JsonOut& JsonOut::String(std::string_view value) {
  BeforeValue();
  AppendJsonString(&out_, value);
  return *this;
}

JsonOut& JsonOut::Raw(std::string_view json) {
  BeforeValue();
  while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.remove_suffix(1);
  out_.append(json);
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
