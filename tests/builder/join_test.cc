// The joins, end to end: synthetic capture -> Builder -> Chrome JSON, read back.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using builder::BuildOptions;
using builder::testing::ApiRecord;
using builder::testing::KernelRecord;

TEST(Join, LaunchToKernelAsKinetoWritesIt) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z6kernelPf"));
  Scene::Ok(s.c().Message(format::ThreadInfo{kPid, 1, kPid, "python3"}));
  ApiRecord a;
  a.start = kT0 + 1000;
  a.end = kT0 + 3000;
  a.correlation = 100;
  s.c().Api(a);
  s.c().ExternalCorrelation(100, 66886);
  KernelRecord k;
  k.start = kT0 + 5000;
  k.end = kT0 + 8872;
  k.correlation = 100;
  k.name_pointer = 0x1000;
  k.grid_x = 2, k.grid_y = 8, k.grid_z = 4;
  k.block_x = 64;
  k.registers_per_thread = 80;
  k.static_shared_memory = 6528;
  k.dynamic_shared_memory = 1024;
  s.c().Kernel(k);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);

  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const Json& kj = *kernels[0];
  EXPECT_EQ(kj["name"].text, "kernel(float*)");
  EXPECT_EQ(kj["pid"].u(), 0u);
  EXPECT_EQ(kj["tid"].u(), 7u);
  int64_t base = t.root["baseTimeNanoseconds"].i();
  EXPECT_EQ(Nanos(kj["ts"]), static_cast<int64_t>(kT0 + 5000) + kClockOffset - base);
  EXPECT_EQ(Nanos(kj["dur"]), 3872);
  const Json& args = kj["args"];
  EXPECT_EQ(args["External id"].u(), 66886u);
  EXPECT_EQ(args["correlation"].u(), 100u);
  EXPECT_EQ(args["registers per thread"].u(), 80u);
  EXPECT_EQ(args["shared memory"].u(), 6528u + 1024u);  // Kineto's sum
  EXPECT_EQ(args["static shared memory"].u(), 6528u);
  EXPECT_EQ(args["dynamic shared memory"].u(), 1024u);
  EXPECT_EQ(args["blocks per SM"].text, "0.484848");
  EXPECT_EQ(args["warps per SM"].text, "0.969697");
  EXPECT_EQ(args["est. achieved occupancy %"].i(), 2);
  ASSERT_EQ(args["grid"].items.size(), 3u);
  EXPECT_EQ(args["grid"].items[1].i(), 8);
  EXPECT_EQ(args["block"].items[0].i(), 64);

  auto runtime = t.Events("X", "cuda_runtime");
  ASSERT_EQ(runtime.size(), 1u);
  EXPECT_EQ((*runtime[0])["name"].text, "cudaLaunchKernel");
  EXPECT_EQ((*runtime[0])["pid"].u(), kPid);
  EXPECT_EQ((*runtime[0])["tid"].u(), kPid);
  EXPECT_EQ((*runtime[0])["args"]["cbid"].u(), 211u);
  EXPECT_EQ((*runtime[0])["args"]["External id"].u(), 66886u);
  EXPECT_EQ(t.ThreadName(kPid, kPid), "thread 4242 (python3)");
  EXPECT_EQ(t.ThreadName(0, 7), "stream 7");

  auto s_flows = t.Events("s", "ac2g");
  auto f_flows = t.Events("f", "ac2g");
  ASSERT_EQ(s_flows.size(), 1u);
  ASSERT_EQ(f_flows.size(), 1u);
  EXPECT_EQ((*s_flows[0])["id"].u(), 100u);
  EXPECT_EQ((*f_flows[0])["id"].u(), 100u);
  EXPECT_EQ(Nanos((*s_flows[0])["ts"]), Nanos((*runtime[0])["ts"]));
  EXPECT_EQ(Nanos((*f_flows[0])["ts"]), Nanos(kj["ts"]));
  EXPECT_EQ((*f_flows[0])["tid"].u(), 7u);
  EXPECT_EQ(t.root["cupti_version"].u(), 130001u);
}


