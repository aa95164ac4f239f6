// The join's annotation and flow rules, each on a synthetic capture small
// enough that the expected trace is written by hand from the rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gpucap/format/recording_state.h"
#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using builder::BuildOptions;
using builder::testing::KernelRecord;

std::vector<std::string> StackOf(const Json& op) {
  std::vector<std::string> out;
  for (const Json& j : op["args"]["annotation stack"].items) out.push_back(j.text);
  return out;
}

void NodeCreated(Scene& s, uint64_t node, uint32_t tid, uint64_t ts) {
  format::GraphEvent n;
  n.kind = format::GraphEventKind::kNodeCreated;
  n.graph_id = 1;
  n.node_id = node;
  n.os_tid = tid;
  n.timestamp_ns = ts;
  n.function_name = "_Z4gemmv";
  Scene::Ok(s.c().Message(n));
}

void GraphKernel(Scene& s, uint32_t corr, uint64_t node, uint64_t start) {
  KernelRecord k;
  k.start = start;
  k.end = start + 500;
  k.correlation = corr;
  k.name_pointer = 0x1000;
  k.graph_node_id = node;
  k.graph_id = 1;
  s.c().Kernel(k);
}

// A graph op's stack is its launch-time ranges outside and its capture-time
// ranges inside; a range open at both times (a whole-run range) once.
TEST(JoinRules, RangeOpenAtCaptureAndLaunchAppearsOnce) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  Scene::Ok(s.c().Push(tid, kT0 + 50, "run"));
  Scene::Ok(s.c().Push(tid, kT0 + 100, "capture"));
  NodeCreated(s, 11, tid, kT0 + 200);
  Scene::Ok(s.c().Pop(tid, kT0 + 300));
  Scene::Ok(s.c().Push(tid, kT0 + 1000, "step"));
  s.GraphLaunch(500, tid, kT0 + 1100);
  GraphKernel(s, 500, 11, kT0 + 3000);
  Scene::Ok(s.c().Pop(tid, kT0 + 5000));
  Scene::Ok(s.c().Pop(tid, kT0 + 6000));
  BuildOptions all;
  all.join.gpu_ranges = builder::GpuRanges::kAll;
  Trace t = BuildOne(s.Path(), all);
  ExpectImporterRules(t);
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(StackOf(*kernels[0]), (std::vector<std::string>{"run", "step", "capture"}));
  EXPECT_EQ((*kernels[0])["args"]["annotation"].text, "capture");
  // One gpu_user_annotation span per range on the stream, "run" included once.
  std::map<std::string, int> spans;
  for (const Json* g : t.Events("X", "gpu_user_annotation")) spans[(*g)["name"].text]++;
  EXPECT_EQ(spans, (std::map<std::string, int>{{"run", 1}, {"step", 1}, {"capture", 1}}));
  // By default only the range the op ran in: the capture-time one.
  spans.clear();
  Trace launching = BuildOne(s.Path());
  for (const Json* g : launching.Events("X", "gpu_user_annotation")) spans[(*g)["name"].text]++;
  EXPECT_EQ(spans, (std::map<std::string, int>{{"capture", 1}}));
}

// A launch with several ops starts one flow per op, numbered by the ops'
// start times: correlation + (k << 32) for the k-th op to start, whatever
// order the records came in.
TEST(JoinRules, OneLaunchsFlowsAreNumberedByOpStart) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  for (uint64_t node : {11, 12, 13}) NodeCreated(s, node, tid, kT0 + 100 + node);
  s.GraphLaunch(900, tid, kT0 + 1000);
  // Records in reverse of start order.
  GraphKernel(s, 900, 13, kT0 + 9000);
  GraphKernel(s, 900, 12, kT0 + 6000);
  GraphKernel(s, 900, 11, kT0 + 3000);
  Trace t = BuildOne(s.Path());
  ExpectImporterRules(t);
  auto kernels = t.Events("X", "kernel");
  ASSERT_EQ(kernels.size(), 3u);
  std::map<int64_t, uint64_t> node_at;  // kernel ts -> graph node
  for (const Json* k : kernels) node_at[Nanos((*k)["ts"])] = (*k)["args"]["graph node"].u();
  auto ends = t.Events("f", "ac2g");
  ASSERT_EQ(ends.size(), 3u);
  std::map<uint64_t, uint64_t> node_of_flow;
  for (const Json* f : ends) {
    auto it = node_at.find(Nanos((*f)["ts"]));
    ASSERT_NE(it, node_at.end()) << "a flow ends off every kernel";
    node_of_flow[(*f)["id"].u()] = it->second;
  }
  EXPECT_EQ(node_of_flow, (std::map<uint64_t, uint64_t>{{900, 11}, {900 + (1ull << 32), 12}, {900 + (2ull << 32), 13}}));
  auto starts = t.Events("s", "ac2g");
  ASSERT_EQ(starts.size(), 3u);
  for (const Json* f : starts) EXPECT_TRUE(node_of_flow.count((*f)["id"].u())) << (*f)["id"].u();
}

