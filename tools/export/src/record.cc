#include "record.h"

#include <sqlite3.h>

#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace gpucap::tools::sqlite {

size_t VarintLength(uint64_t v) {
  if (v >> 56) return 9;
  size_t n = 1;
  while (v >>= 7) ++n;
  return n;
}

size_t PutVarint(uint8_t* out, uint64_t v) {
  if (v <= 0x7f) {
    out[0] = static_cast<uint8_t>(v);
    return 1;
  }
  if (v >> 56) {
    // Eight bytes of 7 bits and a ninth that carries the low 8 bits whole.
    out[8] = static_cast<uint8_t>(v);
    v >>= 8;
    for (int i = 7; i >= 0; --i, v >>= 7) out[i] = static_cast<uint8_t>((v & 0x7f) | 0x80);
    return 9;
  }
  size_t n = VarintLength(v);
  for (size_t i = n; i-- > 0; v >>= 7) out[i] = static_cast<uint8_t>((v & 0x7f) | 0x80);
  out[n - 1] &= 0x7f;
  return n;
}

Affinity AffinityOf(std::string_view declared) {
  std::string t(declared);
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.find("INT") != std::string::npos) return Affinity::kInteger;
  if (t.find("CHAR") != std::string::npos || t.find("CLOB") != std::string::npos ||
      t.find("TEXT") != std::string::npos) {
    return Affinity::kText;
  }
  if (t.empty() || t.find("BLOB") != std::string::npos) return Affinity::kBlob;
  if (t.find("REAL") != std::string::npos || t.find("FLOA") != std::string::npos ||
      t.find("DOUB") != std::string::npos) {
    return Affinity::kReal;
  }
  return Affinity::kNumeric;
}

namespace {

// An integer-valued real that fits in int64 (what SQLite stores as an integer
// in a column of integer or numeric affinity).
bool ExactInt(double d, int64_t* out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
  int64_t i = static_cast<int64_t>(d);
  if (static_cast<double>(i) != d) return false;
  *out = i;
  return true;
}

// Text that is a whole number literal (SQLite's numeric affinity takes
// those; leading and trailing spaces allowed).
bool TextToNumber(std::string_view s, Value* out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty() || s.size() > 64) return false;
  std::string t(s);
  const char* b = t.c_str();
  char* end = nullptr;
  errno = 0;
  long long i = std::strtoll(b, &end, 10);
  if (*end == '\0' && errno == 0 && std::isdigit(static_cast<unsigned char>(t.back()))) {
    *out = Value::Int(i);
    return true;
  }
  // A real literal: digits, '.', exponent; no hex, inf or nan (strtod's extras).
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && std::strchr("+-.eE", c) == nullptr) return false;
  }
  double d = std::strtod(b, &end);
  if (*end != '\0' || end == b) return false;
  *out = Value::Real(d);
  return true;
}

}  // namespace

Value Stored(Value v, Affinity affinity, std::string* number) {
  if (v.type == Value::Type::kReal && std::isnan(v.d)) v = Value::Null();  // SQLite stores NaN as NULL
  switch (affinity) {
    case Affinity::kBlob: break;
    case Affinity::kText:
      if (v.type == Value::Type::kInt) {
        *number = std::to_string(v.i);
        v = Value::Text(*number);
      } else if (v.type == Value::Type::kReal) {
        char* s = sqlite3_mprintf("%!.15g", v.d);
        *number = s ? s : "";
        sqlite3_free(s);
        v = Value::Text(*number);
      }
      break;
    case Affinity::kInteger:
    case Affinity::kNumeric:
    case Affinity::kReal:
      if (v.type == Value::Type::kText) {
        Value n;
        if (TextToNumber(v.text, &n)) v = n;
      }
      if (v.type == Value::Type::kReal && affinity != Affinity::kReal) {
        int64_t i;
        if (ExactInt(v.d, &i)) v = Value::Int(i);
      }
      if (v.type == Value::Type::kInt && affinity == Affinity::kReal) v = Value::Real(static_cast<double>(v.i));
      break;
  }
  return v;
}

// The slow cases of Add: NaN, reals, text, and values the column's
// affinity converts ("Type Affinity").
void RecordBuilder::AddConverted(Value v, Affinity affinity) {
  v = Stored(v, affinity, &number_);
  switch (v.type) {
    case Value::Type::kNull: return Type(0);
    case Value::Type::kInt: return AddInt(v.i);
    case Value::Type::kReal: {
      uint64_t u;
      std::memcpy(&u, &v.d, 8);
      Type(7);
      return BigEndian(u, 8);
    }
    case Value::Type::kText:
      Type(13 + 2 * uint64_t{v.text.size()});
      if (!v.text.empty()) std::memcpy(Body(v.text.size()), v.text.data(), v.text.size());
      return;
  }
}

const std::vector<uint8_t>& RecordBuilder::Finish() {
  record_.resize(Size());
  CopyTo(record_.data());
  return record_;
}

void RecordBuilder::CopyTo(uint8_t* out) const {
  assert(types_len_ <= kTypesRoom && "a record of more than kMaxColumns columns");
  out += PutVarint(out, HeaderSize());
  std::memcpy(out, types_.data(), types_len_);
  if (body_len_ > 0) std::memcpy(out + types_len_, body_.data(), body_len_);
}

}  // namespace gpucap::tools::sqlite
