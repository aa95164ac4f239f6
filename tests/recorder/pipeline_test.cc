// The recorder's pipeline with no GPU: buffers built in memory stand in for
// CUPTI's, threads stand in for NVTX callers. Faults: an exhausted pool, a
// disk that fills mid-run, fork while recording, 64 producer threads.
#include <cupti.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <cstring>
#include <thread>

#include <filesystem>
#include <set>

#include "crash_dump.h"
#include "dump_signal.h"
#include "gpucap/format/capture.h"
#include "process_recorder.h"
#include "recorder.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

const char* kName = "_Z12fake_kernelPf";

Config TestConfig(const std::string& path) {
  Config c;
  c.output = path;
  c.quiet = true;
  c.toggle_signal = false;
  c.buffer_bytes = 64 << 10;
  c.pool_buffers = 4;
  return c;
}

// One CUPTI buffer from the recorder's pool, filled with `kernels` kernel
// records and handed back as CUPTI would.
bool FeedBuffer(Recorder* r, int kernels, uint64_t t0, size_t dropped = 0) {
  uint8_t* buf = nullptr;
  size_t size = 0, max_records = 0;
  r->OnBufferRequested(&buf, &size, &max_records);
  if (!buf) return false;
  uint64_t noise = t0 * 2654435761u + 1;
  size_t valid = 0;
  for (int i = 0; i < kernels && valid + sizeof(CUpti_ActivityKernel10) <= size; ++i) {
    auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(buf + valid);
    std::memset(k, 0, sizeof(*k));
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->start = t0 + i * 1000;
    k->end = k->start + 500;
    k->correlationId = static_cast<uint32_t>(i + 1);
    k->name = kName;
    // Fields that do not repeat, so the payload compresses like real ones.
    noise = noise * 6364136223846793005ull + 1442695040888963407ull;
    k->gridX = static_cast<int32_t>(noise >> 40);
    k->queued = noise;
    k->submitted = noise >> 7;
    valid += sizeof(*k);
  }
  r->OnBufferCompleted(1, 7, buf, size, valid, dropped);
  return true;
}

format::RangeEvent Push(uint32_t tid, const std::string& name) {
  format::RangeEvent e;
  e.kind = format::RangeKind::kPush;
  e.timestamp_ns = 1;
  e.os_tid = tid;
  e.name = name;
  return e;
}

uint64_t Extra(const format::RecorderStats& s, const std::string& name) {
  for (const auto& [k, v] : s.extra) {
    if (k == name) return v;
  }
  return 0;
}

TEST(Pipeline, BuffersNamesRangesAndDropsReachTheCapture) {
  testing::TempDir dir;
  std::string path = dir.File("p.gpucap");
  Config config = TestConfig(path);
  config.pool_buffers = 16;  // enough that none has to come back from the writer first
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(FeedBuffer(r, 100, 1'000'000 * (i + 1), /*dropped=*/3));
  for (int i = 0; i < 50; ++i) r->AddRange(Push(42, "step"));
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->report.clean());
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_TRUE(c->trailer->clean_shutdown);
  EXPECT_EQ(c->trailer->stop_reason, "test");
  EXPECT_EQ(c->chunks.size(), 10u);
  EXPECT_EQ(c->trailer->activity_records, 1000u);
  ASSERT_EQ(c->strings.size(), 1u) << "a name is defined once, however many buffers use it";
  EXPECT_EQ(c->strings[0].def.text, kName);
  EXPECT_LT(c->strings[0].sequence, c->chunks[0].sequence);
  EXPECT_EQ(c->ranges.size(), 50u);
  EXPECT_EQ(c->trailer->stats.cupti_dropped_records, 30u);
  ASSERT_TRUE(c->session.has_value());
  EXPECT_EQ(c->session->pid, static_cast<uint32_t>(getpid()));
  delete r;
}

