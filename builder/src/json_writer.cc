#include "json_writer.h"

#include <bit>
#include <charconv>
#include <cmath>

namespace gpucap::builder {
void JsonWriter::String(std::string_view s) {
  // Plain strings (almost all) are copied straight in; others go through
  // the escaper.
  if (s.size() < 256) {
    bool plain = true;
    for (char c : s) plain &= JsonPlainByte(static_cast<unsigned char>(c));
    if (plain) {
      Reserve(s.size() + 2);
      char* p = buf_.data.get() + used_;
      *p = '"';
      std::memcpy(p + 1, s.data(), s.size());
      p[s.size() + 1] = '"';
      used_ += s.size() + 2;
      return;
    }
  }
  scratch_.clear();
  AppendJsonString(&scratch_, s);
  Raw(scratch_);
}

namespace {

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Decimal digits of v (v > 0 gives at least 1): the bit length gives the
// count to within one, a table of powers of ten settles it.
int Digits(uint64_t v) {
  static constexpr uint64_t kPow10[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                        10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                        100000000000ull, 1000000000000ull, 10000000000000ull,
                                        100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                        100000000000000000ull, 1000000000000000000ull,
                                        10000000000000000000ull};
  int bits = 64 - std::countl_zero(v | 1);
  int t = (bits * 1233) >> 12;  // log10(2) ~ 1233/4096
  return t + (v >= kPow10[t]);
}

// Writes v's decimal digits ending at `end`, two at a time; 32-bit
// arithmetic once the value fits, which is most of the time.
inline void WriteDigits(char* end, uint64_t v) {
  while (v > UINT32_MAX) {
    unsigned pair = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--end = kDigitPairs[pair + 1];
    *--end = kDigitPairs[pair];
  }
  uint32_t w = static_cast<uint32_t>(v);
  while (w >= 100) {
    unsigned pair = (w % 100) * 2;
    w /= 100;
    std::memcpy(end - 2, kDigitPairs + pair, 2);
    end -= 2;
  }
  if (w >= 10) {
    std::memcpy(end - 2, kDigitPairs + w * 2, 2);
  } else {
    *--end = static_cast<char>('0' + w);
  }
}

// ".000" to ".999": the three decimals of a microsecond time.
struct Millis {
  char text[1000][4];
  constexpr Millis() : text() {
    for (int i = 0; i < 1000; ++i) {
      text[i][0] = '.';
      text[i][1] = static_cast<char>('0' + i / 100);
      text[i][2] = static_cast<char>('0' + i / 10 % 10);
      text[i][3] = static_cast<char>('0' + i % 10);
    }
  }
};
constexpr Millis kMillis;

}  // namespace

// Integers and doubles need at most 32 characters; kSlack covers them.
// Traces are mostly small integers (ids, sizes, dimensions): formatted here
// rather than through std::to_chars, which profiles showed as costly.
char* PutUint(char* p, uint64_t v) {
  if (v < 100) {  // device, context, stream, block sizes: most args
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    std::memcpy(p, kDigitPairs + v * 2, 2);
    return p + 2;
  }
  int n = Digits(v);
  WriteDigits(p + n, v);
  return p + n;
}

char* PutMicros(char* p, int64_t ns) {
  uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) *p++ = '-';
  uint64_t us = mag / 1000;
  int n = us == 0 ? 1 : Digits(us);
  WriteDigits(p + n, us);
  std::memcpy(p + n, kMillis.text[mag % 1000], 4);
  return p + n + 4;
}

char* TimeText::Put(char* p, int64_t ns) {
  if (ns < 0) return PutMicros(p, ns);
  uint64_t us = static_cast<uint64_t>(ns) / 1000;
  uint64_t hundreds = us / 100;
  // The kept text is copied whole and patched at the destination: patching
  // it in place and then copying it out would read across a fresh store.
  if (hundreds == hundreds_ && hundreds != 0) {
    std::memcpy(p, text_, sizeof(text_));  // the caller's room covers a number
    std::memcpy(p + len_ - 2, kDigitPairs + (us % 100) * 2, 2);
    p += len_;
  } else {
    char* end = PutUint(p, us);
    len_ = static_cast<uint8_t>(end - p);
    std::memcpy(text_, p, sizeof(text_));
    hundreds_ = hundreds;
    p = end;
  }
  std::memcpy(p, kMillis.text[static_cast<uint64_t>(ns) % 1000], 4);
  return p + 4;
}

void JsonWriter::Uint(uint64_t v) {
  Reserve(kMaxNumber);
  used_ = PutUint(buf_.data.get() + used_, v) - buf_.data.get();
}

void JsonWriter::Int(int64_t v) {
  if (v < 0) {
    Char('-');
    Uint(0 - static_cast<uint64_t>(v));
  } else {
    Uint(static_cast<uint64_t>(v));
  }
}

void JsonWriter::Double(double v) {
  if (!std::isfinite(v)) {
    Raw("null");
    return;
  }
  Reserve(32);
  used_ = std::to_chars(buf_.data.get() + used_, buf_.data.get() + used_ + 32, v).ptr - buf_.data.get();
}

void JsonWriter::Float6(double v) {
  if (!std::isfinite(v)) {
    Raw("null");
    return;
  }
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  // Two ways per set: the older of the two is replaced.
  size_t set = ((bits * 0x9e3779b97f4a7c15ull) >> 52) * 2;
  Float6Entry* e = &float6_cache_[set];
  if (e->bits != bits) {
    e = &float6_cache_[set + 1];
    if (e->bits != bits) {
      float6_cache_[set + 1] = float6_cache_[set];
      e = &float6_cache_[set];
      e->bits = bits;
      e->len = static_cast<uint8_t>(
          std::to_chars(e->text, e->text + sizeof(e->text), v, std::chars_format::general, 6).ptr - e->text);
    }
  }
  Raw(std::string_view(e->text, e->len));
}

void JsonWriter::Micros(int64_t ns) {
  Reserve(32);
  used_ = PutMicros(buf_.data.get() + used_, ns) - buf_.data.get();
}

void JsonWriter::Grow(size_t n) {
  ByteBlock bigger;
  bigger.Reserve(std::max(buf_.capacity * 2, used_ + n + kSlack));
  std::memcpy(bigger.data.get(), buf_.data.get(), used_);
  buf_ = std::move(bigger);
}

Status JsonWriter::Flush() {
  if (used_ == 0) return Status::Ok();
  Status s = sink_->AppendBlock(&buf_, used_);
  used_ = 0;
  buf_.Reserve(flush_bytes_ + kSlack);
  return s;
}

}  // namespace gpucap::builder
