#include "gpucap/tools/info/capture_info.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>

#include "gpucap/builder/window.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/tools/json/json_out.h"

namespace gpucap::tools {
namespace {

using format::GraphEventKind;
using format::RangeKind;
using format::WindowMarkKind;

std::string NodeTypeName(uint32_t type) {
  static const char* kNames[] = {"kernel", "memcpy", "memset", "host", "graph", "empty", "wait_event", "event_record"};
  return type < std::size(kNames) ? kNames[type] : "type " + std::to_string(type);
}

std::string Seconds(uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f s", ns / 1e9);
  return buf;
}

// 2026-11-29T16:44:03.123Z
std::string Iso8601(int64_t realtime_ns) {
  time_t s = static_cast<time_t>(realtime_ns / 1'000'000'000);
  tm t{};
  gmtime_r(&s, &t);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                t.tm_hour, t.tm_min, t.tm_sec, static_cast<int>(realtime_ns % 1'000'000'000 / 1'000'000));
  return buf;
}

std::string Hex(const std::array<uint8_t, 16>& bytes) {
  std::string s;
  char buf[3];
  for (uint8_t b : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", b);
    s += buf;
  }
  return s;
}

// The recording intervals: a summary, then the first of those that recorded.
void RecordingText(const CaptureInfo& in, std::ostream& o) {
  if (in.recording.empty()) return;
  using format::RecordingState;
  uint64_t n[3] = {}, ns[3] = {};
  for (const format::RecordingInterval& r : in.recording) {
    n[static_cast<int>(r.state)]++;
    ns[static_cast<int>(r.state)] += r.end_ns - r.start_ns;
  }
  o << "recording " << in.recording.size() << " intervals:";
  for (RecordingState st : {RecordingState::kSampled, RecordingState::kRecording, RecordingState::kPaused}) {
    int k = static_cast<int>(st);
    o << (st == RecordingState::kSampled ? " " : ", ") << n[k] << " " << format::RecordingStateName(st) << " ("
      << Seconds(ns[k]) << ")";
  }
  o << "\n";
  size_t shown = 0, on = n[1] + n[2];
  for (const format::RecordingInterval& r : in.recording) {
    if (r.state == RecordingState::kPaused) continue;
    if (shown++ == 8) {
      o << "          ... " << on - 8 << " more\n";
      break;
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "          %-9s +%.6f s for %.3f ms: ", format::RecordingStateName(r.state),
                  (r.start_ns - std::min(r.start_ns, in.start_ns)) / 1e9, (r.end_ns - r.start_ns) / 1e6);
    o << buf << r.why << "\n";
  }
}

}  // namespace

bool CaptureInfo::Intact() const {
  bool drops = recorder && (recorder->cupti_dropped_records || recorder->buffers_dropped_pool_empty ||
                            recorder->buffers_dropped_queue_full || recorder->messages_dropped ||
                            !recorder->writer_error.empty());
  return damage_lines.empty() && contradictions.empty() && damage.empty() && sequence_gaps == 0 && !drops &&
         has_trailer && clean_shutdown;
}

namespace {

void CountActivity(const format::Capture& c, CaptureInfo& in) {
  for (const format::ChunkView& chunk : c.chunks) {
    for (const format::KindCount& k : chunk.info.kind_counts) in.records_per_kind[k.kind] += k.count;
    in.records += chunk.info.record_count;
    in.raw_bytes += chunk.info.raw_size;
    in.stored_bytes += chunk.stored.size();
    if (chunk.info.min_start_ns && (!in.activity_first_ns || chunk.info.min_start_ns < in.activity_first_ns)) {
      in.activity_first_ns = chunk.info.min_start_ns;
    }
    in.activity_last_ns = std::max({in.activity_last_ns, chunk.info.max_start_ns, chunk.info.max_end_ns});
  }
  in.chunks = c.chunks.size();
  if (c.trailer) in.records_written = c.trailer->activity_records;
  in.strings = c.strings.size();
  for (const format::ThreadInfo& t : c.threads) in.threads.emplace_back(t.os_tid, t.name);
  for (const format::StreamInfo& s : c.streams) ++in.streams_by_priority[s.priority];
}

void CountRanges(const builder::CaptureIndex& index, CaptureInfo& in) {
  const format::Capture& c = index.capture();
  // Ranges as the builder pairs them, counted per domain.
  const builder::RangeIndex& ranges = index.ranges();
  in.range_events = c.ranges.size();
  // Names counted from one sorted list, not trees of names: under emit_nvtx
  // every operator's range name is distinct, and trees of a million names
  // took more memory than the ranges themselves.
  std::map<uint64_t, uint64_t> names_by_domain;  // distinct names
  std::map<uint64_t, uint64_t> ranges_by_domain;
  std::vector<std::pair<std::string_view, uint64_t>> named;  // (name, domain)
  named.reserve(ranges.ranges().size());
  for (const builder::Range& r : ranges.ranges()) {
    (r.push_pop ? in.push_pop_ranges : in.start_end_ranges)++;
    ranges_by_domain[r.domain]++;
    named.emplace_back(r.name, r.domain);
  }
  std::sort(named.begin(), named.end());
  std::vector<std::pair<std::string, uint64_t>> names;  // name -> ranges, used more than once
  for (size_t i = 0; i < named.size();) {
    size_t end = i;
    while (end < named.size() && named[end].first == named[i].first) {
      if (end == i || named[end].second != named[end - 1].second) names_by_domain[named[end].second]++;
      end++;
    }
    // Names used once say nothing about frequency (and torch's autograd
    // ranges are all distinct).
    if (end - i >= 2) names.emplace_back(std::string(named[i].first), end - i);
    i = end;
  }
  named = {};
  for (const format::RangeEvent& e : c.ranges) {
    if (e.kind == RangeKind::kMark) {
      in.range_marks++;
      ranges_by_domain.try_emplace(e.domain, 0);
    }
    if (e.kind == RangeKind::kNameDomain) ranges_by_domain.try_emplace(e.domain, 0);
    if (e.kind == RangeKind::kPayloadSchema) in.payload_schemas++;
    if (e.kind == RangeKind::kPayloadEnum) in.payload_enums++;
    if (!e.ext_payloads.empty()) in.payload_events++;
  }
  in.unclosed_ranges = ranges.unclosed();
  in.unmatched_range_ends = ranges.unmatched_ends();
  for (auto [domain, n] : ranges_by_domain) {
    std::string name(ranges.DomainName(domain));
    if (name.empty() && domain == 0) name = "(default)";
    in.domains.push_back({domain, name, n, names_by_domain[domain]});
  }
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (names.size() > 10) names.resize(10);
  in.top_ranges = std::move(names);
}

void CountGraphs(const format::Capture& c, CaptureInfo& in) {
  std::set<uint32_t> graphs;
  for (const format::GraphEvent& g : c.graphs) {
    switch (g.kind) {
      case GraphEventKind::kGraphCreated:
      case GraphEventKind::kGraphCloned: graphs.insert(g.graph_id); break;
      case GraphEventKind::kNodeCreated:
        in.graph_nodes++;
        in.nodes_by_type[NodeTypeName(g.node_type)]++;
        break;
      case GraphEventKind::kNodeCloned: in.node_clones++; break;
      case GraphEventKind::kDependencyAdded: in.graph_edges++; break;
      case GraphEventKind::kExecCreated: in.graph_execs++; break;
      case GraphEventKind::kExecUpdated: in.graph_updates++; break;
      case GraphEventKind::kHostNodeRun: in.host_node_runs++; break;
      default: break;
    }
  }
  in.graphs = graphs.size();
}

void CountMarks(const builder::CaptureIndex& index, CaptureInfo& in) {
  const format::Capture& c = index.capture();
  std::set<std::string> labels;
  for (const format::WindowMark& m : c.windows) {
    if (m.kind == WindowMarkKind::kOpen) in.marks_open++;
    if (m.kind == WindowMarkKind::kClose) in.marks_close++;
    if (m.kind == WindowMarkKind::kInstant) in.marks_instant++;
    if (!m.label.empty() && labels.insert(m.label).second) in.mark_labels.push_back(m.label);
  }
  if (auto spec = builder::ParseWindowSpec("marks"); spec.ok()) {
    auto windows = builder::ResolveWindows(*spec, c, index.extent(), index.ranges());
    if (windows.ok()) in.mark_windows = windows->size();
  }
}

}  // namespace

CaptureInfo DescribeCapture(const builder::CaptureIndex& index) {
  const format::Capture& c = index.capture();
  CaptureInfo in;
  in.path = index.path();
  in.file_bytes = c.file->size();
  in.format_major = c.file->header().major;
  in.format_minor = c.file->header().minor;
  in.session = c.session;
  in.devices = c.devices;
  in.start_ns = index.extent().start_ns;
  in.end_ns = index.extent().end_ns;
  in.start_realtime_ns = index.clock().ToRealtime(in.start_ns);
  in.clock_samples = c.clocks.size();

  in.frames = c.report.frames;
  in.frames_by_type = c.report.frames_by_type;
  in.unknown_frame_types = c.report.unknown_types;

  CountActivity(c, in);

  CountRanges(index, in);

  CountGraphs(c, in);

  CountMarks(index, in);

  in.counters = c.counter_defs;
  in.counter_samples = c.counter_samples.size();
  in.metadata_blobs = c.metadata.size();
  std::set<std::string> meta;
  for (const format::MetadataBlob& b : c.metadata) {
    if (meta.insert(b.name).second) in.metadata_names.push_back(b.name);
  }
  in.recording = format::RecordingIntervals(c.metadata, in.end_ns);

  if (c.trailer) {
    in.recorder = c.trailer->stats;
  } else if (!c.stats.empty()) {
    in.recorder = c.stats.back();
  }
  in.has_trailer = c.trailer.has_value();
  in.clean_shutdown = c.trailer && c.trailer->clean_shutdown;
  if (c.trailer) in.stop_reason = c.trailer->stop_reason;
  if (c.trailer) in.trigger = c.trailer->trigger;

  in.damage = c.report.damage;
  in.tail_bytes_lost = c.report.tail_bytes_lost;
  in.sequence_gaps = c.report.sequence_gaps;
  in.damage_lines = c.report.Describe(in.path);
  in.contradictions = index.Warnings();
  return in;
}

namespace {

void SessionLines(const CaptureInfo& in, std::ostringstream& o) {
  if (in.session) {
    const format::SessionInfo& s = *in.session;
    o << "process   " << s.process_name << " pid " << s.pid << " on " << s.host << "\n";
    o << "command  ";
    for (const auto& a : s.command_line) o << " " << a;
    o << "\n";
    o << "recorder  " << s.tool_version << ", CUPTI " << s.cupti_runtime_version << " (headers "
      << s.cupti_header_version << "), CUDA driver " << s.cuda_driver_version << ", runtime "
      << s.cuda_runtime_version << "\n";
    if (s.rank >= 0) o << "rank      " << s.rank << " of " << s.world_size << " (local " << s.local_rank << ")\n";
  } else {
    o << "session   missing (damaged, or cut before it was written)\n";
  }
  for (const format::DeviceInfo& d : in.devices) {
    o << "device " << d.id << "  " << d.name << ", sm_" << d.compute_major << d.compute_minor << ", " << d.num_sms
      << " SMs, " << (d.total_global_mem >> 20) << " MiB";
    if (!d.pci_bus_id.empty()) o << ", " << d.pci_bus_id;
    o << "\n";
  }
  if (in.end_ns > in.start_ns) {
    o << "time      " << Iso8601(in.start_realtime_ns) << ", " << Seconds(in.end_ns - in.start_ns) << " recorded";
    if (in.activity_last_ns > in.activity_first_ns) o << ", " << Seconds(in.activity_last_ns - in.activity_first_ns) << " of GPU activity";
    o << ", " << in.clock_samples << " clock samples\n";
  }
}

void RecordLines(const CaptureInfo& in, std::ostringstream& o) {
  // Counted as frames, said as frames: one "devices" frame holds every
  // device, and "1 devices" read as a device count.
  o << "frames    " << in.frames;
  const char* sep = ": ";
  for (auto [type, n] : in.frames_by_type) {
    o << sep << n << " " << format::FrameTypeName(type) << (n == 1 ? " frame" : " frames");
    sep = ", ";
  }
  o << "\n";
  o << "records   " << in.records << " in " << in.chunks << " chunks, " << in.raw_bytes << " bytes raw, "
    << in.stored_bytes << " stored";
  if (in.records_written && *in.records_written != in.records) {
    o << " (the recorder wrote " << *in.records_written << ")";
  }
  o << "\n";
  for (auto [kind, n] : in.records_per_kind) o << "          " << format::ActivityKindName(kind) << ": " << n << "\n";
  o << "strings   " << in.strings << " names\n";
  o << "threads   " << in.threads.size();
  for (const auto& [tid, name] : in.threads) {
    if (!name.empty()) o << ", " << tid << " " << name;
  }
  o << "\n";
  if (!in.streams_by_priority.empty()) {
    uint32_t n = 0;
    for (auto [priority, count] : in.streams_by_priority) n += count;
    o << "streams   " << n << " created;";
    for (auto [priority, count] : in.streams_by_priority) o << " " << count << " of priority " << priority << ",";
    o.seekp(-1, std::ios_base::cur);
    o << "\n";
  }
}

void RangeLines(const CaptureInfo& in, std::ostringstream& o) {
  o << "ranges    " << in.range_events << " events: " << in.push_pop_ranges << " push/pop, " << in.start_end_ranges
    << " start/end, " << in.range_marks << " marks";
  if (in.unclosed_ranges) o << ", " << in.unclosed_ranges << " never closed";
  if (in.unmatched_range_ends) o << ", " << in.unmatched_range_ends << " ends without a start";
  o << "\n";
  if (in.payload_schemas + in.payload_enums + in.payload_events) {
    o << "payloads  " << in.payload_schemas << " schemas, " << in.payload_enums << " enums, "
      << in.payload_events << " events with payload bytes\n";
  }
  for (const CaptureInfo::Domain& d : in.domains) {
    o << "          domain " << (d.name.empty() ? std::to_string(d.id) : d.name) << ": " << d.ranges << " ranges, "
      << d.distinct_names << " names\n";
  }
  if (!in.top_ranges.empty()) {
    o << "          most frequent:";
    size_t shown = 0;
    for (const auto& [name, n] : in.top_ranges) {
      if (shown++ == 5) break;
      o << " " << name << " x" << n << (shown < std::min<size_t>(5, in.top_ranges.size()) ? "," : "");
    }
    o << "\n";
  }
}

void GraphWindowCounterLines(const CaptureInfo& in, std::ostringstream& o) {
  o << "graphs    " << in.graphs << " graphs, " << in.graph_nodes << " nodes";
  if (!in.nodes_by_type.empty()) {
    o << " (";
    bool first = true;
    for (const auto& [type, n] : in.nodes_by_type) {
      o << (first ? "" : ", ") << n << " " << type;
      first = false;
    }
    o << ")";
  }
  o << ", " << in.node_clones << " clones, " << in.graph_edges << " edges, " << in.graph_execs << " execs";
  if (in.graph_updates) o << ", " << in.graph_updates << " updates";
  if (in.host_node_runs) o << ", " << in.host_node_runs << " host node runs";
  o << "\n";
  o << "windows   " << in.marks_open + in.marks_close + in.marks_instant << " marks (" << in.marks_open << " open, "
    << in.marks_close << " close, " << in.marks_instant << " instant): " << in.mark_windows
    << " windows with --window marks";
  for (size_t i = 0; i < in.mark_labels.size() && i < 5; ++i) o << (i ? ", " : "; ") << in.mark_labels[i];
  if (in.mark_labels.size() > 5) o << ", ...";
  o << "\n";
  if (!in.counters.empty()) {
    o << "counters  " << in.counter_samples << " samples of";
    for (size_t i = 0; i < in.counters.size(); ++i) {
      o << (i ? ", " : " ") << in.counters[i].name << " (GPU " << in.counters[i].device_id << ")";
    }
    o << "\n";
  }
  if (in.metadata_blobs) {
    o << "metadata  " << in.metadata_blobs << " blobs:";
    for (const std::string& n : in.metadata_names) o << " " << n;
    o << "\n";
  }
  RecordingText(in, o);
}

// One of the recorder's named counters (RecorderStats::extra); 0 if absent.
uint64_t Counter(const format::RecorderStats& st, std::string_view key) {
  uint64_t v = 0;
  for (const auto& [k, value] : st.extra) {
    if (k == key) v = value;  // the last one set
  }
  return v;
}

// A flight-recorder dump (frame_ring.h's RingCounters): what its ring held
// against its bound, what left it before the dump's span, and the open
// ranges and window marks carried into the span or forgotten past their bound.
void RingLine(const format::RecorderStats& st, std::ostringstream& o) {
  auto mib = [](uint64_t bytes) { return bytes / double(1 << 20); };
  char line[400];
  snprintf(line, sizeof line,
           "ring      %.1f MiB of spans held, bound %.1f MiB (at most %.1f held); %llu frames (%llu records) "
           "dropped before the span; open ranges %llu carried, %llu forgotten; window marks %llu carried, "
           "%llu forgotten\n",
           mib(Counter(st, "ring_span_bytes")), mib(Counter(st, "ring_bound_bytes")),
           mib(Counter(st, "ring_span_bytes_high")), static_cast<unsigned long long>(Counter(st, "ring_frames_dropped")),
           static_cast<unsigned long long>(Counter(st, "ring_records_dropped")),
           static_cast<unsigned long long>(Counter(st, "ring_open_ranges_carried")),
           static_cast<unsigned long long>(Counter(st, "ring_open_ranges_forgotten")),
           static_cast<unsigned long long>(Counter(st, "ring_open_marks_carried")),
           static_cast<unsigned long long>(Counter(st, "ring_open_marks_forgotten")));
  o << line;
}

void HealthLines(const CaptureInfo& in, std::ostringstream& o) {
  if (in.recorder) {
    const format::RecorderStats& st = *in.recorder;
    o << "drops     " << st.cupti_dropped_records << " records by CUPTI, " << st.buffers_dropped_pool_empty
      << " buffers (pool empty), " << st.buffers_dropped_queue_full << " buffers (queue full), "
      << st.messages_dropped << " messages";
    if (!st.writer_error.empty()) o << "; writer error: " << st.writer_error;
    o << "\n";
    // Pauses after a recording detach CUPTI (docs/recorder-detach.md): how
    // long each held the program's new CUDA calls, and how often it gave up.
    uint64_t detaches = Counter(st, "cupti_detaches"), give_ups = Counter(st, "cupti_detach_give_ups");
    if (detaches || give_ups) {
      char line[200];
      snprintf(line, sizeof line, "detaches  %llu, holding new CUDA calls p50 %.3f ms, p99 %.3f ms, max %.3f ms; %llu gave up\n",
               static_cast<unsigned long long>(detaches), Counter(st, "cupti_detach_hold_ns_p50") / 1e6,
               Counter(st, "cupti_detach_hold_ns_p99") / 1e6, Counter(st, "cupti_detach_hold_ns_max") / 1e6,
               static_cast<unsigned long long>(give_ups));
      o << line;
    }
  } else {
    o << "drops     unknown: the recorder's counters were not found\n";
  }
  if (in.has_trailer) {
    o << "closed    " << (in.clean_shutdown ? "cleanly" : "without a clean shutdown");
    if (!in.stop_reason.empty()) o << " (" << in.stop_reason << ")";
    o << "\n";
    if (!in.trigger.empty()) o << "dump      flight-recorder dump, trigger: " << in.trigger << "\n";
    if (!in.trigger.empty() && in.recorder) RingLine(*in.recorder, o);
  } else {
    o << "closed    no trailer: the recorder did not finish (crash, kill, or still running)\n";
  }
  size_t findings = in.damage_lines.size() + in.contradictions.size();
  o << "damage    " << (findings == 0 ? "none" : std::to_string(findings) + " finding(s)");
  if (in.tail_bytes_lost) o << ", " << in.tail_bytes_lost << " bytes lost at the tail";
  o << "\n";
  for (const auto& line : in.damage_lines) o << "  " << line << "\n";
  for (const auto& line : in.contradictions) o << "  " << line << "\n";
}

}  // namespace

std::string InfoText(const CaptureInfo& in) {
  std::ostringstream o;
  o << "capture   " << in.path << " (" << in.file_bytes << " bytes, format " << in.format_major << "."
    << in.format_minor << ")\n";
  SessionLines(in, o);
  RecordLines(in, o);
  RangeLines(in, o);
  GraphWindowCounterLines(in, o);
  HealthLines(in, o);
  return o.str();
}

namespace {

// InfoJson's process and session.
void InfoJsonSession(const CaptureInfo& in, JsonOut& j) {
  j.Key("capture").BeginObject()
      .Field("path", in.path)
      .Field("bytes", in.file_bytes)
      .Field("format", std::to_string(in.format_major) + "." + std::to_string(in.format_minor))
      .EndObject();
  j.Key("session");
  if (in.session) {
    const format::SessionInfo& s = *in.session;
    j.BeginObject()
        .Field("tool_version", s.tool_version)
        .Field("host", s.host)
        .Field("pid", s.pid)
        .Field("ppid", s.ppid)
        .Field("process_name", s.process_name);
    j.Key("command_line").BeginArray();
    for (const std::string& a : s.command_line) j.String(a);
    j.EndArray();
    j.Field("cupti_runtime_version", s.cupti_runtime_version)
        .Field("cupti_header_version", s.cupti_header_version)
        .Field("cuda_driver_version", s.cuda_driver_version)
        .Field("cuda_runtime_version", s.cuda_runtime_version)
        .Field("rank", s.rank)
        .Field("local_rank", s.local_rank)
        .Field("world_size", s.world_size)
        .Field("start_realtime_ns", s.start_realtime_ns);
    j.EndObject();
  } else {
    j.Null();
  }
}

// InfoJson's devices, time, frames, records, threads.
void InfoJsonActivity(const CaptureInfo& in, JsonOut& j) {
  j.Key("devices").BeginArray();
  for (const format::DeviceInfo& d : in.devices) {
    j.BeginObject()
        .Field("id", d.id)
        .Field("name", d.name)
        .Field("uuid", Hex(d.uuid))
        .Field("compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor))
        .Field("sms", d.num_sms)
        .Field("memory_bytes", d.total_global_mem)
        .Field("pci_bus_id", d.pci_bus_id)
        .EndObject();
  }
  j.EndArray();
  j.Key("time").BeginObject()
      .Field("start_ns", in.start_ns)
      .Field("end_ns", in.end_ns)
      .Field("span_ns", in.end_ns - in.start_ns)
      .Field("start_realtime_ns", in.start_realtime_ns)
      .Field("start_utc", Iso8601(in.start_realtime_ns))
      .Field("activity_first_ns", in.activity_first_ns)
      .Field("activity_last_ns", in.activity_last_ns)
      .Field("clock_samples", static_cast<uint64_t>(in.clock_samples))
      .EndObject();
  j.Key("frames").BeginObject().Field("total", in.frames);
  j.Key("by_type").BeginObject();
  for (auto [type, n] : in.frames_by_type) j.Field(format::FrameTypeName(type), n);
  j.EndObject();
  j.Key("unknown_types").BeginObject();
  for (auto [type, n] : in.unknown_frame_types) j.Field(std::to_string(type), n);
  j.EndObject().EndObject();
  j.Key("records").BeginObject()
      .Field("total", in.records)
      .Field("chunks", in.chunks)
      .Field("raw_bytes", in.raw_bytes)
      .Field("stored_bytes", in.stored_bytes);
  j.Key("written");
  if (in.records_written) j.Uint(*in.records_written); else j.Null();
  j.Key("by_kind").BeginObject();
  for (auto [kind, n] : in.records_per_kind) j.Field(format::ActivityKindName(kind), n);
  j.EndObject().EndObject();
  j.Field("strings", static_cast<uint64_t>(in.strings));
  j.Key("threads").BeginArray();
  for (const auto& [tid, name] : in.threads) j.BeginObject().Field("tid", tid).Field("name", name).EndObject();
  j.EndArray();
  j.Key("streams_by_priority").BeginObject();
  for (auto [priority, count] : in.streams_by_priority) j.Field(std::to_string(priority), uint64_t{count});
  j.EndObject();
}

// InfoJson's ranges, graphs, window marks.
void InfoJsonAnnotations(const CaptureInfo& in, JsonOut& j) {
  j.Key("ranges").BeginObject()
      .Field("events", in.range_events)
      .Field("push_pop", in.push_pop_ranges)
      .Field("start_end", in.start_end_ranges)
      .Field("marks", in.range_marks)
      .Field("unclosed", in.unclosed_ranges)
      .Field("unmatched_ends", in.unmatched_range_ends)
      .Field("payload_schemas", in.payload_schemas)
      .Field("payload_enums", in.payload_enums)
      .Field("payload_events", in.payload_events);
  j.Key("domains").BeginArray();
  for (const CaptureInfo::Domain& d : in.domains) {
    j.BeginObject().Field("id", d.id).Field("name", d.name).Field("ranges", d.ranges)
        .Field("distinct_names", d.distinct_names).EndObject();
  }
  j.EndArray();
  j.Key("most_frequent").BeginArray();
  for (const auto& [name, n] : in.top_ranges) j.BeginObject().Field("name", name).Field("count", n).EndObject();
  j.EndArray().EndObject();
  j.Key("graphs").BeginObject()
      .Field("graphs", in.graphs)
      .Field("nodes", in.graph_nodes)
      .Field("clones", in.node_clones)
      .Field("edges", in.graph_edges)
      .Field("execs", in.graph_execs)
      .Field("updates", in.graph_updates);
  if (in.host_node_runs) j.Field("host_node_runs", in.host_node_runs);
  j.Key("nodes_by_type").BeginObject();
  for (const auto& [type, n] : in.nodes_by_type) j.Field(type, n);
  j.EndObject().EndObject();
  j.Key("window_marks").BeginObject()
      .Field("open", in.marks_open)
      .Field("close", in.marks_close)
      .Field("instant", in.marks_instant)
      .Field("windows", static_cast<uint64_t>(in.mark_windows));
  j.Key("labels").BeginArray();
  for (const std::string& l : in.mark_labels) j.String(l);
  j.EndArray().EndObject();
}

// InfoJson's counters, metadata, recorder, damage.
void InfoJsonRest(const CaptureInfo& in, JsonOut& j) {
  j.Key("recording").BeginArray();
  for (const format::RecordingInterval& r : in.recording) {
    j.BeginObject()
        .Field("state", std::string(format::RecordingStateName(r.state)))
        .Field("start_ns", r.start_ns)
        .Field("end_ns", r.end_ns)
        .Field("why", r.why)
        .EndObject();
  }
  j.EndArray();
  j.Key("counters").BeginObject().Field("samples", in.counter_samples);
  j.Key("defs").BeginArray();
  for (const format::CounterDef& d : in.counters) {
    j.BeginObject().Field("id", d.id).Field("name", d.name).Field("unit", d.unit).Field("device", d.device_id).EndObject();
  }
  j.EndArray().EndObject();
  j.Key("metadata").BeginObject().Field("blobs", in.metadata_blobs);
  j.Key("names").BeginArray();
  for (const std::string& n : in.metadata_names) j.String(n);
  j.EndArray().EndObject();
  j.Key("drops");
  if (in.recorder) {
    const format::RecorderStats& st = *in.recorder;
    j.BeginObject()
        .Field("cupti_dropped_records", st.cupti_dropped_records)
        .Field("buffers_dropped_pool_empty", st.buffers_dropped_pool_empty)
        .Field("buffers_dropped_queue_full", st.buffers_dropped_queue_full)
        .Field("bytes_dropped", st.bytes_dropped)
        .Field("messages_dropped", st.messages_dropped)
        .Field("writer_error", st.writer_error);
    // The recorder's own counters (capture-range switches, device report
    // timing, PM sampling), by their names.
    // A name set twice (the recorder and the writer both wrote
    // buffers_dropped_writer_stopped) is one key, with the later value:
    // the writer's, taken at close.
    std::vector<std::pair<std::string_view, uint64_t>> counters;
    for (const auto& entry : st.extra) {
      // A lambda may not capture a structured binding before clang 16 (the fuzz build's).
      std::string_view key = entry.first;
      auto it = std::find_if(counters.begin(), counters.end(), [key](const auto& c) { return c.first == key; });
      if (it == counters.end()) counters.emplace_back(key, entry.second);
      else it->second = entry.second;
    }
    j.Key("recorder_counters").BeginObject();
    for (const auto& [k, v] : counters) j.Field(k, v);
    j.EndObject().EndObject();
  } else {
    j.Null();
  }
  j.Key("shutdown").BeginObject()
      .Field("trailer", in.has_trailer)
      .Field("clean", in.clean_shutdown)
      .Field("stop_reason", in.stop_reason);
  // Only in a flight-recorder dump, so that a whole recording's JSON is as before.
  if (!in.trigger.empty()) j.Field("trigger", in.trigger);
  j.EndObject();
  j.Key("damage").BeginObject()
      .Field("intact", in.Intact())
      .Field("tail_bytes_lost", in.tail_bytes_lost)
      .Field("sequence_gaps", in.sequence_gaps);
  j.Key("regions").BeginArray();
  for (const format::Damage& d : in.damage) {
    j.BeginObject()
        .Field("kind", format::DamageKindName(d.kind))
        .Field("offset", d.offset)
        .Field("bytes", d.bytes)
        .Field("frame_type", d.frame_type == 0 ? std::string() : std::string(format::FrameTypeName(d.frame_type)))
        .Field("detail", d.detail)
        .EndObject();
  }
  j.EndArray();
  j.Key("lines").BeginArray();
  for (const std::string& l : in.damage_lines) j.String(l);
  j.EndArray();
  j.Key("contradictions").BeginArray();
  for (const std::string& l : in.contradictions) j.String(l);
  j.EndArray().EndObject();
}

}  // namespace

std::string InfoJson(const CaptureInfo& in) {
  JsonOut j;
  j.BeginObject();
  InfoJsonSession(in, j);
  InfoJsonActivity(in, j);
  InfoJsonAnnotations(in, j);
  InfoJsonRest(in, j);
  j.EndObject();
  return j.Take();
}

}  // namespace gpucap::tools
