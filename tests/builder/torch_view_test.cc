// PyTorch's view of a capture's ranges (docs/semantics.md, "Operators" and
// "GPU-side ranges"): emit_nvtx operator ranges drawn as Kineto's cpu_op with
// its keys and forward -> backward flows, GPU-side slices for the range a
// launch ran in, never for steps, and times HTA reads without rounding.
// Expectations are written by hand from the rules, and the operator rule is
// checked against the names Kineto itself filed in fixtures/kineto.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpucap/builder/torch_operators.h"
#include "gunzip_util.h"
#include "scene.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using builder::BuildOptions;
using builder::InputDimsJson;
using builder::IsBackwardNodeName;
using builder::IsTorchOperatorName;
using builder::ParseTorchOperator;
using builder::ParseTorchRangeName;

std::string Source(const std::string& relative) { return std::string(GPUCAP_SOURCE_DIR) + "/" + relative; }

TEST(TorchOperatorNames, ReadsEmitNvtxSuffixesInTheirOrder) {
  auto op = ParseTorchRangeName("aten::addmm, seq = 109, op_id = 6, sizes = [[64, 256], [256, 256], []]");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->name, "aten::addmm");
  EXPECT_EQ(op->sequence, 109);
  EXPECT_EQ(op->op_id, 6u);
  EXPECT_EQ(op->sizes, "[[64, 256], [256, 256], []]");

  op = ParseTorchRangeName("aten::empty, op_id = 12, sizes = [[]], input_op_ids = [(4, 0)]");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->name, "aten::empty");
  EXPECT_EQ(op->sequence, -1);
  EXPECT_EQ(op->op_id, 12u);
  EXPECT_EQ(op->sizes, "[[]]");

  op = ParseTorchRangeName("Optimizer.step#AdamW.step, op_id = 7");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->name, "Optimizer.step#AdamW.step");

  // No suffix, a suffix out of getNvtxStr's order, twice, or unreadable.
  for (const char* bad : {"forward", "aten::add", "x, op_id = 1, seq = 2", "x, seq = 1, seq = 2", "x, seq = abc",
                          "x, op_id = -3", "x, sizes = [[1, 2]", "x, seq = 1 trailing", ", seq = 1",
                          "x, op_id = 1, sizes = [[1]] more"}) {
    EXPECT_FALSE(ParseTorchRangeName(bad).has_value()) << bad;
  }
}

TEST(TorchOperatorNames, OperatorsByTheNamesPyTorchGivesThem) {
  for (const char* op : {"aten::addmm", "autograd::engine::evaluate_function: AddmmBackward0",
                         "torch::autograd::AccumulateGrad", "c10d::allreduce_", "AddmmBackward0", "TBackward0",
                         "CompiledFunctionBackward", "detach", "detach_", "record_param_comms", "CompiledFunction",
                         "triton_poi_fused_add_0", "Torch-Compiled Region: 0/0"}) {
    EXPECT_TRUE(IsTorchOperatorName(op)) << op;
  }
  for (const char* user : {"ProfilerStep#3", "Optimizer.step#AdamW.step", "enumerate(DataLoader)#_Iter.__next__",
                           "nccl:all_reduce", "forward", "train#2", "Backward", "my Backward0"}) {
    EXPECT_FALSE(IsTorchOperatorName(user)) << user;
  }
  EXPECT_TRUE(IsBackwardNodeName("NllLossBackward0"));
  EXPECT_FALSE(IsBackwardNodeName("autograd::engine::evaluate_function: NllLossBackward0"));
  EXPECT_FALSE(ParseTorchOperator("forward, op_id = 3").has_value()) << "a user scope is no operator";
  EXPECT_TRUE(ParseTorchOperator("aten::mm, op_id = 3").has_value());
}

