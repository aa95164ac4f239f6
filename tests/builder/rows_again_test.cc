// Rows a large window gives back during its join and has again from the
// capture (rows_again.h; builder.h, kernels_kept_whole): the same rows, the
// same trace bytes, and a chunk found damaged when decoded again is an
// error naming the file and offset, with nothing written.
#include "rows_again.h"
#include "decode_again.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "../support/temp_dir.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "gunzip_util.h"
#include "scene.h"

namespace gpucap::testing {
namespace {

using builder::ActivityTables;
using builder::BuildOptions;
using builder::CaptureIndex;
using builder::DecodeStats;

std::string Fixture(const std::string& name) { return std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name + ".gpucap"; }

struct Built {
  std::vector<std::string> bytes;
  uint64_t decoded_again = 0;
};

Built Build(const std::string& capture, const std::string& window, const std::string& ext, uint64_t kept_whole,
            int threads, const TempDir& dir) {
  std::string folder = dir.File("k" + std::to_string(kept_whole) + "j" + std::to_string(threads));
  std::filesystem::create_directories(folder);
  BuildOptions o;
  o.window = window;
  o.output = folder + "/t" + ext;
  o.format = builder::FormatForPath(o.output);
  o.threads = threads;
  o.output_options.threads = threads;
  o.kernels_kept_whole = kept_whole;
  auto index = CaptureIndex::Open(capture);
  EXPECT_TRUE(index.ok()) << capture;
  if (!index.ok()) return {};
  auto report = builder::BuildTraces(**index, o);
  EXPECT_TRUE(report.ok()) << capture << ": " << report.status().message();
  if (!report.ok()) return {};
  Built b;
  for (const builder::WindowReport& w : report->windows) {
    b.bytes.push_back(ReadFile(w.path));
    b.decoded_again += w.join.chunks_decoded_again;
  }
  return b;
}

// Every fixture, both formats, `all` and windows cutting the capture: the
// files are the bytes of a build that keeps its rows, and the rows were
// decoded again (the path is taken, not skipped).
TEST(RowsAgain, FixturesGiveTheSameFilesWithRowsDecodedAgain) {
  const char* kFixtures[] = {"basics", "torch_train", "graphs_nvtx", "allreduce-0", "peer", "sync_events",
                             "nccl_graph", "graph_nodes"};
  for (const char* name : kFixtures) {
    ASSERT_TRUE(std::filesystem::exists(Fixture(name))) << name;
    for (const std::string window : {"all", "every:20ms"}) {
      for (const std::string ext : {".json.gz", ".pftrace.gz"}) {
        if (window != "all" && ext != ".json.gz") continue;  // windows: one format is enough
        TempDir dir;
        Built kept = Build(Fixture(name), window, ext, UINT64_MAX, 1, dir);
        Built again = Build(Fixture(name), window, ext, 0, 1, dir);
        EXPECT_EQ(kept.decoded_again, 0u) << name;
        EXPECT_GT(again.decoded_again, 0u) << name << " " << window;
        ASSERT_EQ(kept.bytes.size(), again.bytes.size()) << name << " " << window;
        for (size_t i = 0; i < kept.bytes.size(); ++i) {
          EXPECT_TRUE(kept.bytes[i] == again.bytes[i]) << name << " " << window << ext << " window " << i;
        }
      }
    }
  }
}

// 30k launches in 15 chunks, one window: the same files at -j1, -j2 and
// -j4 with rows decoded again (each worker's join decodes its own).
TEST(RowsAgain, OneLargeWindowGivesTheSameFilesAtEveryThreadCount) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z6kernelv"));
  uint32_t correlation = 1;
  for (int k = 0; k < 30'000; ++k) {
    uint64_t t = kT0 + 10'000 + k * 4'000;
    s.Launch(correlation++, 100, t, t + 1'000'000, t + 1'003'000);
    if (s.c().pending_records() >= 2000) Scene::Ok(s.c().EndChunk());
  }
  TempDir dir;
  Built kept = Build(s.Path(), "all", ".json.gz", UINT64_MAX, 1, dir);
  ASSERT_EQ(kept.bytes.size(), 1u);
  for (int threads : {1, 2, 4}) {
    Built again = Build(s.Path(), "all", ".json.gz", 0, threads, dir);
    ASSERT_EQ(again.bytes.size(), 1u);
    EXPECT_GE(again.decoded_again, 2 * 15u) << threads;  // each chunk's kernels, then its API calls
    // The same trace; the gzip members differ, since a window whose rows are
    // had again is rendered slice by slice, one whose rows are kept in pieces.
    EXPECT_TRUE(Gunzip(kept.bytes[0]) == Gunzip(again.bytes[0])) << "-j" << threads;
  }
}

#define EXPECT_COLUMN_EQ(type, name) EXPECT_EQ(whole.kernels.name, again.kernels.name) << #name;

// One chunk decoded without its kernels' arguments keeps the join columns;
// decoded again it gives every column of the first decode.
TEST(RowsAgain, ChunkDecodedAgainGivesTheSameRows) {
  auto index = CaptureIndex::Open(Fixture("torch_train"));
  ASSERT_TRUE(index.ok());
  const builder::Decoder& d = (*index)->decoder();
  size_t checked = 0;
  for (size_t c = 0; c < (*index)->capture().chunks.size(); ++c) {
    ActivityTables whole, slim, again;
    DecodeStats stats;
    std::vector<uint64_t> scratch;
    d.DecodeChunk(c, builder::kAllFamilies, &whole, &stats, &scratch);
    d.DecodeChunk(c, builder::kAllFamilies | builder::kNoKernelArgs, &slim, &stats, &scratch);
    if (whole.kernels.empty()) continue;
    EXPECT_FALSE(slim.kernels.has_args());
    EXPECT_TRUE(slim.kernels.queued.empty());
    EXPECT_EQ(slim.kernels.start, whole.kernels.start);
    EXPECT_EQ(slim.kernels.graph_node_id, whole.kernels.graph_node_id);
    EXPECT_EQ(slim.kernels.context, whole.kernels.context);
    ASSERT_TRUE(builder::DecodeAgain(**index, c, builder::kKernels, builder::SeenOf(slim.kernels), &again).ok());
    GPUCAP_KERNEL_COLUMNS(EXPECT_COLUMN_EQ)
    ASSERT_TRUE(builder::DecodeAgain(**index, c, builder::kApis, builder::SeenOf(whole.apis), &again).ok());
    EXPECT_EQ(again.apis.cbid, whole.apis.cbid);
    EXPECT_EQ(again.apis.tid, whole.apis.tid);
    // Another chunk's rows are not these.
    size_t other = c == 0 ? 1 : 0;
    Status s = builder::DecodeAgain(**index, other, builder::kKernels, builder::SeenOf(slim.kernels), &again);
    EXPECT_EQ(s.code(), Status::Code::kCorrupt);
    EXPECT_NE(s.message().find("offset " + std::to_string((*index)->capture().chunks[other].frame_offset)),
              std::string::npos)
        << s.message();
    checked++;
  }
  EXPECT_GT(checked, 0u);
}

// The capture changes under the build after its chunks were first decoded:
// the window fails with the file and the chunk's offset, never crashes, and
// the trace file already there is left as it was (the window's file is
// committed only at its end).
TEST(RowsAgain, ChunkDamagedWhenDecodedAgainIsAnErrorAndWritesNothing) {
  TempDir dir;
  std::string capture = dir.File("c.gpucap");
  std::filesystem::copy_file(Fixture("torch_train"), capture);
  auto index = CaptureIndex::Open(capture);
  ASSERT_TRUE(index.ok());
  const format::Capture& cap = (*index)->capture();
  std::vector<std::unique_ptr<ActivityTables>> tables;
  std::vector<const ActivityTables*> parts;
  DecodeStats decode;
  size_t victim = SIZE_MAX;
  for (size_t c = 0; c < cap.chunks.size(); ++c) {
    tables.push_back(std::make_unique<ActivityTables>());
    std::vector<uint64_t> scratch;
    (*index)->decoder().DecodeChunk(c, builder::kAllFamilies | builder::kNoKernelArgs, tables.back().get(), &decode,
                                    &scratch);
    parts.push_back(tables.back().get());
    if (victim == SIZE_MAX && !tables.back()->kernels.empty()) victim = c;
  }
  ASSERT_NE(victim, SIZE_MAX);
  ASSERT_EQ(decode.corrupt_chunks, 0u);
  // Damage the stored bytes of a chunk with kernels, in the file itself.
  const format::ChunkView& view = cap.chunks[victim];
  size_t at = static_cast<size_t>(view.stored.data() - cap.file->bytes().data()) + view.stored.size() / 2;
  int fd = ::open(capture.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  std::string junk(64, '\x5a');
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), static_cast<off_t>(at)), static_cast<ssize_t>(junk.size()));
  ::close(fd);

  std::string out = dir.File("t.json.gz");
  WriteFile(out, "the trace written before");
  builder::RowSource rows;
  rows.again = [&](uint16_t part, uint32_t family, const builder::RowSource::Seen& first, ActivityTables* t) {
    return builder::DecodeAgain(**index, part, family, first, t);
  };
  uint32_t released = 0;
  rows.release = [&](uint32_t family) { released |= family; };
  auto windows = builder::ResolveWindows(*builder::ParseWindowSpec("all"), cap, (*index)->extent(),
                                         (*index)->ranges());
  ASSERT_TRUE(windows.ok());
  auto sink_out = builder::OpenOutput(out);
  ASSERT_TRUE(sink_out.ok());
  std::unique_ptr<builder::TraceSink> sink = builder::MakeRenderer(builder::OutputFormat::kChromeJson,
                                                                   std::move(sink_out).value());
  builder::JoinStats stats;
  builder::JoinWorkspace workspace;
  Status s = builder::JoinWindow(**index, windows->front(), parts, decode, builder::JoinOptions(), sink.get(),
                                 &stats, &workspace, nullptr, rows);
  sink.reset();
  EXPECT_EQ(s.code(), Status::Code::kCorrupt) << s.message();
  EXPECT_NE(s.message().find(capture + ": offset " + std::to_string(view.frame_offset)), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("decoded again"), std::string::npos) << s.message();
  EXPECT_EQ(released, builder::kKernels | builder::kApis);
  EXPECT_EQ(ReadFile(out), "the trace written before");
}

}  // namespace
}  // namespace gpucap::testing
