// The pftrace says when the recorder recorded, as the Chrome JSON's
// gpucap.recording object does: on real captures, the "gpucap recording"
// track's slices against the JSON's intervals of the same window, read back
// through the project's own wire reader (which checks the importer's rules).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../builder/json.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "pftrace_reader.h"

namespace gpucap::testing {
namespace {

struct Rendered {
  Json json;
  PfTrace pf;
};

// Each window of the fixture, rendered both ways.
std::vector<Rendered> Render(const std::string& fixture, const std::string& window) {
  std::vector<Rendered> out;
  auto index = builder::CaptureIndex::Open(std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + fixture);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return out;
  builder::BuildOptions options;
  options.window = window;
  builder::Builder b(**index, options);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok());
  if (!windows.ok()) return out;
  for (const builder::Window& w : *windows) {
    std::string json, pf;
    builder::WindowReport r1, r2;
    EXPECT_TRUE(b.BuildWindow(w, builder::NewChromeJsonRenderer(builder::NewStringSink(&json)).get(), &r1).ok());
    EXPECT_TRUE(b.BuildWindow(w, builder::NewPerfettoRenderer(builder::NewStringSink(&pf)).get(), &r2).ok());
    Rendered r;
    std::string error;
    EXPECT_TRUE(ParseJson(json, &r.json, &error)) << error;
    r.pf = ReadPftrace(pf);
    for (const std::string& e : r.pf.errors) ADD_FAILURE() << fixture << " pftrace: " << e;
    out.push_back(std::move(r));
  }
  return out;
}

const PfTrack* RecordingTrack(const PfTrace& t) {
  for (const auto& [uuid, track] : t.tracks) {
    if (track.name == "gpucap recording") return &track;
  }
  return nullptr;
}

std::string Arg(const PfSlice& s, const std::string& key) {
  for (const auto& [k, v] : s.args) {
    if (k == key) return v;
  }
  return "";
}

// Slices on the recording track equal the JSON's intervals one for one:
// state as the name, start and end, why. Returns how many are `state`.
size_t ExpectSameIntervals(const Rendered& r, const std::string& what, const std::string& state) {
  const Json& rec = r.json["gpucap"]["recording"];
  const PfTrack* track = RecordingTrack(r.pf);
  if (!track) {
    ADD_FAILURE() << what << ": no recording track beside " << rec.items.size() << " JSON intervals";
    return 0;
  }
  EXPECT_EQ(track->parent, 0u) << what << ": a root track, drawn above the processes";
  EXPECT_FALSE(track->description.empty());
  std::vector<const PfSlice*> slices;
  for (const PfSlice& s : r.pf.slices) {
    if (s.track == track->uuid) slices.push_back(&s);
  }
  EXPECT_EQ(slices.size(), rec.items.size()) << what;
  size_t n = 0;
  for (size_t i = 0; i < slices.size() && i < rec.items.size(); ++i) {
    const Json& j = rec.items[i];
    const PfSlice& s = *slices[i];
    EXPECT_EQ(s.name, j["state"].text) << what << " interval " << i;
    EXPECT_EQ(static_cast<uint64_t>(s.ts), j["start_ns"].u()) << what << " interval " << i;
    EXPECT_EQ(static_cast<uint64_t>(s.ts + s.dur), j["end_ns"].u()) << what << " interval " << i;
    EXPECT_EQ(Arg(s, "why"), j["why"].text) << what << " interval " << i;
    n += s.name == state;
  }
  return n;
}

TEST(RecordingTrack, SampledStepsOfANvtxCaptureRangeSayWhichAndWhy) {
  // capture_nvtx: --capture-range nvtx:step#\d+ --sample 2 (fixtures/README.md):
  // steps 1, 3 and 5 sampled.
  auto whole = Render("capture_nvtx.gpucap", "all");
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(ExpectSameIntervals(whole[0], "capture_nvtx whole", "sampled"), 3u);
  std::vector<std::string> why;
  for (const PfSlice& s : whole[0].pf.slices) {
    if (s.name == "sampled") why.push_back(Arg(s, "why"));
  }
  ASSERT_EQ(why.size(), 3u);
  for (size_t i = 0; i < why.size(); ++i) {
    EXPECT_NE(why[i].find("'step#" + std::to_string(2 * i + 1) + "'"), std::string::npos) << why[i];
  }
  // Per window (one per sampled step) the track holds that window's part.
  auto windows = Render("capture_nvtx.gpucap", "marks");
  ASSERT_EQ(windows.size(), 3u);
  for (size_t i = 0; i < windows.size(); ++i) {
    EXPECT_GE(ExpectSameIntervals(windows[i], "capture_nvtx window " + std::to_string(i), "sampled"), 1u);
  }
}

TEST(RecordingTrack, ProfilerApiRangesAreRecordingIntervals) {
  auto whole = Render("capture_profiler.gpucap", "all");
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(ExpectSameIntervals(whole[0], "capture_profiler whole", "recording"), 2u);
}

TEST(RecordingTrack, ACaptureRecordedWholeHasNone) {
  auto whole = Render("basics.gpucap", "all");
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(RecordingTrack(whole[0].pf), nullptr);
  EXPECT_FALSE(whole[0].json["gpucap"].has("recording"));
}

}  // namespace
}  // namespace gpucap::testing
