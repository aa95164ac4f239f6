// Tracks of graph replays (docs/semantics.md, "Tracks of graph replays";
// builder/src/graph_lanes.cc): a replayed op whose node knows the stream it
// was captured on is drawn on that stream's lane, named after it, with
// CUPTI's stream of the replay kept in "stream"; --graph-lanes cupti and
// nodes without a capture stream keep CUPTI's stream. Read back from both
// renderings, Chrome JSON and pftrace.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "../builder/scene.h"
#include "../builder/trace_util.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "pftrace_reader.h"

namespace gpucap::testing {
namespace {

using builder::testing::KernelRecord;

constexpr uint32_t kTid = 77;
constexpr uint32_t kReplayStream = 16;  // CUPTI's, never the program's

// Graph 1 captured under range "capture": node 11 on stream 3, node 12 on
// stream 5, node 13 added explicitly (no capture stream); instantiated
// (clones 111..113) and replayed twice on CUPTI's stream 16. An eager
// kernel runs on stream 3 too.
std::string LanesScene(Scene& s, bool record_streams = true) {
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  Scene::Ok(s.c().Push(kTid, kT0 + 100, "capture"));
  const uint32_t capture_streams[] = {3, 5, format::kNoCaptureStream};
  for (int i = 0; i < 3; ++i) {
    format::GraphEvent n;
    n.kind = format::GraphEventKind::kNodeCreated;
    n.graph_id = 1;
    n.node_id = 11 + i;
    n.os_tid = kTid;
    n.timestamp_ns = kT0 + 200 + i * 100;
    n.function_name = "_Z4gemmv";
    if (record_streams) n.capture_stream = capture_streams[i];
    Scene::Ok(s.c().Message(n));
    format::GraphEvent c;
    c.kind = format::GraphEventKind::kNodeCloned;
    c.node_id = 111 + i;
    c.original_node_id = 11 + i;
    Scene::Ok(s.c().Message(c));
  }
  Scene::Ok(s.c().Pop(kTid, kT0 + 900));
  s.Launch(400, kTid, kT0 + 1000, kT0 + 2000, kT0 + 2500, 0x1000, 3);  // eager, on stream 3
  for (int replay = 0; replay < 2; ++replay) {
    uint32_t corr = 500 + replay;
    uint64_t at = kT0 + 10000 + replay * 10000;
    s.GraphLaunch(corr, kTid, at);
    for (int i = 0; i < 3; ++i) {
      KernelRecord k;
      k.start = at + 3000 + i * 2000;
      k.end = k.start + 1500;
      k.correlation = corr;
      k.stream = kReplayStream;
      k.name_pointer = 0x1000;
      k.graph_node_id = 111 + i;
      k.graph_id = 2;
      s.c().Kernel(k);
    }
  }
  return s.Path();
}

builder::BuildOptions Lanes(builder::GraphLanes lanes) {
  builder::BuildOptions o;
  o.join.graph_lanes = lanes;
  return o;
}

// Where each kernel went in the JSON: (graph node or 0) -> thread names.
std::multimap<uint64_t, std::string> KernelThreads(const Trace& t) {
  std::multimap<uint64_t, std::string> out;
  for (const Json* k : t.Events("X", "kernel")) {
    const Json* node = (*k)["args"].Find("graph node");
    out.emplace(node ? node->u() : 0, t.ThreadName((*k)["pid"].u(), (*k)["tid"].u()));
  }
  return out;
}

TEST(GraphLanes, ReplayedOpsSitOnTheLaneOfTheirCaptureStreamInJson) {
  Scene s;
  Trace t = BuildOne(LanesScene(s), Lanes(builder::GraphLanes::kCapture));
  ExpectImporterRules(t);
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 7u);
  std::map<uint64_t, uint64_t> lane_tid;  // capture node -> tid
  uint64_t eager_tid = 0;
  for (const Json* k : kernels) {
    const Json& args = (*k)["args"];
    const Json* node = args.Find("graph node");
    std::string thread = t.ThreadName((*k)["pid"].u(), (*k)["tid"].u());
    if (node == nullptr) {
      EXPECT_EQ(args["stream"].u(), 3u);
      EXPECT_EQ(thread, "stream 3");
      EXPECT_EQ((*k)["tid"].u(), 3u) << "eager work keeps tid = stream";
      EXPECT_EQ(args.Find("capture stream"), nullptr);
      eager_tid = (*k)["tid"].u();
      continue;
    }
    EXPECT_EQ(args["stream"].u(), kReplayStream) << "CUPTI's stream stays in the args";
    uint64_t capture_node = args["capture node"].u();
    lane_tid.emplace(capture_node, (*k)["tid"].u());
    EXPECT_EQ(lane_tid[capture_node], (*k)["tid"].u()) << "both replays of a node on one lane";
    if (capture_node == 11) {
      EXPECT_EQ(thread, "stream 3 (graph)");
      EXPECT_EQ(args["capture stream"].u(), 3u);
    } else if (capture_node == 12) {
      EXPECT_EQ(thread, "stream 5 (graph)");
      EXPECT_EQ(args["capture stream"].u(), 5u);
    } else {
      EXPECT_EQ(capture_node, 13u);
      EXPECT_EQ(thread, "stream 16") << "no capture stream: CUPTI's stream";
      EXPECT_EQ((*k)["tid"].u(), kReplayStream);
      EXPECT_EQ(args.Find("capture stream"), nullptr);
    }
  }
  ASSERT_EQ(lane_tid.size(), 3u);
  EXPECT_NE(lane_tid[11], eager_tid) << "the lane is not the stream's own track";
  EXPECT_NE(lane_tid[11], lane_tid[12]);
  // The capture-time range's GPU spans follow the ops onto their lanes.
  std::multimap<uint64_t, uint64_t> span_tids;
  for (const Json* e : t.Named("capture")) {
    if ((*e)["cat"].text == "gpu_user_annotation") span_tids.emplace((*e)["tid"].u(), Nanos((*e)["dur"]));
  }
  EXPECT_EQ(span_tids.count(lane_tid[11]), 2u) << "one span per replay on stream 3's lane";
  EXPECT_EQ(span_tids.count(lane_tid[12]), 2u);
  EXPECT_EQ(span_tids.count(kReplayStream), 2u);
  EXPECT_EQ(span_tids.size(), 6u);
  // The lane sorts with its stream: same sort index as stream 3.
  int64_t lane_sort = -1, stream_sort = -1;
  for (const Json* m : t.Events("M")) {
    if ((*m)["name"].text != "thread_sort_index" || (*m)["pid"].u() != 0) continue;
    if ((*m)["tid"].u() == lane_tid[11]) lane_sort = (*m)["args"]["sort_index"].i();
    if ((*m)["tid"].u() == 3) stream_sort = (*m)["args"]["sort_index"].i();
  }
  EXPECT_EQ(lane_sort, 3);
  EXPECT_EQ(stream_sort, 3);
  EXPECT_EQ(t.Count("graph ops with capture stream"), 4);
  EXPECT_EQ(t.Count("graph ops on capture-stream lanes"), 4);
}

TEST(GraphLanes, CuptiModeKeepsCuptisStreamsAndTheCaptureStreamArg) {
  Scene s;
  Trace t = BuildOne(LanesScene(s), Lanes(builder::GraphLanes::kCupti));
  ExpectImporterRules(t);
  auto threads = KernelThreads(t);
  ASSERT_EQ(threads.size(), 7u);
  for (const auto& [node, thread] : threads) {
    EXPECT_EQ(thread, node == 0 ? "stream 3" : "stream 16") << "node " << node;
  }
  for (const Json* k : t.Events("X", "kernel")) {
    const Json& args = (*k)["args"];
    if (args.Find("graph node") == nullptr) continue;
    uint64_t capture_node = args["capture node"].u();
    const Json* cs = args.Find("capture stream");
    if (capture_node == 13) {
      EXPECT_EQ(cs, nullptr);
    } else {
      ASSERT_NE(cs, nullptr);
      EXPECT_EQ(cs->u(), capture_node == 11 ? 3u : 5u);
    }
  }
  EXPECT_EQ(t.Count("graph ops with capture stream"), 4);
  EXPECT_EQ(t.Count("graph ops on capture-stream lanes"), 0);
}

TEST(GraphLanes, ACaptureWithoutCaptureStreamsRendersAsBefore) {
  Scene a("lanes.gpucap");
  std::string path_a = LanesScene(a, false);
  Trace capture = BuildOne(path_a, Lanes(builder::GraphLanes::kCapture));
  Scene b("cupti.gpucap");
  std::string path_b = LanesScene(b, false);
  Trace cupti = BuildOne(path_b, Lanes(builder::GraphLanes::kCupti));
  auto threads = KernelThreads(capture);
  EXPECT_EQ(threads.size(), 7u);
  for (const auto& [node, thread] : threads) {
    EXPECT_EQ(thread, node == 0 ? "stream 3" : "stream 16") << "node " << node;
  }
  EXPECT_EQ(capture.Count("graph ops with capture stream"), -1) << "old headers unchanged";
  EXPECT_EQ(capture.Count("graph ops on capture-stream lanes"), -1);
  // Nothing else differs but the capture's path in the header.
  auto strip = [](std::string text, const std::string& path) {
    for (size_t at; (at = text.find(path)) != std::string::npos;) text.replace(at, path.size(), "X");
    return text;
  };
  EXPECT_EQ(strip(capture.text, path_a), strip(cupti.text, path_b));
}

// --- pftrace ---------------------------------------------------------------

PfTrace BuildPftrace(const std::string& path, builder::GraphLanes lanes) {
  auto index = builder::CaptureIndex::Open(path);
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return {};
  builder::BuildOptions o = Lanes(lanes);
  builder::Builder b(**index, o);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok() && windows->size() == 1u);
  if (!windows.ok() || windows->empty()) return {};
  std::string bytes;
  auto sink = builder::NewPerfettoRenderer(builder::NewStringSink(&bytes));
  builder::WindowReport report;
  Status s = b.BuildWindow(windows->front(), sink.get(), &report);
  EXPECT_TRUE(s.ok()) << s.message();
  PfTrace t = ReadPftrace(bytes);
  for (const std::string& e : t.errors) ADD_FAILURE() << e;
  return t;
}