// Two threads, each with nested ranges; thread B's ranges overlap thread A's
// in time without nesting with them. Each launch takes its own thread's
// stack, and each stream shows the spans as gpu_user_annotation.
TEST(Join, NestedAndOverlappingRangesOnTwoThreads) {
  Scene s;
  const uint32_t a = 100, b = 200;
  Scene::Ok(s.c().String(0x1000, "k"));
  Scene::Ok(s.c().Push(a, kT0 + 1000, "step"));
  Scene::Ok(s.c().Push(a, kT0 + 2000, "forward"));
  Scene::Ok(s.c().Push(b, kT0 + 2500, "loader"));
  s.Launch(1, a, kT0 + 3000, kT0 + 20000, kT0 + 21000, 0x1000, 7);  // step > forward
  s.Launch(2, b, kT0 + 3500, kT0 + 22000, kT0 + 23000, 0x1000, 8);  // loader
  Scene::Ok(s.c().Pop(a, kT0 + 6000));                                  // forward ends
  s.Launch(3, a, kT0 + 7000, kT0 + 24000, kT0 + 25000, 0x1000, 7);  // step
  Scene::Ok(s.c().Pop(b, kT0 + 8000));
  Scene::Ok(s.c().Pop(a, kT0 + 9000));
  s.Launch(4, a, kT0 + 10000, kT0 + 26000, kT0 + 27000, 0x1000, 7);  // nothing open
  // Every range's GPU-side span (--gpu-ranges all); the default, Kineto's
  // rule, draws only the range each launch ran in (torch_view_test.cc).
  BuildOptions all;
  all.join.gpu_ranges = builder::GpuRanges::kAll;
  Trace t = BuildOne(s.Path(), all);
  ExpectImporterRules(t);

  std::map<uint64_t, const Json*> by_corr;
  for (const Json* k : t.Events("X", "kernel")) by_corr[(*k)["args"]["correlation"].u()] = k;
  ASSERT_EQ(by_corr.size(), 4u);
  EXPECT_EQ((*by_corr[1])["args"]["annotation"].text, "forward");
  ASSERT_EQ((*by_corr[1])["args"]["annotation stack"].items.size(), 2u);
  EXPECT_EQ((*by_corr[1])["args"]["annotation stack"].items[0].text, "step");
  EXPECT_EQ((*by_corr[2])["args"]["annotation"].text, "loader");
  EXPECT_EQ((*by_corr[2])["args"]["annotation stack"].items.size(), 1u);
  EXPECT_EQ((*by_corr[3])["args"]["annotation"].text, "step");
  EXPECT_FALSE((*by_corr[4])["args"].has("annotation"));
  EXPECT_EQ(t.Count("annotated gpu ops"), 3);

  // CPU side: the ranges as user_annotation on their threads.
  auto cpu = t.Events("X", "user_annotation");
  ASSERT_EQ(cpu.size(), 3u);
  for (const Json* r : cpu) {
    if ((*r)["name"].text == "loader") EXPECT_EQ((*r)["tid"].u(), b);
    else EXPECT_EQ((*r)["tid"].u(), a);
  }
  // GPU side: step spans kernels 1 and 3 on stream 7, forward kernel 1,
  // loader kernel 2 on stream 8.
  std::map<std::pair<std::string, uint64_t>, const Json*> spans;
  for (const Json* g : t.Events("X", "gpu_user_annotation")) spans[{(*g)["name"].text, (*g)["tid"].u()}] = g;
  ASSERT_EQ(spans.size(), 3u);
  int64_t base = t.root["baseTimeNanoseconds"].i();
  auto rel = [&](uint64_t cupti) { return static_cast<int64_t>(cupti) + kClockOffset - base; };
  const Json& step = *spans[{"step", 7}];
  EXPECT_EQ(Nanos(step["ts"]), rel(kT0 + 20000));
  EXPECT_EQ(Nanos(step["ts"]) + Nanos(step["dur"]), rel(kT0 + 25000));
  const Json& fwd = *spans[{"forward", 7}];
  EXPECT_EQ(Nanos(fwd["ts"]), rel(kT0 + 20000));
  EXPECT_EQ(Nanos(fwd["dur"]), 1000);
  ASSERT_TRUE(spans.count({"loader", 8}));
  EXPECT_EQ(Nanos((*spans[{"loader", 8}])["dur"]), 1000);
}

// The join formats a kernel's launch shape and annotation stack once per
// distinct (shape, stack names) and repeats it: range instances with the same
// names share it, and nothing that differs may. Six launches under two
// "layer" > "mm" instances, one "layer" > "add", with shapes that differ in one
// field each.
TEST(Join, RepeatedShapesAndStackNamesStayPerKernel) {
  Scene s;
  const uint32_t tid = 100;
  Scene::Ok(s.c().String(0x1000, "k"));
  struct Launch {
    uint32_t correlation;
    int32_t grid_x;
    int32_t dynamic_shared;
    const char* inner;  // innermost range name
  };
  std::vector<Launch> launches = {
      {1, 4, 0, "mm"}, {2, 4, 0, "mm"}, {3, 4, 1024, "mm"}, {4, 8, 0, "mm"}, {5, 4, 0, "add"}, {6, 4, 0, "mm"},
  };
  uint64_t t = kT0 + 1000;
  Scene::Ok(s.c().Push(tid, t, "step"));
  for (const Launch& l : launches) {
    t += 1000;
    Scene::Ok(s.c().Push(tid, t, "layer"));
    Scene::Ok(s.c().Push(tid, t + 100, l.inner));
    ApiRecord a;
    a.start = t + 200;
    a.end = t + 400;
    a.tid = tid;
    a.correlation = l.correlation;
    s.c().Api(a);
    KernelRecord k;
    k.start = kT0 + 100000 + l.correlation * 1000;
    k.end = k.start + 500;
    k.correlation = l.correlation;
    k.name_pointer = 0x1000;
    k.grid_x = l.grid_x;
    k.block_x = 128;
    k.registers_per_thread = 64;
    k.dynamic_shared_memory = l.dynamic_shared;
    s.c().Kernel(k);
    Scene::Ok(s.c().Pop(tid, t + 500));
    Scene::Ok(s.c().Pop(tid, t + 600));
  }
  Scene::Ok(s.c().Pop(tid, t + 1000));
  Trace trace = BuildOne(s.Path());
  ExpectImporterRules(trace);

  std::map<uint64_t, const Json*> by_corr;
  for (const Json* k : trace.Events("X", "kernel")) by_corr[(*k)["args"]["correlation"].u()] = &(*k)["args"];
  ASSERT_EQ(by_corr.size(), launches.size());
  for (const Launch& l : launches) {
    SCOPED_TRACE(l.correlation);
    const Json& args = *by_corr[l.correlation];
    EXPECT_EQ(args["grid"].items[0].i(), l.grid_x);
    EXPECT_EQ(args["shared memory"].i(), l.dynamic_shared);
    EXPECT_EQ(args["annotation"].text, l.inner);
    ASSERT_EQ(args["annotation stack"].items.size(), 3u);
    EXPECT_EQ(args["annotation stack"].items[0].text, "step");
    EXPECT_EQ(args["annotation stack"].items[1].text, "layer");
    EXPECT_EQ(args["annotation stack"].items[2].text, l.inner);
  }
  // Occupancy follows the shape: 4 and 8 blocks of 128 threads on 132 SMs.
  EXPECT_EQ((*by_corr[1])["blocks per SM"].text, "0.030303");
  EXPECT_EQ((*by_corr[4])["blocks per SM"].text, "0.0606061");
  EXPECT_EQ((*by_corr[1])["warps per SM"].text, (*by_corr[6])["warps per SM"].text);
}

