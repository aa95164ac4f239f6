// How the Perfetto renderer encodes what it writes, on real fixtures: what
// repeats goes by reference to interned data defined once per sequence, and
// the fields the importer does without are left out. (What the trace says
// is pftrace_test.cc's: the same ops, flows and counters as the JSON.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/skip.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "pftrace_reader.h"

namespace gpucap::testing {
namespace {

PfTrace BuildOne(const std::string& fixture, const std::string& window) {
  std::string path = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + fixture + ".gpucap";
  PfTrace t;
  auto index = builder::CaptureIndex::Open(path);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return t;
  builder::BuildOptions o;
  o.window = window;
  o.join.trace_name = "t";
  builder::Builder b(**index, o);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok() && !windows->empty());
  if (!windows.ok() || windows->empty()) return t;
  std::string bytes;
  auto sink = builder::NewPerfettoRenderer(builder::NewStringSink(&bytes));
  builder::WindowReport report;
  Status s = b.BuildWindow(windows->front(), sink.get(), &report);
  EXPECT_TRUE(s.ok()) << s.message();
  t = ReadPftrace(bytes);
  for (const std::string& e : t.errors) ADD_FAILURE() << fixture << ": " << e;
  return t;
}

class PftraceEncoding : public ::testing::TestWithParam<const char*> {};

TEST_P(PftraceEncoding, InternsWhatRepeatsAndLeavesOutWhatTheImporterDoesWithout) {
  std::string fixture = GetParam();
  if (!std::filesystem::exists(std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + fixture + ".gpucap")) {
    GPUCAP_SKIP(fixture << " is not in this tree");
  }
  PfTrace t = BuildOne(fixture, "all");
  const PfEncoding& e = t.encoding;
  ASSERT_GT(t.slices.size(), 50u) << fixture;
  // Every event name, category and argument name by iid, none inline.
  EXPECT_GE(e.names_by_iid, t.slices.size()) << fixture;
  EXPECT_EQ(e.names_inline, 0u) << fixture;
  EXPECT_GE(e.categories_by_iid, t.slices.size()) << fixture;
  EXPECT_EQ(e.categories_inline, 0u) << fixture;
  EXPECT_GT(e.arg_names_by_iid, t.slices.size()) << fixture;
  EXPECT_EQ(e.arg_names_inline, 0u) << fixture;
  // String values by iid (only long ones, rarely repeated, inline).
  EXPECT_GT(e.strings_by_iid, 0u) << fixture;
  EXPECT_LT(e.strings_inline * 10, e.strings_by_iid) << fixture;
  // Each text defined once on its sequence.
  EXPECT_EQ(e.redefinitions, 0u) << fixture;
  // sequence_flags on each sequence's first packet only.
  EXPECT_GT(e.sequences, 0u) << fixture;
  EXPECT_EQ(e.packets_with_flags, e.sequences) << fixture;
  // A run's definitions in one packet ahead of its events, never in an
  // event's packet: no fixture's track has a run over kRunBytes, so at most
  // one such packet per sequence (counter and recording sequences, which
  // intern nothing, have none).
  EXPECT_GT(e.packets_with_interned, 0u) << fixture;
  EXPECT_LE(e.packets_with_interned, e.sequences) << fixture;
  EXPECT_EQ(e.events_with_interned, 0u) << fixture;
  // Flow ids in Perfetto's current fields (flow_ids 47 and
  // terminating_flow_ids 48, fixed64), none in the deprecated varint ones
  // (36, 42).
  EXPECT_GT(e.fixed64_flow_ids, 0u) << fixture;
  EXPECT_EQ(e.varint_flow_ids, 0u) << fixture;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PftraceEncoding, ::testing::Values("torch_train", "nvtx_domains", "allreduce-0"));

}  // namespace
}  // namespace gpucap::testing
