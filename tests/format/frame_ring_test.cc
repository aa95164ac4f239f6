// The flight recorder's ring (frame_ring.h) and the writer's ring mode: the
// bound holds under a storm, the oldest spans go first and are counted,
// definitions are never dropped, and a dump is a complete capture that
// names its trigger.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "gpucap/format/capture.h"
#include "gpucap/format/capture_file.h"
#include "gpucap/format/capture_writer.h"
#include "gpucap/format/frame_ring.h"
#include "frame_codec.h"
#include "open_ranges.h"
#include "range_event.h"
#include "ring_chunk.h"
#include "sample_capture.h"
#include "../support/temp_dir.h"

namespace gpucap::format {
namespace {

// A frame of `type` whose payload is `size` bytes, every byte `tag`.
struct TestFrame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};
TestFrame MakeFrame(FrameType type, size_t size, uint8_t tag) {
  TestFrame f;
  f.payload.assign(size, tag);
  ByteSpan p(f.payload.data(), f.payload.size());
  f.header = MakeFrameHeader(static_cast<uint16_t>(type), 0, 0, {&p, 1});
  return f;
}
void Add(FrameRing* ring, const TestFrame& f, uint64_t now = 0, uint64_t records = 0) {
  ByteSpan p(f.payload.data(), f.payload.size());
  ring->Add(f.header, {&p, 1}, 0, 0, now, records);
}

TEST(FrameRing, DefinitionAndSpanFrameTypes) {
  for (FrameType t : {FrameType::kSession, FrameType::kDevices, FrameType::kThreads, FrameType::kStreams,
                      FrameType::kStrings, FrameType::kGraphs, FrameType::kClocks}) {
    EXPECT_TRUE(IsDefinitionFrame(t)) << FrameTypeName(static_cast<uint16_t>(t));
  }
  for (FrameType t : {FrameType::kActivityChunk, FrameType::kRanges, FrameType::kWindows, FrameType::kMetadata,
                      FrameType::kCounters, FrameType::kStats}) {
    EXPECT_FALSE(IsDefinitionFrame(t)) << FrameTypeName(static_cast<uint16_t>(t));
  }
}

TEST(FrameRing, TheBoundHoldsUnderAStormAndTheNewestStay) {
  const uint64_t bound = 100'000;
  FrameRing ring({bound, 0});
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(8, 6000);
  uint64_t spans_added = 0, span_bytes_added = 0, records_added = 0;
  std::vector<uint64_t> span_sizes;  // per span, in order of adding
  int definitions = 0;
  for (int i = 0; i < 20'000; ++i) {
    if (i % 97 == 0) {
      Add(&ring, MakeFrame(FrameType::kStrings, 40, 0xd0));
      ++definitions;
      continue;
    }
    TestFrame f = MakeFrame(i % 3 ? FrameType::kActivityChunk : FrameType::kRanges, size(rng) & ~size_t{7},
                            static_cast<uint8_t>(i));
    Add(&ring, f, 0, 5);
    ++spans_added;
    records_added += 5;
    span_bytes_added += sizeof(FrameHeader) + f.payload.size();
    span_sizes.push_back(sizeof(FrameHeader) + f.payload.size());
    ASSERT_LE(ring.counters().span_bytes, bound) << "after frame " << i;
  }
  const RingCounters& c = ring.counters();
  EXPECT_EQ(c.frames_added, spans_added + definitions);
  EXPECT_EQ(c.span_frames + c.frames_dropped, spans_added);
  EXPECT_EQ(c.span_bytes + c.bytes_dropped, span_bytes_added);
  EXPECT_EQ(c.records_dropped, 5 * c.frames_dropped);
  EXPECT_LE(c.span_bytes_high, bound);
  EXPECT_EQ(c.definition_frames, static_cast<uint64_t>(definitions));
  // What is held is the newest spans that fit: walking back from the last
  // one added, sizes add up to what the ring holds, and one more would not fit.
  uint64_t newest = 0;
  size_t k = 0;
  while (k < c.span_frames) newest += span_sizes[span_sizes.size() - 1 - k++];
  EXPECT_EQ(newest, c.span_bytes);
  ASSERT_LT(k, span_sizes.size());
  EXPECT_GT(newest + span_sizes[span_sizes.size() - 1 - k], bound);

  // Every definition is still there, in its place among the spans.
  int seen_definitions = 0;
  uint64_t last_order = 0;
  bool first = true;
  ring.ForEach([&](const RingFrame& f) {
    if (!first) EXPECT_GT(f.order, last_order);
    first = false;
    last_order = f.order;
    if (f.header.type == static_cast<uint16_t>(FrameType::kStrings)) ++seen_definitions;
  });
  EXPECT_EQ(seen_definitions, definitions);
}

TEST(FrameRing, OldestSpansGoFirstAndDumpOrderIsAddOrder) {
  // Room for exactly three spans of 64 payload bytes.
  FrameRing ring({3 * (sizeof(FrameHeader) + 64), 0});
  Add(&ring, MakeFrame(FrameType::kSession, 16, 's'));
  for (uint8_t tag = 1; tag <= 5; ++tag) {
    Add(&ring, MakeFrame(FrameType::kActivityChunk, 64, tag));
    if (tag == 2) Add(&ring, MakeFrame(FrameType::kStrings, 8, 'n'));
  }
  std::vector<uint8_t> tags;
  ring.ForEach([&](const RingFrame& f) { tags.push_back(f.payload[0]); });
  // Chunks 1 and 2 went; the session and the string defined after chunk 2 stay where they were made.
  EXPECT_EQ(tags, (std::vector<uint8_t>{'s', 'n', 3, 4, 5}));
  EXPECT_EQ(ring.counters().frames_dropped, 2u);
  EXPECT_EQ(ring.counters().bytes_dropped, 2 * (sizeof(FrameHeader) + 64));
}

TEST(FrameRing, TheAgeBoundDropsSpansAddedLongerAgo) {
  FrameRing ring({1 << 20, /*max_age_ns=*/1000});
  Add(&ring, MakeFrame(FrameType::kClocks, 8, 'c'), 0);
  Add(&ring, MakeFrame(FrameType::kRanges, 8, 1), 0);
  Add(&ring, MakeFrame(FrameType::kRanges, 8, 2), 600);
  Add(&ring, MakeFrame(FrameType::kRanges, 8, 3), 1200);  // 1 is now 1200 old
  std::vector<uint8_t> tags;
  ring.ForEach([&](const RingFrame& f) { tags.push_back(f.payload[0]); });
  EXPECT_EQ(tags, (std::vector<uint8_t>{'c', 2, 3}));
  ring.Age(2000);  // 2 is 1400 old, 3 is 800
  tags.clear();
  ring.ForEach([&](const RingFrame& f) { tags.push_back(f.payload[0]); });
  EXPECT_EQ(tags, (std::vector<uint8_t>{'c', 3}));
  EXPECT_EQ(ring.counters().frames_dropped, 2u);
}

TEST(FrameRing, ASpanLargerThanTheBoundIsDroppedAloneAndCounted) {
  FrameRing ring({1000, 0});
  Add(&ring, MakeFrame(FrameType::kRanges, 200, 1));
  Add(&ring, MakeFrame(FrameType::kActivityChunk, 4000, 2), 0, 77);
  std::vector<uint8_t> tags;
  ring.ForEach([&](const RingFrame& f) { tags.push_back(f.payload[0]); });
  EXPECT_EQ(tags, (std::vector<uint8_t>{1})) << "the smaller, older span stays";
  EXPECT_EQ(ring.counters().frames_dropped, 1u);
  EXPECT_EQ(ring.counters().records_dropped, 77u);
}

// The lead (the writer's ranges open at the span's start) is walked just
// before the first span, after the definitions made before it, or after
// every definition when no span is held; a replaced lead's bytes are
// retired like a dropped frame's; a dump counts it as any frame.
TEST(FrameRing, TheLeadGoesFirstAmongTheSpansAndItsOldBytesAreRetired) {
  FrameRing ring({2 * (sizeof(FrameHeader) + 64), 0}, /*hold_dropped=*/true);
  Add(&ring, MakeFrame(FrameType::kSession, 16, 's'));
  Add(&ring, MakeFrame(FrameType::kActivityChunk, 64, 1));
  Add(&ring, MakeFrame(FrameType::kStrings, 8, 'n'));
  Add(&ring, MakeFrame(FrameType::kActivityChunk, 64, 2));
  Add(&ring, MakeFrame(FrameType::kActivityChunk, 64, 3));  // chunk 1 goes
  EXPECT_TRUE(ring.TakeRetired().size() == 1);
  EXPECT_EQ(ring.oldest_span_order(), 3u);
  EXPECT_EQ(ring.next_order(), 5u);
  TestFrame lead = MakeFrame(FrameType::kRanges, 24, 'L');
  ByteSpan p(lead.payload.data(), lead.payload.size());
  ring.SetLead(lead.header, {&p, 1}, 7, 9, 3);
  auto tags = [&] {
    std::vector<uint8_t> out;
    ring.ForEach([&](const RingFrame& f) { out.push_back(f.payload[0]); });
    return out;
  };
  EXPECT_EQ(tags(), (std::vector<uint8_t>{'s', 'n', 'L', 2, 3}));
  EXPECT_EQ(ring.frames_held(), 5u);
  EXPECT_EQ(ring.counters().open_ranges_carried, 3u);
  EXPECT_EQ(ring.counters().span_frames, 2u) << "the lead is no span";

  // A dump holds it where ForEach walks it, counted in its trailer.
  testing::TempDir dir;
  std::string path = dir.File("lead.gpucap");
  auto sink = OpenFileSink(path);
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE(WriteRingCapture(ring, {}, 1, sink->get()).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  auto file = CaptureFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  std::vector<uint16_t> types;
  (*file)->Scan([&](const FrameRef& f) {
    types.push_back(f.type);
    return true;
  });
  EXPECT_EQ(types, (std::vector<uint16_t>{static_cast<uint16_t>(FrameType::kSession),
                                          static_cast<uint16_t>(FrameType::kStrings),
                                          static_cast<uint16_t>(FrameType::kRanges),
                                          static_cast<uint16_t>(FrameType::kActivityChunk),
                                          static_cast<uint16_t>(FrameType::kActivityChunk),
                                          static_cast<uint16_t>(FrameType::kTrailer)}));
  Trailer t = RingCaptureTrailer(ring, {});
  EXPECT_EQ(t.frames, 5u);
  ASSERT_EQ(t.index.size(), 5u);
  EXPECT_EQ(t.index[2].type, static_cast<uint16_t>(FrameType::kRanges));
  EXPECT_EQ(t.index[2].min_timestamp_ns, 7u);
  EXPECT_EQ(t.index[2].max_timestamp_ns, 9u);
  auto carried = std::find_if(t.stats.extra.begin(), t.stats.extra.end(),
                              [](const auto& e) { return e.first == "ring_open_ranges_carried"; });
  ASSERT_NE(carried, t.stats.extra.end());
  EXPECT_EQ(carried->second, 3u);

  // Replaced, its bytes wait for TakeRetired; with no span held it comes
  // after every definition.
  TestFrame next = MakeFrame(FrameType::kRanges, 16, 'M');
  ByteSpan q(next.payload.data(), next.payload.size());
  ring.SetLead(next.header, {&q, 1}, 7, 7, 1);
  std::vector<std::vector<uint8_t>> retired = ring.TakeRetired();
  ASSERT_EQ(retired.size(), 1u);
  EXPECT_EQ(retired[0], lead.payload);
  Add(&ring, MakeFrame(FrameType::kActivityChunk, 4000, 4));  // larger than the bound: dropped alone
  Add(&ring, MakeFrame(FrameType::kStrings, 8, 'o'));
  EXPECT_EQ(tags(), (std::vector<uint8_t>{'s', 'n', 'M', 2, 3, 'o'}));
  FrameRing empty_spans({1 << 20, 1});
  Add(&empty_spans, MakeFrame(FrameType::kStrings, 8, 'n'), 0);
  Add(&empty_spans, MakeFrame(FrameType::kRanges, 8, 1), 0);
  empty_spans.Age(10);
  EXPECT_EQ(empty_spans.oldest_span_order(), 2u) << "none held: the next frame's";
  empty_spans.SetLead(next.header, {&q, 1}, 7, 7, 1);
  Add(&empty_spans, MakeFrame(FrameType::kStrings, 8, 'o'), 10);
  std::vector<uint8_t> walked;
  empty_spans.ForEach([&](const RingFrame& f) { walked.push_back(f.payload[0]); });
  EXPECT_EQ(walked, (std::vector<uint8_t>{'n', 'o', 'M'}));
  ring.ClearLead(FrameType::kRanges);
  EXPECT_EQ(ring.TakeRetired().size(), 1u);
  EXPECT_EQ(ring.lead(FrameType::kRanges), nullptr);
  EXPECT_EQ(ring.counters().open_ranges_carried, 0u);
  EXPECT_EQ(tags(), (std::vector<uint8_t>{'s', 'n', 2, 3, 'o'}));
}

// --- the writer in ring mode ---

struct Dumps {
  testing::TempDir dir;
  std::vector<std::string> made;
  DumpSinkFactory Factory() {
    return [this](uint64_t n) -> Result<std::unique_ptr<Sink>> {
      std::string path = dir.File("d.ring-" + std::to_string(n) + ".gpucap");
      made.push_back(path);
      return OpenFileSink(path);
    };
  }
};

TEST(RingWriter, ADumpIsACompleteCaptureWithItsDefinitionsAndTrigger) {
  Dumps dumps;
  // Chunks of random bytes do not compress: each takes its full size in the ring.
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 40; ++i) data.push_back(testing::CuptiLikeBytes(16 << 10, 100 + i));
  const uint64_t bound = 5 * (17 << 10);
  auto w = CaptureWriter::StartRing(dumps.Factory(), {bound, 0}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  SessionInfo session;
  session.pid = 4242;
  ASSERT_TRUE((*w)->Submit(SmallMessage(session)));
  ASSERT_TRUE((*w)->Submit(SmallMessage(StringDef{0x1000, "early_kernel"})));
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
    if (i == 20) ASSERT_TRUE((*w)->Submit(SmallMessage(StringDef{0x2000, "late_kernel"})));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dumps.dir.path())) << "nothing is written before a dump";
  Trailer caller;
  caller.stats.cupti_dropped_records = 3;
  ASSERT_TRUE((*w)->RequestDump("api: test", caller));
  ASSERT_TRUE((*w)->RequestDump("signal", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));  // a failure detector, not a pace
  EXPECT_EQ((*w)->counters().dumps_written, 2u);
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  ASSERT_EQ(dumps.made.size(), 2u);
  EXPECT_NE(dumps.made[0], dumps.made[1]);

