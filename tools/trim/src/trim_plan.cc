#include "gpucap/tools/trim/trim_plan.h"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <unordered_set>

#include "gpucap/builder/graph_components.h"
#include "gpucap/builder/join_use.h"
#include "gpucap/builder/record_walk.h"

namespace gpucap::tools {
namespace {

using builder::Window;

// Takes the join's output and drops it: the plan needs only what the join
// says it referenced.
class DiscardSink : public builder::TraceSink {
 public:
  Status Begin(const builder::TraceHeader&) override { return Status::Ok(); }
  Status AddSlice(const builder::Slice&) override { return Status::Ok(); }
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override { return Status::Ok(); }
};

constexpr size_t kFamilies = std::bit_width(static_cast<uint32_t>(builder::kAllFamilies));

// Where the rows of one decoded chunk came from: per family, the walk index
// of each row (the decoder appends a family's rows in walk order).
struct RowOrigins {
  std::array<std::vector<uint32_t>, kFamilies> record_of_row;
};

class Planner {
 public:
  Planner(const builder::CaptureIndex& index, TrimPlan* plan) : idx_(index), plan_(*plan) {}

  // Keeps what the join of one window referenced.
  void AddWindow(const builder::WindowReport& report, const builder::JoinUse& use);
  // Keeps what the windows' references need from the capture's lists.
  void Finish();

 private:
  const RowOrigins& Origins(size_t chunk, uint32_t families);
  void Keep(size_t chunk, uint32_t record) {
    uint8_t& flag = plan_.records[chunk][record];
    if (!flag) plan_.records_kept++;
    flag = 1;
  }
  void KeepRanges();
  void KeepGraphsAndMetadata();
  void KeepClocks();

