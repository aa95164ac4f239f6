// The one JSON string escaper, in the two spellings the outputs use.
#include "gpucap/builder/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace gpucap::builder {
namespace {

std::string Escaped(std::string_view in, JsonStringStyle style) {
  std::string out;
  AppendJsonString(&out, in, style);
  return out;
}

TEST(JsonString, TracesKeepDelAndEscapeTheReplacement) {
  EXPECT_EQ(Escaped("a\x7f" "b", kTraceStringStyle), "\"a\x7f" "b\"");
  EXPECT_EQ(Escaped("a\xff" "b", kTraceStringStyle), "\"a\\ufffdb\"");
}

TEST(JsonString, DocumentsEscapeDelAndWriteTheReplacementAsUtf8) {
  EXPECT_EQ(Escaped("a\x7f" "b", kDocumentStringStyle), "\"a\\u007fb\"");
  EXPECT_EQ(Escaped("a\xff" "b", kDocumentStringStyle), "\"a\xef\xbf\xbd" "b\"");
}

TEST(JsonString, BothStylesAgreeOnEverythingElse) {
  for (const char* in : {"plain", "q\"b\\s\n\t\r", "\x01\x1f", "caf\xc3\xa9", "\xf0\x9f\x98\x80", "\xc0\xaf",
                         "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    std::string trace = Escaped(in, kTraceStringStyle);
    std::string doc = Escaped(in, kDocumentStringStyle);
    size_t at;
    while ((at = trace.find("\\ufffd")) != std::string::npos) trace.replace(at, 6, "\xef\xbf\xbd");
    EXPECT_EQ(trace, doc) << in;
  }
}

TEST(JsonString, LeadBytesPastF4AreNotUtf8) {
  // F8..FF never start a sequence: each byte becomes U+FFFD, continuation
  // bytes after it too, so the document stays valid UTF-8.
  EXPECT_EQ(Escaped("\xf8\x80\x80", kDocumentStringStyle), "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  EXPECT_EQ(Escaped("\xf5\x80\x80\x80", kTraceStringStyle), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

}  // namespace
}  // namespace gpucap::builder
