// The writer's contract with producers: never wait for the disk, drop and
// count when it cannot keep up, release every buffer exactly once, stop
// cleanly on a disk error or at the size cap.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "gpucap/format/capture.h"
#include "gpucap/format/capture_writer.h"
#include "sample_capture.h"
#include "test_sink.h"
#include "../support/temp_dir.h"

namespace gpucap::format {
namespace {

using testing::TestSink;
using testing::TestSinkState;

struct Buffers {
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::atomic<int>> released;
  explicit Buffers(int n, size_t size) : released(n) {
    for (int i = 0; i < n; ++i) data.push_back(testing::CuptiLikeBytes(size, i + 1));
  }
  ActivityBuffer Get(int i) {
    ActivityBuffer b;
    b.data = data[i].data();
    b.size = data[i].size();
    b.info.raw_size = static_cast<uint32_t>(b.size);
    b.info.record_count = static_cast<uint32_t>(b.size / 64);
    b.info.kind_counts = {{10, b.info.record_count}};
    b.info.min_start_ns = 1000 + i;
    b.info.max_start_ns = 2000 + i;
    b.release = [this, i] { released[i]++; };
    return b;
  }
  void ExpectEachReleasedOnce() {
    for (size_t i = 0; i < released.size(); ++i) EXPECT_EQ(released[i].load(), 1) << "buffer " << i;
  }
};

Capture LoadBytes(const testing::TempDir& dir, const std::string& bytes) {
  std::string path = dir.File("out.gpucap");
  testing::WriteFile(path, bytes);
  auto c = LoadCapture(path);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return std::move(c).value();
}

TEST(Writer, FullQueueDropsAndCountsWhileTheDiskStalls) {
  TestSinkState state;
  WriterOptions options;
  options.queue_capacity = 8;
  auto writer = CaptureWriter::Start(std::make_unique<TestSink>(&state), options);
  ASSERT_TRUE(writer.ok());
  {
    std::lock_guard<std::mutex> lock(state.mu);
    state.hold = true;  // the disk stalls from now on
  }
  Buffers buffers(40, 4096);
  // The first buffer reaches the writer thread, which then blocks in Append.
  ASSERT_TRUE((*writer)->SubmitActivity(buffers.Get(0)));
  ASSERT_TRUE(state.WaitForHeldAppend());
  int accepted = 1, rejected = 0;
  for (int i = 1; i < 40; ++i) {
    // Would hang here, never return, if a producer waited for the disk.
    if ((*writer)->SubmitActivity(buffers.Get(i))) {
      ++accepted;
    } else {
      ++rejected;
      EXPECT_EQ(buffers.released[i].load(), 1) << "a dropped buffer is released at once";
    }
  }
  EXPECT_EQ(accepted, 1 + 8);
  EXPECT_EQ(rejected, 40 - accepted);
  auto c = (*writer)->counters();
  EXPECT_EQ(c.buffers_dropped_queue_full, static_cast<uint64_t>(rejected));
  EXPECT_EQ(c.bytes_dropped, static_cast<uint64_t>(rejected) * 4096);
  EXPECT_EQ(c.queue_high_water, 8u);

  state.Release();
  Trailer t;
  t.clean_shutdown = true;
  ASSERT_TRUE((*writer)->Close(std::move(t), std::chrono::seconds(10)).ok());
  buffers.ExpectEachReleasedOnce();

  testing::TempDir dir;
  Capture capture = LoadBytes(dir, state.bytes);
  EXPECT_EQ(capture.chunks.size(), static_cast<size_t>(accepted));
  ASSERT_TRUE(capture.trailer.has_value());
  EXPECT_EQ(capture.trailer->stats.buffers_dropped_queue_full, static_cast<uint64_t>(rejected));
  EXPECT_EQ(capture.trailer->stats.queue_high_water, 8u);
}

void DiskErrorCase(Status failure, Status::Code want_code) {
  TestSinkState state;
  state.failure = failure;
  auto writer = CaptureWriter::Start(std::make_unique<TestSink>(&state), {});
  ASSERT_TRUE(writer.ok());
  Buffers buffers(12, 20000);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE((*writer)->SubmitActivity(buffers.Get(i)));
    ASSERT_TRUE((*writer)->Flush(std::chrono::seconds(10)));
  }
  uint64_t good_size;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    good_size = state.bytes.size();
    state.fail_at = good_size + 100;  // the next frame breaks off after 100 bytes
  }
  ASSERT_TRUE((*writer)->SubmitActivity(buffers.Get(4)));
  (*writer)->Flush(std::chrono::seconds(10));
  // The error is kept, the writer stopped, and producers carry on dropping.
  Status err = (*writer)->error();
  EXPECT_EQ(err.code(), want_code);
  EXPECT_NE(err.message().find("test sink"), std::string::npos);
  EXPECT_TRUE((*writer)->stopped());
  for (int i = 5; i < 12; ++i) EXPECT_FALSE((*writer)->SubmitActivity(buffers.Get(i)));
  EXPECT_FALSE((*writer)->Submit(SmallMessage(ThreadInfo{1, 2, 3, "late"})));
  Status closed = (*writer)->Close({}, std::chrono::seconds(10));
  EXPECT_EQ(closed.code(), want_code);
  buffers.ExpectEachReleasedOnce();
  auto c = (*writer)->counters();
  EXPECT_EQ(c.buffers_dropped_stopped, 8u);
  EXPECT_EQ(c.messages_dropped, 1u);
  EXPECT_EQ(c.chunks_written, 4u);

