// What a capture holds beyond the launch -> op basics, read back from both
// renderings of real fixtures (Chrome JSON through the strict JSON reader,
// pftrace through the project's own wire reader): every dependency arrow of
// a graph replay, launch details, collective metadata on NCCL kernels and
// sync spans with their waits. Expected counts come from the capture's own
// topology and the programs' manifests, not from the join.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../builder/json.h"
#include "../builder/trace_util.h"
#include "../support/temp_dir.h"
#include "gpucap/builder/builder.h"
#include "gpucap/builder/collectives.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "gpucap/format/capture.h"
#include "pftrace_reader.h"

namespace gpucap::testing {
namespace {

std::string FixturePath(const std::string& name) {
  return std::string(GPUCAP_SOURCE_DIR) + "/fixtures/" + name;
}

// A slice as both renderings show it: flows as ids local to one rendering.
struct Ev {
  std::string name, cat;
  std::string lane;  // "pid/tid" (JSON) or the track uuid (pftrace)
  std::string tid;   // the thread of a thread track (JSON's tid; pftrace's thread descriptor)
  int64_t ts = 0, dur = 0;
  std::map<std::string, std::string> args;
  std::vector<uint64_t> in, out;
  bool has(const std::string& k) const { return args.count(k) != 0; }
  std::string at(const std::string& k) const {
    auto it = args.find(k);
    return it == args.end() ? "" : it->second;
  }
};

std::string JsonText(const Json& v) {
  if (v.is(Json::Type::kArray)) {
    std::string s = "[";
    for (size_t i = 0; i < v.items.size(); ++i) s += (i ? "," : "") + JsonText(v.items[i]);
    return s + "]";
  }
  return v.text;
}

// JSON: X events; a flow's "s"/"f" binds to the innermost slice of its
// thread enclosing its time.
// Times absolute (realtime ns), as the pftrace's.
std::vector<Ev> FromJson(const Trace& t) {
  std::vector<Ev> evs;
  const int64_t base = t.root.has("baseTimeNanoseconds") ? static_cast<int64_t>(t.root["baseTimeNanoseconds"].u()) : 0;
  for (const Json* e : t.Events("X")) {
    Ev v;
    v.name = (*e)["name"].text;
    v.cat = (*e)["cat"].text;
    v.lane = (*e)["pid"].text + "/" + (*e)["tid"].text;
    v.tid = (*e)["tid"].text;
    v.ts = base + Nanos((*e)["ts"]);
    v.dur = Nanos((*e)["dur"]);
    for (const auto& [k, a] : (*e)["args"].members) v.args[k] = JsonText(a);
    evs.push_back(std::move(v));
  }
  for (const char* ph : {"s", "f"}) {
    for (const Json* f : t.Events(ph)) {
      std::string lane = (*f)["pid"].text + "/" + (*f)["tid"].text;
      int64_t at = base + Nanos((*f)["ts"]);
      Ev* best = nullptr;
      for (Ev& v : evs) {
        if (v.lane == lane && v.ts <= at && at <= v.ts + v.dur && (best == nullptr || v.dur <= best->dur)) best = &v;  // ties: the later, inner one
      }
      EXPECT_NE(best, nullptr) << ph << " flow " << (*f)["id"].text << " binds to no slice";
      if (best == nullptr) continue;
      const std::string& cat = (*f)["cat"].text;
      uint64_t id = std::stoull((*f)["id"].text) * 4 + (cat == "graph_dependency" ? 1 : cat == "fwdbwd" ? 2 : 0);
      (std::string(ph) == "s" ? best->out : best->in).push_back(id);
    }
  }
  return evs;
}

std::vector<Ev> FromPftrace(const PfTrace& t) {
  std::vector<Ev> evs;
  for (const PfSlice& s : t.slices) {
    if (s.dur < 0) continue;
    Ev v;
    v.name = s.name;
    v.cat = s.category;
    v.lane = std::to_string(s.track);
    if (const PfTrack* track = t.Track(s.track)) v.tid = std::to_string(track->tid);
    v.ts = s.ts;
    v.dur = s.dur;
    for (const auto& [k, a] : s.args) v.args[k] = a;
    v.in = s.flows_in;
    v.out = s.flows_out;
    evs.push_back(std::move(v));
  }
  return evs;
}

// Every window of `options`, each rendered both ways: [window][rendering].
std::vector<std::vector<std::vector<Ev>>> RenderWindows(const std::string& fixture, builder::BuildOptions options) {
  std::vector<std::vector<std::vector<Ev>>> out;
  auto index = builder::CaptureIndex::Open(FixturePath(fixture));
  EXPECT_TRUE(index.ok()) << index.status().message();
  if (!index.ok()) return out;
  builder::Builder b(**index, options);
  auto windows = b.Windows();
  EXPECT_TRUE(windows.ok());
  if (!windows.ok()) return out;
  for (const builder::Window& w : *windows) {
    std::string json, pf;
    {
      auto sink = builder::NewChromeJsonRenderer(builder::NewStringSink(&json));
      builder::WindowReport report;
      EXPECT_TRUE(b.BuildWindow(w, sink.get(), &report).ok());
    }
    {
      auto sink = builder::NewPerfettoRenderer(builder::NewStringSink(&pf));
      builder::WindowReport report;
      EXPECT_TRUE(b.BuildWindow(w, sink.get(), &report).ok());
    }
    Trace t;
    t.text = json;
    std::string error;
    EXPECT_TRUE(ParseJson(t.text, &t.root, &error)) << error;
    for (const Json& e : t.root["traceEvents"].items) t.events.push_back(&e);
    ExpectImporterRules(t);
    PfTrace p = ReadPftrace(pf);
    for (const std::string& e : p.errors) ADD_FAILURE() << fixture << " pftrace: " << e;
    out.push_back({FromJson(t), FromPftrace(p)});
  }
  return out;
}

// The whole capture as one window, rendered both ways.
std::vector<std::vector<Ev>> BothRenderings(const std::string& fixture, builder::BuildOptions options = {}) {
  auto windows = RenderWindows(fixture, options);
  EXPECT_EQ(windows.size(), 1u);
  return windows.size() == 1 ? windows[0] : std::vector<std::vector<Ev>>{};
}

const char* kRendering[] = {"Chrome JSON", "pftrace"};

bool KernelIs(const std::string& name, const std::string& base) {
  return name.find(base) != std::string::npos;
}

// --- 1. dependency arrows ---------------------------------------------------

// The explicit graph of graphs_nvtx: kernel nodes by creation order (A, B, C,
// D as the manifest names them), and the edges between kernels the recorded
// topology gives once event-record and host nodes are walked through.
TEST(RenderCapture, EveryDependencyArrowOfEveryReplayPredecessorEndToSuccessorStart) {
  auto c = format::LoadCapture(FixturePath("graphs_nvtx.gpucap"));
  ASSERT_TRUE(c.ok());
  // Edges of graph 1 (built) as recorded, adds and removes in order.
  std::map<uint64_t, std::string> kernel_of;  // node -> "node_a".. in creation order
  const char* names[] = {"node_a", "node_b", "node_c", "node_d"};
  std::set<std::pair<uint64_t, uint64_t>> edges;
  uint32_t graph = 0;
  size_t k = 0;
  for (const format::GraphEvent& e : c->graphs) {
    if (e.kind == format::GraphEventKind::kNodeCreated && graph == 0) graph = e.graph_id;
    if (e.graph_id != graph) continue;
    if (e.kind == format::GraphEventKind::kNodeCreated && e.node_type == 0 && k < 4) kernel_of[e.node_id] = names[k++];
    if (e.kind == format::GraphEventKind::kDependencyAdded) edges.emplace(e.node_id, e.peer_node_id);
    if (e.kind == format::GraphEventKind::kDependencyRemoved) edges.erase({e.node_id, e.peer_node_id});
  }
  std::set<std::pair<std::string, std::string>> kernel_edges;
  for (auto [from, to] : edges) {
    if (kernel_of.count(from) && kernel_of.count(to)) kernel_edges.emplace(kernel_of[from], kernel_of[to]);
  }
  ASSERT_EQ(kernel_edges.size(), 4u) << "a->b, a->c, b->d, c->d";
  const uint64_t replays = 7;

  builder::BuildOptions o;
  o.join.graph_dependencies = true;
  auto both = BothRenderings("graphs_nvtx.gpucap", o);
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const std::vector<Ev>& evs = both[r];
    // Each arrow: its start's slice and end's slice.
    std::map<uint64_t, const Ev*> from, to;
    for (const Ev& v : evs) {
      for (uint64_t id : v.out) from[id] = &v;
      for (uint64_t id : v.in) to[id] = &v;
    }
    auto base = [&](const Ev& v) -> std::string {
      for (const char* n : names) {
        if (KernelIs(v.name, n)) return n;
      }
      return v.name;
    };
    std::map<std::pair<std::string, std::string>, uint64_t> arrows;
    std::map<std::string, uint64_t> launch_flows_in;
    for (const Ev& v : evs) {
      if (v.cat != "kernel") continue;
      for (uint64_t id : v.in) {
        const Ev* f = from.count(id) ? from[id] : nullptr;
        ASSERT_NE(f, nullptr) << kRendering[r];
        if (f->cat == "kernel") {
          arrows[{base(*f), base(v)}]++;
          // The predecessor runs first. (It has ended when the successor
          // starts, up to CUPTI's stamps: here an end lags a dependent's
          // start by up to 0.3 us.)
          EXPECT_LT(f->ts, v.ts) << kRendering[r] << " " << base(*f) << "->" << base(v);
          EXPECT_LE(f->ts + f->dur, v.ts + 1000) << kRendering[r] << " " << base(*f) << "->" << base(v);
          EXPECT_EQ(f->at("correlation"), v.at("correlation")) << "an arrow stays inside one replay";
        } else {
          launch_flows_in[base(v)]++;
        }
      }
    }
    for (const auto& e : kernel_edges) {
      EXPECT_EQ(arrows[e], replays) << kRendering[r] << " " << e.first << "->" << e.second;
    }
    uint64_t explicit_arrows = 0;
    for (const auto& [e, n] : arrows) {
      if (kernel_of.size() && std::count(std::begin(names), std::end(names), e.first)) explicit_arrows += n;
    }
    EXPECT_EQ(explicit_arrows, kernel_edges.size() * replays) << kRendering[r];
    // The launch flow reaches the root (A) only.
    EXPECT_EQ(launch_flows_in["node_a"], replays) << kRendering[r];
    for (const char* n : {"node_b", "node_c", "node_d"}) EXPECT_EQ(launch_flows_in[n], 0u) << kRendering[r] << n;
  }
}

// --- 4. launch details ------------------------------------------------------

TEST(RenderCapture, KernelsCarryTheirChannelAndKinetosQueued) {
  auto both = BothRenderings("basics.gpucap");
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    size_t kernels = 0;
    std::map<std::string, std::set<std::string>> channels_of_stream;
    for (const Ev& v : both[r]) {
      if (v.cat != "kernel") continue;
      ++kernels;
      EXPECT_TRUE(v.has("queued")) << "Kineto writes queued on every kernel";
      ASSERT_TRUE(v.has("channel id")) << kRendering[r] << " " << v.name;
      EXPECT_EQ(v.at("channel type"), "compute");
      channels_of_stream[v.at("stream")].insert(v.at("channel id"));
    }
    EXPECT_EQ(kernels, 101u);
    // basics launches on 3 streams; each stream's work goes down channels
    // of its own.
    std::set<std::string> all;
    for (const auto& [stream, ch] : channels_of_stream) all.insert(ch.begin(), ch.end());
    EXPECT_GE(all.size(), 2u) << kRendering[r];
  }
}