  auto c = LoadCapture(dumps.made[0], {.verify_chunks = true});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_TRUE(c->session.has_value());
  EXPECT_EQ(c->session->pid, 4242u);
  std::vector<std::string> names;
  for (const auto& s : c->strings) names.push_back(s.def.text);
  EXPECT_EQ(names, (std::vector<std::string>{"early_kernel", "late_kernel"}));
  // The ring holds the last chunks, in order, within its bound.
  ASSERT_GE(c->chunks.size(), 1u);
  ASSERT_LT(c->chunks.size(), 40u);
  ASSERT_TRUE(c->trailer.has_value());
  uint64_t chunk_bytes = 0;
  for (const IndexEntry& e : c->trailer->index) {
    if (e.type == static_cast<uint16_t>(FrameType::kActivityChunk)) chunk_bytes += sizeof(FrameHeader) + e.length;
  }
  EXPECT_LE(chunk_bytes, bound);
  for (size_t i = 0; i < c->chunks.size(); ++i) {
    uint64_t expected_t = 1000 * (40 - c->chunks.size() + i + 1);
    EXPECT_EQ(c->chunks[i].info.min_start_ns, expected_t);
    std::vector<uint64_t> raw;
    ASSERT_TRUE(DecompressChunk(*c->file, c->chunks[i], &raw).ok());
  }
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, "api: test");
  EXPECT_TRUE(c->trailer->clean_shutdown);
  EXPECT_EQ(c->trailer->activity_records, 10 * c->chunks.size());
  EXPECT_EQ(c->trailer->stats.cupti_dropped_records, 3u);
  uint64_t dropped = 0;
  for (const auto& [k, v] : c->trailer->stats.extra) {
    if (k == "ring_frames_dropped") dropped = v;
  }
  EXPECT_EQ(dropped, 40 - c->chunks.size());
  auto second = LoadCapture(dumps.made[1]);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->trailer->trigger, "signal");
  EXPECT_EQ(second->chunks.size(), c->chunks.size());
}

