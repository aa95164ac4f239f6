// The JSON reader (simdjson On-Demand) the splice reads torch.profiler traces
// with, on good documents and on hostile ones: every bad document is refused
// with the file, the byte offset and what was wrong, and nothing crashes;
// and the writer behind every --json output.
#include <gtest/gtest.h>
#include <zlib.h>

#include "../support/temp_dir.h"
#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/json/json_read.h"
#include "gpucap/tools/splice/kineto_splice.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

// The members of the root object, each value's bytes and, for strings, the
// value read.
struct Member {
  std::string key, span, string;
};
Result<std::vector<Member>> Members(const std::string& doc) {
  JsonText text(doc);
  ondemand::parser parser;
  ondemand::document d;
  ondemand::value root;
  GPUCAP_RETURN_IF_ERROR(OpenJsonObject(parser, text, "an object", &d, &root));
  std::vector<Member> out;
  GPUCAP_RETURN_IF_ERROR(ForEachJsonMember(text.view(), root, [&](std::string_view key, ondemand::value v) -> Status {
    Member m{std::string(key), "", ""};
    if (v.raw_json_token().front() == '"') {
      std::string_view s;
      GPUCAP_RETURN_IF_ERROR(ReadJsonString(text.view(), v, &s));
      m.string = s;
      m.span = std::string(v.raw_json_token());
      while (m.span.back() != '"') m.span.pop_back();
    } else {
      auto span = JsonSpan(text.view(), v);
      if (!span.ok()) return span.status();
      m.span = *span;
    }
    out.push_back(m);
    return Status::Ok();
  }));
  GPUCAP_RETURN_IF_ERROR(CloseJson(text.view(), d));
  return out;
}

TEST(JsonRead, FindsMembersAsSpansAndUnescapesStrings) {
  std::string doc = R"( {"a": [1, 2.5, {"b": "x\"y\u00e9\ud83d\ude00"}] , "n": null, "s": "x\"y\u00e9\ud83d\ude00", "t": true} )";
  auto members = Members(doc);
  ASSERT_TRUE(members.ok()) << members.status().message();
  ASSERT_EQ(members->size(), 4u);
  EXPECT_EQ((*members)[0].key, "a");
  EXPECT_EQ((*members)[0].span, R"([1, 2.5, {"b": "x\"y\u00e9\ud83d\ude00"}])");
  EXPECT_EQ((*members)[1].span, "null");
  EXPECT_EQ((*members)[2].string, "x\"y\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ((*members)[3].span, "true");
}

// A document's error, and the byte offset it names (-1: none).
std::pair<std::string, long> ErrorOf(const std::string& doc) {
  auto r = Members(doc);
  if (r.ok()) return {"", -1};
  const std::string& m = r.status().message();
  size_t at = m.find("byte offset ");
  return {m, at == std::string::npos ? -1 : std::stol(m.substr(at + 12))};
}

TEST(JsonRead, RefusesWhatIsNotJsonSayingWhere) {
  // Each document, the offset of what is wrong in it, and words of the message.
  struct Case {
    std::string doc;
    long offset;
    const char* says;
  };
  std::vector<Case> cases = {
      {"{\"a\":1,}", 7, "structure"},            // a trailing comma: the '}'
      {"{\"a\":[1 2]}", 8, "structure"},         // a missing comma: the 2
      {"{\"a\" 1}", 5, "structure"},             // a missing colon: the 1
      {"{\"a\":\"tab\tin\"}", 9, "control character"},
      {"{\"a\":01}", 5, "number"},
      {"{\"a\":1.}", 5, "number"},
      {"{\"a\":tru}", 5, "true, false or null"},
      {"{\"a\":nul}", 5, "true, false or null"},
      {"{\"a\":\"\\q\"}", 5, "escape"},
      {"{\"a\":\"\\ud800\"}", 5, "surrogate"},
      {"{\"a\":[", 6, "end of the text"},        // truncated: the end
      {"{\"a\":\"abc", 5, "never closed"},       // the string's opening quote
      {"{\"a\":1}}", 7, "more after"},
      {"{\"a\":\"\xff\"}", 6, "UTF-8"},
      {"{\"a\":\"\xc0\xaf\"}", 6, "UTF-8"},      // an overlong '/'
      {"{\"a\":\"ok\xed\xa0\x80\"}", 8, "UTF-8"},  // a surrogate in UTF-8
      {"", 0, "empty"},
  };
  for (const Case& c : cases) {
    auto [message, offset] = ErrorOf(c.doc);
    EXPECT_EQ(offset, c.offset) << c.doc << ": " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.doc << ": " << message;
  }
}