// More distinct launch shapes in one window than the join keeps runs for
// (65536): it starts over and every kernel still carries its own shape,
// those that repeat after the restart included.
TEST(Join, MoreDistinctShapesThanRunsKeptStayPerKernel) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "k"));
  const uint32_t kDistinct = 70000;
  for (uint32_t i = 0; i < kDistinct + 1000; ++i) {
    uint32_t correlation = i + 1;
    ApiRecord a;
    a.start = kT0 + 1000 + uint64_t{i} * 100;
    a.end = a.start + 50;
    a.tid = kPid;
    a.correlation = correlation;
    s.c().Api(a);
    KernelRecord k;
    k.start = kT0 + 1000 + uint64_t{i} * 100 + 60;
    k.end = k.start + 30;
    k.correlation = correlation;
    k.name_pointer = 0x1000;
    k.grid_x = static_cast<int32_t>(1 + i % kDistinct);  // the last 1000 repeat the first
    k.block_x = 32;
    s.c().Kernel(k);
  }
  Trace trace = BuildOne(s.Path());
  size_t checked = 0;
  for (const Json* k : trace.Events("X", "kernel")) {
    const Json& args = (*k)["args"];
    uint64_t correlation = args["correlation"].u();
    ASSERT_EQ(args["grid"].items[0].i(), static_cast<int64_t>(1 + (correlation - 1) % kDistinct)) << correlation;
    checked++;
  }
  EXPECT_EQ(checked, kDistinct + 1000);
}

// Start/end ranges are matched by id across threads and may overlap without
// nesting: they get a track of their own, with a sibling lane for overlaps.
TEST(Join, StartEndRangesAcrossThreadsGetLanes) {
  Scene s;
  Scene::Ok(s.c().StartRange(1, 10, kT0 + 1000, "io"));
  Scene::Ok(s.c().StartRange(2, 11, kT0 + 2000, "prefetch"));
  Scene::Ok(s.c().EndRange(1, 12, kT0 + 3000));  // ended by another thread
  Scene::Ok(s.c().EndRange(2, 10, kT0 + 4000));
  s.Launch(1, 10, kT0 + 1500, kT0 + 5000, kT0 + 6000);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  std::vector<const Json*> io, prefetch;
  for (const Json* r : t.Events("X", "user_annotation")) ((*r)["name"].text == "io" ? io : prefetch).push_back(r);
  ASSERT_EQ(io.size(), 1u);
  ASSERT_EQ(prefetch.size(), 1u);
  EXPECT_EQ(Nanos((*io[0])["dur"]), 2000);
  EXPECT_NE((*io[0])["tid"].u(), (*prefetch[0])["tid"].u()) << "partial overlap must not share a lane";
  EXPECT_EQ(t.Count("overflow lanes"), 1);
  // The launch on thread 10 happened inside "io", which thread 10 started.
  auto k = t.Events("X", "kernel");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ((*k[0])["args"]["annotation"].text, "io");
}

