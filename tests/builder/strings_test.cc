#include "gpucap/builder/strings.h"

#include <gtest/gtest.h>

namespace gpucap::builder {
namespace {

std::vector<format::SequencedString> Defs() {
  return {
      {3, {0x10, "first"}},
      {9, {0x10, "reused"}},  // the recording process reused the pointer
      {5, {0x20, "other"}},
  };
}

TEST(StringResolver, AChunkTakesTheLatestDefinitionWrittenBeforeIt) {
  StringResolver r(Defs());
  EXPECT_EQ(r.Resolve(0x10, 4).index, 0u);
  EXPECT_EQ(r.Resolve(0x10, 9).index, 0u) << "a definition applies to chunks after it, not beside it";
  EXPECT_EQ(r.Resolve(0x10, 10).index, 1u);
  EXPECT_EQ(r.Resolve(0x10, 1000).index, 1u);
  EXPECT_FALSE(r.Resolve(0x10, 10).late);
}

TEST(StringResolver, LateAndMissingDefinitions) {
  StringResolver r(Defs());
  StringResolver::Resolution late = r.Resolve(0x20, 2);
  EXPECT_EQ(late.index, 2u);
  EXPECT_TRUE(late.late);
  EXPECT_EQ(r.Resolve(0x30, 100).index, kNoString);
  EXPECT_EQ(r.Resolve(0, 100).index, kNoString);
}

}  // namespace
}  // namespace gpucap::builder