TEST(Pipeline, AnExhaustedPoolRefusesAtOnceAndCounts) {
  testing::TempDir dir;
  std::string path = dir.File("pool.gpucap");
  Recorder* r = Recorder::Create(TestConfig(path));
  ASSERT_NE(r, nullptr);
  std::vector<uint8_t*> held;
  for (int i = 0; i < 10; ++i) {
    uint8_t* buf = nullptr;
    size_t size = 0, max_records = 0;
    r->OnBufferRequested(&buf, &size, &max_records);
    if (buf) {
      held.push_back(buf);
    } else {
      EXPECT_EQ(size, 0u) << "CUPTI must get no buffer, not a zero-sized one";
    }
  }
  EXPECT_EQ(held.size(), 4u);
  for (uint8_t* b : held) r->OnBufferCompleted(1, 7, b, 64 << 10, 0, 0);
  EXPECT_TRUE(FeedBuffer(r, 10, 5000)) << "returned buffers are handed out again";
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->trailer->stats.buffers_dropped_pool_empty, 6u);
  delete r;
}

TEST(Pipeline, ADiskThatFillsStopsRecordingNotTheProgram) {
  testing::TempDir dir;
  std::string path = dir.File("full.gpucap");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A 96 KiB file-size limit stands in for a full disk (EFBIG).
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{96 << 10, 96 << 10};
    setrlimit(RLIMIT_FSIZE, &lim);
    Recorder* r = Recorder::Create(TestConfig(path));
    if (!r) _exit(10);
    int fed = 0;
    for (int i = 0; i < 400; ++i) {
      // A refused buffer (pool empty while the writer works) is retried
      // shortly, as CUPTI would ask again.
      for (int tries = 0; tries < 100 && !FeedBuffer(r, 300, 1'000'000 * (i + 1)); ++tries) usleep(200);
      ++fed;
    }
    for (int i = 0; i < 2000; ++i) r->AddRange(Push(7, "after the disk filled"));
    r->Stop("test");
    // Still here, still producing: the program carries on.
    _exit(fed > 0 ? 0 : 11);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the program under the recorder died";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_LE(c->file->size(), 96u << 10);
  EXPECT_GT(c->chunks.size(), 0u);
  // The partial frame was cut: everything on disk reads back, nothing is damaged.
  EXPECT_TRUE(c->report.damage.empty());
  for (const auto& chunk : c->chunks) {
    std::vector<uint64_t> raw;
    EXPECT_TRUE(format::DecompressChunk(*c->file, chunk, &raw).ok());
  }
  EXPECT_FALSE(c->trailer.has_value()) << "no room was left for a trailer";
}

TEST(Pipeline, AForkedChildNeverWritesIntoTheParentsCapture) {
  testing::TempDir dir;
  std::string path = dir.File("fork.gpucap");
  Recorder* r = Recorder::Create(TestConfig(path));
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(FeedBuffer(r, 50, 1000));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    r->AbandonAfterFork();  // what the atfork handler does
    for (int i = 0; i < 100; ++i) r->AddRange(Push(99, "child"));
    FeedBuffer(r, 50, 2000);
    r->Stop("child");
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (int i = 0; i < 5; ++i) r->AddRange(Push(1, "parent"));
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->report.clean());
  EXPECT_EQ(c->ranges.size(), 5u);
  for (const auto& e : c->ranges) EXPECT_EQ(e.name, "parent");
  EXPECT_EQ(c->chunks.size(), 1u);
  EXPECT_EQ(c->trailer->stop_reason, "test");
  delete r;
}

TEST(Pipeline, SixtyFourProducersEverythingWrittenOrCounted) {
  testing::TempDir dir;
  std::string path = dir.File("many.gpucap");
  Config config = TestConfig(path);
  config.pool_buffers = 16;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  std::atomic<int> fed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 64; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) r->AddRange(Push(1000 + t, "work"));
      for (int i = 0; i < 3; ++i) fed += FeedBuffer(r, 20, 1'000'000 * t + i);
    });
  }
  for (auto& th : threads) th.join();
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->report.clean());
  const auto& st = c->trailer->stats;
  EXPECT_EQ(c->ranges.size() + st.messages_dropped, 64u * 500);
  EXPECT_EQ(c->chunks.size() + st.buffers_dropped_queue_full, static_cast<size_t>(fed.load()));
  EXPECT_EQ(static_cast<int>(st.buffers_dropped_pool_empty) + fed.load(), 64 * 3);
  EXPECT_EQ(Extra(st, "buffers_completed"), static_cast<uint64_t>(fed.load()));
  delete r;
}