// --- 5. collectives ---------------------------------------------------------

TEST(RenderCapture, NcclKernelsCarryHtasCollectiveKeysEagerAndReplayed) {
  // From the manifest: the float32 and bf16 all-reduces and their sizes.
  Json m;
  std::string error;
  ASSERT_TRUE(ParseJson(ReadFile(FixturePath("nccl_graph.expect.json")), &m, &error)) << error;
  std::map<std::string, std::pair<uint64_t, uint64_t>> want;  // torch dtype -> (nelems, bytes)
  for (const Json& c : m["collectives"].items) {
    std::string dtype = c["dtype"].text == "float32" ? "Float" : c["dtype"].text == "bfloat16" ? "BFloat16" : "?";
    want[dtype] = {c["nelems"].u(), c["bytes"].u()};
    EXPECT_EQ(c["op"].text, "all_reduce");
  }
  uint64_t per_dtype = m["eager_steps"].u() + 1 /* warm-up */ + m["replays"].u();
  auto both = BothRenderings("nccl_graph.gpucap");
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    std::map<std::string, uint64_t> seen, replayed;
    for (const Ev& v : both[r]) {
      if (v.cat != "kernel" || !KernelIs(v.name, "oneRankReduce")) continue;
      ASSERT_TRUE(v.has("Collective name")) << kRendering[r] << " " << v.name;
      EXPECT_EQ(v.at("Collective name"), "all_reduce");
      std::string dtype = v.at("dtype");
      ASSERT_TRUE(want.count(dtype)) << kRendering[r] << " dtype " << dtype;
      EXPECT_EQ(v.at("In msg nelems"), std::to_string(want[dtype].first));
      EXPECT_EQ(v.at("Out msg nelems"), std::to_string(want[dtype].first));
      EXPECT_EQ(v.at("In msg size"), std::to_string(want[dtype].second));
      EXPECT_EQ(v.at("Out msg size"), std::to_string(want[dtype].second));
      EXPECT_EQ(v.at("Group size"), m["world_size"].text);
      seen[dtype]++;
      if (v.has("graph node")) replayed[dtype]++;
    }
    for (const auto& [dtype, w] : want) {
      EXPECT_EQ(seen[dtype], per_dtype) << kRendering[r] << " " << dtype;
      EXPECT_EQ(replayed[dtype], m["replays"].u()) << kRendering[r] << " " << dtype;
    }
    // No other kernel is called a collective.
    for (const Ev& v : both[r]) {
      if (v.cat == "kernel" && !KernelIs(v.name, "oneRankReduce")) {
        EXPECT_FALSE(v.has("Collective name")) << v.name;
      }
    }
  }
}