// NVTX's names travel as range events: in a ring they are batched apart and
// kept, while the pushes and pops around them age out.
TEST(RingWriter, NvtxNamesOutliveTheRangesAroundThem) {
  Dumps dumps;
  WriterOptions options;
  options.batch_bytes = 512;  // many small ranges frames, so that the old ones age out
  auto w = CaptureWriter::StartRing(dumps.Factory(), {/*max_span_bytes=*/4096, 0}, options);
  ASSERT_TRUE(w.ok());
  auto event = [](RangeKind kind, uint64_t ts, std::string name) {
    RangeEvent e;
    e.kind = kind;
    e.timestamp_ns = ts;
    e.os_tid = 9;
    e.domain = 0x77;
    e.name = std::move(name);
    return SmallMessage(e);
  };
  ASSERT_TRUE((*w)->Submit(event(RangeKind::kPush, 1, "early push")));
  ASSERT_TRUE((*w)->Submit(event(RangeKind::kNameDomain, 2, "my domain")));
  ASSERT_TRUE((*w)->Submit(event(RangeKind::kNameThread, 3, "trainer")));
  ASSERT_TRUE((*w)->Submit(event(RangeKind::kPop, 4, "")));  // a range that left whole: not carried
  std::vector<SmallMessage> steps;  // one submission: the queue holds 1024
  for (uint64_t i = 0; i < 2000; ++i) {
    steps.push_back(event(i % 2 ? RangeKind::kPop : RangeKind::kPush, 10 + i, "step " + std::to_string(i)));
  }
  ASSERT_TRUE((*w)->Submit(std::move(steps)));
  ASSERT_TRUE((*w)->RequestDump("test", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  ASSERT_EQ(dumps.made.size(), 1u);
  auto c = LoadCapture(dumps.made[0]);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<std::string> names;
  bool early = false, last = false;
  for (const RangeEvent& e : c->ranges) {
    if (e.kind == RangeKind::kNameDomain || e.kind == RangeKind::kNameThread) names.push_back(e.name);
    early |= e.name == "early push";
    last |= e.name == "step 1999";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"my domain", "trainer"}));
  EXPECT_FALSE(early) << "the bound dropped the oldest ranges";
  EXPECT_TRUE(last);
  EXPECT_LT(c->ranges.size(), 2004u);
}