// A graph captured under ranges, instantiated (nodes cloned) and replayed
// twice under another range: each replayed kernel carries the capture-time
// annotation after the launch-time one, one flow per kernel leaves the
// graph launch, and spans of capture-time ranges repeat per replay.
TEST(Join, GraphReplayThroughClonesCarriesCaptureTimeAnnotations) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  Scene::Ok(s.c().Push(tid, kT0 + 100, "capture"));
  Scene::Ok(s.c().Push(tid, kT0 + 200, "layer1"));
  format::GraphEvent n;
  n.kind = format::GraphEventKind::kNodeCreated;
  n.graph_id = 1;
  n.node_id = 11;
  n.node_type = 0;
  n.os_tid = tid;
  n.timestamp_ns = kT0 + 300;
  n.function_name = "_Z4gemmv";
  Scene::Ok(s.c().Message(n));
  Scene::Ok(s.c().Pop(tid, kT0 + 400));
  Scene::Ok(s.c().Push(tid, kT0 + 500, "layer2"));
  n.node_id = 12;
  n.timestamp_ns = kT0 + 600;
  Scene::Ok(s.c().Message(n));
  Scene::Ok(s.c().Pop(tid, kT0 + 700));
  Scene::Ok(s.c().Pop(tid, kT0 + 800));
  format::GraphEvent dep;
  dep.kind = format::GraphEventKind::kDependencyAdded;
  dep.node_id = 11;
  dep.peer_node_id = 12;
  Scene::Ok(s.c().Message(dep));
  // Instantiate: clones 111 <- 11, 112 <- 12.
  for (auto [clone, orig] : {std::pair{111, 11}, std::pair{112, 12}}) {
    format::GraphEvent c;
    c.kind = format::GraphEventKind::kNodeCloned;
    c.node_id = clone;
    c.original_node_id = orig;
    Scene::Ok(s.c().Message(c));
  }
  Scene::Ok(s.c().Push(tid, kT0 + 10000, "ProfilerStep#1"));
  for (int replay = 0; replay < 2; ++replay) {
    uint32_t corr = 500 + replay;
    uint64_t at = kT0 + 11000 + replay * 10000;
    s.GraphLaunch(corr, tid, at);
    for (int i = 0; i < 2; ++i) {
      KernelRecord k;
      k.start = at + 3000 + i * 2000;
      k.end = k.start + 1500;
      k.correlation = corr;
      k.name_pointer = 0x1000;
      k.graph_node_id = 111 + i;
      k.graph_id = 2;
      s.c().Kernel(k);
    }
  }
  Scene::Ok(s.c().Pop(tid, kT0 + 40000));
  BuildOptions o;
  o.join.graph_dependencies = true;
  o.join.gpu_ranges = builder::GpuRanges::kAll;  // every range's span, per replay
  Trace t = BuildOne(s.Path(), o);
  ExpectImporterRules(t);

  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 4u);
  for (const Json* k : kernels) {
    const Json& args = (*k)["args"];
    uint64_t node = args["graph node"].u();
    EXPECT_EQ(args["capture node"].u(), node - 100);
    EXPECT_EQ(args["annotation"].text, node == 111 ? "layer1" : "layer2");
    const auto& stack = args["annotation stack"].items;
    ASSERT_EQ(stack.size(), 3u);
    EXPECT_EQ(stack[0].text, "ProfilerStep#1");
    EXPECT_EQ(stack[1].text, "capture");
    EXPECT_EQ((*k)["name"].text, "gemm()");
  }
  EXPECT_EQ(t.Count("graph ops"), 4);
  EXPECT_EQ(t.Count("graph ops without capture-time node"), 0);
  // Two launches; with dependency arrows drawn each flows to its root (node
  // 11) only, node 12 is reached by the arrow.
  auto starts = t.Events("s", "ac2g");
  ASSERT_EQ(starts.size(), 2u);
  std::set<uint64_t> ids;
  for (const Json* f : starts) ids.insert((*f)["id"].u());
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_TRUE(ids.count(500) && !ids.count(500 + (1ull << 32)));
  // layer1 and layer2 spans per replay on the stream; ProfilerStep#1 once.
  std::map<std::string, int> spans;
  for (const Json* g : t.Events("X", "gpu_user_annotation")) spans[(*g)["name"].text]++;
  EXPECT_EQ(spans["layer1"], 2);
  EXPECT_EQ(spans["layer2"], 2);
  EXPECT_EQ(spans["capture"], 2);
  EXPECT_EQ(spans["ProfilerStep#1"], 1);
  // Dependency arrows gemm(node 11) -> gemm(node 12), within each replay.
  auto dep_starts = t.Events("s", "graph_dependency");
  ASSERT_EQ(dep_starts.size(), 2u);
}