// The kernel-name forms NCCL's kernels take, beyond the one-rank kernels of
// nccl_graph: its generated device kernels and demangled templates.
TEST(RenderCapture, DtypeAndCollectiveNamesFromNcclNames) {
  auto dtype = [](std::string_view k) { return std::string(builder::DtypeFromKernelName(k).name); };
  EXPECT_EQ(dtype("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), "Float");
  EXPECT_EQ(dtype("ncclDevKernel_AllGather_Sum_bf16_RING_LL"), "BFloat16");
  EXPECT_EQ(dtype("ncclDevKernel_ReduceScatter_Sum_f16_RING_SIMPLE"), "Half");
  EXPECT_EQ(dtype("void oneRankReduce<FuncPreMulSum<float> >(void*, void*, unsigned long, unsigned long, bool)"),
            "Float");
  EXPECT_EQ(builder::DtypeFromKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)").size, 0u);
  EXPECT_EQ(builder::CollectiveName("ncclAllReduce"), "all_reduce");
  EXPECT_EQ(builder::CollectiveName("ncclReduceScatter"), "reduce_scatter");
  EXPECT_EQ(builder::CollectiveName("ncclBroadcast"), "broadcast");
}

// --- 2. graph host nodes and event-record nodes -------------------------------

// graph_nodes: each host function spins for spin_us and notes its thread; the
// recorder's trampoline timed every run. Each run is a "HostNode: <function>"
// span on that thread, as long as the spin at least, with the function's
// name, address and thread in its args; the explicit graph's runs sit between
// the kernel before them and the one after, replay by replay.
TEST(RenderCapture, HostNodeRunsAreSpansOnTheThreadThatRanThem) {
  Json m;
  std::string error;
  ASSERT_TRUE(ParseJson(ReadFile(FixturePath("graph_nodes.expect.json")), &m, &error)) << error;
  const Json& host = m["host_nodes"];
  const int64_t spin_ns = static_cast<int64_t>(host["spin_us"].u()) * 1000;
  // The recorder wrapped both host nodes (the exec's copies already held the trampoline) and refused none.
  auto c = format::LoadCapture(FixturePath("graph_nodes.gpucap"));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->trailer.has_value());
  std::map<std::string, uint64_t> stats(c->trailer->stats.extra.begin(), c->trailer->stats.extra.end());
  EXPECT_EQ(stats["host_nodes_wrapped"], 2u);
  EXPECT_EQ(stats["host_nodes_not_wrapped_error"], 0u);
  EXPECT_EQ(stats["host_nodes_not_wrapped_full"], 0u);
  auto both = BothRenderings("graph_nodes.gpucap");
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    for (const char* fn : {"explicit_host_step", "captured_host_step"}) {
      std::set<std::string> tids;
      for (const Json& t : host[fn]["tids"].items) tids.insert(t.text);
      std::vector<const Ev*> runs;
      std::set<std::string> addresses;
      for (const Ev& v : both[r]) {
        if (v.name.rfind(std::string("HostNode: ") + fn, 0) != 0) continue;
        runs.push_back(&v);
        EXPECT_EQ(v.cat, "cuda_graph_host_node");
        EXPECT_GE(v.dur, spin_ns) << kRendering[r] << " " << v.name;
        EXPECT_EQ(v.at("function"), v.name.substr(10));
        EXPECT_EQ(tids.count(v.at("host thread")), 1u) << kRendering[r] << " ran on " << v.at("host thread");
        EXPECT_EQ(v.tid, v.at("host thread")) << kRendering[r] << ": on the thread that ran it";
        EXPECT_EQ(v.at("function address").rfind("0x", 0), 0u);
        EXPECT_NE(v.at("function address"), "0x0");
        addresses.insert(v.at("function address"));
      }
      EXPECT_EQ(runs.size(), host[fn]["replays"].u()) << kRendering[r] << " " << fn;
      EXPECT_EQ(runs.size(), m["counts"][std::string("host:") + fn].u()) << "each call the program saw";
      EXPECT_EQ(addresses.size(), 1u) << fn;
    }
    // Explicit graph: k_first -> host -> event record -> k_last, per replay.
    std::vector<const Ev*> first, hosts, last;
    for (const Ev& v : both[r]) {
      if (v.cat == "kernel" && KernelIs(v.name, "k_first")) first.push_back(&v);
      if (v.cat == "kernel" && KernelIs(v.name, "k_last")) last.push_back(&v);
      if (v.name.rfind("HostNode: explicit_host_step", 0) == 0) hosts.push_back(&v);
    }
    auto by_ts = [](const Ev* a, const Ev* b) { return a->ts < b->ts; };
    std::sort(first.begin(), first.end(), by_ts);
    std::sort(hosts.begin(), hosts.end(), by_ts);
    std::sort(last.begin(), last.end(), by_ts);
    ASSERT_EQ(first.size(), hosts.size());
    ASSERT_EQ(last.size(), hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
      EXPECT_LE(first[i]->ts + first[i]->dur, hosts[i]->ts) << kRendering[r] << " replay " << i;
      EXPECT_LE(hosts[i]->ts + hosts[i]->dur, last[i]->ts) << kRendering[r] << " replay " << i;
    }
  }
}