// The trailer counts each dropped byte once: the recorder leaves the writer's
// drops to the writer, which adds its final counts to the trailer itself.
TEST(Pipeline, TrailerCountsEachDroppedBufferOnce) {
  testing::TempDir dir;
  std::string path = dir.File("capped.gpucap");
  Config config = TestConfig(path);
  config.pool_buffers = 64;
  config.max_file_bytes = 48 << 10;  // a few frames, then the writer stops
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  constexpr int kKernels = 100;
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(FeedBuffer(r, kKernels, 1'000'000ull * (i + 1)));
  }
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  const auto& st = c->trailer->stats;
  uint64_t dropped_buffers = 40 - c->chunks.size();
  ASSERT_GT(dropped_buffers, 0u) << "the size cap should have dropped buffers";
  EXPECT_EQ(st.bytes_dropped, dropped_buffers * kKernels * sizeof(CUpti_ActivityKernel10));
  delete r;
}

void WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 400 && !done(); ++i) usleep(5000);
}

// `n` buffers of 100 kernels, the i-th at (i + 1) ms; a refused buffer (the
// pool empty while the writer works) is retried, as CUPTI would ask again.
void FeedEvery(Recorder* r, int n) {
  for (int i = 0; i < n; ++i) {
    bool fed = false;
    for (int tries = 0; tries < 400 && !(fed = FeedBuffer(r, 100, 1'000'000ull * (i + 1))); ++tries) usleep(5000);
    ASSERT_TRUE(fed) << "buffer " << i;
  }
}

TEST(Pipeline, AStartDelayIgnoresWhatComesBeforeIt) {
  testing::TempDir dir;
  std::string path = dir.File("delay.gpucap");
  Config config = TestConfig(path);
  config.start_delay_s = 0.3;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->accepting());
  r->AddRange(Push(1, "too early"));
  WaitUntil([&] { return r->accepting(); });
  ASSERT_TRUE(r->accepting()) << "recording never started after its delay";
  r->AddRange(Push(1, "in time"));
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->ranges.size(), 1u);
  EXPECT_EQ(c->ranges[0].name, "in time");
  delete r;
}

TEST(Pipeline, ADurationClosesTheCaptureAndTheProgramGoesOn) {
  testing::TempDir dir;
  std::string path = dir.File("duration.gpucap");
  Config config = TestConfig(path);
  config.duration_s = 0.2;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  r->AddRange(Push(1, "recorded"));
  WaitUntil([&] { return !r->accepting(); });
  EXPECT_FALSE(r->accepting());
  r->AddRange(Push(1, "after the end"));  // ignored, not a crash
  r->Stop("test");                       // already stopped: nothing happens
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->stop_reason, "duration reached");
  ASSERT_EQ(c->ranges.size(), 1u);
  EXPECT_EQ(c->ranges[0].name, "recorded");
  delete r;
}

TEST(Pipeline, TheToggleSignalPausesAndResumes) {
  testing::TempDir dir;
  std::string path = dir.File("toggle.gpucap");
  Recorder* r = Recorder::Create(TestConfig(path));
  ASSERT_NE(r, nullptr);
  r->AddRange(Push(1, "first"));
  r->RequestToggle();  // what the SIGUSR2 handler does
  WaitUntil([&] { return !r->accepting(); });
  ASSERT_FALSE(r->accepting());
  r->AddRange(Push(1, "while paused"));
  r->RequestToggle();
  WaitUntil([&] { return r->accepting(); });
  ASSERT_TRUE(r->accepting());
  r->AddRange(Push(1, "resumed"));
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  std::vector<std::string> names;
  for (const auto& e : c->ranges) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"first", "resumed"}));
  delete r;
}

// --window-nvtx marks and the C API's window marks come from one id space:
// with two counters both started at 1, an API window's close ended the NVTX
// window of the same number.
TEST(Pipeline, NvtxAndApiWindowsNeverShareAnId) {
  testing::TempDir dir;
  std::string path = dir.File("windows.gpucap");
  Config config = TestConfig(path);
  config.window_nvtx = "ProfilerStep#\\d+";
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  r->AddRange(Push(1, "ProfilerStep#0"));
  format::WindowMark api;  // what gpucap_window_begin writes
  api.kind = format::WindowMarkKind::kOpen;
  api.os_tid = 1;
  api.id = r->NextWindowId();
  api.label = "api";
  r->AddEvent(std::move(api));
  r->AddRange(Push(1, "not a window"));
  r->AddRange(Push(1, "ProfilerStep#1"));
  r->Stop("test");
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  std::map<uint64_t, std::string> opened;
  for (const auto& m : c->windows) {
    if (m.kind != format::WindowMarkKind::kOpen) continue;
    EXPECT_TRUE(opened.emplace(m.id, m.label).second) << "id " << m.id << " opened twice";
  }
  EXPECT_EQ(opened.size(), 3u);
  delete r;
}