  // The partial frame was cut away: what is on disk reads back whole.
  EXPECT_EQ(state.bytes.size(), good_size);
  testing::TempDir dir;
  Capture capture = LoadBytes(dir, state.bytes);
  EXPECT_EQ(capture.chunks.size(), 4u);
  EXPECT_TRUE(capture.report.damage.empty());
  EXPECT_FALSE(capture.trailer.has_value());
}

TEST(Writer, DiskFullStopsTheWriterNotTheProducers) {
  DiskErrorCase(Status::NoSpace("test sink: no space left on device"), Status::Code::kNoSpace);
}

TEST(Writer, IoErrorStopsTheWriterNotTheProducers) {
  DiskErrorCase(Status::IoError("test sink: input/output error"), Status::Code::kIoError);
}

TEST(Writer, SizeCapEndsTheFileCleanlyUnderTheCap) {
  testing::TempDir dir;
  std::string path = dir.File("cap.gpucap");
  WriterOptions options;
  options.max_file_bytes = 256 << 10;
  auto writer = CaptureWriter::Start(std::move(OpenFileSink(path)).value(), options);
  ASSERT_TRUE(writer.ok());
  Buffers buffers(64, 32768);
  int accepted = 0;
  for (int i = 0; i < 64; ++i) {
    accepted += (*writer)->SubmitActivity(buffers.Get(i));
    (*writer)->Flush(std::chrono::seconds(10));
  }
  EXPECT_TRUE((*writer)->stopped());
  EXPECT_TRUE((*writer)->error().ok());
  Trailer t;
  t.clean_shutdown = true;
  ASSERT_TRUE((*writer)->Close(std::move(t), std::chrono::seconds(10)).ok());
  buffers.ExpectEachReleasedOnce();
  auto capture = LoadCapture(path);
  ASSERT_TRUE(capture.ok());
  EXPECT_LE(capture->file->size(), options.max_file_bytes);
  ASSERT_TRUE(capture->trailer.has_value());
  EXPECT_NE(capture->trailer->stop_reason.find("size cap"), std::string::npos);
  EXPECT_GT(capture->chunks.size(), 0u);
  EXPECT_LT(capture->chunks.size(), 64u);
  uint64_t dropped_at_cap = 0;
  for (const auto& [name, value] : capture->trailer->stats.extra) {
    if (name == "buffers_dropped_writer_stopped") dropped_at_cap = value;
  }
  EXPECT_EQ(capture->chunks.size() + dropped_at_cap, 64u);
}

