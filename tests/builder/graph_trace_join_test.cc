// Graph-mode captures (GRAPH_TRACE records, join_graph_launches.cc): one
// span per graph launch, on its stream, tied to its cudaGraphLaunch by the
// launch flow and annotated by the ranges open at the launch, like any op.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using builder::testing::GraphTraceRecord;

void GraphRan(Scene& s, uint32_t corr, uint64_t start, uint64_t end, uint32_t graph = 4) {
  GraphTraceRecord g;
  g.start = start;
  g.end = end;
  g.correlation = corr;
  g.graph_id = graph;
  g.stream = 7;
  s.c().GraphTrace(g);
}

TEST(GraphTraceJoin, AGraphLaunchIsOneSpanOnItsStreamWithItsFlowAndStack) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  Scene::Ok(s.c().Push(tid, kT0 + 1000, "step"));
  s.GraphLaunch(500, tid, kT0 + 1100);
  Scene::Ok(s.c().Pop(tid, kT0 + 2500));
  GraphRan(s, 500, kT0 + 3000, kT0 + 9000);
  s.Launch(501, tid, kT0 + 9500, kT0 + 10000, kT0 + 11000);  // an eager kernel, same stream
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  auto graphs = t.Events("X", "cuda_graph");
  ASSERT_EQ(graphs.size(), 1u);
  const Json& g = *graphs[0];
  EXPECT_EQ(g["name"].text, "Graph 4");
  EXPECT_EQ(Nanos(g["dur"]), 6000);
  EXPECT_EQ(g["args"]["graph id"].u(), 4u);
  EXPECT_EQ(g["args"]["stream"].u(), 7u);
  EXPECT_EQ(g["args"]["device"].u(), 0u);
  EXPECT_EQ(g["args"]["correlation"].u(), 500u);
  EXPECT_EQ(g["args"]["annotation"].text, "step");
  // On the stream's track, where the same stream's kernel is.
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(g["pid"].u(), (*kernels[0])["pid"].u());
  EXPECT_EQ(g["tid"].u(), (*kernels[0])["tid"].u());
  EXPECT_EQ(Nanos((*kernels[0])["ts"]) - Nanos(g["ts"]), 7000);
  // The launch flow, as a kernel's: id = the correlation, from the call to the span.
  uint64_t flow_end = 0, flow_start = 0;
  for (const Json* f : t.Events("f", "ac2g")) {
    if (Nanos((*f)["ts"]) == Nanos(g["ts"])) flow_end = (*f)["id"].u();
  }
  for (const Json* f : t.Events("s", "ac2g")) {
    if ((*f)["tid"].u() == tid && (*f)["id"].u() == 500u) flow_start = (*f)["id"].u();
  }
  EXPECT_EQ(flow_end, 500u);
  EXPECT_EQ(flow_start, 500u);
  // The range's work on the GPU: its span on the stream covers the graph.
  auto spans = t.Named("step");
  const Json* gpu_span = nullptr;
  for (const Json* e : spans) gpu_span = (*e)["cat"].text == "gpu_user_annotation" ? e : gpu_span;
  ASSERT_NE(gpu_span, nullptr);
  EXPECT_EQ(Nanos((*gpu_span)["ts"]), Nanos(g["ts"]));
  EXPECT_EQ(Nanos((*gpu_span)["dur"]), 6000);
}

// In windows of the program's work a graph span belongs to the window of its
// launch, even when it runs after the window's range closed, in a later
// buffer (the lookahead finds it).
TEST(GraphTraceJoin, EachStepWindowHoldsTheGraphItLaunched) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().Push(tid, kT0 + 1000, "step"));
  s.GraphLaunch(500, tid, kT0 + 1100);
  Scene::Ok(s.c().Pop(tid, kT0 + 2000));
  Scene::Ok(s.c().Push(tid, kT0 + 10000, "step"));
  s.GraphLaunch(501, tid, kT0 + 10100);
  Scene::Ok(s.c().Pop(tid, kT0 + 11000));
  Scene::Ok(s.c().EndChunk());
  GraphRan(s, 500, kT0 + 3000, kT0 + 4000, 4);
  GraphRan(s, 501, kT0 + 12000, kT0 + 13000, 5);
  builder::BuildOptions o;
  o.window = "nvtx:step";
  std::vector<Trace> windows = BuildTraces(s.Path(), o);
  ASSERT_EQ(windows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ExpectImporterRules(windows[i]);
    auto graphs = windows[i].Events("X", "cuda_graph");
    ASSERT_EQ(graphs.size(), 1u) << "window " << i;
    EXPECT_EQ((*graphs[0])["args"]["correlation"].u(), 500u + i);
    EXPECT_EQ((*graphs[0])["name"].text, i == 0 ? "Graph 4" : "Graph 5");
    EXPECT_EQ(windows[i].Events("f", "ac2g").size(), 1u) << "window " << i;
  }
}

}  // namespace
}  // namespace gpucap::testing