std::string Arg(const PfSlice& s, const std::string& key) {
  for (const auto& [k, v] : s.args) {
    if (k == key) return v;
  }
  return "(none)";
}

TEST(GraphLanes, ReplayedOpsSitOnTheLaneOfTheirCaptureStreamInPftrace) {
  Scene s;
  PfTrace t = BuildPftrace(LanesScene(s), builder::GraphLanes::kCapture);
  int kernels = 0;
  const PfTrack* stream3 = nullptr;
  const PfTrack* lane3 = nullptr;
  for (const PfSlice& x : t.slices) {
    if (x.category != "kernel") continue;
    kernels++;
    const PfTrack* track = t.Track(x.track);
    ASSERT_NE(track, nullptr);
    std::string node = Arg(x, "capture node");
    if (node == "(none)") {
      EXPECT_EQ(track->name, "stream 3");
      stream3 = track;
      continue;
    }
    EXPECT_EQ(Arg(x, "stream"), "16");
    if (node == "11") {
      EXPECT_EQ(track->name, "stream 3 (graph)");
      EXPECT_EQ(Arg(x, "capture stream"), "3");
      lane3 = track;
    } else if (node == "12") {
      EXPECT_EQ(track->name, "stream 5 (graph)");
      EXPECT_EQ(Arg(x, "capture stream"), "5");
    } else {
      EXPECT_EQ(node, "13");
      EXPECT_EQ(track->name, "stream 16");
      EXPECT_EQ(Arg(x, "capture stream"), "(none)");
    }
  }
  EXPECT_EQ(kernels, 7);
  ASSERT_TRUE(stream3 && lane3);
  EXPECT_NE(stream3->uuid, lane3->uuid);
  EXPECT_EQ(stream3->parent, lane3->parent) << "both in the device's process";
  ASSERT_TRUE(stream3->rank && lane3->rank);
  EXPECT_EQ(*lane3->rank, *stream3->rank + 1) << "the lane right after its stream";
  int lane_spans = 0;
  for (const PfSlice& x : t.slices) {
    if (x.category == "gpu_user_annotation" && x.name == "capture" && x.track == lane3->uuid) lane_spans++;
  }
  EXPECT_EQ(lane_spans, 2);
}

TEST(GraphLanes, CuptiModeInPftrace) {
  Scene s;
  PfTrace t = BuildPftrace(LanesScene(s), builder::GraphLanes::kCupti);
  int kernels = 0;
  for (const PfSlice& x : t.slices) {
    if (x.category != "kernel") continue;
    kernels++;
    bool replayed = Arg(x, "capture node") != "(none)";
    EXPECT_EQ(t.Track(x.track)->name, replayed ? "stream 16" : "stream 3");
  }
  EXPECT_EQ(kernels, 7);
  for (const auto& [uuid, track] : t.tracks) EXPECT_EQ(track.name.find("(graph)"), std::string::npos) << track.name;
}

TEST(GraphLanes, TheOptionParses) {
  EXPECT_EQ(*builder::ParseGraphLanes("capture"), builder::GraphLanes::kCapture);
  EXPECT_EQ(*builder::ParseGraphLanes("cupti"), builder::GraphLanes::kCupti);
  auto bad = builder::ParseGraphLanes("stream");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--graph-lanes 'stream'"), std::string::npos);
}

}  // namespace
}  // namespace gpucap::testing