// Dependencies collapse through nodes that draw nothing; host functions on
// the way are named on the op that waits for them.
TEST(Join, GraphDependenciesCollapseThroughHostAndEventNodes) {
  Scene s;
  auto node = [&](uint64_t id, uint32_t type, const char* fn) {
    format::GraphEvent n;
    n.kind = format::GraphEventKind::kNodeCreated;
    n.graph_id = 1;
    n.node_id = id;
    n.node_type = type;
    n.function_name = fn;
    n.timestamp_ns = kT0 + id;
    Scene::Ok(s.c().Message(n));
  };
  auto edge = [&](uint64_t from, uint64_t to) {
    format::GraphEvent d;
    d.kind = format::GraphEventKind::kDependencyAdded;
    d.node_id = from;
    d.peer_node_id = to;
    Scene::Ok(s.c().Message(d));
  };
  node(1, 0, "_Z1av");         // kernel
  node(2, 7, "");              // event record
  node(3, 3, "hostCallback");  // host
  node(4, 5, "");              // empty
  node(5, 0, "_Z1bv");         // kernel
  edge(1, 2);
  edge(2, 3);
  edge(3, 4);
  edge(4, 5);
  ApiRecord a;
  a.cbid = 311;
  a.start = kT0 + 1000;
  a.end = kT0 + 2000;
  a.correlation = 9;
  s.c().Api(a);
  for (uint64_t id : {1, 5}) {
    KernelRecord k;
    k.start = kT0 + 3000 + id * 1000;
    k.end = k.start + 500;
    k.correlation = 9;
    k.graph_node_id = id;  // not cloned: the node itself
    s.c().Kernel(k);
  }
  BuildOptions o;
  o.join.graph_dependencies = true;
  Trace t = BuildOne(s.Path(), o);
  ExpectImporterRules(t);
  auto deps = t.Events("f", "graph_dependency");
  ASSERT_EQ(deps.size(), 1u);
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  const Json* second = (*kernels[0])["args"]["graph node"].u() == 5 ? kernels[0] : kernels[1];
  EXPECT_EQ((*deps[0])["ts"].text, (*second)["ts"].text);
  ASSERT_EQ((*second)["args"]["after host functions"].items.size(), 1u);
  EXPECT_EQ((*second)["args"]["after host functions"].items[0].text, "hostCallback");
  // Unrequested, no arrows.
  Trace plain = BuildOne(s.Path());
  EXPECT_TRUE(plain.Events("s", "graph_dependency").empty());
}

// The kernel's launch record sits in an earlier chunk and another window:
// the kernel keeps what the launch tells (annotation, external id) but no
// flow is drawn, in either window.
TEST(Join, LaunchInAnotherWindowThanItsKernel) {
  Scene s;
  Scene::Ok(s.c().Push(5, kT0 + 100, "outer"));
  ApiRecord a;
  a.start = kT0 + 1000;
  a.end = kT0 + 2000;
  a.tid = 5;
  a.correlation = 42;
  s.c().Api(a);
  s.c().ExternalCorrelation(42, 7);
  Scene::Ok(s.c().EndChunk());
  Scene::Ok(s.c().Pop(5, kT0 + 3000));
  KernelRecord k;
  k.start = kT0 + 1'000'000;
  k.end = kT0 + 1'001'000;
  k.correlation = 42;
  s.c().Kernel(k);
  BuildOptions o;
  o.window = "every:500us";
  std::vector<Trace> ts = BuildTraces(s.Path(), o);
  ASSERT_EQ(ts.size(), 3u);
  for (const Trace& t : ts) ExpectImporterRules(t);
  ASSERT_EQ(ts[0].Events("X", "cuda_runtime").size(), 1u);
  EXPECT_TRUE(ts[0].Events("X", "kernel").empty());
  EXPECT_TRUE(ts[0].Events("s").empty());
  ASSERT_EQ(ts[2].Events("X", "kernel").size(), 1u);
  const Json& kernel = *ts[2].Events("X", "kernel")[0];
  EXPECT_EQ(kernel["args"]["annotation"].text, "outer");
  EXPECT_EQ(kernel["args"]["External id"].u(), 7u);
  EXPECT_TRUE(ts[2].Events("f").empty());
  EXPECT_EQ(ts[2].Count("gpu ops launched in another window"), 1);
  EXPECT_EQ(ts[2].Count("gpu ops without launch record"), 0);
}

// No launch record at all (dropped): the kernel is drawn, unlinked, counted.
TEST(Join, MissingLaunchRecord) {
  Scene s;
  KernelRecord k;
  k.start = kT0 + 5000;
  k.end = kT0 + 6000;
  k.correlation = 99;
  s.c().Kernel(k);
  s.Launch(100, 1, kT0 + 1000, kT0 + 7000, kT0 + 8000);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  EXPECT_EQ(t.Events("X", "kernel").size(), 2u);
  EXPECT_EQ(t.Events("f", "ac2g").size(), 1u);
  EXPECT_EQ(t.Count("gpu ops without launch record"), 1);
  EXPECT_EQ(t.Count("gpu ops"), 2);
}

// Records are not ordered within or across buffers: a kernel written in an
// earlier chunk than its launch, timestamps decreasing in a buffer.
TEST(Join, RecordsOutOfOrderAcrossBuffers) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "late"));
  for (int i = 9; i >= 0; --i) {
    KernelRecord k;
    k.start = kT0 + 100000 + i * 1000;
    k.end = k.start + 500;
    k.correlation = 1 + i;
    k.name_pointer = 0x1000;
    s.c().Kernel(k);
  }
  Scene::Ok(s.c().EndChunk());
  for (int i = 0; i < 10; ++i) {
    ApiRecord a;
    a.start = kT0 + 1000 + i * 100;
    a.end = a.start + 50;
    a.correlation = 1 + i;
    s.c().Api(a);
  }
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  EXPECT_EQ(t.Events("f", "ac2g").size(), 10u);
  EXPECT_EQ(t.Count("gpu ops without launch record"), 0);
  // Kernels are written in time order on their stream.
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 10u);
  for (size_t i = 1; i < kernels.size(); ++i) EXPECT_LT(Nanos((*kernels[i - 1])["ts"]), Nanos((*kernels[i])["ts"]));
}

