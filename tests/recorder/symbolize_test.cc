#include "symbolize.h"

#include <gtest/gtest.h>

namespace gpucap::recorder {
namespace {

// Like a CUDA graph host function: file-local, not exported.
__attribute__((noinline)) void HostCheckpointForTest(void* p) { *static_cast<int*>(p) += 1; }

TEST(Symbolize, NamesFunctionsTheDynamicSymbolTableDoesNotHold) {
  auto address = reinterpret_cast<uint64_t>(&HostCheckpointForTest);
  std::string name = SymbolFor(address);
  EXPECT_NE(name.find("HostCheckpointForTest"), std::string::npos) << name;
  int x = 0;
  HostCheckpointForTest(&x);
  EXPECT_EQ(x, 1);
}

TEST(Symbolize, UnknownAddressesHaveNoName) {
  EXPECT_EQ(SymbolFor(0x10), "");
}

}  // namespace
}  // namespace gpucap::recorder
