#include "gpucap/builder/output.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include "../support/temp_dir.h"

namespace gpucap::builder {
namespace {

// Inflates every gzip member in turn, as gzip readers do.
std::string Gunzip(const std::string& in, int* members) {
  std::string out;
  *members = 0;
  z_stream z{};
  inflateInit2(&z, 15 + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[65536];
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END) {
      (*members)++;
      inflateReset(&z);
    } else if (rc != Z_OK) {
      ADD_FAILURE() << "inflate failed: " << rc;
      break;
    }
  }
  inflateEnd(&z);
  return out;
}

TEST(Output, GzipMembersCompressedInParallelReadBackInOrder) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"ph\": \"X\", \"i\": " + std::to_string(i * 7919 % 10007) + "},\n";
  for (GzipCodec codec : {GzipCodec::kDefault, GzipCodec::kIsal, GzipCodec::kLibdeflate, GzipCodec::kZlib}) {
    if (!GzipCodecAvailable(codec)) continue;
    testing::TempDir dir;
    OutputOptions o;
    o.codec = codec;
    o.block_bytes = 10000;  // many members
    o.threads = 3;
    auto out = OpenOutput(dir.File("t.json.gz"), o);
    ASSERT_TRUE(out.ok());
    for (size_t at = 0; at < text.size(); at += 777) {
      ASSERT_TRUE((*out)->Append(std::string_view(text).substr(at, 777)).ok());
    }
    ASSERT_TRUE((*out)->Close().ok());
    int members = 0;
    std::string back = Gunzip(testing::ReadFile(dir.File("t.json.gz")), &members);
    EXPECT_EQ(back, text);
    EXPECT_GE(members, 40);
    EXPECT_FALSE(std::filesystem::exists(dir.File("t.json.gz.tmp")));
  }
}

TEST(Output, AnUnclosedOutputLeavesNoFile) {
  testing::TempDir dir;
  {
    auto out = OpenOutput(dir.File("t.json"));
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Append("{\"traceEvents\": [").ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("t.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("t.json.tmp")));
}

TEST(Output, AnUnwritablePathIsAnErrorNamingIt) {
  auto out = OpenOutput("/nonexistent-dir/t.json");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("/nonexistent-dir/t.json"), std::string::npos);
}

}  // namespace
}  // namespace gpucap::builder
