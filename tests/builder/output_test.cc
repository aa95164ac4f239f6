#include "gpucap/builder/output.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/skip.h"
#include "../support/temp_dir.h"
#include "gunzip_util.h"

namespace gpucap::builder {
namespace {

using testing::Gunzip;


TEST(Output, GzipMembersCompressedInParallelReadBackInOrder) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "{\"ph\": \"X\", \"i\": " + std::to_string(i * 7919 % 10007) + "},\n";
  struct Case {
    GzipCodec codec;
    int level;
  };
  for (Case c : {Case{GzipCodec::kDefault, -1}, Case{GzipCodec::kIsal, 0}, Case{GzipCodec::kIsal, 1},
                 Case{GzipCodec::kIsal, 3}, Case{GzipCodec::kLibdeflate, 1}, Case{GzipCodec::kZlib, 1}}) {
    if (!GzipCodecAvailable(c.codec)) continue;
    testing::TempDir dir;
    OutputOptions o;
    o.codec = c.codec;
    o.gzip_level = c.level;
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
    EXPECT_EQ(back, text) << static_cast<int>(c.codec) << " level " << c.level;
    EXPECT_GE(members, 40);
    EXPECT_FALSE(std::filesystem::exists(dir.File("t.json.gz.tmp")));
  }
}

// ISA-L's fast level fits its Huffman code to 64 KiB sampled from a block;
// byte values the sample never saw must still be encodable. Here one byte in
// 997 is random and the rest 'a': a 64 KiB sample holds at most ~66 of the
// 256 values, the block all of them.
TEST(Output, IsalFastLevelEncodesBytesItsSampleNeverSaw) {
  if (!GzipCodecAvailable(GzipCodec::kIsal)) GPUCAP_SKIP("built without ISA-L");
  std::string block(size_t{1} << 20, 'a');
  uint32_t x = 12345;
  for (size_t i = 0; i < block.size(); i += 997) {
    x = x * 1664525u + 1013904223u;
    block[i] = static_cast<char>(x >> 24);
  }
  std::string gz;
  for (int run = 0; run < 2; ++run) {
    testing::TempDir dir;
    OutputOptions o;
    o.codec = GzipCodec::kIsal;
    o.gzip_level = 0;
    o.block_bytes = block.size();
    auto out = OpenOutput(dir.File("t.gz"), o);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Append(block).ok());
    ASSERT_TRUE((*out)->Close().ok());
    std::string bytes = testing::ReadFile(dir.File("t.gz"));
    int members = 0;
    EXPECT_EQ(Gunzip(bytes, &members), block);
    EXPECT_EQ(members, 1);
    if (run == 1) {
      EXPECT_EQ(bytes, gz) << "the same block gives the same bytes";
    }
    gz = bytes;
  }
}

// With ISA-L's fast level, a Huffman code fitted to the first of every few
// members serves the next ones too, whatever they hold: here the first
// member is one letter and later ones random bytes. Writers hand over their
// buffers (AppendBlock) as the JSON writer does; two runs give one set of
// bytes.
TEST(Output, IsalCodeSharedAcrossMembersEncodesWhatFollowsAndRepeats) {
  if (!GzipCodecAvailable(GzipCodec::kIsal)) GPUCAP_SKIP("built without ISA-L");
  std::vector<std::string> blocks;
  uint32_t x = 777;
  for (int b = 0; b < 20; ++b) {
    std::string block(40000 + b * 1000, 'a');
    if (b % 3 != 0) {
      for (char& c : block) {
        x = x * 1664525u + 1013904223u;
        c = static_cast<char>(x >> 24);
      }
    }
    blocks.push_back(std::move(block));
  }
  std::string all;
  for (const std::string& b : blocks) all += b;
  std::string first;
  for (int run = 0; run < 2; ++run) {
    testing::TempDir dir;
    OutputOptions o;
    o.codec = GzipCodec::kIsal;
    o.gzip_level = 0;
    o.threads = 2;
    auto out = OpenOutput(dir.File("t.gz"), o);
    ASSERT_TRUE(out.ok());
    for (const std::string& b : blocks) {
      ByteBlock block;
      block.Reserve(b.size());
      std::memcpy(block.data.get(), b.data(), b.size());
      ASSERT_TRUE((*out)->AppendBlock(&block, b.size()).ok());
      EXPECT_GE(block.capacity, b.size()) << "a spare at least as large comes back";
    }
    ASSERT_TRUE((*out)->Close().ok());
    std::string bytes = testing::ReadFile(dir.File("t.gz"));
    int members = 0;
    EXPECT_EQ(Gunzip(bytes, &members), all);
    EXPECT_EQ(members, 20);
    if (run == 1) {
      EXPECT_EQ(bytes, first);
    }
    first = bytes;
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