// Event-record nodes: CUPTI's CUDA_EVENT record of each run, no device
// timestamp (CUPTI 13.0 on the H200), drawn on the replay's stream between
// the last thing the node waits on (a host-node run in both graphs) and the
// first op that waits on it; the node id is a capture-time event-record node.
TEST(RenderCapture, EventRecordNodesSitBetweenTheirGraphNeighbours) {
  Json m;
  std::string error;
  ASSERT_TRUE(ParseJson(ReadFile(FixturePath("graph_nodes.expect.json")), &m, &error)) << error;
  auto c = format::LoadCapture(FixturePath("graph_nodes.gpucap"));
  ASSERT_TRUE(c.ok());
  std::set<std::string> record_nodes;  // capture-time event-record nodes (not clones)
  std::set<uint64_t> clones;
  for (const format::GraphEvent& e : c->graphs) {
    if (e.kind == format::GraphEventKind::kNodeCloned) clones.insert(e.node_id);
  }
  for (const format::GraphEvent& e : c->graphs) {
    if (e.kind == format::GraphEventKind::kNodeCreated && e.node_type == 7 && !clones.count(e.node_id)) {
      record_nodes.insert(std::to_string(e.node_id));
    }
  }
  ASSERT_EQ(record_nodes.size(), 2u) << "one per graph";
  const uint64_t explicit_runs = m["host_nodes"]["explicit_host_step"]["replays"].u();
  const uint64_t captured_runs = m["host_nodes"]["captured_host_step"]["replays"].u();
  auto both = BothRenderings("graph_nodes.gpucap");
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    // Per replay (correlation): the record, its host predecessor, its successor kernel.
    struct Replay {
      const Ev *record = nullptr, *successor = nullptr;
      std::string lane;
    };
    std::map<std::string, Replay> replays;
    std::vector<const Ev*> host_runs;
    size_t records = 0;
    std::set<std::string> events, nodes;
    for (const Ev& v : both[r]) {
      if (v.name == "EventRecord") {
        ++records;
        EXPECT_EQ(v.cat, "cuda_event");
        EXPECT_EQ(v.at("timing"), "between its graph neighbours (no device timestamp)");
        EXPECT_TRUE(v.has("cuda_event_id"));
        EXPECT_EQ(record_nodes.count(v.at("graph node id")), 1u) << v.at("graph node id");
        events.insert(v.at("cuda_event_id"));
        nodes.insert(v.at("graph node id"));
        EXPECT_EQ(replays[v.at("correlation")].record, nullptr) << "one record per replay";
        replays[v.at("correlation")].record = &v;
      }
      if (v.cat == "kernel" && (KernelIs(v.name, "k_last") || KernelIs(v.name, "cap_joined"))) {
        replays[v.at("correlation")].successor = &v;
        replays[v.at("correlation")].lane = v.lane;
      }
      if (v.cat == "cuda_graph_host_node") host_runs.push_back(&v);
    }
    EXPECT_EQ(records, explicit_runs + captured_runs) << kRendering[r];
    EXPECT_EQ(events.size(), 2u);
    EXPECT_EQ(nodes.size(), 2u);
    EXPECT_EQ(replays.size(), explicit_runs + captured_runs);
    for (const auto& [corr, rep] : replays) {
      ASSERT_NE(rep.record, nullptr) << kRendering[r] << " replay " << corr << " has no EventRecord";
      ASSERT_NE(rep.successor, nullptr);
      EXPECT_EQ(rep.record->lane, rep.lane) << "on the stream that runs the replay";
      EXPECT_LE(rep.record->ts + rep.record->dur, rep.successor->ts) << kRendering[r] << " " << corr;
      // The host run this record waits on: the last one that started before it.
      const Ev* host = nullptr;
      for (const Ev* h : host_runs) {
        if (h->ts <= rep.record->ts && (host == nullptr || h->ts > host->ts)) host = h;
      }
      ASSERT_NE(host, nullptr);
      EXPECT_LE(std::abs(rep.record->ts - (host->ts + host->dur)), 1) << kRendering[r] << " " << corr
                                                                      << ": starts where its host node ends";
    }
  }
}

