// The crash handler's side of the flight recorder (ring_snapshot.h,
// crash_slot.h): a snapshot written with write(2) alone reads back as the
// capture the writer's own dump of the same ring is, with any trigger; and
// while a handler reads a snapshot, the frames it points to stay, however
// the ring moves on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gpucap/format/capture.h"
#include "gpucap/format/capture_writer.h"
#include "gpucap/format/crash_slot.h"
#include "gpucap/format/ring_snapshot.h"
#include "frame_codec.h"
#include "ring_chunk.h"
#include "sample_capture.h"
#include "../support/temp_dir.h"

namespace gpucap::testing {
inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}
}  // namespace gpucap::testing

namespace gpucap::format {
namespace {

// The handler's steps: read the slot, write the snapshot to a new file.
bool WriteCrashDump(RingCrashSlot* slot, const std::string& path, const char* trigger) {
  RingSnapshot* s = slot->BeginRead(0, 1000);
  bool ok = false;
  if (s) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ok = fd >= 0 && s->WriteTo(fd, trigger, 1234);
    if (fd >= 0) ok = close(fd) == 0 && ok;
  }
  slot->EndRead();
  return ok;
}

SmallMessage Range(RangeKind kind, uint32_t tid, uint64_t ts, std::string name = "") {
  RangeEvent e;
  e.kind = kind;
  e.os_tid = tid;
  e.timestamp_ns = ts;
  e.name = std::move(name);
  return e;
}

std::vector<std::string> RangeNames(const Capture& c) {
  std::vector<std::string> names;
  for (const RangeEvent& e : c.ranges) names.push_back(e.name);
  return names;
}

std::vector<std::string> StringNames(const Capture& c) {
  std::vector<std::string> names;
  for (const auto& s : c.strings) names.push_back(s.def.text);
  return names;
}

struct RingFixture {
  testing::TempDir dir;
  std::vector<std::vector<uint8_t>> data;
  std::unique_ptr<CaptureWriter> writer;

