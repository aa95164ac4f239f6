// The span-based JSON reader the splice reads profiler traces with, and the
// writer behind every --json output.
#include <gtest/gtest.h>

#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/json/json_scan.h"
#include "tool_test_util.h"

namespace gpucap::tools {
namespace {

TEST(JsonScan, FindsMembersAsSpansAndRefusesWhatIsNotJson) {
  std::string doc = R"( {"a": [1, 2.5, {"b": "x\"y\u00e9\ud83d\ude00"}], "n": null, "t": true} )";
  auto root = ScanJsonDocument(doc);
  ASSERT_TRUE(root.ok()) << root.status().message();
  std::vector<std::string> keys;
  JsonValue a;
  ASSERT_TRUE(ForEachMember(*root, [&](const std::string& k, const JsonValue& v) {
    keys.push_back(k);
    if (k == "a") a = v;
    return true;
  }).ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "n", "t"}));
  EXPECT_EQ(doc.substr(a.offset, a.text.size()), a.text);
  std::vector<std::string> items;
  ASSERT_TRUE(ForEachElement(a, [&](const JsonValue& v) {
    items.emplace_back(v.text);
    if (v.type == JsonValue::Type::kObject) {
      (void)ForEachMember(v, [&](const std::string&, const JsonValue& s) {
        EXPECT_EQ(JsonString(s), "x\"y\xc3\xa9\xf0\x9f\x98\x80");
        return true;
      });
    }
    return true;
  }).ok());
  EXPECT_EQ(items.size(), 3u);

  for (const char* bad : {"{\"a\":1,}", "[1 2]", "{\"a\" 1}", "\"tab\tinside\"", "01x", "{\"a\":tru}", "[", "\"\\q\""}) {
    auto r = ScanJsonDocument(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("byte offset"), std::string::npos);
    }
  }
  std::string deep(600, '[');
  EXPECT_FALSE(ScanJsonDocument(deep + std::string(600, ']')).ok()) << "nesting is bounded";
}

TEST(JsonScan, ReadsChromeMicrosecondsExactly) {
  auto num = [](const char* text) {
    JsonValue v{JsonValue::Type::kNumber, text, 0};
    int64_t ns = -1;
    EXPECT_TRUE(JsonMicrosToNanos(v, &ns)) << text;
    return ns;
  };
  EXPECT_EQ(num("5109977831152.739"), 5109977831152739);
  EXPECT_EQ(num("3.5"), 3500);
  EXPECT_EQ(num("12"), 12000);
  EXPECT_EQ(num("0.0004"), 0);
  EXPECT_EQ(num("0.0005"), 1);
  EXPECT_EQ(num("-2.25"), -2250);
  int64_t i;
  EXPECT_TRUE(JsonInt({JsonValue::Type::kNumber, "180519", 0}, &i));
  EXPECT_EQ(i, 180519);
  EXPECT_FALSE(JsonInt({JsonValue::Type::kNumber, "1.5", 0}, &i));
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
