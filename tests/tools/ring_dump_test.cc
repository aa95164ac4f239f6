// A flight-recorder dump (frame_ring.h) of real captures, read by what reads
// any capture: `gpucap info` names its trigger and counts what it holds, and
// `gpucap build` accepts a dump whose oldest chunks, and so the launches of
// some of the ops it holds, fell out of the ring.
#include <gtest/gtest.h>

#include <cstring>

#include "../support/gpucap_cli.h"
#include "../support/temp_dir.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/capture.h"
#include "gpucap/format/capture_file.h"
#include "gpucap/format/frame_ring.h"
#include "gpucap/format/sink.h"
#include "gpucap/tools/info/capture_info.h"
#include "cli.h"
#include "tool_test_util.h"
#include "scene.h"
#include "synthetic_capture.h"
#include "trace_util.h"

namespace gpucap::tools {
namespace {

bool HoldsLaunches(const format::ChunkInfo& info) {
  for (const format::KindCount& k : info.kind_counts) {
    if (k.count && (k.kind == static_cast<uint32_t>(format::ActivityKind::kRuntime) ||
                    k.kind == static_cast<uint32_t>(format::ActivityKind::kDriver))) {
      return true;
    }
  }
  return false;
}

// Every frame of `capture` but its trailer through a FrameRing whose bound
// is exactly what the span frames after the first activity chunk (with
// `launches_first`: the first that holds API records) take: the ring drops
// the spans up to and including that chunk, and keeps every definition.
// The dump, trigger `trigger`, goes to `out`.
void DumpWithoutFirstChunk(const std::string& capture, const std::string& out, const std::string& trigger,
                           bool launches_first = false) {
  auto file = format::CaptureFile::Open(capture);
  ASSERT_TRUE(file.ok()) << file.status().message();
  std::vector<format::FrameRef> frames;
  (*file)->Scan([&](const format::FrameRef& f) {
    if (f.type != static_cast<uint16_t>(format::FrameType::kTrailer)) frames.push_back(f);
    return true;
  });
  uint64_t total = 0, cut = 0;
  bool past_first_chunk = false;
  for (const auto& f : frames) {
    if (format::IsDefinitionFrame(static_cast<format::FrameType>(f.type))) continue;
    uint64_t bytes = sizeof(format::FrameHeader) + f.length;
    total += bytes;
    if (!past_first_chunk) cut += bytes;
    if (!past_first_chunk && f.type == static_cast<uint16_t>(format::FrameType::kActivityChunk)) {
      auto chunk = format::DecodeChunk(**file, f);
      ASSERT_TRUE(chunk.ok());
      past_first_chunk = !launches_first || HoldsLaunches(chunk->info);
    }
  }
  ASSERT_TRUE(past_first_chunk) << capture << " has no activity chunk";
  ASSERT_GT(total, cut) << capture << " has nothing after its first chunk";
  format::FrameRing ring({total - cut, 0});
  auto bytes = (*file)->bytes();
  for (const auto& f : frames) {
    format::FrameHeader h;
    std::memcpy(&h, bytes.data() + f.offset, sizeof(h));
    format::ByteSpan payload = bytes.subspan(f.offset + sizeof(h), f.length);
    uint64_t records = 0;
    std::vector<format::KindCount> kinds;
    if (f.type == static_cast<uint16_t>(format::FrameType::kActivityChunk)) {
      auto chunk = format::DecodeChunk(**file, f);
      ASSERT_TRUE(chunk.ok());
      records = chunk->info.record_count;
      kinds = chunk->info.kind_counts;
    }
    ring.Add(h, {&payload, 1}, 0, 0, 0, records, kinds);
  }
  ASSERT_GE(ring.counters().frames_dropped, 1u);
  auto sink = format::OpenFileSink(out);
  ASSERT_TRUE(sink.ok());
  format::Trailer trailer;
  trailer.trigger = trigger;
  ASSERT_TRUE(format::WriteRingCapture(ring, trailer, 1, sink->get()).ok());
  ASSERT_TRUE((*sink)->Close().ok());
}

CaptureInfo Describe(const std::string& path) {
  auto index = OpenCapture(path, /*verify=*/true);
  EXPECT_TRUE(index.ok()) << index.status().message();
  return index.ok() ? DescribeCapture(**index) : CaptureInfo{};
}

TEST(RingDump, InfoNamesTheTriggerAndEveryRecordTheDumpClaimsIsThere) {
  testing::TempDir dir;
  std::string dump = dir.File("torch_train.ring-1.gpucap");
  DumpWithoutFirstChunk(testing::Fixture("torch_train"), dump, "api: loss spike");
  auto index = OpenCapture(dump, /*verify=*/true);
  ASSERT_TRUE(index.ok()) << index.status().message();
  CaptureInfo info = DescribeCapture(**index);
  EXPECT_TRUE(info.Intact());
  EXPECT_EQ(info.trigger, "api: loss spike");
  ASSERT_TRUE(info.session.has_value()) << "the session is a definition: kept";
  ASSERT_TRUE(info.records_written.has_value());
  EXPECT_EQ(*info.records_written, info.records);
  EXPECT_GT(info.records, 0u);
  EXPECT_NE(InfoText(info).find("trigger: api: loss spike"), std::string::npos) << InfoText(info);
  // What the ring left out, from its counters: the frames up to the first chunk.
  uint64_t dropped = 0;
  for (const auto& [k, v] : info.recorder->extra) {
    if (k == "ring_frames_dropped") dropped = v;
  }
  EXPECT_GE(dropped, 1u);
  EXPECT_NE(InfoText(info).find("; " + std::to_string(dropped) + " frames ("), std::string::npos) << InfoText(info);
  EXPECT_NE(InfoText(info).find("open ranges 0 carried, 0 forgotten"), std::string::npos) << InfoText(info);
  testing::Json j = testing::ParseOrFail(InfoJson(info));
  EXPECT_EQ(j["shutdown"]["trigger"].text, "api: loss spike");

  CaptureInfo whole = Describe(testing::Fixture("torch_train"));
  EXPECT_LT(info.records, whole.records);
  EXPECT_EQ(whole.trigger, "");

  // As a user runs them: info prints it, and a trim of the dump keeps it
  // (hashed when anonymized: the why is the program's own words).
  testing::CliRun shown = testing::Gpucap("info " + dump);
  EXPECT_EQ(shown.code, 0) << shown.output;
  EXPECT_NE(shown.output.find("trigger: api: loss spike"), std::string::npos) << shown.output;
  std::string trimmed = dir.File("trimmed.gpucap");
  testing::CliRun trim = testing::Gpucap("trim " + dump + " -o " + trimmed);
  ASSERT_EQ(trim.code, 0) << trim.output;
  EXPECT_EQ(Describe(trimmed).trigger, "api: loss spike");
  std::string anonymized = dir.File("anonymized.gpucap");
  trim = testing::Gpucap("trim " + dump + " --anonymize -o " + anonymized);
  ASSERT_EQ(trim.code, 0) << trim.output;
  std::string hidden = Describe(anonymized).trigger;
  EXPECT_FALSE(hidden.empty());
  EXPECT_EQ(hidden.find("loss spike"), std::string::npos) << hidden;
}

// Dumps of real captures whose oldest chunks, the first with launches
// among them, fell out of the ring: every flow the builder draws has both
// ends, and the dump holds no op the whole capture did not.
TEST(RingDump, DumpsOfRealCapturesBuildWithEveryFlowBound) {
  testing::TempDir dir;
  for (const char* name : {"torch_train", "basics", "graphs_nvtx", "sync_events"}) {
    SCOPED_TRACE(name);
    std::string dump = dir.File(std::string(name) + ".ring-1.gpucap");
    DumpWithoutFirstChunk(testing::Fixture(name), dump, "test", /*launches_first=*/true);
    testing::Trace cut = testing::BuildOne(dump);
    testing::ExpectImporterRules(cut);  // every flow has its two ends
    testing::Trace whole = testing::BuildOne(testing::Fixture(name));
    EXPECT_LT(cut.Count("gpu ops"), whole.Count("gpu ops"));
    EXPECT_LE(cut.Count("flows"), whole.Count("flows"));
  }
}

// The op cut in half at a span's start: its launch (an API record) was in
// a chunk the ring dropped, the kernel in one it kept. Its correlation id is
// below every launch the dump holds, so the builder leaves it out and
// counts it; the op launched inside the span keeps its flow, and an op
// whose launch is missing for another reason (an id inside the span's) is
// drawn without a flow as in any capture.
TEST(RingDump, BuildLeavesOutAnOpWhoseLaunchFellOutOfTheRing) {
  testing::Scene scene("launches.gpucap");
  auto& c = scene.c();
  testing::Scene::Ok(c.String(0x1000, "_Z6kernelv"));
  auto api = [&](uint32_t correlation, uint64_t at) {
    builder::testing::ApiRecord a;
    a.start = testing::kT0 + at;
    a.end = a.start + 2000;
    a.tid = 11;
    a.correlation = correlation;
    c.Api(a);
  };
  auto kernel = [&](uint32_t correlation, uint64_t at) {
    builder::testing::KernelRecord k;
    k.start = testing::kT0 + at;
    k.end = k.start + 5000;
    k.correlation = correlation;
    k.stream = 7;
    k.name_pointer = 0x1000;
    c.Kernel(k);
  };
  // Chunk 1: three launches and the first one's kernel.
  api(1, 10'000);
  api(2, 20'000);
  api(3, 30'000);
  kernel(1, 40'000);
  testing::Scene::Ok(c.EndChunk());
  // Chunk 2: the kernels of launches 2 and 3, then a launch and its
  // kernel, and a kernel whose launch (5) was never recorded.
  kernel(2, 50'000);
  kernel(3, 60'000);
  api(4, 70'000);
  kernel(4, 80'000);
  api(6, 90'000);
  kernel(5, 95'000);
  kernel(6, 100'000);
  testing::Scene::Ok(c.EndChunk());
  testing::TempDir dir;
  std::string dump = dir.File("launches.ring-1.gpucap");
  DumpWithoutFirstChunk(scene.Path(), dump, "test");

  testing::Trace whole = testing::BuildOne(scene.Path());
  EXPECT_EQ(whole.Count("gpu ops"), 6);
  EXPECT_EQ(whole.Count("gpu ops without launch record"), 1) << "kernel 5";
  EXPECT_EQ(whole.Count("gpu ops launched before the dump's span, left out"), -1) << "not a dump: no such line";
  testing::Trace cut = testing::BuildOne(dump);
  testing::ExpectImporterRules(cut);
  EXPECT_EQ(cut.Count("gpu ops launched before the dump's span, left out"), 2) << "kernels 2 and 3";
  EXPECT_EQ(cut.Count("gpu ops"), 3) << "kernels 4, 5 and 6";
  EXPECT_EQ(cut.Count("gpu ops without launch record"), 1) << "kernel 5, inside the span";
  EXPECT_EQ(cut.Count("flows"), 2) << "kernels 4 and 6 have their launches";
  EXPECT_EQ(cut.Events("s").size(), 2u);
  EXPECT_EQ(cut.Events("f").size(), 2u);
  EXPECT_EQ(whole.Events("X", "kernel").size(), 6u);
  EXPECT_EQ(cut.Events("X", "kernel").size(), 3u) << "no slice for kernels 2 and 3";
}

// Two steps on thread 11 inside a `train` range that never closes:
// ProfilerStep#1 over 30 chunks of 20 launches, ProfilerStep#2 over 3.
// With `ring_bytes`, recorded into a flight recorder's ring of that bound
// and dumped at the end (SyntheticOptions). With `window_marks`, each step
// is also a window mark's open and close, as `--window-nvtx ProfilerStep`
// makes them (at the push, with its name; at the pop), and a tick (an
// instant mark) comes at each step's push and at the end.
constexpr uint64_t kStepOneChunks = 30, kStepTwoChunks = 3, kLaunchesPerChunk = 20;
constexpr uint64_t kStepOnePush = testing::kT0 + 2'000;

format::WindowMark StepMark(format::WindowMarkKind kind, uint64_t id, uint64_t ts, std::string label = "") {
  format::WindowMark m;
  m.kind = kind;
  m.id = id;
  m.os_tid = 11;
  m.timestamp_ns = ts;
  m.label = std::move(label);
  return m;
}

void WriteSteps(const std::string& path, uint64_t ring_bytes, uint64_t* step_one_pop, bool window_marks = false) {
  auto made = builder::testing::SyntheticCapture::Create(path, builder::testing::DefaultSession(),
                                                         {builder::testing::H200(0)},
                                                         {.reproducible = true, .ring_bytes = ring_bytes});
  ASSERT_TRUE(made.ok()) << made.status().message();
  builder::testing::SyntheticCapture& c = **made;
  format::ClockSample clock;
  clock.kind = format::ClockKind::kStart;
  clock.cupti_ns = testing::kT0;
  clock.realtime_ns = static_cast<int64_t>(testing::kT0) + testing::kClockOffset;
  clock.monotonic_ns = 1000;
  testing::Scene::Ok(c.Message(clock));
  testing::Scene::Ok(c.String(0x1000, "_Z6kernelv"));
  testing::Scene::Ok(c.Push(11, testing::kT0 + 1'000, "train"));
  testing::Scene::Ok(c.Push(11, kStepOnePush, "ProfilerStep#1"));
  using K = format::WindowMarkKind;
  auto mark = [&](K kind, uint64_t id, uint64_t ts, std::string label = "") {
    if (window_marks) testing::Scene::Ok(c.Message(StepMark(kind, id, ts, std::move(label))));
  };
  mark(K::kOpen, 1, kStepOnePush, "ProfilerStep#1");
  mark(K::kInstant, 0, kStepOnePush, "tick");
  uint32_t correlation = 1;
  uint64_t t = testing::kT0 + 10'000;
  auto launches = [&](uint64_t chunks) {
    for (uint64_t k = 0; k < chunks; ++k) {
      for (uint64_t j = 0; j < kLaunchesPerChunk; ++j, t += 10'000, ++correlation) {
        builder::testing::ApiRecord a;
        a.start = t;
        a.end = t + 2'000;
        a.tid = 11;
        a.correlation = correlation;
        c.Api(a);
        builder::testing::KernelRecord kernel;
        kernel.start = t + 3'000;
        kernel.end = t + 8'000;
        kernel.correlation = correlation;
        kernel.name_pointer = 0x1000;
        c.Kernel(kernel);
      }
      testing::Scene::Ok(c.EndChunk());
    }
  };
  launches(kStepOneChunks);
  *step_one_pop = t;
  testing::Scene::Ok(c.Pop(11, t));
  mark(K::kClose, 1, t);
  testing::Scene::Ok(c.Push(11, t += 10'000, "ProfilerStep#2"));
  mark(K::kOpen, 2, t, "ProfilerStep#2");
  mark(K::kInstant, 0, t, "tick");
  launches(kStepTwoChunks);
  testing::Scene::Ok(c.Pop(11, t));
  mark(K::kClose, 2, t);
  mark(K::kInstant, 0, t, "tick");
  testing::Scene::Ok(c.Close("test"));
}

// The ring bound that keeps what the span frames of the capture at `path`
// (WriteSteps) take from step 1's last eight chunks on (the same frames,
// byte for byte, in the ring); 0 when it has no such chunks.
uint64_t StepOneTailBound(const std::string& path) {
  auto file = format::CaptureFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return 0;
  std::vector<uint64_t> span_bytes;
  size_t first_kept = 0, chunks = 0;
  (*file)->Scan([&](const format::FrameRef& f) {
    auto type = static_cast<format::FrameType>(f.type);
    if (type == format::FrameType::kTrailer || format::IsDefinitionFrame(type)) return true;
    if (type == format::FrameType::kActivityChunk && chunks++ == kStepOneChunks - 8) first_kept = span_bytes.size();
    span_bytes.push_back(sizeof(format::FrameHeader) + f.length);
    return true;
  });
  if (first_kept == 0) return 0;
  uint64_t bound = 0;
  for (size_t i = first_kept; i < span_bytes.size(); ++i) bound += span_bytes[i];
  return bound;
}

// Issue 46: the dump of a ring whose oldest frames held the push of the
// step its span begins in (and of `train`, open across it all). The
// writer carries both pushes (open_ranges.h), so the step keeps its
// window, from its real start, and the ops launched in it that the dump
// holds keep their annotation; `train` is drawn, never closed, as in any
// capture that ends inside it.
TEST(RingDump, AStepWhosePushLeftTheRingKeepsItsWindowAndAnnotation) {
  testing::TempDir dir;
  std::string whole = dir.File("steps.gpucap");
  uint64_t step_one_pop = 0;
  ASSERT_NO_FATAL_FAILURE(WriteSteps(whole, 0, &step_one_pop));
  uint64_t bound = StepOneTailBound(whole);
  ASSERT_GT(bound, 0u);
  std::string dump = dir.File("steps.ring-1.gpucap");
  uint64_t pop_in_dump = 0;
  ASSERT_NO_FATAL_FAILURE(WriteSteps(dump, bound, &pop_in_dump));

  auto loaded = format::LoadCapture(dump);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->chunks.size(), 8 + kStepTwoChunks) << "the ring kept step 1's last eight chunks";
  ASSERT_GE(loaded->ranges.size(), 2u);
  EXPECT_EQ(loaded->ranges[0].name, "train");
  EXPECT_EQ(loaded->ranges[1].name, "ProfilerStep#1");
  EXPECT_EQ(loaded->ranges[1].timestamp_ns, kStepOnePush) << "its push as recorded";
  testing::Json info = testing::ParseOrFail(InfoJson(Describe(dump)));
  EXPECT_EQ(info["drops"]["recorder_counters"]["ring_open_ranges_carried"].u(), 2u);

  // `-w nvtx:ProfilerStep#\d+`: both steps are windows, step 1 from its push.
  builder::BuildOptions steps;
  steps.window = "nvtx:ProfilerStep#\\d+";
  std::vector<testing::Trace> windows = testing::BuildTraces(dump, steps);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].root["gpucap"]["window"]["label"].text, "ProfilerStep#1");
  EXPECT_EQ(windows[1].root["gpucap"]["window"]["label"].text, "ProfilerStep#2");
  std::vector<const testing::Json*> kernels = windows[0].Events("X", "kernel");
  EXPECT_EQ(kernels.size(), 8 * kLaunchesPerChunk) << "the step's ops the dump holds";
  for (const testing::Json* k : kernels) EXPECT_EQ((*k)["args"]["annotation"].text, "ProfilerStep#1");
  std::vector<const testing::Json*> step = windows[0].Named("ProfilerStep#1");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(testing::Nanos((*step[0])["dur"]), static_cast<int64_t>(step_one_pop - kStepOnePush))
      << "from its real push to its pop";

  // One window of all: every op the dump holds is in a step, and `train`
  // is drawn from its push.
  testing::Trace all = testing::BuildOne(dump);
  testing::ExpectImporterRules(all);
  std::vector<const testing::Json*> every = all.Events("X", "kernel");
  EXPECT_EQ(every.size(), (8 + kStepTwoChunks) * kLaunchesPerChunk);
  size_t in_step_one = 0;
  for (const testing::Json* k : every) {
    std::string annotation = (*k)["args"]["annotation"].text;
    EXPECT_TRUE(annotation == "ProfilerStep#1" || annotation == "ProfilerStep#2") << annotation;
    in_step_one += annotation == "ProfilerStep#1";
  }
  EXPECT_EQ(in_step_one, 8 * kLaunchesPerChunk);
  EXPECT_EQ(all.Named("train").size(), 1u);
}

// Issue 46, window marks: the same steps recorded with their window marks
// (`--window-nvtx ProfilerStep`). Step 1's open mark and the tick at its
// push left the ring with its oldest frames; the writer carries both
// (open_marks.h), so `-w marks` gives step 1's window from its open mark to
// its close, as the whole recording does, holding the step's ops the dump
// holds, and the tick's window from step 1's push to step 2's.
TEST(RingDump, AMarksWindowWhoseOpenMarkLeftTheRingKeepsItsExtentAndOps) {
  testing::TempDir dir;
  std::string whole = dir.File("marks.gpucap");
  uint64_t step_one_pop = 0;
  ASSERT_NO_FATAL_FAILURE(WriteSteps(whole, 0, &step_one_pop, /*window_marks=*/true));
  uint64_t bound = StepOneTailBound(whole);
  ASSERT_GT(bound, 0u);
  std::string dump = dir.File("marks.ring-1.gpucap");
  uint64_t pop_in_dump = 0;
  ASSERT_NO_FATAL_FAILURE(WriteSteps(dump, bound, &pop_in_dump, /*window_marks=*/true));
  ASSERT_EQ(pop_in_dump, step_one_pop);

  auto loaded = format::LoadCapture(dump);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_EQ(loaded->chunks.size(), 8 + kStepTwoChunks) << "the ring kept step 1's last eight chunks";
  testing::Json info = testing::ParseOrFail(InfoJson(Describe(dump)));
  EXPECT_EQ(info["drops"]["recorder_counters"]["ring_open_marks_carried"].u(), 2u) << "step 1's open, the tick";

  builder::BuildOptions marks;
  marks.window = "marks";
  std::vector<testing::Trace> from_whole = testing::BuildTraces(whole, marks);
  std::vector<testing::Trace> from_dump = testing::BuildTraces(dump, marks);
  // Step 1, step 2 and the tick's window from step 1 to step 2 (the tick
  // at step 2's pop ends it: [step 2's push, its pop) is a window too).
  ASSERT_EQ(from_whole.size(), 4u);
  ASSERT_EQ(from_dump.size(), from_whole.size()) << "no window lost with step 1's open mark";
  for (size_t i = 0; i < from_whole.size(); ++i) {
    SCOPED_TRACE(i);
    const testing::Json& w = from_whole[i].root["gpucap"]["window"];
    const testing::Json& d = from_dump[i].root["gpucap"]["window"];
    EXPECT_EQ(d["label"].text, w["label"].text);
    EXPECT_EQ(d["start_ns"].u(), w["start_ns"].u());
    EXPECT_EQ(d["end_ns"].u(), w["end_ns"].u());
  }
  size_t step_one = from_dump.size();
  for (size_t i = 0; i < from_dump.size(); ++i) {
    const testing::Json& d = from_dump[i].root["gpucap"]["window"];
    if (d["label"].text == "ProfilerStep#1") step_one = i;
  }
  ASSERT_LT(step_one, from_dump.size());
  const testing::Json& window = from_dump[step_one].root["gpucap"]["window"];
  // (Its times are the trace's clock: compared as a length.)
  EXPECT_EQ(window["end_ns"].u() - window["start_ns"].u(), step_one_pop - kStepOnePush)
      << "from its open mark as recorded to its close";
  EXPECT_EQ(from_dump[step_one].Events("X", "kernel").size(), 8 * kLaunchesPerChunk)
      << "the step's ops the dump holds";
  EXPECT_EQ(from_whole[step_one].Events("X", "kernel").size(), kStepOneChunks * kLaunchesPerChunk);
}

}  // namespace
}  // namespace gpucap::tools