TEST(JsonRead, ReadsChromeMicrosecondsExactly) {
  auto num = [](const char* text) {
    int64_t ns = -1;
    EXPECT_TRUE(JsonMicrosToNanos(text, &ns)) << text;
    return ns;
  };
  EXPECT_EQ(num("5109977831152.739"), 5109977831152739);
  EXPECT_EQ(num("3.5"), 3500);
  EXPECT_EQ(num("12"), 12000);
  EXPECT_EQ(num("0.0004"), 0);
  EXPECT_EQ(num("0.0005"), 1);
  EXPECT_EQ(num("-2.25"), -2250);
  int64_t i;
  EXPECT_TRUE(JsonInt("180519", &i));
  EXPECT_EQ(i, 180519);
  EXPECT_FALSE(JsonInt("1.5", &i));
  EXPECT_FALSE(JsonInt("9223372036854775808", &i));
}

TEST(JsonText, ReadsPlainAndGzippedFilesIntoThePaddedBuffer) {
  testing::TempDir dir;
  std::string text = "{\"traceEvents\": []}\n";
  for (int i = 0; i < 200000; ++i) text += ' ';  // past one read's chunk, gzipped
  testing::WriteFile(dir.File("plain.json"), text);
  gzFile gz = gzopen(dir.File("packed.json.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  for (int i = 0; i < 40; ++i) gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  auto plain = JsonText::Read(dir.File("plain.json"));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->view(), text);
  auto packed = JsonText::Read(dir.File("packed.json.gz"));
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  ASSERT_EQ(packed->view().size(), 40 * text.size());
  EXPECT_EQ(packed->view().substr(39 * text.size()), text);
  // simdjson may read the padding: it is there, and zero.
  simdjson::padded_string_view padded = Padded(*packed);
  EXPECT_GE(padded.padding(), simdjson::SIMDJSON_PADDING);
  EXPECT_EQ(packed->view().data()[packed->view().size()], '\0');
  auto missing = JsonText::Read(dir.File("nope.json"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.json"), std::string::npos);
}

// A torch.profiler trace: two CPU ops on one thread, the inner one with an
// External id, and a thread name.
const std::string kTrace =
    "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, \"tid\": 8, \"ts\": 10.5, "
    "\"dur\": 20, \"args\": {\"External id\": 3, \"Sequence number\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"step\", \"pid\": 7, \"tid\": 8, \"ts\": 5, \"dur\": 100, "
    "\"args\": {\"External id\": 2}},\n"
    "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 7, \"tid\": 8, \"args\": {\"name\": \"main\"}}\n"
    "  ],\n  \"baseTimeNanoseconds\": 1000000000\n}\n";

TEST(KinetoRead, ReadsWhatTheSpliceNeedsAndWhereToSplice) {
  auto t = KinetoTrace::Parse(kTrace, "t.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->text(), kTrace);
  EXPECT_EQ(t->root_open(), 0u);
  EXPECT_EQ(t->events_close(), kTrace.find("  ],") + 2);
  // The base time, given after the events, applies to them.
  EXPECT_EQ(t->span(), std::make_pair(int64_t{1'000'005'000}, int64_t{1'000'105'000}));
  EXPECT_EQ(t->ExternalIdAt(7, 8, 1'000'020'000), 3u);  // inside aten::mm (10.5 to 30.5 us)
  EXPECT_EQ(t->ExternalIdAt(7, 8, 1'000'050'000), 2u);  // inside step only
  EXPECT_EQ(t->ExternalIdAt(7, 8, 1'000'200'000), 0u);
  EXPECT_TRUE(t->NamesThread(7, 8));
  EXPECT_FALSE(t->NamesProcess(7));
  EXPECT_TRUE(t->HasKey("schemaVersion"));
  EXPECT_EQ(t->cpu_pids(), std::set<uint32_t>{7});
}

// Parses `doc` as a trace named "hostile.json": the error's message and the
// byte offset it names (-1: none); "" when it reads.
std::pair<std::string, long> TraceError(const std::string& doc) {
  auto t = KinetoTrace::Parse(doc, "hostile.json");
  if (t.ok()) return {"", -1};
  const std::string& m = t.status().message();
  EXPECT_EQ(m.rfind("hostile.json: ", 0), 0u) << m;
  size_t at = m.find("byte offset ");
  return {m, at == std::string::npos ? -1 : std::stol(m.substr(at + 12))};
}

// kTrace with `insert` put where `at` first occurs.
std::string With(const std::string& at, const std::string& insert, size_t* where) {
  std::string doc = kTrace;
  *where = doc.find(at);
  doc.insert(*where, insert);
  return doc;
}

TEST(KinetoRead, TruncatedTracesAreRefusedAtTheirEnd) {
  for (size_t n = 0; n < kTrace.size() - 2; ++n) {  // the last "}\n" cut leaves only whitespace out
    std::string doc = kTrace.substr(0, n);
    auto [message, offset] = TraceError(doc);
    ASSERT_FALSE(message.empty()) << "a trace cut at " << n << " reads";
    // The end, or the opening quote of the string the cut is in.
    size_t quote = doc.rfind('"');
    bool in_string = std::count(doc.begin(), doc.end(), '"') % 2 == 1;
    if (n == 0) {
      EXPECT_EQ(offset, 0) << message;
    } else if (in_string) {
      EXPECT_EQ(offset, static_cast<long>(quote)) << message;
    } else {
      EXPECT_EQ(offset, static_cast<long>(n)) << message;
    }
  }
}

TEST(KinetoRead, HostileTracesAreRefusedWithTheOffset) {
  size_t at;
  // Bad UTF-8 in a name nobody reads, and in one the reader reads.
  auto bad = TraceError(With("main", "\xff", &at));
  EXPECT_EQ(bad.second, static_cast<long>(at)) << bad.first;
  EXPECT_NE(bad.first.find("UTF-8"), std::string::npos);
  bad = TraceError(With("aten::mm", "\xe2\x82", &at));  // a sequence cut short
  EXPECT_EQ(bad.second, static_cast<long>(at)) << bad.first;
  // NUL bytes: inside a string, between tokens, after the document.
  bad = TraceError(With("aten::mm", std::string(1, '\0'), &at));
  EXPECT_EQ(bad.second, static_cast<long>(at)) << bad.first;
  EXPECT_NE(bad.first.find("control character"), std::string::npos);
  bad = TraceError(With("\"schemaVersion\"", std::string(1, '\0'), &at));
  EXPECT_EQ(bad.second, static_cast<long>(at)) << bad.first;
  bad = TraceError(kTrace + std::string(1, '\0'));
  EXPECT_NE(bad.second, -1) << bad.first;
  // Numbers beyond a double or a 64-bit integer, read or not.
  std::string doc = kTrace;
  doc.replace(doc.find("10.5"), 4, "1e400");
  bad = TraceError(doc);
  EXPECT_EQ(bad.second, static_cast<long>(doc.find("1e400"))) << bad.first;
  EXPECT_NE(bad.first.find("number"), std::string::npos);
  doc = kTrace;
  doc.replace(doc.find("\"Sequence number\": 1") + 19, 1, "123456789012345678901234567890");
  bad = TraceError(doc);
  EXPECT_EQ(bad.second, static_cast<long>(doc.find("123456789012345678901234567890"))) << bad.first;
  // A plain number too large for the reader's nanoseconds: that event has no time.
  doc = kTrace;
  doc.replace(doc.find("10.5"), 4, "12345678901234567.5");
  auto t = KinetoTrace::Parse(doc, "hostile.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->span(), std::make_pair(int64_t{1'000'005'000}, int64_t{1'000'105'000}));
  EXPECT_EQ(t->ExternalIdAt(7, 8, 1'000'020'000), 2u) << "aten::mm has no time";
}

TEST(KinetoRead, DeepNestingIsRefusedAtTheBound) {
  // args' values are at depth 4 (root 0, traceEvents 1, event 2, args 3): the
  // 509th '[' opens a container at depth 512.
  std::string doc = kTrace;
  size_t at = doc.find("\"Sequence number\": 1") + 20;
  doc.insert(at, ", \"deep\": " + std::string(600, '[') + std::string(600, ']'));
  auto bad = TraceError(doc);
  EXPECT_EQ(bad.second, static_cast<long>(at + 10 + 508)) << bad.first.substr(0, 200);
  EXPECT_NE(bad.first.find("512 levels"), std::string::npos);
  // Far deeper than any stack: refused, not a crash.
  std::string deeper(200000, '{');
  bad = TraceError("{\"traceEvents\": [], \"x\": " + deeper);
  EXPECT_FALSE(bad.first.empty());
  std::string balanced;
  for (int i = 0; i < 100000; ++i) balanced += "{\"a\":";
  balanced += "1" + std::string(100000, '}');
  bad = TraceError("{\"traceEvents\": [], \"x\": " + balanced + "}");
  EXPECT_EQ(bad.second, static_cast<long>(25 + 5 * 511)) << bad.first.substr(0, 200);
}

TEST(KinetoRead, DuplicateKeysReadAsTheLastOne) {
  // As JSON.parse reads them: the last traceEvents, the last ts.
  std::string doc = kTrace;
  doc.replace(doc.find("\"ts\": 5,"), 8, "\"ts\": 1, \"ts\": 5,");
  doc.insert(doc.find("\"traceEvents\""), "\"traceEvents\": [{\"ph\": \"X\", \"ts\": 999, \"dur\": 1}],\n");
  auto t = KinetoTrace::Parse(doc, "dup.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->span(), std::make_pair(int64_t{1'000'005'000}, int64_t{1'000'105'000}));
  EXPECT_EQ(t->events_close(), doc.find("  ],") + 2);
  EXPECT_EQ(t->ExternalIdAt(7, 8, 1'000'003'000), 0u) << "step starts at 5 us, not 1";
}

TEST(KinetoRead, WhatIsNoChromeTraceIsNamed) {
  auto bad = TraceError("{\"traceEvents\": {\"ph\": \"X\"}}");
  EXPECT_EQ(bad.second, 16) << bad.first;
  EXPECT_NE(bad.first.find("traceEvents"), std::string::npos);
  EXPECT_NE(bad.first.find("not an array"), std::string::npos);
  bad = TraceError("[1, 2]");
  EXPECT_NE(bad.first.find("not an object"), std::string::npos) << bad.first;
  bad = TraceError("{\"schemaVersion\": 1}");
  EXPECT_NE(bad.first.find("no traceEvents array"), std::string::npos) << bad.first;
  bad = TraceError("\xef\xbb\xbf{\"traceEvents\": []}");  // a byte order mark: not JSON
  EXPECT_FALSE(bad.first.empty());
  // Elements that are no objects are checked and skipped.
  auto t = KinetoTrace::Parse("{\"traceEvents\": [1, \"x\", null, [{}], {\"ph\": \"X\", \"ts\": 1}]}", "odd.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->span(), std::make_pair(int64_t{1000}, int64_t{1000}));
  EXPECT_FALSE(KinetoTrace::Parse("{\"traceEvents\": [1, [1 2]]}", "odd.json").ok());
}

TEST(KinetoRead, NoByteChangeCrashesTheReader) {
  // Every byte of a trace replaced by each of a few troublemakers: the reader
  // reads it or refuses it, naming the file; the offset, when named, lies
  // within the document.
  const char kBytes[] = {'\0', '"', '\\', '{', '}', '[', ']', ',', ':', '1', '-', 'e', '\x80', '\xff'};
  for (size_t i = 0; i < kTrace.size(); ++i) {
    for (char b : kBytes) {
      std::string doc = kTrace;
      doc[i] = b;
      auto [message, offset] = TraceError(doc);
      if (!message.empty()) {
        EXPECT_LE(offset, static_cast<long>(doc.size())) << message;
      }
    }
  }
}

TEST(JsonOut, WritesStableIndentedJsonThatParsesBack) {
  JsonOut j;
  j.BeginObject().Field("name", "a\"b\n\x01\xff").Field("n", uint64_t{18446744073709551615ull});
  j.Key("list").BeginArray().Int(-3).Double(1.0 / 3).Bool(false).Null().EndArray();
  j.Key("empty").BeginObject().EndObject().EndObject();
  std::string text = j.Take();
  EXPECT_EQ(text,
            "{\n  \"name\": \"a\\\"b\\n\\u0001\xef\xbf\xbd\",\n  \"n\": 18446744073709551615,\n  \"list\": [\n    -3,\n"
            "    0.333,\n    false,\n    null\n  ],\n  \"empty\": {}\n}\n");
  testing::Json back = testing::ParseOrFail(text);
  EXPECT_EQ(back["list"].items.size(), 4u);
}

}  // namespace
}  // namespace gpucap::tools