// --- 6. sync spans ----------------------------------------------------------

TEST(RenderCapture, SyncSpansNameTheStreamAndEventRecordTheyWaitOn) {
  Json m;
  std::string error;
  ASSERT_TRUE(ParseJson(ReadFile(FixturePath("sync_events.expect.json")), &m, &error)) << error;
  const Json& counts = m["counts"];
  auto both = BothRenderings("sync_events.gpucap");
  ASSERT_EQ(both.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    std::map<std::string, uint64_t> kinds;
    std::map<std::string, const Ev*> record_call;  // correlation -> cudaEventRecord call
    for (const Ev& v : both[r]) {
      if (v.cat == "cuda_runtime" && v.name.rfind("cudaEventRecord", 0) == 0) record_call[v.at("correlation")] = &v;
    }
    EXPECT_EQ(record_call.size(), counts["event_record"].u()) << kRendering[r];
    std::set<std::string> waited_events;
    std::string waiting_stream;
    for (const Ev& v : both[r]) {
      if (v.cat != "cuda_sync") continue;
      kinds[v.name]++;
      bool waits = v.name == "Event Sync" || v.name == "Stream Wait Event";
      EXPECT_EQ(v.has("wait_on_stream"), waits) << v.name;
      EXPECT_EQ(v.has("wait_on_cuda_event_id"), waits) << v.name;
      EXPECT_EQ(v.has("wait_on_cuda_event_record_corr_id"), waits) << v.name;
      if (!waits) continue;
      // The record waited on is a cudaEventRecord call made before the wait.
      const Ev* rec = record_call.count(v.at("wait_on_cuda_event_record_corr_id"))
                          ? record_call[v.at("wait_on_cuda_event_record_corr_id")]
                          : nullptr;
      ASSERT_NE(rec, nullptr) << kRendering[r] << " " << v.name << " waits on correlation "
                              << v.at("wait_on_cuda_event_record_corr_id");
      EXPECT_LT(rec->ts, v.ts + v.dur);
      waited_events.insert(v.at("wait_on_cuda_event_id"));
      if (v.name == "Stream Wait Event") {
        // s1 waits on s0's event: another stream than its own.
        EXPECT_NE(v.at("wait_on_stream"), v.at("stream"));
        waiting_stream = v.at("stream");
      }
    }
    // The event synchronised on is the one recorded on the waiting stream.
    for (const Ev& v : both[r]) {
      if (v.name == "Event Sync") {
        EXPECT_EQ(v.at("wait_on_stream"), waiting_stream) << kRendering[r];
      }
    }
    EXPECT_EQ(waited_events.size(), 2u) << "produced and consumed";
    EXPECT_EQ(kinds["Event Sync"], counts["sync:event"].u()) << kRendering[r];
    EXPECT_EQ(kinds["Stream Wait Event"], counts["sync:stream_wait_event"].u()) << kRendering[r];
    EXPECT_EQ(kinds["Stream Sync"], counts["sync:stream"].u()) << kRendering[r];
    EXPECT_EQ(kinds["Context Sync"], counts["sync:context"].u()) << kRendering[r];
  }
}