// A dependency arrow leaves where its predecessor ends (its last
// nanosecond, so it binds inside the slice) and arrives where its successor
// starts.
TEST(JoinRules, DependencyFlowsLeaveWhereThePredecessorEnds) {
  Scene s;
  const uint32_t tid = 77;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  NodeCreated(s, 11, tid, kT0 + 100);
  NodeCreated(s, 12, tid, kT0 + 200);
  format::GraphEvent dep;
  dep.kind = format::GraphEventKind::kDependencyAdded;
  dep.node_id = 11;
  dep.peer_node_id = 12;
  Scene::Ok(s.c().Message(dep));
  s.GraphLaunch(700, tid, kT0 + 1000);
  GraphKernel(s, 700, 11, kT0 + 3000);  // [3000, 3500)
  GraphKernel(s, 700, 12, kT0 + 6000);
  BuildOptions o;
  o.join.graph_dependencies = true;
  Trace t = BuildOne(s.Path(), o);
  ExpectImporterRules(t);
  std::map<uint64_t, const Json*> by_node;
  for (const Json* k : t.Events("X", "kernel")) by_node[(*k)["args"]["graph node"].u()] = k;
  ASSERT_EQ(by_node.size(), 2u);
  auto starts = t.Events("s", "graph_dependency");
  auto ends = t.Events("f", "graph_dependency");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  const Json& a = *by_node[11];
  EXPECT_EQ(Nanos(a["dur"]), 500);
  EXPECT_EQ(Nanos((*starts[0])["ts"]), Nanos(a["ts"]) + Nanos(a["dur"]) - 1);
  EXPECT_EQ(Nanos((*ends[0])["ts"]), Nanos((*by_node[12])["ts"]));
  EXPECT_EQ((*starts[0])["id"].u(), (*ends[0])["id"].u());
}

// The step rule (docs/semantics.md): a ProfilerStep range open on the main
// thread roots the stack of an op launched meanwhile from a thread with no
// step of its own (PyTorch's autograd thread), in every window kind: the
// same op has the same stack whatever the windows. A range that is not a
// step roots nothing on other threads.
TEST(JoinRules, AStepRangeRootsOtherThreadsOpsInEveryWindowKind) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z1kv"));
  const uint32_t main_tid = 10, autograd = 11, loader = 12;
  Scene::Ok(s.c().Push(main_tid, kT0 + 100, "ProfilerStep#1"));
  Scene::Ok(s.c().Push(main_tid, kT0 + 200, "forward"));
  s.Launch(1, main_tid, kT0 + 300, kT0 + 5000, kT0 + 5100);
  Scene::Ok(s.c().Pop(main_tid, kT0 + 400));
  Scene::Ok(s.c().Push(autograd, kT0 + 500, "backward"));
  s.Launch(2, autograd, kT0 + 600, kT0 + 6000, kT0 + 6100);
  Scene::Ok(s.c().Pop(autograd, kT0 + 700));
  s.Launch(3, autograd, kT0 + 800, kT0 + 7000, kT0 + 7100);  // no range of its own
  Scene::Ok(s.c().Pop(main_tid, kT0 + 1000));
  Scene::Ok(s.c().Push(main_tid, kT0 + 1100, "eval"));  // not a step
  s.Launch(4, loader, kT0 + 1200, kT0 + 8000, kT0 + 8100);
  Scene::Ok(s.c().Pop(main_tid, kT0 + 1300));
  auto stacks_of = [](const Trace& t) {
    std::map<uint64_t, std::vector<std::string>> stacks;
    for (const Json* k : t.Events("X", "kernel")) stacks[(*k)["args"]["correlation"].u()] = StackOf(*k);
    return stacks;
  };
  BuildOptions o;
  o.window = R"(nvtx:ProfilerStep#\d+)";
  Trace step = BuildOne(s.Path(), o);
  ExpectImporterRules(step);
  auto stacks = stacks_of(step);
  ASSERT_EQ(stacks.size(), 3u) << "the step window holds the three ops launched during it";
  EXPECT_EQ(stacks[1], (std::vector<std::string>{"ProfilerStep#1", "forward"}));
  EXPECT_EQ(stacks[2], (std::vector<std::string>{"ProfilerStep#1", "backward"}));
  EXPECT_EQ(stacks[3], (std::vector<std::string>{"ProfilerStep#1"}));

  auto plain = stacks_of(BuildOne(s.Path()));
  ASSERT_EQ(plain.size(), 4u);
  for (uint64_t c : {1, 2, 3}) EXPECT_EQ(plain[c], stacks[c]) << "correlation " << c;
  EXPECT_TRUE(plain[4].empty()) << "a range that is not a step roots nothing on another thread";
}