// --- the flight recorder (--ring-mb) ---

std::set<std::string> FilesIn(const testing::TempDir& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.insert(e.path().filename().string());
  return names;
}

TEST(Pipeline, TheFlightRecorderWritesOnlyDumpsEachWithItsDefinitionsAndTrigger) {
  testing::TempDir dir;
  Config config = TestConfig(dir.File("job.gpucap"));
  config.pool_buffers = 16;
  config.ring_bytes = 96 << 10;  // a few buffers' worth: most of the 40 fed age out
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  const int kBuffers = 40;
  ASSERT_NO_FATAL_FAILURE(FeedEvery(r, kBuffers));
  r->AddRange(Push(42, "step"));
  EXPECT_TRUE(FilesIn(dir).empty()) << "the ring writes nothing before a dump";

  ASSERT_TRUE(r->RequestApiDump("loss spike"));  // what gpucap_dump("loss spike") does
  WaitUntil([&] { return r->dumps_written() >= 1; });
  ASSERT_EQ(r->dumps_written(), 1u) << r->last_dump();

  // SIGUSR1 through the handler the injection installs.
  SetProcessRecorder(r);
  ASSERT_TRUE(InstallDumpSignal());
  raise(SIGUSR1);
  WaitUntil([&] { return r->dumps_written() >= 2; });
  signal(SIGUSR1, SIG_DFL);
  SetProcessRecorder(nullptr);
  ASSERT_EQ(r->dumps_written(), 2u) << r->last_dump();
  r->Stop("test");  // no dump at exit unless asked

  EXPECT_EQ(FilesIn(dir), (std::set<std::string>{"job.ring-1.gpucap", "job.ring-2.gpucap"}));
  auto first = format::LoadCapture(dir.File("job.ring-1.gpucap"), {.verify_chunks = true});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->report.clean());
  ASSERT_TRUE(first->trailer.has_value());
  EXPECT_EQ(first->trailer->trigger, "api: loss spike");
  ASSERT_TRUE(first->session.has_value()) << "the session outlives the ring";
  EXPECT_EQ(first->session->pid, static_cast<uint32_t>(getpid()));
  ASSERT_EQ(first->strings.size(), 1u) << "the kernel's name, defined with the first buffer, is kept";
  EXPECT_EQ(first->strings[0].def.text, kName);
  EXPECT_FALSE(first->clocks.empty());
  ASSERT_FALSE(first->chunks.empty());
  EXPECT_LT(first->chunks.size(), static_cast<size_t>(kBuffers)) << "the bound dropped the oldest";
  // The newest buffers, in the order fed.
  for (size_t i = 0; i < first->chunks.size(); ++i) {
    EXPECT_EQ(first->chunks[i].info.min_start_ns, 1'000'000 * (kBuffers - first->chunks.size() + i + 1));
  }
  EXPECT_EQ(first->trailer->activity_records, 100 * first->chunks.size());
  EXPECT_GT(Extra(first->trailer->stats, "ring_frames_dropped"), 0u);
  ASSERT_EQ(first->ranges.size(), 1u);
  EXPECT_EQ(first->ranges[0].name, "step");

  auto second = format::LoadCapture(dir.File("job.ring-2.gpucap"));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(second->trailer.has_value());
  EXPECT_EQ(second->trailer->trigger, "signal");
  ASSERT_EQ(second->strings.size(), 1u);
  EXPECT_EQ(second->chunks.size(), first->chunks.size());
  delete r;
}