// --- 7. the prepare phase ----------------------------------------------------

// Record-time windows (the marks --window-nvtx wrote) hold the work launched
// inside them: every op's launch call is in its window, and no op launched
// before the first window opens (NCCL's init, the warm-up, the model's set-up)
// is in any window, whenever the GPU ran it.
TEST(RenderCapture, FirstMarksWindowHoldsNoWorkLaunchedBeforeIt) {
  for (const char* fixture : {"nccl_graph.gpucap", "torch_train.gpucap", "allreduce-0.gpucap"}) {
    // The launches before the first open mark, from the capture itself.
    auto c = format::LoadCapture(FixturePath(fixture));
    ASSERT_TRUE(c.ok());
    uint64_t first_open = UINT64_MAX;
    for (const format::WindowMark& m : c->windows) {
      if (m.kind == format::WindowMarkKind::kOpen) first_open = std::min(first_open, m.timestamp_ns);
    }
    ASSERT_NE(first_open, UINT64_MAX) << fixture;
    builder::BuildOptions all;
    auto whole = BothRenderings(fixture, all);
    ASSERT_EQ(whole.size(), 2u);
    builder::BuildOptions o;
    o.window = "marks";
    auto windows = RenderWindows(fixture, o);
    ASSERT_GE(windows.size(), 3u) << fixture;
    for (int r = 0; r < 2; ++r) {
      // Correlations of the launches made before the first window opened,
      // from the whole capture's rendering: calls ended before the first
      // window's earliest slice (its window span starts at the open mark).
      int64_t window0_start = INT64_MAX;
      for (const Ev& v : windows[0][r]) window0_start = std::min(window0_start, v.ts);
      std::set<std::string> early;
      for (const Ev& v : whole[r]) {
        if ((v.cat == "cuda_runtime" || v.cat == "cuda_driver") && v.ts + v.dur < window0_start) {
          early.insert(v.at("correlation"));
        }
      }
      EXPECT_FALSE(early.empty()) << fixture << ": work launched before the first window";
      size_t ops = 0;
      for (size_t w = 0; w < windows.size(); ++w) {
        std::set<std::string> launched_here;
        for (const Ev& v : windows[w][r]) {
          if (v.cat == "cuda_runtime" || v.cat == "cuda_driver") launched_here.insert(v.at("correlation"));
        }
        for (const Ev& v : windows[w][r]) {
          if (v.cat != "kernel" && v.cat != "gpu_memcpy" && v.cat != "gpu_memset") continue;
          ++ops;
          EXPECT_EQ(early.count(v.at("correlation")), 0u)
              << kRendering[r] << " " << fixture << " window " << w << ": " << v.name << " launched before it";
          EXPECT_EQ(launched_here.count(v.at("correlation")), 1u)
              << kRendering[r] << " " << fixture << " window " << w << ": " << v.name << " not launched in it";
        }
      }
      EXPECT_GT(ops, 0u) << fixture;
    }
  }
}

}  // namespace
}  // namespace gpucap::testing