// CUPTI writes 0 timestamps when its device buffer ran short: such ops
// cannot be placed; they are counted in the window of their launch.
TEST(Join, ZeroTimestampsAreCountedNotDrawn) {
  Scene s;
  s.Launch(1, 1, kT0 + 1000, 0, 0);
  s.Launch(2, 1, kT0 + 2000, kT0 + 5000, kT0 + 6000);
  KernelRecord cut;  // started, end lost: drawn with no length
  cut.start = kT0 + 7000;
  cut.end = 0;
  cut.correlation = 3;
  s.c().Kernel(cut);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  EXPECT_EQ(t.Events("X", "kernel").size(), 2u);
  EXPECT_EQ(t.Count("gpu ops without timestamps"), 1);
  EXPECT_EQ(t.Count("gpu ops without end"), 1);
}

// A record kind gpucap has no layout for is stepped over with the size the
// recorder stored, counted and named; everything around it still decodes.
TEST(Join, UnknownRecordKindIsSkippedAndCounted) {
  Scene s;
  s.Launch(1, 1, kT0 + 1000, kT0 + 5000, kT0 + 6000);
  s.c().Raw(99, 48, kT0 + 5500);
  s.c().Raw(99, 48);
  s.Launch(2, 1, kT0 + 2000, kT0 + 7000, kT0 + 8000);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  EXPECT_EQ(t.Events("X", "kernel").size(), 2u);
  EXPECT_EQ(t.Count("records skipped (no layout)"), 2);
  bool named = false;
  for (const Json& w : t.root["gpucap"]["warnings"].items) {
    if (w.text.find("kind 99") != std::string::npos && w.text.find("130001") != std::string::npos) named = true;
  }
  EXPECT_TRUE(named) << "the warning names the kind and the CUPTI version";
}

TEST(Join, MemcpyMemsetSyncAndOverheadAsKineto) {
  Scene s;
  ApiRecord a;
  a.cbid = 41;  // cudaMemcpyAsync
  a.start = kT0 + 1000;
  a.end = kT0 + 2000;
  a.correlation = 1;
  s.c().Api(a);
  builder::testing::MemcpyRecord m;
  m.bytes = 65536;
  m.start = kT0 + 10000;
  m.end = kT0 + 10896;
  m.correlation = 1;
  s.c().Memcpy(m);
  builder::testing::MemsetRecord ms;
  ms.bytes = 4096;
  ms.start = kT0 + 12000;
  ms.end = kT0 + 12000;  // zero length: bandwidth not computable
  ms.correlation = 2;
  s.c().Memset(ms);
  builder::testing::MemcpyRecord p2p;
  p2p.peer = true;
  p2p.copy_kind = 10;
  p2p.bytes = 1 << 20;
  p2p.start = kT0 + 13000;
  p2p.end = kT0 + 14000;
  p2p.src_device = 0;
  p2p.dst_device = 1;
  p2p.correlation = 3;
  s.c().Memcpy(p2p);
  // cudaEventRecord on stream 9, then stream 7 waits on it.
  builder::testing::CudaEventRecord ev;
  ev.correlation = 4;
  ev.stream = 9;
  ev.event_id = 5;
  ev.event_sync_id = 77;
  ev.device_timestamp = kT0 + 15000;
  s.c().CudaEvent(ev);
  builder::testing::SyncRecord sync;
  sync.type = 2;  // stream wait event
  sync.start = kT0 + 16000;
  sync.end = kT0 + 16100;
  sync.correlation = 6;
  sync.stream = 7;
  sync.cuda_event_id = 5;
  sync.event_sync_id = 77;
  s.c().Sync(sync);
  builder::testing::SyncRecord ctx;
  ctx.type = 4;  // context sync: no stream
  ctx.start = kT0 + 17000;
  ctx.end = kT0 + 18000;
  ctx.stream = 0xffffffff;
  ctx.correlation = 7;
  s.c().Sync(ctx);
  builder::testing::OverheadRecord o;
  o.start = kT0 + 19000;
  o.end = kT0 + 20000;
  s.c().Overhead(o);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);

  auto copies = t.Named("Memcpy DtoD (Device -> Device)");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ((*copies[0])["cat"].text, "gpu_memcpy");
  EXPECT_EQ((*copies[0])["args"]["bytes"].u(), 65536u);
  EXPECT_EQ((*copies[0])["args"]["memory bandwidth (GB/s)"].text, "73.14285714285714");
  auto sets = t.Named("Memset (Device)");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ((*sets[0])["cat"].text, "gpu_memset");
  EXPECT_EQ((*sets[0])["args"]["memory bandwidth (GB/s)"].text, "N/A");
  auto peer = t.Named("Memcpy PtoP (Device -> Device)");
  ASSERT_EQ(peer.size(), 1u);
  EXPECT_EQ((*peer[0])["args"]["toDevice"].u(), 1u);
  EXPECT_TRUE((*peer[0])["args"].has("fromContext"));

  auto waits = t.Named("Stream Wait Event");
  ASSERT_EQ(waits.size(), 1u);
  const Json& w = (*waits[0])["args"];
  EXPECT_EQ((*waits[0])["cat"].text, "cuda_sync");
  EXPECT_EQ(w["cuda_sync_kind"].text, "Stream Wait Event");
  EXPECT_EQ(w["wait_on_stream"].i(), 9);
  EXPECT_EQ(w["wait_on_cuda_event_id"].u(), 5u);
  EXPECT_EQ(w["wait_on_cuda_event_record_corr_id"].i(), 4);
  auto ctx_sync = t.Named("Context Sync");
  ASSERT_EQ(ctx_sync.size(), 1u);
  EXPECT_EQ((*ctx_sync[0])["args"]["stream"].i(), -1);
  EXPECT_EQ(t.ThreadName(0, (*ctx_sync[0])["tid"].u()), "context sync");
  auto overhead = t.Events("X", "overhead");
  ASSERT_EQ(overhead.size(), 1u);
  EXPECT_EQ((*overhead[0])["name"].text, "Buffer Flush");
  // A process of its own, the same pid to readers of int32 and uint32 pids
  // (Kineto's -1 is 0 to Perfetto, on top of GPU 0).
  EXPECT_EQ((*overhead[0])["pid"].u(), 0x7fffffffu);
  auto events = t.Events("X", "cuda_event");
  ASSERT_EQ(events.size(), 1u);
  // As Kineto draws a CUDA_EVENT record with a device timestamp: cudaEvent,
  // 1 ns at it, with Kineto's keys.
  EXPECT_EQ((*events[0])["name"].text, "cudaEvent");
  EXPECT_EQ(Nanos((*events[0])["dur"]), 1);
  EXPECT_EQ((*events[0])["tid"].u(), 9u);
  EXPECT_EQ((*events[0])["args"]["event_id"].u(), 5u);
  EXPECT_EQ((*events[0])["args"]["stream"].u(), 9u);
  EXPECT_EQ((*events[0])["args"]["correlation"].u(), 4u);
  EXPECT_EQ((*events[0])["args"]["device"].u(), 0u);
  EXPECT_EQ((*events[0])["args"]["context"].u(), 1u);
}

