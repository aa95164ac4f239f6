// The trace files of a build are the same bytes at every thread count:
// windows built on several workers at once (window_workers.h), decoded and
// gzipped on several threads each, give what one thread gives. Compared on
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
#include "scene.h"
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
          int threads, const TempDir& dir, bool pieces) {
  std::string folder = dir.File("j" + std::to_string(threads));
  std::filesystem::create_directories(folder);
  BuildOptions o;
  o.window = window;
  o.select = select;
  o.output = folder + "/t" + ext;
  o.format = builder::FormatForPath(o.output);
  o.threads = threads;
  o.output_options.threads = threads;
  o.join.pieces = pieces;
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
                                    const std::string& select = {}, bool pieces = false) {
  size_t windows = 0;
  for (const std::string ext : {".json.gz", ".pftrace.gz"}) {
    TempDir dir;
    Run one = Build(capture, window, select, ext, 1, dir, pieces);
    EXPECT_FALSE(one.bytes.empty()) << capture << " " << window;
    for (int threads : {2, 4}) {
      Run many = Build(capture, window, select, ext, threads, dir, pieces);
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
    for (const std::string& b : one.bytes) windows += b.size() > (ext == ".json.gz" ? 1000u : 200u);
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
    // About seven windows over the GPU activity (the capture's extent
    // starts earlier, at its first clock sample): chunks shared by
    // neighbours, lookback and lookahead across workers.
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& chunk : (*index)->capture().chunks) {
      if (chunk.info.min_start_ns != 0) first = std::min(first, chunk.info.min_start_ns);
      last = std::max(last, chunk.info.max_end_ns);
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

// A capture whose one window is large enough to be rendered in pieces
// (slice_pieces.h): 3 steps of 10k launches, 60,006 slices (30k launches,
// 30k kernels, 3 ranges and their 3 GPU spans).
std::string LargeWindowCapture(Scene* s) {
  Scene::Ok(s->c().String(0x1000, "_Z6kernelv"));
  uint32_t correlation = 1;
  for (int step = 0; step < 3; ++step) {
    uint64_t t0 = kT0 + 10'000 + step * 100'000'000ull;
    Scene::Ok(s->c().Push(100, t0, "ProfilerStep#" + std::to_string(step)));
    for (int k = 0; k < 10'000; ++k) {
      uint64_t t = t0 + 100 + k * 4'000;
      s->Launch(correlation++, 100, t, t + 1'000'000, t + 1'003'000);
      if (s->c().pending_records() >= 2000) Scene::Ok(s->c().EndChunk());
    }
    Scene::Ok(s->c().Pop(100, t0 + 90'000'000));
  }
  return s->Path();
}

TEST(ThreadCount, WindowInPiecesGivesTheSameFilesAtEveryThreadCount) {
  Scene s;
  std::string capture = LargeWindowCapture(&s);
  EXPECT_EQ(ExpectSameAtEveryThreadCount(capture, "all", "", /*pieces=*/true), 1u);
}

// In front of a renderer: counts the pieces it is handed, or (`whole`)
// takes no pieces, so the join hands it every slice one by one.
class PieceProbe : public builder::TraceSink {
 public:
  PieceProbe(builder::TraceSink* inner, bool whole) : inner_(inner), whole_(whole) {}
  Status Begin(const builder::TraceHeader& h) override { return inner_->Begin(h); }
  Status AddSlice(const builder::Slice& s) override { return inner_->AddSlice(s); }
  Status AddCounter(const builder::CounterPoint& c) override { return inner_->AddCounter(c); }
  Status End() override { return inner_->End(); }
  std::unique_ptr<builder::TraceSink> NewPiece(builder::RenderedPiece* out) override {
    return whole_ ? nullptr : inner_->NewPiece(out);
  }
  Status AddPiece(builder::RenderedPiece* piece) override {
    pieces++;
    return inner_->AddPiece(piece);
  }
  int pieces = 0;

 private:
  builder::TraceSink* inner_;
  bool whole_;
};

// The text of a window rendered in pieces, on helpers or on the join's own
// thread, is the text of the same window rendered slice by slice.
TEST(ThreadCount, PiecesReadAsTheWholeWindow) {
  Scene s;
  std::string capture = LargeWindowCapture(&s);
  auto index = builder::CaptureIndex::Open(capture);
  ASSERT_TRUE(index.ok()) << index.status().message();
  auto render = [&](bool whole, int helpers, int* pieces) {
    BuildOptions o;
    o.join.pieces = true;
    o.join.piece_threads = helpers;
    builder::Builder b(**index, o);
    auto windows = b.Windows();
    EXPECT_TRUE(windows.ok() && windows->size() == 1u);
    std::string text;
    auto json = builder::NewChromeJsonRenderer(builder::NewStringSink(&text));
    PieceProbe probe(json.get(), whole);
    builder::WindowReport report;
    Status st = b.BuildWindow(windows->at(0), &probe, &report);
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(report.join.slices, 60'006u);
    *pieces = probe.pieces;
    return text;
  };
  int pieces = 0;
  std::string whole = render(/*whole=*/true, 0, &pieces);
  EXPECT_EQ(pieces, 0);
  EXPECT_GT(whole.size(), 60'006u * 100);
  EXPECT_NE(whole.find("\"ProfilerStep#2\""), std::string::npos);
  for (int helpers : {0, 1, 3}) {
    std::string cut = render(/*whole=*/false, helpers, &pieces);
    EXPECT_EQ(pieces, 4) << helpers << " helpers";  // 60,006 slices in runs of 16,384
    EXPECT_TRUE(cut == whole) << helpers << " helpers: the pieces' text differs from the whole window's";
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
