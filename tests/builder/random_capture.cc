#include "random_capture.h"

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "gpucap/format/recording_state.h"
#include "synthetic_capture.h"

namespace gpucap::testing {
namespace {

using builder::testing::ApiRecord;
using builder::testing::KernelRecord;
using builder::testing::MemcpyRecord;
using builder::testing::SyntheticCapture;

constexpr uint64_t kStart = 1'790'857'026'000'000'000ull;  // DefaultSession's

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
};

struct Push {
  uint64_t domain;
};

}  // namespace

StepNaming RandomStepNaming(uint64_t seed) {
  switch (seed / 5 % 4) {  // apart from the window kind, which takes seed % 5
    case 2: return {"train#", R"(train#\d+)", true};
    case 3: return {"iteration ", R"(iteration \d+)", false};
    default: return {"ProfilerStep#", R"(ProfilerStep#\d+)", false};
  }
}

Status WriteRandomCapture(uint64_t seed, const std::string& path) {
  Gen g(seed);
  const StepNaming naming = RandomStepNaming(seed);
  format::SessionInfo session = builder::testing::DefaultSession();
  if (naming.recorded) session.options.emplace_back("GPUCAP_WINDOW_NVTX", naming.pattern);
  // One capture in four is a flight-recorder dump of a ring too small for
  // all of it: its oldest frames are gone, with launches whose ops remain.
  builder::testing::SyntheticOptions options;
  if (Gen(seed ^ 0x7e57).Chance(0.25)) options.ring_bytes = 3000 + Gen(seed ^ 0x5a5a).Below(30000);
  auto c = SyntheticCapture::Create(path, session, {builder::testing::H200(0)}, options);
  if (!c.ok()) return c.status();
  SyntheticCapture& cap = **c;
  GPUCAP_RETURN_IF_ERROR(cap.String(0x1000, "_Z6kernelv"));
  struct Rec {
    uint64_t t;  // when CUPTI would have written it: its start
    std::function<void()> write;
  };
  std::vector<Rec> records;  // activity, cut into buffers at the end
  std::vector<std::vector<format::RangeEvent>> by_thread;
  std::vector<format::GraphEvent> graph_events;
  std::vector<format::WindowMark> marks;

  const uint32_t threads = 1 + g.Below(4);
  const uint64_t span = 100'000 + g.Below(300'000);  // ns
  by_thread.resize(threads);
  uint32_t correlation = 1;
  uint64_t range_id = 1;
  const uint64_t domains[] = {0, 7, 9};
  const std::string step9 = naming.prefix + "9";
  const char* names[] = {"r0", "r1", "r2", "outer", "inner", step9.c_str()};
  auto ev = [&](uint32_t thread, format::RangeKind kind, uint64_t t, std::string name = {}, uint64_t domain = 0,
                uint64_t id = 0) {
    format::RangeEvent e;
    e.kind = kind;
    e.timestamp_ns = t;
    e.os_tid = 100 + thread;
    e.name = std::move(name);
    e.domain = domain;
    e.id = id;
    by_thread[thread].push_back(std::move(e));
  };
  auto launch = [&](uint32_t thread, uint64_t t, uint32_t cbid) {
    ApiRecord a;
    a.cbid = cbid;
    a.start = t;
    a.end = t + 50 + g.Below(500);
    if (g.Chance(0.02)) a.start = a.end = 0;  // CUPTI had no timestamp for it
    a.tid = 100 + thread;
    a.correlation = correlation;
    records.push_back({t, [&cap, a] { cap.Api(a); }});
    return correlation++;
  };

  // Steps on the main thread, default domain; maybe the last never pops.
  uint64_t steps = g.Chance(0.7) ? 1 + g.Below(4) : 0;
  for (uint64_t s = 0; s < steps; ++s) {
    uint64_t a = kStart + 1000 + s * span / (steps + 1), b = a + span / (steps + 1) - g.Below(2000);
    ev(0, format::RangeKind::kPush, a, naming.prefix + std::to_string(s));
    bool last_open = s + 1 == steps && g.Chance(0.2);
    if (!last_open) ev(0, format::RangeKind::kPop, b);
    // A record-time mark for it, sometimes without its close.
    format::WindowMark open;
    open.kind = format::WindowMarkKind::kOpen;
    open.timestamp_ns = a;
    open.id = s + 1;
    open.label = naming.prefix + std::to_string(s);
    marks.push_back(open);
    if (g.Chance(0.8)) {
      format::WindowMark close = open;
      close.kind = format::WindowMarkKind::kClose;
      close.timestamp_ns = b;
      marks.push_back(close);
    }
  }

  // Capture-time graph nodes, cloned at instantiation.
  std::vector<std::vector<uint64_t>> graphs;  // clone ids per graph
  uint64_t next_node = 1000;
  for (uint64_t gi = 0, n = g.Below(3); gi < n; ++gi) graphs.emplace_back();

  for (uint32_t th = 0; th < threads; ++th) {
    std::vector<Push> open;
    std::vector<std::pair<uint64_t, std::string>> started;  // start/end ranges not yet ended
    uint64_t t = kStart + 1000 + g.Below(3000);
    const uint64_t end = kStart + span;
    size_t capture_graph = 0;
    while (t < end) {
      t += 50 + g.Below(3000);
      uint64_t action = g.Below(100);
      if (action < 25 && open.size() < 4) {
        uint64_t d = domains[g.Below(3)];
        ev(th, format::RangeKind::kPush, t, names[g.Below(6)] + std::string(d ? "/d" : ""), d);
        open.push_back({d});
      } else if (action < 45 && !open.empty()) {
        // Pops the innermost of a domain: with two domains interleaved this
        // is not always the innermost push of the thread.
        size_t i = g.Below(open.size());
        uint64_t d = open[i].domain;
        ev(th, format::RangeKind::kPop, t, {}, d);
        for (size_t j = open.size(); j-- > 0;) {
          if (open[j].domain == d) {
            open.erase(open.begin() + j);
            break;
          }
        }
      } else if (action < 47) {
        ev(th, format::RangeKind::kPop, t, {}, domains[g.Below(3)]);  // maybe unmatched
      } else if (action < 52) {
        uint64_t id = range_id++;
        ev(th, format::RangeKind::kStart, t, "span" + std::to_string(g.Below(3)), 0, id);
        started.push_back({id, ""});
      } else if (action < 57 && !started.empty()) {
        // Ended here, or on another thread a little later.
        size_t i = g.Below(started.size());
        uint32_t on = g.Chance(0.5) ? th : static_cast<uint32_t>(g.Below(threads));
        ev(on, format::RangeKind::kEnd, t + g.Below(500), {}, 0, started[i].first);
        started.erase(started.begin() + i);
      } else if (action < 62 && !graphs.empty() && capture_graph < graphs.size() && th == 0) {
        // Capture a graph here: its nodes take the ranges open now.
        for (uint64_t k = 0, n = 1 + g.Below(3); k < n; ++k) {
          format::GraphEvent node;
          node.kind = format::GraphEventKind::kNodeCreated;
          node.graph_id = static_cast<uint32_t>(capture_graph + 1);
          node.node_id = next_node;
          node.node_type = 0;
          node.os_tid = 100 + th;
          node.timestamp_ns = t + k;
          node.function_name = "_Z6kernelv";
          graph_events.push_back(node);
          format::GraphEvent clone;
          clone.kind = format::GraphEventKind::kNodeCloned;
          clone.node_id = next_node + 50000;
          clone.original_node_id = next_node;
          clone.timestamp_ns = t + k + 1;
          graph_events.push_back(clone);
          graphs[capture_graph].push_back(next_node + 50000);
          next_node++;
        }
        capture_graph++;
      } else if (action < 70 && capture_graph > 0) {
        // Replay a captured graph: one launch, one kernel per node.
        const std::vector<uint64_t>& clones = graphs[g.Below(capture_graph)];
        uint32_t corr = launch(th, t, 311);
        uint64_t at = t + 200 + g.Below(2000);
        for (uint64_t node : clones) {
          KernelRecord k;
          k.start = at;
          k.end = at + 100 + g.Below(400);
          k.correlation = corr;
          k.graph_node_id = node;
          k.name_pointer = 0x1000;
          k.stream = 7 + static_cast<uint32_t>(g.Below(2));
          at = k.end + 10;
          records.push_back({k.start, [&cap, k] { cap.Kernel(k); }});
        }
      } else {
        // An eager launch; its work runs later, sometimes past a window.
        bool copy = g.Chance(0.15);
        uint32_t corr = launch(th, t, 211);  // cudaLaunchKernel for both: a launch the lookahead follows
        uint64_t at = t + 100 + g.Below(copy ? 2000 : 20000);
        if (copy) {
          MemcpyRecord m;
          m.start = at;
          m.end = at + 300;
          m.bytes = 4096;
          m.correlation = corr;
          records.push_back({m.start, [&cap, m] { cap.Memcpy(m); }});
        } else {
          KernelRecord k;
          k.start = at;
          k.end = at + 100 + g.Below(3000);
          k.correlation = corr;
          k.name_pointer = 0x1000;
          k.stream = 7 + static_cast<uint32_t>(g.Below(3));
          records.push_back({k.start, [&cap, k] { cap.Kernel(k); }});
        }
      }
    }
    // Some ranges are never closed.
    while (!open.empty()) {
      if (g.Chance(0.6)) ev(th, format::RangeKind::kPop, end + 10 + g.Below(100), {}, open.back().domain);
      open.pop_back();
    }
  }
  // Range events per thread in time order, thread by thread, as the
  // recorder's per-thread batches arrive.
  for (auto& events : by_thread) {
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
    for (format::RangeEvent& e : events) GPUCAP_RETURN_IF_ERROR(cap.Message(e));
  }
  for (format::GraphEvent& e : graph_events) GPUCAP_RETURN_IF_ERROR(cap.Message(e));
  for (format::WindowMark& m : marks) GPUCAP_RETURN_IF_ERROR(cap.Message(m));
  // Sometimes a paused stretch in the middle, whose calls were recorded
  // anyway (a pause that will detach keeps CUPTI's kinds on until then).
  if (g.Chance(0.3)) {
    uint64_t from = kStart + 1000 + g.Below(span / 2), to = from + 2000 + g.Below(span / 3);
    for (auto [state, at] : {std::pair{format::RecordingState::kPaused, from},
                             std::pair{format::RecordingState::kRecording, to}}) {
      format::RecordingChange change;
      change.state = state;
      change.why = "random";
      change.timestamp_ns = at;
      change.os_tid = 100;
      GPUCAP_RETURN_IF_ERROR(cap.Message(format::RecordingChangeBlob(change)));
    }
  }
  // Activity in buffers of random sizes, each a stretch of time as CUPTI
  // fills them, with records a little out of order inside, and the buffers
  // delivered out of order (swapped with one of the next three).
  std::stable_sort(records.begin(), records.end(), [](const Rec& a, const Rec& b) { return a.t < b.t; });
  std::vector<std::vector<Rec>> chunks;
  for (size_t i = 0; i < records.size();) {
    size_t n = 1 + g.Below(24);
    chunks.emplace_back(records.begin() + i, records.begin() + std::min(records.size(), i + n));
    std::shuffle(chunks.back().begin(), chunks.back().end(), g.rng);
    i += n;
  }
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    if (g.Chance(0.3)) std::swap(chunks[i], chunks[i + 1 + g.Below(std::min<size_t>(3, chunks.size() - i - 1))]);
  }
  for (const std::vector<Rec>& chunk : chunks) {
    for (const Rec& r : chunk) r.write();
    GPUCAP_RETURN_IF_ERROR(cap.EndChunk());
  }
  return cap.Close();
}

}  // namespace gpucap::testing