// The rule against the field: every name Kineto filed as cpu_op in the
// Kineto-differential fixtures is an operator by it, every user_annotation
// is not.
TEST(TorchOperatorNames, AgreesWithKinetosCategoriesOnItsOwnTraces) {
  const std::regex event(R"re("cat": "(cpu_op|user_annotation)", "name": "((?:[^"\\]|\\.)*)")re");
  size_t operators = 0, annotations = 0;
  int traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Source("fixtures/kineto"))) {
    std::string path = entry.path().string();
    if (!path.ends_with(".kineto.json.gz")) continue;
    traces++;
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::string text = Gunzip(bytes.str());
    std::set<std::pair<std::string, std::string>> seen;
    for (std::sregex_iterator it(text.begin(), text.end(), event), end; it != end; ++it) {
      seen.insert({(*it)[1].str(), (*it)[2].str()});
    }
    for (const auto& [category, name] : seen) {
      bool op = IsTorchOperatorName(name);
      if (category == "cpu_op") {
        EXPECT_TRUE(op) << path << ": Kineto's cpu_op '" << name << "'";
        operators++;
      } else {
        EXPECT_FALSE(op) << path << ": Kineto's user_annotation '" << name << "'";
        annotations++;
      }
    }
  }
  EXPECT_EQ(traces, 8);  // fixtures/kineto/manifest.json's pairs
  EXPECT_GT(operators, 100u);
  EXPECT_GT(annotations, 10u);
}

TEST(TorchOperatorNames, InputDimsAsKinetoWritesThem) {
  EXPECT_EQ(InputDimsJson("[[64, 256], [256, 256], []]").value_or("?"), "[[64,256],[256,256],[]]");
  EXPECT_EQ(InputDimsJson("[]").value_or("?"), "[]");
  EXPECT_EQ(InputDimsJson("[[-1]]").value_or("?"), "[[-1]]");
  for (const char* bad : {"", "[", "[[1, 2]", "[[a]]", "[[1]] x", "[[[1]]]", "[1, 2]", "[[1,,2]]", "[[1],]"}) {
    EXPECT_FALSE(InputDimsJson(bad).has_value()) << bad;
  }
}

// One step of a training job under emit_nvtx, as PyTorch names its ranges:
// the forward pass on the main thread, the backward pass on autograd's, the
// optimizer's foreach op inside its user scope.
constexpr uint32_t kMain = 10, kAutograd = 11;

std::string EmitNvtxStep(Scene& s) {
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  auto push = [&](uint32_t tid, uint64_t at, const std::string& name) { Scene::Ok(s.c().Push(tid, kT0 + at, name)); };
  auto pop = [&](uint32_t tid, uint64_t at) { Scene::Ok(s.c().Pop(tid, kT0 + at)); };
  push(kMain, 100, "ProfilerStep#1");
  push(kMain, 200, "forward");
  push(kMain, 300, "aten::linear, seq = 5, op_id = 1, sizes = [[4, 8], [8, 8], [8]]");
  push(kMain, 400, "aten::t, seq = 5, op_id = 2, sizes = [[8, 8]]");
  pop(kMain, 500);
  push(kMain, 600, "aten::addmm, seq = 6, op_id = 3, sizes = [[8], [4, 8], [8, 8], [], []]");
  s.Launch(1, kMain, kT0 + 700, kT0 + 10'000, kT0 + 10'400);
  pop(kMain, 2800);
  pop(kMain, 2900);
  pop(kMain, 3000);
  push(kAutograd, 4000, "autograd::engine::evaluate_function: AddmmBackward0, op_id = 10");
  push(kAutograd, 4100, "AddmmBackward0, seq = 6, op_id = 11");
  s.Launch(2, kAutograd, kT0 + 4200, kT0 + 20'000, kT0 + 20'700);
  pop(kAutograd, 6300);
  pop(kAutograd, 6400);
  push(kAutograd, 6500, "TBackward0, seq = 5, op_id = 12");
  pop(kAutograd, 6600);
  push(kMain, 7000, "Optimizer.step#SGD.step, op_id = 20");
  push(kMain, 7100, "aten::_foreach_add_, op_id = 21, sizes = [[], []]");
  s.Launch(3, kMain, kT0 + 7200, kT0 + 30'000, kT0 + 30'300);
  pop(kMain, 9300);
  pop(kMain, 9400);
  pop(kMain, 9900);  // ProfilerStep#1
  return s.Path();
}

const Json* Only(const Trace& t, std::string_view name, std::string_view cat) {
  const Json* found = nullptr;
  for (const Json* e : t.Named(name)) {
    if ((*e)["cat"].text != cat) continue;
    EXPECT_EQ(found, nullptr) << "two " << cat << " named " << name;
    found = e;
  }
  EXPECT_NE(found, nullptr) << "no " << cat << " named " << name;
  return found;
}

uint64_t ExternalIdOf(const Trace& t, uint64_t correlation) {
  for (const Json* k : t.Events("X", "kernel")) {
    if ((*k)["args"]["correlation"].u() == correlation) return (*k)["args"]["External id"].u();
  }
  ADD_FAILURE() << "no kernel of correlation " << correlation;
  return 0;
}

TEST(TorchView, EmitNvtxOperatorsAreCpuOpsWithKinetosKeys) {
  Scene s;
  Trace t = BuildOne(EmitNvtxStep(s));
  ExpectImporterRules(t);
  std::multiset<std::string> ops, annotations;
  for (const Json* e : t.Events("X", "cpu_op")) ops.insert((*e)["name"].text);
  for (const Json* e : t.Events("X", "user_annotation")) annotations.insert((*e)["name"].text);
  EXPECT_EQ(ops, (std::multiset<std::string>{"aten::linear", "aten::t", "aten::addmm",
                                             "autograd::engine::evaluate_function: AddmmBackward0",
                                             "AddmmBackward0", "TBackward0", "aten::_foreach_add_"}));
  EXPECT_EQ(annotations, (std::multiset<std::string>{"ProfilerStep#1", "forward", "Optimizer.step#SGD.step"}))
      << "user scopes keep their name, without emit_nvtx's suffix";

  const Json* addmm = Only(t, "aten::addmm", "cpu_op");
  const Json* backward = Only(t, "AddmmBackward0", "cpu_op");
  const Json* foreach_add = Only(t, "aten::_foreach_add_", "cpu_op");
  ASSERT_TRUE(addmm && backward && foreach_add);
  EXPECT_EQ((*addmm)["args"]["Sequence number"].i(), 6);
  EXPECT_EQ((*addmm)["args"]["Fwd thread id"].i(), 0) << "a forward op, as Kineto writes it";
  const Json& dims = (*addmm)["args"]["Input Dims"];
  ASSERT_EQ(dims.items.size(), 5u);
  EXPECT_EQ(dims.items[1].items.size(), 2u);
  EXPECT_EQ(dims.items[1].items[0].i(), 4);
  EXPECT_EQ(dims.items[1].items[1].i(), 8);
  EXPECT_TRUE(dims.items[3].items.empty());
  EXPECT_EQ((*backward)["args"]["Sequence number"].i(), 6);
  EXPECT_EQ((*backward)["args"]["Fwd thread id"].i(), kMain) << "the thread of the forward op it runs for";
  EXPECT_FALSE((*foreach_add)["args"].has("Sequence number"));

  // A kernel's External id is its innermost operator's, as Kineto ties it.
  EXPECT_EQ(ExternalIdOf(t, 1), (*addmm)["args"]["External id"].u());
  EXPECT_EQ(ExternalIdOf(t, 2), (*backward)["args"]["External id"].u());
  EXPECT_EQ(ExternalIdOf(t, 3), (*foreach_add)["args"]["External id"].u());
  // And its launch's.
  for (const Json* api : t.Events("X", "cuda_runtime")) {
    EXPECT_EQ((*api)["args"]["External id"].u(), ExternalIdOf(t, (*api)["args"]["correlation"].u()));
  }
}

TEST(TorchView, ForwardOpsLinkToTheirBackwardNodesBySequenceNumber) {
  Scene s;
  Trace t = BuildOne(EmitNvtxStep(s));
  // By hand: addmm (seq 6) -> AddmmBackward0; of linear and t (both seq 5),
  // t started last -> TBackward0. Nothing else links.
  std::map<uint64_t, std::pair<const Json*, const Json*>> flows;  // id -> (s, f)
  for (const Json* e : t.events) {
    if ((*e)["cat"].text != "fwdbwd") continue;
    auto& f = flows[(*e)["id"].u()];
    ((*e)["ph"].text == "s" ? f.first : f.second) = e;
  }
  auto at = [&](const Json* flow) -> std::string {
    for (const Json* op : t.Events("X", "cpu_op")) {
      if (Nanos((*op)["ts"]) == Nanos((*flow)["ts"]) && (*op)["tid"].u() == (*flow)["tid"].u()) {
        return (*op)["name"].text;
      }
    }
    return "(no cpu_op at the flow's ts and tid)";
  };
  std::set<std::pair<std::string, std::string>> links;
  for (const auto& [id, ends] : flows) {
    ASSERT_TRUE(ends.first && ends.second) << "flow " << id << " has both ends";
    EXPECT_EQ((*ends.second)["bp"].text, "e");
    links.insert({at(ends.first), at(ends.second)});
  }
  EXPECT_EQ(links, (std::set<std::pair<std::string, std::string>>{{"aten::addmm", "AddmmBackward0"},
                                                                  {"aten::t", "TBackward0"}}));
  EXPECT_EQ(t.Count("flows"), 3 + 2) << "three launch flows, two forward -> backward";
}

TEST(TorchView, GpuSideSlicesForTheRangeALaunchRanInNeverForSteps) {
  Scene s;
  std::string path = EmitNvtxStep(s);
  std::multiset<std::string> gpu;
  Trace launching = BuildOne(path);
  for (const Json* e : launching.Events("X", "gpu_user_annotation")) gpu.insert((*e)["name"].text);
  // Kernel 1 ran in forward (its operators are not user annotations);
  // kernel 2's innermost user range is the step (another thread's): none;
  // kernel 3 in the optimizer's scope.
  EXPECT_EQ(gpu, (std::multiset<std::string>{"forward", "Optimizer.step#SGD.step"}));

  BuildOptions all;
  all.join.gpu_ranges = builder::GpuRanges::kAll;
  gpu.clear();
  Trace every = BuildOne(path, all);
  for (const Json* e : every.Events("X", "gpu_user_annotation")) gpu.insert((*e)["name"].text);
  EXPECT_EQ(gpu, (std::multiset<std::string>{"ProfilerStep#1", "forward", "aten::linear", "aten::addmm",
                                             "autograd::engine::evaluate_function: AddmmBackward0",
                                             "AddmmBackward0", "Optimizer.step#SGD.step", "aten::_foreach_add_"}))
      << "--gpu-ranges all: every range of each op's stack";
}

TEST(TorchView, NvtxAsRecordedKeepsEveryRangeAUserAnnotation) {
  Scene s;
  BuildOptions o;
  o.join.torch_view = false;
  Trace t = BuildOne(EmitNvtxStep(s), o);
  EXPECT_TRUE(t.Events("X", "cpu_op").empty());
  EXPECT_EQ(t.Events("X", "user_annotation").size(), 10u);
  size_t addmm = 0;
  for (const Json* e : t.Named("aten::addmm, seq = 6, op_id = 3, sizes = [[8], [4, 8], [8, 8], [], []]")) {
    addmm += (*e)["cat"].text == "user_annotation";
  }
  EXPECT_EQ(addmm, 1u);
  for (const Json* e : t.events) EXPECT_NE((*e)["cat"].text, "fwdbwd");
}

// HTA rounds fractional times (start up, end down): whole microseconds are
// what it leaves alone. Floored start and end: nesting and order kept.
TEST(TorchView, WholeMicrosecondsFloorStartsAndEnds) {
  Scene s;
  std::string path = EmitNvtxStep(s);
  BuildOptions o;
  o.join.whole_microseconds = true;
  Trace whole = BuildOne(path, o);
  Trace exact = BuildOne(path);
  ExpectImporterRules(whole);
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> exact_times;
  for (const Json* e : exact.Events("X")) {
    exact_times[{(*e)["name"].text, Nanos((*e)["ts"]) / 1000}] = {Nanos((*e)["ts"]), Nanos((*e)["dur"])};
  }
  size_t checked = 0;
  for (const Json* e : whole.Events("X")) {
    if ((*e)["cat"].text == "Trace") continue;  // the window's own span
    int64_t ts = Nanos((*e)["ts"]), dur = Nanos((*e)["dur"]);
    EXPECT_EQ(ts % 1000, 0) << (*e)["name"].text;
    EXPECT_EQ(dur % 1000, 0) << (*e)["name"].text;
    auto it = exact_times.find({(*e)["name"].text, ts / 1000});
    ASSERT_NE(it, exact_times.end()) << (*e)["name"].text;
    auto [exact_ts, exact_dur] = it->second;
    EXPECT_EQ(ts, exact_ts / 1000 * 1000);
    EXPECT_EQ(ts + dur, (exact_ts + exact_dur) / 1000 * 1000) << (*e)["name"].text;
    checked++;
  }
  EXPECT_EQ(checked, exact.Events("X").size() - 1);
}

// NCCL's collective ranges, named as torch.distributed names them, own
// their kernels (TensorBoard's Distributed view ties them by External id).
// An optimizer's foreach op lists every parameter's shape: its name runs
// past the display budget (kMaxNameBytes, 4096), yet it is an operator with
// its whole Input Dims, read from the name as recorded.
TEST(TorchView, LongEmitNvtxNamesStayOperatorsWithTheirWholeShapes) {
  Scene s;
  Scene::Ok(s.c().String(0x1000, "_Z4gemmv"));
  std::string sizes = "[";
  const int kParams = 600;  // "[1024, 1024], " is 14 bytes: ~8.4 KB of sizes
  for (int i = 0; i < kParams; ++i) sizes += std::string(i ? ", " : "") + "[1024, " + std::to_string(1000 + i) + "]";
  sizes += "]";
  std::string name = "aten::_foreach_mul_, seq = 9, op_id = 4, sizes = " + sizes;
  ASSERT_GT(name.size(), 8000u);
  Scene::Ok(s.c().Push(kMain, kT0 + 100, name));
  s.Launch(1, kMain, kT0 + 200, kT0 + 1000, kT0 + 1400);
  Scene::Ok(s.c().Pop(kMain, kT0 + 900));
  Trace t = BuildOne(s.Path());
  const Json* op = Only(t, "aten::_foreach_mul_", "cpu_op");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ((*op)["args"]["Sequence number"].i(), 9);
  const Json& dims = (*op)["args"]["Input Dims"];
  ASSERT_EQ(dims.items.size(), static_cast<size_t>(kParams));
  EXPECT_EQ(dims.items[kParams - 1].items.size(), 2u);
  EXPECT_EQ(dims.items[kParams - 1].items[1].i(), 1000 + kParams - 1);
  EXPECT_EQ(ExternalIdOf(t, 1), (*op)["args"]["External id"].u()) << "its kernel is tied to it";
}

TEST(TorchView, NcclCollectiveRangesTakeTorchDistributedsNames) {
  for (int rank : {0, 1}) {
    std::string path = Source("fixtures/allreduce-" + std::to_string(rank) + ".gpucap");
    BuildOptions recorded;
    recorded.join.torch_view = false;
    Trace as_recorded = BuildOne(path, recorded);
    Trace t = BuildOne(path);
    size_t nccl_ranges = 0;
    for (const Json* e : as_recorded.Named("ncclAllReduce")) nccl_ranges += (*e)["cat"].text == "user_annotation";
    ASSERT_GT(nccl_ranges, 0u);
    std::vector<const Json*> renamed;
    for (const Json* e : t.Named("nccl:all_reduce")) {
      if ((*e)["cat"].text == "user_annotation") renamed.push_back(e);
    }
    EXPECT_EQ(renamed.size(), nccl_ranges);
    EXPECT_TRUE(t.Named("ncclAllReduce").empty());
    std::set<uint64_t> ids;
    for (const Json* e : renamed) ids.insert((*e)["args"]["External id"].u());
    size_t nccl_kernels = 0;
    for (const Json* k : t.Events("X", "kernel")) {
      if ((*k)["name"].text.find("ncclDevKernel") == std::string::npos) continue;
      nccl_kernels++;
      EXPECT_TRUE(ids.count((*k)["args"]["External id"].u())) << "rank " << rank << ": kernel's External id";
    }
    EXPECT_GT(nccl_kernels, 0u);
  }
}

// HTA and TensorBoard count every event named like a step as one: none on
// the GPU side, on a capture whose steps launch kernels themselves.
TEST(TorchView, NoGpuSideStepSlicesOnRealCaptures) {
  for (const char* fixture : {"fixtures/torch_train.gpucap", "fixtures/allreduce-0.gpucap"}) {
    std::string path = Source(fixture);
    Trace t = BuildOne(path);
    size_t cpu_steps = 0;
    for (const Json* e : t.Events("X", "gpu_user_annotation")) {
      EXPECT_EQ((*e)["name"].text.find("ProfilerStep#"), std::string::npos) << path;
    }
    for (const Json* e : t.Events("X", "user_annotation")) {
      if ((*e)["name"].text.starts_with("ProfilerStep#")) cpu_steps++;
    }
    EXPECT_GT(cpu_steps, 3u) << path;
  }
}

}  // namespace
}  // namespace gpucap::testing