// Names from the recording process are arbitrary bytes: the trace stays
// valid JSON (ParseJson is strict) and readable.
TEST(Join, HostileNamesAreEscaped) {
  Scene s;
  std::string bad = "k\"\\\n\t\x01\x7f<\xff\xfe>\xe2\x82";
  Scene::Ok(s.c().String(0x1000, bad));
  Scene::Ok(s.c().Push(3, kT0 + 10, std::string("range\x02\xc3\xa9\0", 9)));  // NUL too
  s.Launch(1, 3, kT0 + 100, kT0 + 1000, kT0 + 2000);
  Scene::Ok(s.c().Pop(3, kT0 + 3000));
  Scene::Ok(s.c().Message(format::ThreadInfo{kPid, 3, 3, "w\x80orker\""}));
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  auto k = t.Events("X", "kernel");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ((*k[0])["name"].text, "k\"\\\n\t\x01\x7f<\xef\xbf\xbd\xef\xbf\xbd>\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ((*k[0])["args"]["annotation"].text, std::string("range\x02\xc3\xa9\0", 9));
}

// The session's rank reaches the top of the trace, before the events.
TEST(Join, DistributedInfoNearTheTop) {
  format::SessionInfo session = builder::testing::DefaultSession();
  session.rank = 3;
  session.world_size = 8;
  session.local_rank = 1;
  Scene s("capture.gpucap", session);
  s.Launch(1, 1, kT0 + 1000, kT0 + 5000, kT0 + 6000);
  Trace t = BuildOne(s.Path());
  EXPECT_EQ(t.root["distributedInfo"]["rank"].i(), 3);
  EXPECT_EQ(t.root["distributedInfo"]["world_size"].i(), 8);
  size_t at = t.text.find("\"distributedInfo\"");
  EXPECT_LT(at, 200u);
  EXPECT_LT(at, t.text.find("\"traceEvents\""));
  // Without a rank there is no distributedInfo.
  Scene plain;
  plain.Launch(1, 1, kT0 + 1000, kT0 + 5000, kT0 + 6000);
  EXPECT_FALSE(BuildOne(plain.Path()).root.has("distributedInfo"));
}

// Counters the recorder sampled (NVML) become "C" events on the GPU.
TEST(Join, CountersBecomeCounterEvents) {
  Scene s;
  Scene::Ok(s.c().Message(format::CounterDef{1, "power", "W", 0}));
  Scene::Ok(s.c().Message(format::CounterSample{1, kT0 + 1000, 412.5}));
  Scene::Ok(s.c().Message(format::CounterSample{1, kT0 + 2000, 415.0}));
  s.Launch(1, 1, kT0 + 1000, kT0 + 5000, kT0 + 6000);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  auto c = t.Events("C");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ((*c[0])["name"].text, "power (W)");
  EXPECT_EQ((*c[0])["pid"].u(), 0u);
  EXPECT_EQ((*c[0])["args"]["value"].number, 412.5);
}

// Blobs the application attached to an op (by correlation, external id or
// graph node) become args of that op; names from the application are
// escaped like any string.
TEST(Join, MetadataBlobsBecomeArgsOfTheirOps) {
  Scene s;
  auto blob = [&](format::MetadataKey kind, uint64_t key, std::string name, std::string data) {
    format::MetadataBlob b;
    b.key_kind = kind;
    b.key = key;
    b.name = std::move(name);
    b.content_type = "application/json";
    b.data = std::move(data);
    Scene::Ok(s.c().Message(b));
  };
  blob(format::MetadataKey::kCorrelationId, 1, "Collective name", "allreduce");
  blob(format::MetadataKey::kExternalId, 900, "In msg nelems", "1048576");
  blob(format::MetadataKey::kGraphNode, 5, "layer \"q\"", "{\"dim\": 4}");
  s.Launch(1, 1, kT0 + 100, kT0 + 1000, kT0 + 2000);
  s.c().ExternalCorrelation(1, 900);
  format::GraphEvent n;
  n.kind = format::GraphEventKind::kNodeCreated;
  n.node_id = 5;
  Scene::Ok(s.c().Message(n));
  format::GraphEvent c;
  c.kind = format::GraphEventKind::kNodeCloned;
  c.node_id = 50;
  c.original_node_id = 5;
  Scene::Ok(s.c().Message(c));
  KernelRecord k;
  k.start = kT0 + 3000;
  k.end = kT0 + 4000;
  k.correlation = 2;
  k.graph_node_id = 50;
  s.c().Kernel(k);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  std::map<uint64_t, const Json*> by_corr;
  for (const Json* e : t.Events("X", "kernel")) by_corr[(*e)["args"]["correlation"].u()] = e;
  ASSERT_EQ(by_corr.size(), 2u);
  EXPECT_EQ((*by_corr[1])["args"]["Collective name"].text, "allreduce");
  EXPECT_EQ((*by_corr[1])["args"]["In msg nelems"].text, "1048576");
  EXPECT_EQ((*by_corr[2])["args"]["layer \"q\""].text, "{\"dim\": 4}");
  EXPECT_FALSE((*by_corr[2])["args"].has("Collective name"));
}

// NVTX that reached the capture as CUPTI MARKER records: start/end pairs
// by id become ranges on their thread, instants become instants.
TEST(Join, CuptiMarkersBecomeRangesAndInstants) {
  Scene s;
  Scene::Ok(s.c().String(0x10, "data loading"));
  Scene::Ok(s.c().String(0x20, "checkpoint"));
  Scene::Ok(s.c().String(0x30, "my domain"));
  s.c().Marker(2, kT0 + 1000, 7, 9, 0x10, 0x30);
  s.c().Marker(1, kT0 + 1500, 8, 9, 0x20);
  s.Launch(1, 9, kT0 + 1200, kT0 + 5000, kT0 + 6000);
  s.c().Marker(4, kT0 + 3000, 7, 9, 0);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  auto ranges = t.Events("X", "user_annotation");
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ((*ranges[0])["name"].text, "data loading");
  EXPECT_EQ(Nanos((*ranges[0])["dur"]), 2000);
  EXPECT_EQ((*ranges[0])["tid"].u(), 9u);
  EXPECT_EQ((*ranges[0])["args"]["domain"].text, "my domain");
  auto instants = t.Events("i", "cpu_instant_event");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ((*instants[0])["name"].text, "checkpoint");
}

// A capture cut short (the recorder was killed): whatever frames survive
// build into a valid trace that says what was lost.
TEST(Join, ACutCaptureStillBuildsAndSaysWhatWasLost) {
  Scene s;
  for (int chunk = 0; chunk < 6; ++chunk) {
    Scene::Ok(s.c().Push(1, kT0 + chunk * 100000, "step"));
    for (int i = 0; i < 200; ++i) {
      uint32_t corr = chunk * 1000 + i + 1;
      s.Launch(corr, 1, kT0 + chunk * 100000 + i * 100, kT0 + chunk * 100000 + 50000 + i * 100,
               kT0 + chunk * 100000 + 50050 + i * 100);
    }
    Scene::Ok(s.c().Pop(1, kT0 + chunk * 100000 + 90000));
    Scene::Ok(s.c().EndChunk());
  }
  std::string path = s.Path();
  std::string bytes = ReadFile(path);
  for (size_t keep : {bytes.size() * 3 / 5, bytes.size() / 3, size_t{200}}) {
    WriteFile(path, bytes.substr(0, keep));
    Trace t = BuildOne(path);
    ExpectImporterRules(t);
    EXPECT_EQ(t.Count("clean shutdown"), 0);
    EXPECT_GT(t.Count("bytes lost at the tail"), 0);
    EXPECT_FALSE(t.root["gpucap"]["warnings"].items.empty());
    if (keep > bytes.size() / 2) {
      EXPECT_GT(t.Events("X", "kernel").size(), 200u);
    }
  }
}

}  // namespace
}  // namespace gpucap::testing