// Steps named as the user names them (issue 38): an nvtx window holds what
// the step rule with its own pattern gives, whatever the steps setting; the
// annotations take a step only where the build knows it is one (--steps,
// or the recorder's --window-nvtx pattern in the capture), and are then the
// same in every window kind.
TEST(JoinRules, StepsByTheUsersNameHoldOtherThreadsOps) {
  for (bool recorded : {false, true}) {
    format::SessionInfo session = builder::testing::DefaultSession();
    if (recorded) session.options.emplace_back("GPUCAP_WINDOW_NVTX", R"(train#\d+)");
    Scene s("train.gpucap", session);
    Scene::Ok(s.c().String(0x1000, "_Z1kv"));
    const uint32_t main_tid = 10, autograd = 11, side = 12;
    Scene::Ok(s.c().Push(main_tid, kT0 + 100, "train#1"));
    Scene::Ok(s.c().Push(main_tid, kT0 + 200, "forward"));
    s.Launch(1, main_tid, kT0 + 300, kT0 + 5000, kT0 + 5100);
    Scene::Ok(s.c().Pop(main_tid, kT0 + 400));
    Scene::Ok(s.c().Push(autograd, kT0 + 500, "backward"));
    s.Launch(2, autograd, kT0 + 600, kT0 + 6000, kT0 + 6100);
    Scene::Ok(s.c().Pop(autograd, kT0 + 700));
    // A thread launching during train#1 under a step of its own is held
    // by that step alone.
    Scene::Ok(s.c().Push(side, kT0 + 50, "train#7"));
    s.Launch(3, side, kT0 + 650, kT0 + 6500, kT0 + 6600);
    Scene::Ok(s.c().Pop(side, kT0 + 750));
    Scene::Ok(s.c().Pop(main_tid, kT0 + 1000));
    s.Launch(4, autograd, kT0 + 1200, kT0 + 8000, kT0 + 8100);  // after the step: in none
    auto stacks_of = [](const Trace& t) {
      std::map<uint64_t, std::vector<std::string>> stacks;
      for (const Json* k : t.Events("X", "kernel")) stacks[(*k)["args"]["correlation"].u()] = StackOf(*k);
      return stacks;
    };
    const std::vector<std::string> rooted{"train#1", "backward"}, own{"backward"};
    for (std::string steps : {std::string(), std::string(R"(train#\d+)")}) {
      bool known = recorded || !steps.empty();
      BuildOptions o;
      o.join.steps = steps;
      o.window = R"(nvtx:train#\d+)";
      o.select = "1";  // train#1; train#7 (opened first) is window 0
      Trace step = BuildOne(s.Path(), o);
      ExpectImporterRules(step);
      auto stacks = stacks_of(step);
      EXPECT_EQ(stacks.size(), 2u) << "train#1 holds the main thread's op and autograd's, not the side thread's";
      EXPECT_EQ(stacks[1], (std::vector<std::string>{"train#1", "forward"}));
      EXPECT_EQ(stacks[2], known ? rooted : own) << "recorded " << recorded << " steps '" << steps << "'";
      o.window = "all";
      o.select.clear();
      auto plain = stacks_of(BuildOne(s.Path(), o));
      ASSERT_EQ(plain.size(), 4u);
      EXPECT_EQ(plain[2], stacks[2]) << "the same stack in every window kind";
      EXPECT_EQ(plain[3], (std::vector<std::string>{"train#7"}));
      EXPECT_TRUE(plain[4].empty());
    }
  }
}


void NoteRecording(builder::testing::SyntheticCapture& c, format::RecordingState state, uint64_t at) {
  format::RecordingChange change;
  change.state = state;
  change.why = state == format::RecordingState::kPaused ? "range end" : "nvtx range 'step#1' (sample 1, 1 in 10)";
  change.timestamp_ns = kT0 + at;
  change.os_tid = 11;
  Scene::Ok(c.Message(format::RecordingChangeBlob(change)));
}

