// gpucap export, column by column where a one-character slip would pass the
// row comparisons: a copy's kinds as the program that recorded the fixture
// made its copies, and the nesting (depth, parent) of ranges that end in
// the same nanosecond as the range around them. Read through SQL only, so
// the tests hold whatever writes the database.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "export_test_util.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

// tests/gpu/basics.cu copies host to device and back from pageable and from
// pinned memory, and device to device once (fixtures/basics.expect.json:
// memcpy:HtoD:pageable, memcpy:HtoD:pinned, memcpy:DtoH:pageable,
// memcpy:DtoH:pinned, memcpy:DtoD).
TEST(ExportColumns, MemcpyKindsAreTheCopiesTheProgramMade) {
  ExportDb db({Fixture("basics")});
  std::multiset<std::string> got;
  for (const auto& r : db.Rows("SELECT copy_kind, src_kind, dst_kind FROM memcpys")) got.insert(r[0] + "|" + r[1] + "|" + r[2]);
  std::multiset<std::string> want = {"HtoD|Pageable|Device", "HtoD|Pinned|Device", "DtoH|Device|Pageable",
                                     "DtoH|Device|Pinned", "DtoD|Device|Device"};
  EXPECT_EQ(got, want);
}

// On every fixture with copies: the three kind columns are the three words
// of the copy's name, "Memcpy HtoD (Pinned -> Device)", exactly.
TEST(ExportColumns, MemcpyKindsAreTheWordsOfTheName) {
  const std::regex name_form(R"(Memcpy (\w+) \((\w+) -> (\w+)\))");
  size_t copies = 0;
  for (const char* fixture : {"basics", "peer", "torch_train"}) {
    SCOPED_TRACE(fixture);
    ExportDb db({Fixture(fixture)});
    for (const auto& r : db.Rows("SELECT s.value, m.copy_kind, m.src_kind, m.dst_kind FROM memcpys m "
                                 "JOIN strings s ON s.id = m.name")) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(r[0], m, name_form)) << r[0];
      EXPECT_EQ(r[1], m[1].str()) << r[0];
      EXPECT_EQ(r[2], m[2].str()) << r[0];
      EXPECT_EQ(r[3], m[3].str()) << r[0];
      copies++;
    }
  }
  EXPECT_GT(copies, 5u);
}

// Ranges on one thread, three of them ending in the same nanosecond, one
// starting where they end and one starting with its parent:
//
//   outer      [1000, 5000)  depth 0
//    inner     [2000, 5000)  depth 1, in outer
//     deepest  [3000, 5000)  depth 2, in inner
//   next       [5000, 6000)  depth 0: starts as outer ends, not inside it
//    first     [5000, 5500)  depth 1, in next (starts with it)
//
// A range that ends together with its parent is still inside it; one that
// starts where another ends is not.
TEST(ExportColumns, RangesEndingWithTheirParentAreItsChildren) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z6kernelv"));
  Scene::Ok(s.c().Push(100, kT0 + 1000, "outer"));
  Scene::Ok(s.c().Push(100, kT0 + 2000, "inner"));
  Scene::Ok(s.c().Push(100, kT0 + 3000, "deepest"));
  s.Launch(1, 100, kT0 + 3200, kT0 + 4000, kT0 + 4500);
  Scene::Ok(s.c().Pop(100, kT0 + 5000));
  Scene::Ok(s.c().Pop(100, kT0 + 5000));
  Scene::Ok(s.c().Pop(100, kT0 + 5000));
  Scene::Ok(s.c().Push(100, kT0 + 5000, "next"));
  Scene::Ok(s.c().Push(100, kT0 + 5000, "first"));
  Scene::Ok(s.c().Pop(100, kT0 + 5500));
  Scene::Ok(s.c().Pop(100, kT0 + 6000));
  ExportDb db({s.Path()});
  std::map<std::string, std::string> got;
  for (const auto& r : db.Rows("SELECT s.value, r.start_ns - MIN(r.start_ns) OVER (), r.end_ns - MIN(r.start_ns) "
                               "OVER (), r.depth, COALESCE(ps.value, '-') FROM nvtx_ranges r JOIN strings s ON "
                               "s.id = r.name LEFT JOIN nvtx_ranges p ON p.id = r.parent LEFT JOIN strings ps ON "
                               "ps.id = p.name WHERE r.kind = 'push_pop'")) {
    got[r[0]] = r[1] + "-" + r[2] + " depth " + r[3] + " in " + r[4];
  }
  std::map<std::string, std::string> want = {
      {"outer", "0-4000 depth 0 in -"},       {"inner", "1000-4000 depth 1 in outer"},
      {"deepest", "2000-4000 depth 2 in inner"}, {"next", "4000-5000 depth 0 in -"},
      {"first", "4000-4500 depth 1 in next"},
  };
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace gpucap::testing
