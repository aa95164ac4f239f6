#include "crc32c.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace gpucap::format {
namespace {

TEST(Crc32c, KnownVectors) {
  // RFC 3720 check value and iSCSI test patterns.
  EXPECT_EQ(Crc32c(0, "123456789", 9), 0xE3069283u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff);
  EXPECT_EQ(Crc32c(0, zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(0, ones.data(), ones.size()), 0x62A8AB43u);
}

TEST(Crc32c, HardwareMatchesPortableAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t len = 0; len < 300; ++len) {
      ASSERT_EQ(Crc32c(0, buf.data() + align, len), Crc32cPortable(0, buf.data() + align, len))
          << "align " << align << " len " << len;
    }
  }
}

TEST(Crc32c, ExtendsAcrossPieces) {
  std::string s = "the quick brown fox jumps over the lazy dog";
  uint32_t whole = Crc32c(0, s.data(), s.size());
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t part = Crc32c(Crc32c(0, s.data(), cut), s.data() + cut, s.size() - cut);
    EXPECT_EQ(part, whole) << cut;
  }
}

}  // namespace
}  // namespace gpucap::format