// Issue 46: a range whose push left the ring with the oldest ranges frame
// while its pop is held reaches the dump with its push as recorded, in a
// ranges frame before the spans; so do ranges open across the whole span.
// Ranges that left whole, marks and ranges opened inside the span are not
// carried; and as the ring moves on, so does what it carries.
TEST(RingWriter, ADumpCarriesThePushesOfTheRangesOpenAtItsSpansStart) {
  Dumps dumps;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 21; ++i) data.push_back(testing::CuptiLikeBytes(16 << 10, 500 + i));
  auto w = CaptureWriter::StartRing(dumps.Factory(), {5 * (17 << 10), 0}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  RangeEvent outer = TestRangeEvent(RangeKind::kPush, 1, 100, "train");
  outer.category = 3;
  outer.color = 0x00ff00;
  outer.payload = uint64_t{17};
  std::vector<SmallMessage> first = {
      outer,
      TestRangeEvent(RangeKind::kPush, 1, 110, "ProfilerStep#0"),
      TestRangeEvent(RangeKind::kNameDomain, 2, 115, "my domain", 5),
      TestRangeEvent(RangeKind::kPush, 2, 120, "t2 a", 5),
      TestRangeEvent(RangeKind::kPush, 2, 130, "t2 b", 5),
      TestRangeEvent(RangeKind::kStart, 3, 140, "async", 0, 42),
      TestRangeEvent(RangeKind::kPush, 4, 150, "done"),
      TestRangeEvent(RangeKind::kPop, 4, 160),
      TestRangeEvent(RangeKind::kMark, 1, 170, "mark"),
  };
  ASSERT_TRUE((*w)->Submit(std::move(first)));
  // Ten chunks: the first ranges frame (written before the first) leaves.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
  std::vector<SmallMessage> second = {
      TestRangeEvent(RangeKind::kPop, 1, 20'000),     // ProfilerStep#0
      TestRangeEvent(RangeKind::kPop, 2, 20'010, "", 5),  // t2 b
      TestRangeEvent(RangeKind::kEnd, 5, 20'020, "", 0, 42),
      TestRangeEvent(RangeKind::kPush, 1, 20'030, "ProfilerStep#1"),
  };
  ASSERT_TRUE((*w)->Submit(std::move(second)));
  ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[10], 11'000)));
  ASSERT_TRUE((*w)->RequestDump("first", {}));
  // Ten more: the second ranges frame leaves too.
  for (int i = 11; i < 21; ++i) ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
  ASSERT_TRUE((*w)->Submit(SmallMessage(TestRangeEvent(RangeKind::kPop, 1, 40'000))));  // ProfilerStep#1
  ASSERT_TRUE((*w)->RequestDump("second", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));  // a failure detector, not a pace
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  ASSERT_EQ(dumps.made.size(), 2u);

  auto shown = [](const RangeEvent& e) {
    static const char* kKinds[] = {"push", "pop", "start", "end", "mark", "thread", "domain"};
    return std::string(kKinds[static_cast<int>(e.kind)]) + " " + e.name + " @" + std::to_string(e.timestamp_ns);
  };
  auto carried_count = [](const Capture& c) {
    uint64_t n = UINT64_MAX;
    for (const auto& [k, v] : c.trailer->stats.extra) {
      if (k == "ring_open_ranges_carried") n = v;
    }
    return n;
  };
  auto c = LoadCapture(dumps.made[0], {.verify_chunks = true});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  std::vector<std::string> seen;
  for (const RangeEvent& e : c->ranges) seen.push_back(shown(e));
  EXPECT_EQ(seen, (std::vector<std::string>{"domain my domain @115", "push train @100", "push ProfilerStep#0 @110",
                                            "push t2 a @120", "push t2 b @130", "start async @140", "pop  @20000",
                                            "pop  @20010", "end  @20020", "push ProfilerStep#1 @20030"}));
  ASSERT_GE(c->ranges.size(), 2u);
  EXPECT_EQ(c->ranges[1], outer) << "every field as recorded";
  EXPECT_EQ(c->ranges[5].id, 42u);
  EXPECT_EQ(c->ranges[4].domain, 5u);
  EXPECT_EQ(carried_count(*c), 5u);
  ASSERT_FALSE(c->chunks.empty());
  EXPECT_GT(c->chunks.front().info.min_start_ns, 1000u) << "the first chunks left";

  auto d = LoadCapture(dumps.made[1], {.verify_chunks = true});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  seen.clear();
  for (const RangeEvent& e : d->ranges) seen.push_back(shown(e));
  EXPECT_EQ(seen, (std::vector<std::string>{"domain my domain @115", "push train @100", "push t2 a @120",
                                            "push ProfilerStep#1 @20030", "pop  @40000"}));
  EXPECT_EQ(carried_count(*d), 3u);
}

// Pushes never popped (a leak) past the writer's bound: the oldest are no
// longer carried, and the dump says how many, beside those it carries.
TEST(RingWriter, ADumpCountsTheOpenRangesItNoLongerCarries) {
  Dumps dumps;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 11; ++i) data.push_back(testing::CuptiLikeBytes(16 << 10, 700 + i));
  auto w = CaptureWriter::StartRing(dumps.Factory(), {5 * (17 << 10), 0}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  constexpr size_t kOver = 7;
  std::vector<SmallMessage> leak;
  for (size_t i = 0; i < OpenRanges::kMaxKept + kOver; ++i) {
    leak.push_back(TestRangeEvent(RangeKind::kPush, 1, 100 + i, "leak"));
  }
  ASSERT_TRUE((*w)->Submit(std::move(leak)));
  for (int i = 0; i < 11; ++i) ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 100'000 + 1000 * i)));
  ASSERT_TRUE((*w)->RequestDump("leak", {}));
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  ASSERT_EQ(dumps.made.size(), 1u);
  auto c = LoadCapture(dumps.made[0], {.verify_chunks = true});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::map<std::string, uint64_t> extra(c->trailer->stats.extra.begin(), c->trailer->stats.extra.end());
  EXPECT_EQ(extra["ring_open_ranges_carried"], OpenRanges::kMaxKept);
  EXPECT_EQ(extra["ring_open_ranges_forgotten"], kOver);
  EXPECT_EQ(extra.count("ring_open_marks_forgotten"), 1u);
  EXPECT_EQ(extra["ring_open_marks_forgotten"], 0u);
}

WindowMark TestMark(WindowMarkKind kind, uint64_t id, uint64_t ts, std::string label = "") {
  WindowMark m;
  m.kind = kind;
  m.id = id;
  m.os_tid = 1;
  m.timestamp_ns = ts;
  m.label = std::move(label);
  return m;
}

// Issue 46, window marks: a dump carries, in its windows lead frame, the
// open marks whose window its span begins in and the instant mark that
// begins the back-to-back window it begins in (open_marks.h), beside the
// ranges lead.
TEST(RingWriter, ADumpCarriesTheWindowMarksOpenAtItsSpansStart) {
  Dumps dumps;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < 21; ++i) data.push_back(testing::CuptiLikeBytes(16 << 10, 700 + i));
  auto w = CaptureWriter::StartRing(dumps.Factory(), {5 * (17 << 10), 0}, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  using K = WindowMarkKind;
  std::vector<SmallMessage> first = {
      TestRangeEvent(RangeKind::kPush, 1, 100, "train"),
      TestMark(K::kInstant, 0, 105, "tick a"),
      TestMark(K::kOpen, 1, 110, "ProfilerStep#0"),
      TestMark(K::kInstant, 0, 120, "tick b"),
      TestMark(K::kOpen, 2, 130, "done"),
      TestMark(K::kClose, 2, 140),
  };
  ASSERT_TRUE((*w)->Submit(std::move(first)));
  // Ten chunks: the first windows frame (written before the first) leaves.
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
  std::vector<SmallMessage> second = {
      TestMark(K::kClose, 1, 20'000),
      TestMark(K::kOpen, 3, 20'030, "ProfilerStep#1"),
      TestMark(K::kInstant, 0, 20'040, "tick c"),
  };
  ASSERT_TRUE((*w)->Submit(std::move(second)));
  ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[10], 11'000)));
  ASSERT_TRUE((*w)->RequestDump("first", {}));
  // Ten more: the second windows frame leaves too.
  for (int i = 11; i < 21; ++i) ASSERT_TRUE((*w)->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
  ASSERT_TRUE((*w)->Submit(SmallMessage(TestMark(K::kClose, 3, 40'000))));
  ASSERT_TRUE((*w)->RequestDump("second", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  ASSERT_EQ(dumps.made.size(), 2u);

  auto shown = [](const WindowMark& m) {
    static const char* kKinds[] = {"open", "close", "instant"};
    return std::string(kKinds[static_cast<int>(m.kind)]) + " " + std::to_string(m.id) + " " + m.label + " @" +
           std::to_string(m.timestamp_ns);
  };
  auto counter = [](const Capture& c, const std::string& name) {
    uint64_t n = UINT64_MAX;
    for (const auto& [k, v] : c.trailer->stats.extra) {
      if (k == name) n = v;
    }
    return n;
  };
  auto c = LoadCapture(dumps.made[0], {.verify_chunks = true});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  std::vector<std::string> seen;
  for (const WindowMark& m : c->windows) seen.push_back(shown(m));
  EXPECT_EQ(seen, (std::vector<std::string>{"open 1 ProfilerStep#0 @110", "instant 0 tick b @120", "close 1  @20000",
                                            "open 3 ProfilerStep#1 @20030", "instant 0 tick c @20040"}))
      << "'done' closed, and 'tick a' ended at 'tick b', before the span";
  EXPECT_EQ(counter(*c, "ring_open_marks_carried"), 2u);
  EXPECT_EQ(counter(*c, "ring_open_ranges_carried"), 1u) << "train, in the ranges lead";
  ASSERT_EQ(c->ranges.size(), 1u);
  EXPECT_EQ(c->ranges[0].name, "train");

  auto d = LoadCapture(dumps.made[1], {.verify_chunks = true});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  seen.clear();
  for (const WindowMark& m : d->windows) seen.push_back(shown(m));
  EXPECT_EQ(seen, (std::vector<std::string>{"open 3 ProfilerStep#1 @20030", "instant 0 tick c @20040",
                                            "close 3  @40000"}));
  EXPECT_EQ(counter(*d, "ring_open_marks_carried"), 2u);
}

TEST(RingWriter, ADumpThatCannotBeCreatedFailsAloneAndTheRingGoesOn) {
  Dumps dumps;
  int calls = 0;
  DumpSinkFactory failing_once = [&](uint64_t n) -> Result<std::unique_ptr<Sink>> {
    if (++calls == 1) return Status::IoError("no room");
    return dumps.Factory()(n);
  };
  auto w = CaptureWriter::StartRing(failing_once, {1 << 20, 0}, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Submit(SmallMessage(StringDef{1, "k"})));
  ASSERT_TRUE((*w)->RequestDump("first", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));
  EXPECT_EQ((*w)->counters().dumps_failed, 1u);
  EXPECT_NE((*w)->last_dump().find("no room"), std::string::npos);
  ASSERT_TRUE((*w)->RequestDump("second", {}));
  ASSERT_TRUE((*w)->Flush(std::chrono::seconds(10)));
  EXPECT_EQ((*w)->counters().dumps_written, 1u);
  ASSERT_EQ(dumps.made.size(), 1u);
  EXPECT_EQ((*w)->last_dump(), dumps.made[0]);
  ASSERT_TRUE((*w)->Close({}, std::chrono::seconds(10)).ok());
  auto c = LoadCapture(dumps.made[0]);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->trailer->trigger, "second");
  ASSERT_EQ(c->strings.size(), 1u);
}

TEST(RingWriter, AWholeRecordingHasNoTrigger) {
  testing::TempDir dir;
  std::string path = dir.File("whole.gpucap");
  auto sink = OpenFileSink(path);
  ASSERT_TRUE(sink.ok());
  auto w = CaptureWriter::Start(std::move(sink).value(), {});
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE((*w)->RequestDump("api: no ring", {}));
  Trailer t;
  t.clean_shutdown = true;
  ASSERT_TRUE((*w)->Close(t, std::chrono::seconds(10)).ok());
  auto c = LoadCapture(path);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, "");
}

}  // namespace
}  // namespace gpucap::format
