// The trace files of a build are the same bytes at every thread count:
// windows built on several workers at once (window_workers.h), decoded and
// gzipped on the same threads (work_queue.h), give what one thread gives. Compared on
// every fixture, in both formats, with windows that cut each capture into
// several pieces, and on a synthetic capture with many windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <latch>
#include <sstream>
#include <thread>

#include "../support/temp_dir.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/renderer.h"
#include "scene.h"
#include "trace_util.h"
#include "window_workers.h"

namespace gpucap::testing {
namespace {

using builder::BuildOptions;

std::string Read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Run {
  std::vector<std::string> names;  // file names, in window order
  std::vector<std::string> bytes;
  std::vector<std::string> warnings;
};

// Builds `window` of `capture` into DIR/j<threads>/t<ext> and reads the files.
Run Build(const std::string& capture, const std::string& window, const std::string& select, const std::string& ext,
          int threads, const TempDir& dir) {
  std::string folder = dir.File("j" + std::to_string(threads));
  std::filesystem::create_directories(folder);
  BuildOptions o;
  o.window = window;
  o.select = select;
  o.output = folder + "/t" + ext;
  o.format = builder::FormatForPath(o.output);
  o.threads = threads;
  o.output_options.threads = threads;
  // o.output_options.block_bytes = 16 << 10;
  auto index = builder::CaptureIndex::Open(capture);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  auto report = builder::BuildTraces(**index, o);
  EXPECT_TRUE(report.ok()) << capture << " " << window << ": " << report.status().message();
  if (!report.ok()) return {};
  Run r;
  for (const builder::WindowReport& w : report->windows) {
    r.names.push_back(std::filesystem::path(w.path).filename().string());
    r.bytes.push_back(Read(w.path));
  }
  r.warnings = report->warnings;
  return r;
}

// -j1, -j2 and -j4 give the same files; returns how many windows held events.
size_t ExpectSameAtEveryThreadCount(const std::string& capture, const std::string& window,
                                    const std::string& select = {}) {
  size_t windows = 0;
  for (const std::string ext : {".json.gz", ".pftrace.gz"}) {
    TempDir dir;
    Run one = Build(capture, window, select, ext, 1, dir);
    EXPECT_FALSE(one.bytes.empty()) << capture << " " << window;
    for (int threads : {2, 4}) {
      Run many = Build(capture, window, select, ext, threads, dir);
      EXPECT_EQ(one.names, many.names) << capture << " " << window << " -j" << threads;
      EXPECT_EQ(one.warnings, many.warnings) << capture << " " << window << " -j" << threads;
      EXPECT_EQ(one.bytes.size(), many.bytes.size());
      for (size_t i = 0; i < std::min(one.bytes.size(), many.bytes.size()); ++i) {
        EXPECT_TRUE(one.bytes[i] == many.bytes[i])
            << capture << " " << window << ext << " window " << i << " differs at -j" << threads;
      }
    }
    // Windows that hold something (an empty window's pftrace is empty, its
    // JSON a header alone).
    windows = 0;
    for (const std::string& b : one.bytes) windows += ext == ".json.gz" ? b.size() > 1000u : !b.empty();
  }
  return windows;
}

TEST(ThreadCount, PlanSplitsThreadsOverWindows) {
  EXPECT_EQ(builder::PlanWorkers(1, 10).workers, 1);
  EXPECT_EQ(builder::PlanWorkers(4, 10).workers, 4);
  EXPECT_EQ(builder::PlanWorkers(4, 10).threads_each, 1);
  EXPECT_EQ(builder::PlanWorkers(16, 1).workers, 1);   // --window all: one worker, all threads
  EXPECT_EQ(builder::PlanWorkers(16, 1).threads_each, 16);
  EXPECT_EQ(builder::PlanWorkers(16, 5).threads_each, 3);
  EXPECT_GE(builder::PlanWorkers(0, 100).workers, 1);
}

TEST(ThreadCount, FixturesGiveTheSameFilesAtEveryThreadCount) {
  const char* kFixtures[] = {"basics", "torch_train", "graphs_nvtx", "allreduce-0", "allreduce-1", "counters",
                             "peer", "nvtx_domains", "sync_events", "nccl_graph", "graph_nodes"};
  for (const char* name : kFixtures) {
    std::string capture = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap";
    auto index = builder::CaptureIndex::Open(capture);
    ASSERT_TRUE(index.ok()) << capture;
    // About seven windows over the GPU ops (the capture's extent starts
    // earlier, at its first clock sample, and its first call, which may
    // create the context, can lead the ops by 100 ms): chunks shared by
    // neighbours, lookback and lookahead across workers.
    Trace whole = BuildOne(capture);
    int64_t base = static_cast<int64_t>(whole.root["baseTimeNanoseconds"].u());
    uint64_t first = UINT64_MAX, last = 0;
    for (const Json* e : whole.Events("X")) {
      const std::string& cat = (*e)["cat"].text;
      if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
      int64_t ts = base + Nanos((*e)["ts"]);
      first = std::min<uint64_t>(first, ts);
      last = std::max<uint64_t>(last, ts + Nanos((*e)["dur"]));
    }
    ASSERT_LT(first, last) << name;
    uint64_t size = (last - first) / 7 + 1;
    uint64_t skip = (first - (*index)->extent().start_ns) / size;
    std::string every = "every:" + std::to_string(size) + "ns";
    std::string select = std::to_string(skip) + "-" + std::to_string(skip + 6);
    EXPECT_GE(ExpectSameAtEveryThreadCount(capture, every, select), 2u) << name;
    ExpectSameAtEveryThreadCount(capture, "all");
  }
  std::string torch = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/torch_train.gpucap";
  EXPECT_GE(ExpectSameAtEveryThreadCount(torch, "nvtx:ProfilerStep#\\d+"), 2u);
}

// Many windows, each needing launch records from chunks before it and ops
// from chunks after it (the GPU runs 3 ms behind), under step ranges.
TEST(ThreadCount, SyntheticCaptureGivesTheSameFilesAtEveryThreadCount) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z6kernelv"));
  uint32_t correlation = 1;
  for (int step = 0; step < 40; ++step) {
    uint64_t t0 = kT0 + 10'000 + step * 1'000'000ull;
    Scene::Ok(s.c().Push(100, t0, "ProfilerStep#" + std::to_string(step)));
    for (int k = 0; k < 200; ++k) {
      uint64_t t = t0 + 100 + k * 4'000;
      s.Launch(correlation++, 100, t, t + 3'000'000, t + 3'003'000);
      if (s.c().pending_records() >= 300) Scene::Ok(s.c().EndChunk());
    }
    Scene::Ok(s.c().Pop(100, t0 + 900'000));
  }
  EXPECT_GE(ExpectSameAtEveryThreadCount(s.Path(), "every:700us"), 40u);
  EXPECT_EQ(ExpectSameAtEveryThreadCount(s.Path(), "nvtx:ProfilerStep#\\d+"), 40u);
}

TEST(ThreadCount, OneLargeWindowGivesTheSameFilesAtEveryThreadCount) {
  Scene s;
  std::string capture = LargeWindowCapture(&s);
  EXPECT_EQ(ExpectSameAtEveryThreadCount(capture, "all"), 1u);
}

// A sink in front of a renderer that passes slices on one by one, or also
// the renderer's pieces (counting them) when `pieces` is set.
class Forward : public builder::TraceSink {
 public:
  Forward(builder::TraceSink* inner, bool pieces) : inner_(inner), pieces_(pieces) {}
  Status Begin(const builder::TraceHeader& h) override { return inner_->Begin(h); }
  Status AddSlice(const builder::Slice& s) override { return inner_->AddSlice(s); }
  Status AddCounter(const builder::CounterPoint& c) override { return inner_->AddCounter(c); }
  Status End() override { return inner_->End(); }
  std::unique_ptr<builder::TraceSink> NewPiece(builder::RenderedPiece* out) override {
    if (!pieces_) return nullptr;
    return inner_->NewPiece(out);
  }
  Status AddPiece(builder::RenderedPiece* piece) override {
    pieces_added++;
    return inner_->AddPiece(piece);
  }
  int pieces_added = 0;

 private:
  builder::TraceSink* inner_;
  bool pieces_;
};

// A large window's slices described and rendered in pieces (join.cc), on
// one thread or on four, read as the same text as the slices rendered one
// by one by one renderer: a piece's describer and renderer keep their
// caches from piece to piece, and nothing they write may depend on those.
TEST(ThreadCount, PiecesGiveTheTextOfSlicesRenderedOneByOne) {
  Scene s;
  std::string capture = LargeWindowCapture(&s);
  auto index = builder::CaptureIndex::Open(capture);
  ASSERT_TRUE(index.ok());
  auto text = [&](int threads, bool pieces, int* made) {
    BuildOptions o;
    o.window = "all";
    o.threads = threads;
    builder::Builder b(**index, o);
    auto windows = b.Windows();
    EXPECT_TRUE(windows.ok());
    std::string out;
    auto renderer = builder::MakeRenderer(builder::OutputFormat::kChromeJson, builder::NewStringSink(&out));
    Forward forward(renderer.get(), pieces);
    builder::WindowReport report;
    Status st = b.BuildWindow((*windows)[0], &forward, &report);
    EXPECT_TRUE(st.ok()) << st.message();
    *made = forward.pieces_added;
    return out;
  };
  int made = 0;
  std::string one_by_one = text(1, false, &made);
  EXPECT_EQ(made, 0);
  EXPECT_GT(one_by_one.size(), 1'000'000u);
  for (int threads : {1, 4}) {
    std::string pieced = text(threads, true, &made);
    // 60,003 slices in pieces of at least 16,384, cut where the track's
    // earlier slices have ended (the thread's only between its steps).
    EXPECT_GE(made, 3) << threads;
    EXPECT_TRUE(pieced == one_by_one) << "-j" << threads << ": " << pieced.size() << " bytes against "
                                      << one_by_one.size();
  }
}

size_t ProcessThreads() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n++;
  return n;
}

// -j N is N threads in all (work_queue.h): windows, decoding and gzip share
// them. Counted from the progress callback, which runs on the build's
// threads while they are all alive: -j1 adds no thread to the process and
// reports from the caller's; -j2 adds one.
TEST(ThreadCount, BuildRunsOnTheThreadsAskedFor) {
  Scene s;
  std::string capture = LargeWindowCapture(&s);
  auto index = builder::CaptureIndex::Open(capture);
  ASSERT_TRUE(index.ok()) << index.status().message();
  for (const std::string window : {"all", "every:20ms"}) {
    for (int threads : {1, 2}) {
      TempDir dir;
      BuildOptions o;
      o.window = window;
      o.output = dir.File("t.json.gz");
      o.threads = threads;
      o.output_options.threads = threads;
      size_t before = ProcessThreads(), most = 0, calls = 0;
      bool on_caller = true;
      std::thread::id caller = std::this_thread::get_id();
      auto report = builder::BuildTraces(**index, o, [&](const builder::BuildProgress&) {
        most = std::max(most, ProcessThreads());
        on_caller &= std::this_thread::get_id() == caller;
        calls++;
      });
      ASSERT_TRUE(report.ok()) << report.status().message();
      EXPECT_GE(report->windows.size(), window == "all" ? 1u : 10u);
      EXPECT_GT(calls, 0u);
      EXPECT_EQ(most, before + threads - 1) << window << " -j" << threads;
      if (threads == 1) {
        EXPECT_TRUE(on_caller) << window;
      }
    }
  }
}

// Window workers resolve kernel names on one shared index at the same time
// (a racy cache once handed out views of a freed string: garbage names in
// about one build of fifty). Every worker gets the one published name.
TEST(ThreadCount, KernelNamesFromManyWorkersAtOnce) {
  std::string capture = std::string(GPUCAP_SOURCE_DIR) + "/fixtures/torch_train.gpucap";
  auto serial = builder::CaptureIndex::Open(capture);
  ASSERT_TRUE(serial.ok());
  size_t strings = (*serial)->capture().strings.size();
  ASSERT_GT(strings, 20u);
  constexpr int kWorkers = 8;
  for (int round = 0; round < 100; ++round) {
    auto index = builder::CaptureIndex::Open(capture);
    ASSERT_TRUE(index.ok());
    std::vector<std::vector<std::string_view>> seen(kWorkers, std::vector<std::string_view>(strings));
    std::latch start(kWorkers);
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        start.arrive_and_wait();
        for (size_t i = 0; i < strings; ++i) seen[w][i] = (*index)->KernelName(static_cast<uint32_t>(i));
      });
    }
    for (std::thread& t : workers) t.join();
    for (size_t i = 0; i < strings; ++i) {
      std::string_view expected = (*serial)->KernelName(static_cast<uint32_t>(i));
      for (int w = 0; w < kWorkers; ++w) {
        ASSERT_EQ(seen[w][i].data(), seen[0][i].data()) << "string " << i << ": two copies handed out";
        ASSERT_EQ(seen[w][i], expected) << "string " << i << " worker " << w;
      }
    }
  }
}

}  // namespace
}  // namespace gpucap::testing
