// The export-table copies the entry gate hands libcudart (export_tables.h):
// a table's function entries come back wrapped, its other words as they
// were, one copy per table, and a table whose size word cannot be right is
// refused and counted.
#include "export_tables.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "driver_wrap.h"
#include "entry_gate.h"

namespace gpucap::gate {
namespace {

uint32_t g_depth_inside = 99;

uint64_t Twice(uint64_t x) {
  g_depth_inside = EntryGate::Process().depth();
  return 2 * x;
}
uint64_t Thrice(uint64_t x) { return 3 * x; }
uint64_t g_data_word = 5;

// What the test calls code: the two functions above, and nothing else.
bool IsTestCode(const void* p) {
  return p == reinterpret_cast<const void*>(&Twice) || p == reinterpret_cast<const void*>(&Thrice);
}

using Fn = uint64_t (*)(uint64_t);

TEST(ExportTables, FunctionsComeBackWrappedAndDataWordsAsTheyWere) {
  if (!WrapSupported()) GTEST_SKIP() << "the stubs are x86-64 Linux only";
  static const void* table[5] = {reinterpret_cast<const void*>(5 * sizeof(void*)),
                                 reinterpret_cast<const void*>(&Twice), &g_data_word, nullptr,
                                 reinterpret_cast<const void*>(&Thrice)};
  ExportTableCounts before = export_table_counts();
  auto* copy = static_cast<const void* const*>(WrapTable(table, &IsTestCode));
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(static_cast<const void*>(copy), static_cast<const void*>(table));
  EXPECT_EQ(copy[0], table[0]) << "the size word";
  EXPECT_TRUE(IsStub(copy[1]));
  EXPECT_EQ(StubTarget(copy[1]), reinterpret_cast<const void*>(&Twice));
  EXPECT_EQ(copy[2], &g_data_word) << "a data word is not wrapped";
  EXPECT_EQ(copy[3], nullptr);
  EXPECT_TRUE(IsStub(copy[4]));
  EXPECT_EQ(reinterpret_cast<Fn>(const_cast<void*>(copy[1]))(21), 42u);
  EXPECT_EQ(g_depth_inside, 1u) << "the call through the copy is inside the gate";
  EXPECT_EQ(EntryGate::Process().depth(), 0u);
  EXPECT_EQ(reinterpret_cast<Fn>(const_cast<void*>(copy[4]))(5), 15u);
  EXPECT_EQ(WrapTable(table, &IsTestCode), copy) << "one copy per table";
  ExportTableCounts after = export_table_counts();
  EXPECT_EQ(after.tables_wrapped, before.tables_wrapped + 1);
  EXPECT_EQ(after.entries_wrapped, before.entries_wrapped + 2);
  EXPECT_EQ(after.tables_refused, before.tables_refused);
}

TEST(ExportTables, ATableWhoseSizeCannotBeRightIsRefusedAndCounted) {
  if (!WrapSupported()) GTEST_SKIP() << "the stubs are x86-64 Linux only";
  const uint64_t sizes[] = {0, 8, 12, 17, kMaxTableBytes + 8, ~uint64_t{0} - 7};
  for (uint64_t size : sizes) {
    const void* table[3] = {reinterpret_cast<const void*>(size), reinterpret_cast<const void*>(&Twice),
                            reinterpret_cast<const void*>(&Thrice)};
    ExportTableCounts before = export_table_counts();
    EXPECT_EQ(WrapTable(table, &IsTestCode), nullptr) << "size word " << size;
    EXPECT_EQ(export_table_counts().tables_refused, before.tables_refused + 1) << "size word " << size;
  }
  ExportTableCounts before = export_table_counts();
  EXPECT_EQ(WrapTable(nullptr, &IsTestCode), nullptr);
  EXPECT_EQ(export_table_counts().tables_refused, before.tables_refused + 1);
}

TEST(ExportTables, TheRuntimeCallbackHooksIdIsRecognisedByAllItsBytes) {
  unsigned char id[16];
  for (int i = 0; i < 16; ++i) id[i] = kRuntimeCallbackHooksId[i];
  EXPECT_TRUE(IsRuntimeCallbackHooks(id));
  for (int i = 0; i < 16; ++i) {
    id[i] ^= 1;
    EXPECT_FALSE(IsRuntimeCallbackHooks(id)) << "byte " << i;
    id[i] ^= 1;
  }
  EXPECT_FALSE(IsRuntimeCallbackHooks(nullptr));
}

}  // namespace
}  // namespace gpucap::gate