// The crash handler over a ring with CUPTI's buffers in it: the dump holds
// the chunks and the kernel's name, as the writer's own dump of the same
// ring does. The crash happens in a forked child (the ring's bytes are its
// copy of the parent's; no writer runs there to move them).
TEST(Pipeline, ACrashDumpHoldsTheRingsChunksAndKernelNames) {
  testing::TempDir dir;
  Config config = TestConfig(dir.File("job.gpucap"));
  config.pool_buffers = 16;
  config.ring_bytes = 96 << 10;
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  const int kBuffers = 40;
  ASSERT_NO_FATAL_FAILURE(FeedEvery(r, kBuffers));
  ASSERT_TRUE(r->RequestApiDump("barrier"));  // once written, everything fed is in the ring's snapshot
  WaitUntil([&] { return r->dumps_written() >= 1; });
  ASSERT_EQ(r->dumps_written(), 1u) << r->last_dump();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL);
    if (!InstallCrashDump(r->crash_slot(), r->output_path(), true)) _exit(3);
    raise(SIGSEGV);
    _exit(4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  r->Stop("test");
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  auto own = format::LoadCapture(dir.File("job.ring-1.gpucap"), {.read = {}, .verify_chunks = true});
  auto crash = format::LoadCapture(dir.File("job.ring-2.gpucap"), {.read = {}, .verify_chunks = true});
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  ASSERT_TRUE(crash.ok()) << crash.status().ToString();
  EXPECT_TRUE(crash->report.clean());
  ASSERT_TRUE(crash->trailer.has_value());
  EXPECT_EQ(crash->trailer->trigger, "crash: SIGSEGV");
  ASSERT_EQ(crash->strings.size(), 1u);
  EXPECT_EQ(crash->strings[0].def.text, kName);
  ASSERT_FALSE(crash->chunks.empty());
  EXPECT_LT(crash->chunks.size(), static_cast<size_t>(kBuffers)) << "the bound dropped the oldest";
  ASSERT_EQ(crash->chunks.size(), own->chunks.size());
  for (size_t i = 0; i < crash->chunks.size(); ++i) {
    EXPECT_EQ(crash->chunks[i].info.min_start_ns, 1'000'000 * (kBuffers - crash->chunks.size() + i + 1));
  }
  EXPECT_EQ(crash->trailer->activity_records, 100 * crash->chunks.size());
  delete r;
}

TEST(Pipeline, ARingDumpsAtExitWhenAskedAndNeverOverAnEarlierFile) {
  testing::TempDir dir;
  Config config = TestConfig(dir.File("job.gpucap"));
  config.ring_bytes = 1 << 20;
  config.ring_dump_at_exit = true;
  testing::WriteFile(dir.File("job.ring-1.gpucap"), "not ours");
  Recorder* r = Recorder::Create(config);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(FeedBuffer(r, 10, 5000));
  r->Stop("exit");
  EXPECT_EQ(testing::ReadFile(dir.File("job.ring-1.gpucap")), "not ours");
  auto c = format::LoadCapture(dir.File("job.ring-2.gpucap"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->trailer.has_value());
  EXPECT_EQ(c->trailer->trigger, "exit");
  EXPECT_EQ(c->chunks.size(), 1u);
  EXPECT_EQ(FilesIn(dir).size(), 2u);
  delete r;
}

TEST(Pipeline, WithoutARingADumpIsRefusedAndTheCaptureIsAsBefore) {
  testing::TempDir dir;
  std::string path = dir.File("whole.gpucap");
  Recorder* r = Recorder::Create(TestConfig(path));
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->RequestApiDump("nothing to dump"));
  EXPECT_FALSE(r->RequestSignalDump());
  ASSERT_TRUE(FeedBuffer(r, 10, 5000));
  r->Stop("test");
  EXPECT_EQ(FilesIn(dir), (std::set<std::string>{"whole.gpucap"}));
  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->trailer->trigger, "");
  EXPECT_EQ(c->chunks.size(), 1u);
  delete r;
}

TEST(RingDumpPath, NumbersGoBeforeTheExtension) {
  EXPECT_EQ(RingDumpPath("job.gpucap", 1), "job.ring-1.gpucap");
  EXPECT_EQ(RingDumpPath("/a.b/job.gpucap", 12), "/a.b/job.ring-12.gpucap");
  EXPECT_EQ(RingDumpPath("/a.b/job", 2), "/a.b/job.ring-2");
  EXPECT_EQ(RingDumpPath("out/.hidden", 3), "out/.hidden.ring-3");
}

}  // namespace
}  // namespace gpucap::recorder