  explicit RingFixture(uint64_t bound) {
    for (int i = 0; i < 60; ++i) data.push_back(testing::CuptiLikeBytes(16 << 10, 300 + i));
    WriterOptions options;
    options.ring_crash_snapshots = true;
    auto w = CaptureWriter::StartRing(
        [this](uint64_t n) { return OpenFileSink(dir.File("w.ring-" + std::to_string(n) + ".gpucap")); },
        {bound, 0}, options);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    writer = std::move(w).value();
    SessionInfo session;
    session.pid = 777;
    EXPECT_TRUE(writer->Submit(SmallMessage(session)));
    EXPECT_TRUE(writer->Submit(SmallMessage(StringDef{0x1000, "crash_kernel"})));
  }
  void Chunks(int from, int to) {
    for (int i = from; i < to; ++i) ASSERT_TRUE(writer->SubmitActivity(RingChunk(data[i], 1000 * (i + 1))));
  }
  void Feed(int from, int to) {
    Chunks(from, to);
    // The writer's own dump: everything fed before it is in the ring (and
    // in its snapshot) once it is written.
    ASSERT_TRUE(writer->RequestDump("api: barrier", {}));
    ASSERT_TRUE(writer->Flush(std::chrono::seconds(10)));  // a failure detector, not a pace
  }
};

TEST(RingSnapshot, ReadsBackAsTheWritersOwnDumpOfTheSameRing) {
  RingFixture f(6 * (17 << 10));
  // Two ranges whose pushes leave the ring with the first chunks, one
  // popped in a frame the ring still holds: both carried (open_ranges.h).
  ASSERT_TRUE(f.writer->Submit(
      std::vector<SmallMessage>{Range(RangeKind::kPush, 1, 100, "train"), Range(RangeKind::kPush, 1, 110, "step#0")}));
  f.Chunks(0, 26);
  ASSERT_TRUE(f.writer->Submit(Range(RangeKind::kPop, 1, 26'500)));
  f.Feed(26, 30);
  ASSERT_EQ(f.writer->counters().dumps_written, 1u) << f.writer->last_dump();
  std::string crash = f.dir.File("crash.gpucap");
  ASSERT_TRUE(WriteCrashDump(f.writer->crash_slot().get(), crash, "crash: SIGBUS"));

  auto own = LoadCapture(f.writer->last_dump(), {.verify_chunks = true});
  auto c = LoadCapture(crash, {.verify_chunks = true});
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, "crash: SIGBUS");
  EXPECT_TRUE(c->trailer->clean_shutdown);
  EXPECT_EQ(c->file->header().created_realtime_ns, 1234);
  ASSERT_TRUE(c->session.has_value());
  EXPECT_EQ(c->session->pid, 777u);
  EXPECT_EQ(StringNames(*c), std::vector<std::string>{"crash_kernel"});
  EXPECT_EQ(RangeNames(*own), (std::vector<std::string>{"train", "step#0", ""}));
  EXPECT_EQ(c->ranges, own->ranges);
  auto carried = [](const Capture& capture) {
    uint64_t n = UINT64_MAX;
    for (const auto& [k, v] : capture.trailer->stats.extra) {
      if (k == "ring_open_ranges_carried") n = v;
    }
    return n;
  };
  EXPECT_EQ(carried(*c), 2u);
  EXPECT_EQ(carried(*own), 2u);
  EXPECT_EQ(c->trailer->frames, own->trailer->frames);
  // The same frames at the same places: only the trailers differ.
  ASSERT_EQ(c->trailer->index.size(), own->trailer->index.size());
  for (size_t i = 0; i < c->trailer->index.size(); ++i) {
    EXPECT_EQ(c->trailer->index[i].offset, own->trailer->index[i].offset) << i;
    EXPECT_EQ(c->trailer->index[i].type, own->trailer->index[i].type) << i;
    EXPECT_EQ(c->trailer->index[i].length, own->trailer->index[i].length) << i;
  }
  ASSERT_EQ(c->chunks.size(), own->chunks.size());
  ASSERT_GE(c->chunks.size(), 2u);
  ASSERT_LT(c->chunks.size(), 26u) << "the bound dropped the oldest, and the pushes with them";
  for (size_t i = 0; i < c->chunks.size(); ++i) {
    EXPECT_EQ(c->chunks[i].info.min_start_ns, 1000 * (30 - c->chunks.size() + i + 1));
  }
  EXPECT_EQ(c->trailer->activity_records, 10 * c->chunks.size());
  // Counted as frames came and went: only the chunks held.
  ASSERT_EQ(c->trailer->records_per_kind.size(), 1u);
  EXPECT_EQ(c->trailer->records_per_kind[0].kind, 10u);
  EXPECT_EQ(c->trailer->records_per_kind[0].count, 10 * c->chunks.size());
  ASSERT_TRUE(f.writer->Close({}, std::chrono::seconds(10)).ok());
}

TEST(RingSnapshot, TheTriggerTakesAnyLengthUpToItsRoomAndIsCutPastIt) {
  FrameRing ring({1 << 20, 0});
  std::vector<uint8_t> payload(64, 0);
  ByteSpan p(payload.data(), payload.size());
  // A type this reader does not know: skipped and counted, the file still clean.
  FrameHeader h = MakeFrameHeader(99, 0, 0, {&p, 1});
  ring.Add(h, {&p, 1}, 5, 6, 0);
  testing::TempDir dir;
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{13}, size_t{14}, RingSnapshot::kMaxTrigger,
                   RingSnapshot::kMaxTrigger + 9}) {
    std::string trigger;
    for (size_t i = 0; i < n; ++i) trigger += static_cast<char>('a' + i % 26);
    auto s = RingSnapshot::Build(ring, {});
    ASSERT_NE(s, nullptr);
    std::string path = dir.File(std::to_string(n) + ".trigger.gpucap");
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(s->WriteTo(fd, trigger.c_str(), 1));
    close(fd);
    auto c = LoadCapture(path);
    ASSERT_TRUE(c.ok()) << n << ": " << c.status().ToString();
    EXPECT_TRUE(c->report.clean()) << n << ": " << testing::JoinLines(c->report.Describe(path));
    ASSERT_TRUE(c->trailer.has_value());
    EXPECT_EQ(c->trailer->trigger, trigger.substr(0, RingSnapshot::kMaxTrigger)) << n;
    EXPECT_EQ(c->trailer->frames, 1u);
  }
}

TEST(RingCrashSlot, WhileAHandlerReadsNothingIsFreedAndItsSnapshotStays) {
  FrameRing ring({1 << 20, 0});
  RingCrashSlot slot;
  EXPECT_EQ(slot.BeginRead(0, 10), nullptr) << "nothing published yet";
  slot.EndRead();
  auto first = RingSnapshot::Build(ring, {});
  RingSnapshot* first_raw = first.get();
  ASSERT_TRUE(slot.Publish(std::move(first), {}));
  EXPECT_EQ(slot.BeginRead(0, 10), first_raw);
  std::vector<std::vector<uint8_t>> retired(2, std::vector<uint8_t>(8));
  EXPECT_FALSE(slot.Publish(RingSnapshot::Build(ring, {}), std::move(retired)));
  EXPECT_EQ(slot.deferred(), 2u) << "the reader's frames are kept";
  slot.EndRead();
  auto third = RingSnapshot::Build(ring, {});
  RingSnapshot* third_raw = third.get();
  ASSERT_TRUE(slot.Publish(std::move(third), {}));
  EXPECT_EQ(slot.deferred(), 0u);
  EXPECT_EQ(slot.BeginRead(0, 10), third_raw);
  slot.EndRead();
  ASSERT_TRUE(slot.Publish(nullptr, {}));
  EXPECT_EQ(slot.BeginRead(0, 10), nullptr);
  slot.EndRead();
}

// The writer moves on (the bound drops every chunk the snapshot holds)
// while a handler holds it: what the handler writes is still whole, chunk
// checksums and all.
TEST(RingCrashSlot, TheRingMovesOnUnderAReaderWithoutFreeingItsFrames) {
  RingFixture f(4 * (17 << 10));
  ASSERT_TRUE(f.writer->Submit(
      std::vector<SmallMessage>{Range(RangeKind::kPush, 1, 100, "train"), Range(RangeKind::kPush, 1, 110, "step#0")}));
  f.Feed(0, 10);  // the pushes left: the snapshot's lead carries them
  auto slot = f.writer->crash_slot();
  RingSnapshot* held = slot->BeginRead(0, 1000);
  ASSERT_NE(held, nullptr);
  // The pop's frame leaves too: the lead is replaced (step#0 is no longer
  // carried) while the handler may still write the one it points to.
  ASSERT_TRUE(f.writer->Submit(Range(RangeKind::kPop, 1, 10'500)));
  f.Feed(10, 60);  // every chunk of the snapshot dropped from the ring
  std::string path = f.dir.File("held.gpucap");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(held->WriteTo(fd, "crash: SIGSEGV", 1));
  close(fd);
  slot->EndRead();
  auto c = LoadCapture(path, {.verify_chunks = true});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_FALSE(c->chunks.empty());
  EXPECT_EQ(c->chunks.back().info.min_start_ns, 10'000u) << "the ring as it was when the handler began";
  EXPECT_EQ(RangeNames(*c), (std::vector<std::string>{"train", "step#0"}));
  for (const auto& chunk : c->chunks) {
    std::vector<uint64_t> raw;
    EXPECT_TRUE(DecompressChunk(*c->file, chunk, &raw).ok());
  }
  // And once the reader is gone, the writer frees again and the snapshot
  // is the newest ring.
  f.Feed(60, 60);
  std::string after = f.dir.File("after.gpucap");
  ASSERT_TRUE(WriteCrashDump(slot.get(), after, "crash: SIGABRT"));
  auto d = LoadCapture(after);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->chunks.back().info.min_start_ns, 60'000u);
  EXPECT_EQ(RangeNames(*d), std::vector<std::string>{"train"});
  EXPECT_EQ(slot->deferred(), 0u);
  ASSERT_TRUE(f.writer->Close({}, std::chrono::seconds(10)).ok());
  EXPECT_EQ(slot->BeginRead(0, 10), nullptr) << "a closed writer leaves no snapshot";
  slot->EndRead();
}

}  // namespace
}  // namespace gpucap::format
