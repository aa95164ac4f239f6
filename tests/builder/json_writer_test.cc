#include "json_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "json.h"

namespace gpucap::builder {
namespace {

std::string Written(void (*f)(JsonWriter*)) {
  std::string out;
  auto sink = NewStringSink(&out);
  JsonWriter w(sink.get());
  f(&w);
  EXPECT_TRUE(w.Flush().ok());
  return out;
}

TEST(JsonWriter, MicrosKeepNanosecondsWithThreeDecimals) {
  EXPECT_EQ(Written([](JsonWriter* w) { w->Micros(1234567); }), "1234.567");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Micros(5); }), "0.005");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Micros(0); }), "0.000");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Micros(-1500); }), "-1.500");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Micros(INT64_MIN); }), "-9223372036854775.808");
}

TEST(JsonWriter, NumbersAsKinetoPrintsThem) {
  EXPECT_EQ(Written([](JsonWriter* w) { w->Float6(64.0 / 132.0); }), "0.484848");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Double(65536.0 / 896.0); }), "73.14285714285714");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Double(1.0 / 0.0); }), "null");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Int(-42); }), "-42");
  EXPECT_EQ(Written([](JsonWriter* w) { w->Uint(UINT64_MAX); }), "18446744073709551615");
}

// The writer counts digits from the bit length and switches to 32-bit
// arithmetic below 2^32: every edge of both, against the standard library.
TEST(JsonWriter, IntegersMatchToStringAtEveryDigitAndWidthEdge) {
  std::vector<uint64_t> values = {0, UINT32_MAX, uint64_t{UINT32_MAX} + 1, UINT64_MAX};
  for (uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10) {
    for (uint64_t v : {p - 1, p, p + 1, p * 10 - 1}) values.push_back(v);
  }
  for (int bit = 0; bit < 64; ++bit) {
    uint64_t b = uint64_t{1} << bit;
    for (uint64_t v : {b - 1, b, b + 1}) values.push_back(v);
  }
  std::string out;
  auto sink = NewStringSink(&out);
  JsonWriter w(sink.get());
  std::string expected;
  for (uint64_t v : values) {
    w.Uint(v);
    w.Char(' ');
    expected += std::to_string(v) + " ";
    int64_t ns = static_cast<int64_t>(v >> 1) * ((v & 1) ? -1 : 1);
    w.Micros(ns);
    w.Char(' ');
    uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    char frac[8];
    std::snprintf(frac, sizeof(frac), ".%03u", static_cast<unsigned>(mag % 1000));
    if (ns < 0) expected += '-';
    expected += std::to_string(mag / 1000);
    expected += frac;
    expected += ' ';
  }
  ASSERT_TRUE(w.Flush().ok());
  EXPECT_EQ(out, expected);
}

// TimeText patches the previous text when only the last two digits of the
// microseconds change: any sequence must read as PutMicros writes it.
TEST(JsonWriter, TimeTextWritesWhatPutMicrosWrites) {
  std::vector<int64_t> times = {0, 5, 99'999, 100'000, 100'001, 199'999, 9'999'999, 10'000'000, 10'000'001, -1500,
                                -1500, 1'234'567'890'123, 1'234'567'890'124, 1'234'567'899'999, 1'234'567'900'000};
  uint64_t x = 88172645463325252ull;
  int64_t t = 1'000'000'000;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    // Mostly small steps forward; now and then a jump, back or far ahead.
    int64_t step = (x % 16 == 0) ? static_cast<int64_t>(x % 10'000'000'000) - 5'000'000'000
                                 : static_cast<int64_t>(x % 5000);
    t = std::max<int64_t>(0, t + step);
    times.push_back(t);
  }
  TimeText text;
  for (int64_t ns : times) {
    char got[64], want[64];
    std::string_view a(got, text.Put(got, ns) - got), b(want, PutMicros(want, ns) - want);
    ASSERT_EQ(a, b) << "at " << ns;
  }
}

TEST(JsonWriter, EveryByteStringIsValidJson) {
  // Every single byte, and the broken UTF-8 forms: truncated, overlong,
  // surrogate, above U+10FFFF.
  std::vector<std::string> inputs;
  for (int c = 0; c < 256; ++c) inputs.push_back(std::string(1, static_cast<char>(c)) + "x");
  for (const char* s : {"\xc3", "\xe2\x82", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                        "\xf0\x9f\x98\x80 ok", "caf\xc3\xa9"}) {
    inputs.push_back(s);
  }
  for (const std::string& in : inputs) {
    std::string out;
    AppendJsonString(&out, in);
    testing::Json j;
    std::string error;
    ASSERT_TRUE(testing::ParseJson(out, &j, &error)) << error << " for input byte " << int(uint8_t(in[0]));
  }
  std::string out;
  AppendJsonString(&out, "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(out, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"") << "valid UTF-8 passes untouched";
  out.clear();
  AppendJsonString(&out, std::string("a\0b\x1f\"\\", 6));
  EXPECT_EQ(out, "\"a\\u0000b\\u001f\\\"\\\\\"");
}

}  // namespace
}  // namespace gpucap::builder