  const builder::CaptureIndex& idx_;
  TrimPlan& plan_;
  std::map<std::pair<size_t, uint32_t>, RowOrigins> origins_, previous_;  // by (chunk, families)
  // Across windows.
  std::vector<uint32_t> ranges_, range_events_, metadata_, counter_samples_;
  std::vector<uint64_t> graph_nodes_;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
};

const RowOrigins& Planner::Origins(size_t chunk, uint32_t families) {
  auto key = std::pair(chunk, families);
  if (auto it = origins_.find(key); it != origins_.end()) return it->second;
  RowOrigins& o = origins_[key];
  if (auto it = previous_.find(key); it != previous_.end()) return o = std::move(it->second);
  const format::Capture& c = idx_.capture();
  std::vector<uint64_t> raw;
  if (!format::DecompressChunk(*c.file, c.chunks[chunk], &raw).ok()) {
    raw.clear();  // the build skipped it as corrupt (and said so); so does the plan
  }
  const format::ChunkInfo& info = c.chunks[chunk].info;
  auto span = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(raw.data()), raw.empty() ? 0 : info.raw_size);
  std::vector<uint8_t>& flags = plan_.records[chunk];
  size_t walked = 0;
  std::vector<uint32_t> unreadable;
  builder::RecordWalk(idx_.decoder().shapes(), info).Run(span, [&](const builder::RawRecord& r) {
    walked++;
    if (r.layout == nullptr) {
      unreadable.push_back(r.index);
      return;
    }
    uint32_t family = builder::FamilyOf(r.kind);
    if ((family & families) != 0) o.record_of_row[std::countr_zero(family)].push_back(r.index);
  });
  // A flag for every record walked, so the writer walks in step.
  if (flags.size() != walked) {
    flags.assign(walked, 0);
    plan_.records_seen += walked;
  }
  // Records the decoder has no layout for: kept, so the trimmed build
  // reports the same skipped records.
  for (uint32_t i : unreadable) Keep(chunk, i);
  return o;
}

void Planner::AddWindow(const builder::WindowReport& report, const builder::JoinUse& use) {
  previous_ = std::move(origins_);
  origins_.clear();
  std::vector<const RowOrigins*> parts;
  for (const auto& [chunk, families] : report.chunks) parts.push_back(&Origins(chunk, families));
  for (const builder::JoinUse::Row& r : use.rows) {
    const std::vector<uint32_t>& records = parts[r.part]->record_of_row[std::countr_zero(r.family)];
    if (r.row < records.size()) Keep(report.chunks[r.part].first, records[r.row]);
  }
  ranges_.insert(ranges_.end(), use.ranges.begin(), use.ranges.end());
  range_events_.insert(range_events_.end(), use.range_events.begin(), use.range_events.end());
  metadata_.insert(metadata_.end(), use.metadata.begin(), use.metadata.end());
  counter_samples_.insert(counter_samples_.end(), use.counter_samples.begin(), use.counter_samples.end());
  graph_nodes_.insert(graph_nodes_.end(), use.graph_nodes.begin(), use.graph_nodes.end());
  first_ns_ = std::min(first_ns_, use.first_ns);
  last_ns_ = std::max(last_ns_, use.last_ns);
}

void Planner::Finish() {
  const format::Capture& c = idx_.capture();
  KeepRanges();
  KeepGraphsAndMetadata();
  plan_.counter_samples.assign(c.counter_samples.size(), 0);
  for (uint32_t i : counter_samples_) plan_.counter_samples[i] = 1;
  KeepClocks();
}

// Each range the join read, whole (its opening and closing events, as the
// builder's RangeIndex paired them), and the marks it drew. Names and
// payload schemas are definitions, like devices and threads: kept whole.
void Planner::KeepRanges() {
  const format::Capture& c = idx_.capture();
  plan_.ranges.assign(c.ranges.size(), 0);
  const std::vector<builder::Range>& ranges = idx_.ranges().ranges();
  for (uint32_t r : ranges_) {
    plan_.ranges[ranges[r].event] = 1;
    if (ranges[r].end_event != UINT32_MAX) plan_.ranges[ranges[r].end_event] = 1;
  }
  for (uint32_t e : range_events_) plan_.ranges[e] = 1;
  for (size_t i = 0; i < c.ranges.size(); ++i) {
    using K = format::RangeKind;
    switch (c.ranges[i].kind) {
      case K::kNameThread:
      case K::kNameDomain:
      case K::kNameCategory:
      case K::kPayloadSchema:
      case K::kPayloadEnum: plan_.ranges[i] = 1; break;
      default: break;
    }
  }
}

// The graph events of every node whose origin the join read, whole
// components (graph_components.h); the metadata it wrote, plus what is
// keyed to the capture or to ranges (definitions, kept whole).
void Planner::KeepGraphsAndMetadata() {
  const format::Capture& c = idx_.capture();
  builder::GraphComponents components(c.graphs);
  std::unordered_set<uint64_t> roots;
  for (uint64_t node : graph_nodes_) roots.insert(components.NodeRoot(node));
  plan_.graphs.assign(c.graphs.size(), 0);
  for (size_t i = 0; i < c.graphs.size(); ++i) plan_.graphs[i] = roots.count(components.EventRoot(c.graphs[i])) != 0;

  plan_.metadata.assign(c.metadata.size(), 0);
  for (uint32_t i : metadata_) plan_.metadata[i] = 1;
  for (size_t i = 0; i < c.metadata.size(); ++i) {
    using K = format::MetadataKey;
    if (c.metadata[i].key_kind == K::kGlobal || c.metadata[i].key_kind == K::kRange) plan_.metadata[i] = 1;
  }
}

// Clock samples: those around every time the windows convert, so the
// interpolation between neighbours gives the same nanoseconds.
void Planner::KeepClocks() {
  const format::Capture& c = idx_.capture();
  plan_.clocks.assign(c.clocks.size(), 0);
  if (first_ns_ == UINT64_MAX) return;
  uint64_t from = first_ns_, to = std::max(first_ns_, last_ns_);
  std::vector<size_t> by_time(c.clocks.size());
  std::iota(by_time.begin(), by_time.end(), 0);
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) { return c.clocks[a].cupti_ns < c.clocks[b].cupti_ns; });
  size_t first = 0, last = by_time.empty() ? 0 : by_time.size() - 1;
  for (size_t i = 0; i < by_time.size(); ++i) {
    if (c.clocks[by_time[i]].cupti_ns <= from) first = i;
  }
  for (size_t i = by_time.size(); i-- > 0;) {
    if (c.clocks[by_time[i]].cupti_ns >= to) last = i;
  }
  for (size_t i = first; i <= last && i < by_time.size(); ++i) plan_.clocks[by_time[i]] = 1;
}

}  // namespace

Result<TrimPlan> PlanTrim(const builder::CaptureIndex& index, const builder::BuildOptions& options, const builder::ProgressFn& progress) {
  TrimPlan plan;
  builder::Builder builder(index, options);
  auto windows = builder.MatchedWindows();
  if (!windows.ok()) return windows.status();
  plan.windows = *windows;
  Planner planner(index, &plan);
  DiscardSink discard;
  for (size_t i = 0; i < windows->size(); ++i) {
    const Window& w = (*windows)[i];
    if (progress) progress(w.label.empty() ? "window" : "window " + w.label, i + 1, windows->size());
    builder::WindowReport report;
    builder::JoinUse use;
    report.use = &use;
    GPUCAP_RETURN_IF_ERROR(builder.BuildWindow(w, &discard, &report));
    planner.AddWindow(report, use);
  }
  planner.Finish();
  plan.warnings = index.decoder().Describe(builder.decode_stats());
  return plan;
}

}  // namespace gpucap::tools
