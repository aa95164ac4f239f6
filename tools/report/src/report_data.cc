// One capture's part of the report data. Times are integer ns throughout
// (the page formats them), taken as they are from the stats library.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpucap/tools/info/capture_info.h"
#include "gpucap/tools/stats/stats_table.h"
#include "report_parts.h"

namespace gpucap::tools::report_internal {
namespace {

void WriteDevices(const GpuStats& s, JsonOut* j) {
  j->Key("devices").BeginArray();
  for (const auto& [device, d] : s.devices) {
    j->BeginObject()
        .Field("device", device)
        .Field("compute_ns", d.compute_ns)
        .Field("communication_ns", d.communication_ns)
        .Field("memcpy_ns", d.memcpy_ns)
        .Field("memset_ns", d.memset_ns)
        .Field("busy_ns", d.busy_ns)
        .Field("idle_ns", d.idle_ns)
        .EndObject();
  }
  j->EndArray();
}

void WriteWindows(const CaptureStats& cs, int64_t t0, JsonOut* j) {
  j->Key("windows").BeginArray();
  for (const WindowStats& w : cs.windows) {
    j->BeginObject()
        .Field("index", w.window.index)
        .Field("label", w.window.label)
        .Field("kind", WindowKind(w.window.label))
        .Field("start_ns", w.start_ns - t0)
        .Field("dur_ns", w.end_ns - w.start_ns)
        .Field("kernel_ns", w.stats.KernelNs());
    WriteDevices(w.stats, j);
    j->EndObject();
  }
  j->EndArray();
}

// Per kind of window, the kernels table `gpucap stats` prints for those
// windows, cut to the top rows.
void WriteKinds(const CaptureStats& cs, size_t top, JsonOut* j) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<GpuStats, std::vector<uint32_t>>> kinds;
  for (const WindowStats& w : cs.windows) {
    std::string kind = WindowKind(w.window.label);
    auto [it, added] = kinds.try_emplace(kind);
    if (added) order.push_back(kind);
    it->second.first.Merge(w.stats);
    it->second.second.push_back(w.window.index);
  }
  j->Key("kinds").BeginArray();
  for (const std::string& kind : order) {
    const auto& [stats, indices] = kinds[kind];
    j->BeginObject().Field("kind", kind).Key("windows").BeginArray();
    for (uint32_t i : indices) j->Uint(i);
    j->EndArray();
    Table kernels = StatsTables(stats, top).front();  // "kernels": time_pct, total, count, mean, ...
    j->Field("kernels_left_out", static_cast<uint64_t>(kernels.rows_left_out));
    j->Key("kernels").BeginArray();
    for (const auto& row : kernels.rows) {
      j->BeginObject()
          .Field("name", std::get<std::string>(row.back()))
          .Field("total_ns", std::get<int64_t>(row[1]))
          .Field("count", std::get<int64_t>(row[2]))
          .Field("mean_ns", std::get<int64_t>(row[3]))
          .EndObject();
    }
    j->EndArray().EndObject();
  }
  j->EndArray();
}

// What a stream is for, by what ran on it: each kind that took a tenth of
// its op time or more, the largest first ("NCCL", "compute", "copy" for
// memcpy and memset, "compute + copy", ...).
std::string StreamRole(const StreamWork& w) {
  // In double: sums of a hostile capture's durations can be near 2^63.
  auto d = [](int64_t ns) { return static_cast<double>(ns); };
  std::vector<std::pair<double, const char*>> kinds = {
      {d(w.communication_ns), "NCCL"}, {d(w.compute_ns), "compute"}, {d(w.memcpy_ns) + d(w.memset_ns), "copy"}};
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  double total = kinds[0].first + kinds[1].first + kinds[2].first;
  std::string role;
  for (const auto& [ns, name] : kinds) {
    if (ns > 0 && ns * 10 >= total) role += (role.empty() ? "" : " + ") + std::string(name);
  }
  return role;
}

// The streams a capture's strips and delay charts draw: the busiest, as
// many as the options and kStripCells allow for this many bins.
std::set<StreamKey> DrawnStreams(const CaptureStats& cs, const ReportOptions& options, size_t bins) {
  size_t most = std::max<size_t>(1, std::min(options.max_strip_streams, kStripCells / bins));
  std::vector<std::pair<int64_t, StreamKey>> by_busy;
  for (const auto& [key, spans] : cs.timeline.busy) by_busy.emplace_back(SpansLength(spans), key);
  for (const auto& [key, d] : cs.timeline.delays) {
    if (!cs.timeline.busy.count(key)) by_busy.emplace_back(0, key);
  }
  std::stable_sort(by_busy.begin(), by_busy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::set<StreamKey> drawn;
  for (size_t i = 0; i < by_busy.size() && i < most; ++i) drawn.insert(by_busy[i].second);
  return drawn;
}

// Each drawn stream's busy spans, as ns busy per bin over [t0, t1): the
// bins of a stream add up to its busy time in `gpucap stats` (spans of ops
// past t1 stay in the last bin). One stream's bins at a time in memory.
void WriteStrips(const CaptureStats& cs, const std::set<StreamKey>& drawn, int64_t t0, int64_t t1, size_t bins,
                 JsonOut* j) {
  for (const auto& [key, spans] : cs.timeline.busy) {
    for (const auto& span : spans) t1 = std::max(t1, span.second);
  }
  int64_t bin_ns = std::max<int64_t>(1, (t1 - t0 + static_cast<int64_t>(bins) - 1) / static_cast<int64_t>(bins));
  j->Key("strips").BeginObject().Field("start_ns", int64_t{0}).Field("bin_ns", bin_ns);
  j->Field("bins", static_cast<uint64_t>(bins)).Key("streams").BeginArray();
  uint64_t left_out = 0;
  int64_t left_out_busy = 0;
  std::vector<int64_t> busy;
  for (const auto& [key, spans] : cs.timeline.busy) {
    if (!drawn.count(key)) {
      left_out++;
      if (__builtin_add_overflow(left_out_busy, SpansLength(spans), &left_out_busy)) left_out_busy = INT64_MAX;
      continue;
    }
    busy.assign(bins, 0);
    int64_t total = 0;
    for (auto [a, b] : spans) {
      total += b - a;
      if (a < t0) {  // an op launched in a window but started before it: bin 0
        busy[0] += std::min(b, t0) - a;
        a = t0;
      }
      a -= t0;
      b -= t0;
      while (a < b) {
        size_t bin = std::min(bins - 1, static_cast<size_t>(a / bin_ns));
        int64_t end = bin + 1 == bins ? b : std::min(b, static_cast<int64_t>(bin + 1) * bin_ns);
        busy[bin] += end - a;
        a = end;
      }
    }
    auto work = cs.timeline.work.find(key);
    j->BeginObject().Field("device", key.first).Field("stream", key.second).Field("busy_ns", total);
    j->Field("role", work == cs.timeline.work.end() ? std::string() : StreamRole(work->second));
    j->Key("busy").BeginArray();
    for (int64_t v : busy) j->Int(v);
    j->EndArray().EndObject();
  }
  j->EndArray().Field("streams_left_out", left_out).Field("left_out_busy_ns", left_out_busy).EndObject();
}

// Bin edges 1-2-5 from 0 up: 0, 1 us, 2 us, 5 us, ... 10 s, then the rest.
const std::vector<int64_t>& DelayEdges() {
  static const std::vector<int64_t> edges = [] {
    std::vector<int64_t> e = {0};
    for (int64_t decade = 1000; decade <= 1'000'000'000; decade *= 10) {
      for (int64_t m : {1, 2, 5}) e.push_back(m * decade);
    }
    e.push_back(10'000'000'000);
    return e;
  }();
  return edges;
}

void WriteDistribution(std::string_view key, std::vector<int64_t> v, JsonOut* j) {
  std::sort(v.begin(), v.end());
  const std::vector<int64_t>& edges = DelayEdges();
  // counts[i]: samples in [edges[i], edges[i+1]); negative delays (clock
  // skew between CPU and GPU timestamps) in the first, the rest in the last.
  std::vector<uint64_t> counts(edges.size(), 0);
  for (int64_t x : v) {
    size_t i = std::upper_bound(edges.begin(), edges.end(), x) - edges.begin();
    counts[i == 0 ? 0 : i - 1]++;
  }
  size_t used = counts.size();
  while (used > 1 && counts[used - 1] == 0) used--;
  j->Key(key).BeginObject().Field("count", static_cast<uint64_t>(v.size()));
  j->Field("p50_ns", Percentile(v, 0.5)).Field("p90_ns", Percentile(v, 0.9)).Field("p99_ns", Percentile(v, 0.99));
  j->Field("max_ns", v.empty() ? int64_t{0} : v.back());
  j->Key("edges_ns").BeginArray();
  for (size_t i = 0; i < used; ++i) j->Int(edges[i]);
  j->EndArray().Key("counts").BeginArray();
  for (size_t i = 0; i < used; ++i) j->Uint(counts[i]);
  j->EndArray().EndObject();
}

// Launch delays of the drawn streams, one each, and of all the others
// together (stream null), so every launched op is counted once.
void WriteDelays(const CaptureStats& cs, const std::set<StreamKey>& drawn, JsonOut* j) {
  j->Key("delays").BeginArray();
  LaunchDelays rest;
  uint64_t rest_streams = 0;
  for (const auto& [key, d] : cs.timeline.delays) {
    if (!drawn.count(key)) {
      rest.launch_to_start.insert(rest.launch_to_start.end(), d.launch_to_start.begin(), d.launch_to_start.end());
      rest.return_to_start.insert(rest.return_to_start.end(), d.return_to_start.begin(), d.return_to_start.end());
      rest_streams++;
      continue;
    }
    j->BeginObject().Field("device", key.first).Field("stream", key.second);
    WriteDistribution("launch_to_start", d.launch_to_start, j);
    WriteDistribution("return_to_start", d.return_to_start, j);
    j->EndObject();
  }
  if (rest_streams > 0) {
    j->BeginObject().Key("device").Null().Key("stream").Null().Field("streams", rest_streams);
    WriteDistribution("launch_to_start", std::move(rest.launch_to_start), j);
    WriteDistribution("return_to_start", std::move(rest.return_to_start), j);
    j->EndObject();
  }
  j->EndArray();
}

void WriteCounters(const CaptureStats& cs, int64_t t0, size_t max_points, JsonOut* j) {
  j->Key("counters").BeginArray();
  for (const auto& [name, c] : cs.timeline.counters) {
    if (c.points.empty()) continue;
    size_t n = c.points.size();
    size_t step = std::max<size_t>(1, (n + max_points - 1) / std::max<size_t>(1, max_points));
    j->BeginObject().Field("name", c.name).Field("unit", c.unit).Field("samples", static_cast<uint64_t>(n));
    j->Key("t_ns").BeginArray();
    for (size_t i = 0; i < n; i += step) j->Int(c.points[i].first - t0);
    j->EndArray().Key("values").BeginArray();
    for (size_t i = 0; i < n; i += step) j->Double(c.points[i].second, 3);
    j->EndArray().EndObject();
  }
  j->EndArray();
}

}  // namespace

void WriteCapture(const CaptureData& c, const ReportOptions& options, JsonOut* j) {
  const CaptureStats& cs = c.stats;
  int64_t t0 = cs.windows.front().start_ns, t1 = cs.windows.front().end_ns;
  for (const WindowStats& w : cs.windows) {
    t0 = std::min(t0, w.start_ns);
    t1 = std::max(t1, w.end_ns);
  }
  j->BeginObject()
      .Field("capture", static_cast<uint64_t>(c.position))
      .Field("path", c.index->path())
      .Field("rank", cs.rank)
      .Field("world_size", cs.world_size)
      .Field("host", cs.host)
      .Field("start_realtime_ns", t0)
      .Field("span_ns", t1 - t0);
  j->Key("info").Raw(InfoJson(DescribeCapture(*c.index)));
  j->Key("warnings").BeginArray();
  for (const std::string& w : cs.warnings) j->String(w);
  j->EndArray();
  WriteWindows(cs, t0, j);
  WriteKinds(cs, options.top_kernels, j);
  size_t bins = std::clamp<size_t>(options.strip_bins, 1, kMaxStripBins);
  std::set<StreamKey> drawn = DrawnStreams(cs, options, bins);
  WriteStrips(cs, drawn, t0, t1, bins, j);
  WriteDelays(cs, drawn, j);
  WriteCounters(cs, t0, options.max_counter_points, j);
  j->EndObject();
}

}  // namespace gpucap::tools::report_internal
