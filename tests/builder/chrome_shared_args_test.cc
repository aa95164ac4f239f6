// The Chrome JSON renderer's cache of shared argument runs (Slice::shared_id,
// trace_model.h): bounded to kSharedIdsLive slots, and never writing one
// run's text for another's id, whichever ids the slices carry.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {
namespace {

// Renders one slice per (id, value): the run is one arg, "v": value.
std::string Render(const std::vector<std::pair<uint32_t, uint64_t>>& slices) {
  std::string text;
  auto sink = NewChromeJsonRenderer(NewStringSink(&text));
  TraceHeader h;
  h.processes.push_back({Process::Kind::kGpu, 0, "p", "GPU 0", 0});
  Track stream;
  stream.kind = Track::Kind::kStream;
  stream.tid = 7;
  stream.name = "stream 7";
  h.tracks.push_back(stream);
  EXPECT_TRUE(sink->Begin(h).ok());
  int64_t ts = 1000;
  for (auto [id, value] : slices) {
    Arg arg = Arg::Uint("v", value);
    Slice s;
    s.ts_ns = ts, s.dur_ns = 10, s.name = "k";
    ts += 100;
    s.args = std::span<const Arg>(&arg, 1);
    s.shared_id = id, s.shared_first = 0, s.shared_count = 1;
    EXPECT_TRUE(sink->AddSlice(s).ok());
  }
  EXPECT_TRUE(sink->End().ok());
  return text;
}

// The values as written, in order.
std::vector<std::string> Values(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = text.find("\"v\":"); at != std::string::npos; at = text.find("\"v\":", at + 1)) {
    size_t end = text.find_first_of(",}", at + 4);
    out.push_back(text.substr(at + 4, end - at - 4));
  }
  return out;
}

TEST(ChromeSharedArgs, RepeatsARunsTextForItsId) {
  EXPECT_EQ(Values(Render({{5, 11}, {6, 12}, {5, 11}, {6, 12}})),
            (std::vector<std::string>{"11", "12", "11", "12"}));
}

// Ids kSharedIdsLive apart share a slot: each still gets its own args.
TEST(ChromeSharedArgs, IdsInOneSlotKeepTheirOwnText) {
  EXPECT_EQ(Values(Render({{1, 11}, {1 + kSharedIdsLive, 22}, {1, 11}, {1 + 2 * kSharedIdsLive, 33},
                           {1 + kSharedIdsLive, 22}})),
            (std::vector<std::string>{"11", "22", "11", "33", "22"}));
}

// Many more ids than slots, each used twice in turn, as a long window's
// generations of runs hand them out.
TEST(ChromeSharedArgs, ManyIdsWrittenAsTheirArgs) {
  std::vector<std::pair<uint32_t, uint64_t>> slices;
  for (uint32_t id = 1; id <= 3 * kSharedIdsLive; id += 7) {
    slices.push_back({id, id * 3ull});
    slices.push_back({id, id * 3ull});
  }
  std::vector<std::string> values = Values(Render(slices));
  ASSERT_EQ(values.size(), slices.size());
  for (size_t i = 0; i < slices.size(); ++i) ASSERT_EQ(values[i], std::to_string(slices[i].second)) << i;
}

}  // namespace
}  // namespace gpucap::builder