// A sampled capture whose pause kept CUPTI's kinds on until its detach
// (recorder/src/cupti_session.h): the calls made between the pause and the
// detach were recorded though nobody asked. Left out with the ops they
// launched and counted; a call made before the pause keeps its op, however
// late the op ran, and the next sampled range is as recorded.
TEST(JoinRules, CallsMadeWhilePausedAreLeftOutWithTheirOps) {
  Scene scene("paused.gpucap");
  auto& c = scene.c();
  Scene::Ok(c.String(0x1000, "_Z6kernelv"));
  auto api = [&](uint32_t correlation, uint64_t at) {
    builder::testing::ApiRecord a;
    a.start = kT0 + at;
    a.end = a.start + 2000;
    a.tid = 11;
    a.correlation = correlation;
    c.Api(a);
  };
  auto kernel = [&](uint32_t correlation, uint64_t at) {
    builder::testing::KernelRecord k;
    k.start = kT0 + at;
    k.end = k.start + 5000;
    k.correlation = correlation;
    k.stream = 7;
    k.name_pointer = 0x1000;
    c.Kernel(k);
  };
  NoteRecording(c, format::RecordingState::kSampled, 0);
  api(1, 10'000);     // recorded
  api(2, 45'000);     // recorded; its kernel runs after the pause
  NoteRecording(c, format::RecordingState::kPaused, 50'000);
  api(3, 60'000);     // made while paused: left out
  api(4, 70'000);     // made while paused, its kernel never ran: left out
  NoteRecording(c, format::RecordingState::kSampled, 100'000);
  api(5, 110'000);    // recorded
  kernel(1, 20'000);
  kernel(2, 80'000);
  kernel(3, 90'000);
  kernel(5, 120'000);
  Scene::Ok(c.EndChunk());

  Trace t = BuildOne(scene.Path());
  ExpectImporterRules(t);
  EXPECT_EQ(t.Count("api calls made while paused, left out"), 2) << "calls 3 and 4";
  EXPECT_EQ(t.Count("gpu ops launched while paused, left out"), 1) << "kernel 3";
  EXPECT_EQ(t.Count("gpu ops"), 3) << "kernels 1, 2 and 5";
  EXPECT_EQ(t.Count("gpu ops without launch record"), 0);
  EXPECT_EQ(t.Count("flows"), 3);
  std::vector<uint64_t> kernels;
  for (const Json* e : t.Events("X", "kernel")) kernels.push_back((*e)["args"]["correlation"].u());
  std::sort(kernels.begin(), kernels.end());
  EXPECT_EQ(kernels, (std::vector<uint64_t>{1, 2, 5}));
}

// A time window that begins after a call made while paused holds the op
// that call launched: the op is left out all the same, and counted there.
TEST(JoinRules, AnOpLaunchedWhilePausedIsLeftOutOfAWindowThatHoldsOnlyTheOp) {
  Scene scene("paused_window.gpucap");
  auto& c = scene.c();
  Scene::Ok(c.String(0x1000, "_Z6kernelv"));
  NoteRecording(c, format::RecordingState::kSampled, 0);
  NoteRecording(c, format::RecordingState::kPaused, 50'000);
  builder::testing::ApiRecord a;
  a.start = kT0 + 60'000;  // made while paused
  a.end = a.start + 2000;
  a.tid = 11;
  a.correlation = 3;
  c.Api(a);
  builder::testing::KernelRecord k;
  k.start = kT0 + 150'000;  // runs inside the window below
  k.end = k.start + 5000;
  k.correlation = 3;
  k.stream = 7;
  k.name_pointer = 0x1000;
  c.Kernel(k);
  Scene::Ok(c.EndChunk());
  BuildOptions o;
  o.window = "range:" + std::to_string(kT0 + 100'000) + ":" + std::to_string(kT0 + 200'000);
  Trace t = BuildOne(scene.Path(), o);
  EXPECT_EQ(t.Count("api calls made while paused, left out"), 0) << "the call is outside the window";
  EXPECT_EQ(t.Count("gpu ops launched while paused, left out"), 1);
  EXPECT_EQ(t.Count("gpu ops"), 0);
  EXPECT_TRUE(t.Events("X", "kernel").empty());
}

// A capture that never paused has no such lines.
TEST(JoinRules, ACaptureWithoutPausesLeavesNothingOut) {
  Scene scene("whole.gpucap");
  auto& c = scene.c();
  builder::testing::ApiRecord a;
  a.start = kT0 + 10'000;
  a.end = a.start + 2000;
  a.tid = 11;
  a.correlation = 1;
  c.Api(a);
  Scene::Ok(c.EndChunk());
  Trace t = BuildOne(scene.Path());
  EXPECT_EQ(t.Count("api calls made while paused, left out"), -1);
}

}  // namespace
}  // namespace gpucap::testing