TEST(Writer, FlushPutsPendingBatchesOnDisk) {
  TestSinkState state;
  auto writer = CaptureWriter::Start(std::make_unique<TestSink>(&state), {});
  ASSERT_TRUE(writer.ok());
  RangeEvent e;
  e.name = "step";
  ASSERT_TRUE((*writer)->Submit(SmallMessage(e)));
  ASSERT_TRUE((*writer)->Flush(std::chrono::seconds(10)));
  std::string bytes;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    bytes = state.bytes;
  }
  testing::TempDir dir;
  Capture capture = LoadBytes(dir, bytes);  // no trailer yet: a scan
  ASSERT_EQ(capture.ranges.size(), 1u);
  EXPECT_EQ(capture.ranges[0].name, "step");
  ASSERT_TRUE((*writer)->Close({}, std::chrono::seconds(10)).ok());
}

TEST(Writer, StringsAreWrittenBeforeTheChunkSubmittedAfterThem) {
  TestSinkState state;
  WriterOptions options;
  options.batch_bytes = 1 << 20;  // nothing fills a batch: only ordering writes them
  auto writer = CaptureWriter::Start(std::make_unique<TestSink>(&state), options);
  Buffers buffers(1, 1024);
  ASSERT_TRUE((*writer)->Submit(SmallMessage(StringDef{0x1234, "kernel_a"})));
  ASSERT_TRUE((*writer)->SubmitActivity(buffers.Get(0)));
  ASSERT_TRUE((*writer)->Close({}, std::chrono::seconds(10)).ok());
  testing::TempDir dir;
  Capture capture = LoadBytes(dir, state.bytes);
  ASSERT_EQ(capture.strings.size(), 1u);
  ASSERT_EQ(capture.chunks.size(), 1u);
  EXPECT_LT(capture.strings[0].sequence, capture.chunks[0].sequence);
}

TEST(Writer, ManyProducersEverySubmissionIsWrittenOrCounted) {
  testing::TempDir dir;
  std::string path = dir.File("many.gpucap");
  WriterOptions options;
  options.queue_capacity = 64;
  auto writer = CaptureWriter::Start(std::move(OpenFileSink(path)).value(), options);
  ASSERT_TRUE(writer.ok());
  constexpr int kThreads = 16, kEach = 300;
  Buffers buffers(kThreads * 10, 2048);
  std::atomic<uint64_t> msg_ok{0}, msg_drop{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        RangeEvent e;
        e.os_tid = static_cast<uint32_t>(t);
        e.id = static_cast<uint64_t>(i);
        e.name = "r";
        if ((*writer)->Submit(SmallMessage(e))) {
          ++msg_ok;
        } else {
          ++msg_drop;
        }
        if (i % 30 == 0) (*writer)->SubmitActivity(buffers.Get(t * 10 + i / 30));
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_TRUE((*writer)->Close({}, std::chrono::seconds(20)).ok());
  buffers.ExpectEachReleasedOnce();
  auto c = (*writer)->counters();
  EXPECT_EQ(c.messages_dropped, msg_drop.load());
  auto capture = LoadCapture(path);
  ASSERT_TRUE(capture.ok());
  EXPECT_EQ(capture->ranges.size(), msg_ok.load());
  EXPECT_EQ(capture->chunks.size() + c.buffers_dropped_queue_full, static_cast<size_t>(kThreads * 10));
  // Per thread, events arrive in the order that thread submitted them.
  std::vector<int64_t> last(kThreads, -1);
  for (const RangeEvent& e : capture->ranges) {
    EXPECT_GT(static_cast<int64_t>(e.id), last[e.os_tid]);
    last[e.os_tid] = static_cast<int64_t>(e.id);
  }
}

}  // namespace
}  // namespace gpucap::format
