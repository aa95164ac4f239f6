// gpucap info CAPTURE [--json]: what a capture holds, and what is wrong with it.
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>

#include "command.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/capture.h"

namespace po = boost::program_options;
using namespace gpucap::format;

namespace gpucap::tools {
namespace {

std::string Seconds(uint64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f s", ns / 1e9);
  return buf;
}

struct Summary {
  std::map<uint32_t, uint64_t> records_per_kind;
  uint64_t records = 0, raw_bytes = 0, stored_bytes = 0;
  uint64_t first_ns = 0, last_ns = 0;
  std::map<std::string, uint64_t> range_names;
  std::set<uint64_t> domains;
  uint64_t pushes = 0, starts = 0, marks = 0;
  std::set<uint32_t> graphs;
  uint64_t graph_nodes = 0, node_clones = 0, edges = 0, execs = 0;
};

Summary Summarise(const Capture& c) {
  Summary s;
  for (const ChunkView& chunk : c.chunks) {
    for (const KindCount& k : chunk.info.kind_counts) s.records_per_kind[k.kind] += k.count;
    s.records += chunk.info.record_count;
    s.raw_bytes += chunk.info.raw_size;
    s.stored_bytes += chunk.stored.size();
    if (chunk.info.min_start_ns && (!s.first_ns || chunk.info.min_start_ns < s.first_ns)) {
      s.first_ns = chunk.info.min_start_ns;
    }
    s.last_ns = std::max({s.last_ns, chunk.info.max_start_ns, chunk.info.max_end_ns});
  }
  for (const RangeEvent& r : c.ranges) {
    s.domains.insert(r.domain);
    if (r.kind == RangeKind::kPush) ++s.pushes;
    if (r.kind == RangeKind::kStart) ++s.starts;
    if (r.kind == RangeKind::kMark) ++s.marks;
  }
  for (const GraphEvent& g : c.graphs) {
    switch (g.kind) {
      case GraphEventKind::kGraphCreated:
      case GraphEventKind::kGraphCloned: s.graphs.insert(g.graph_id); break;
      case GraphEventKind::kNodeCreated: ++s.graph_nodes; break;
      case GraphEventKind::kNodeCloned: ++s.node_clones; break;
      case GraphEventKind::kDependencyAdded: ++s.edges; break;
      case GraphEventKind::kExecCreated: ++s.execs; break;
      default: break;
    }
  }
  return s;
}

void PrintText(const std::string& path, const Capture& c, const Summary& s) {
  std::cout << "capture   " << path << " (" << c.file->size() << " bytes, format "
            << c.file->header().major << "." << c.file->header().minor << ")\n";
  if (c.session) {
    const SessionInfo& ss = *c.session;
    std::cout << "process   " << ss.process_name << " pid " << ss.pid << " on " << ss.host << "\n";
    std::cout << "command  ";
    for (const auto& a : ss.command_line) std::cout << " " << a;
    std::cout << "\n";
    std::cout << "recorder  " << ss.tool_version << ", CUPTI " << ss.cupti_runtime_version
              << " (headers " << ss.cupti_header_version << "), CUDA driver "
              << ss.cuda_driver_version << ", runtime " << ss.cuda_runtime_version << "\n";
    if (ss.rank >= 0) {
      std::cout << "rank      " << ss.rank << " of " << ss.world_size << " (local " << ss.local_rank
                << ")\n";
    }
  } else {
    std::cout << "session   missing (damaged or cut before it was written)\n";
  }
  for (const DeviceInfo& d : c.devices) {
    std::cout << "device " << d.id << "  " << d.name << ", sm_" << d.compute_major << d.compute_minor
              << ", " << d.num_sms << " SMs, " << (d.total_global_mem >> 20) << " MiB\n";
  }
  if (s.last_ns > s.first_ns) std::cout << "span      " << Seconds(s.last_ns - s.first_ns) << " of GPU activity\n";
  std::cout << "frames    " << c.report.frames;
  for (auto [type, n] : c.report.frames_by_type) std::cout << ", " << n << " " << FrameTypeName(type);
  std::cout << "\n";
  std::cout << "records   " << s.records << " in " << c.chunks.size() << " chunks, "
            << s.raw_bytes << " bytes raw, " << s.stored_bytes << " stored\n";
  for (auto [kind, n] : s.records_per_kind) {
    std::cout << "          " << ActivityKindName(kind) << ": " << n << "\n";
  }
  std::cout << "strings   " << c.strings.size() << " names\n";
  std::cout << "threads   " << c.threads.size() << "\n";
  std::cout << "ranges    " << c.ranges.size() << " events (" << s.pushes << " push, " << s.starts
            << " start, " << s.marks << " mark) in " << s.domains.size() << " domains\n";
  std::cout << "graphs    " << s.graphs.size() << " graphs, " << s.graph_nodes << " nodes, "
            << s.node_clones << " clones, " << s.edges << " edges, " << s.execs << " execs\n";
  std::cout << "windows   " << c.windows.size() << " marks\n";
  if (!c.stats.empty() || c.trailer) {
    const RecorderStats& st = c.trailer ? c.trailer->stats : c.stats.back();
    std::cout << "drops     " << st.cupti_dropped_records << " records by CUPTI, "
              << st.buffers_dropped_pool_empty << " buffers (pool empty), "
              << st.buffers_dropped_queue_full << " buffers (queue full), " << st.messages_dropped
              << " messages";
    if (!st.writer_error.empty()) std::cout << "; writer error: " << st.writer_error;
    std::cout << "\n";
  }
  if (c.trailer) {
    std::cout << "closed    " << (c.trailer->clean_shutdown ? "cleanly" : "without a clean shutdown");
    if (!c.trailer->stop_reason.empty()) std::cout << " (" << c.trailer->stop_reason << ")";
    std::cout << "\n";
  } else {
    std::cout << "closed    no trailer: the recorder did not finish (crash, kill, or still running)\n";
  }
  auto damage = c.report.Describe(path);
  std::cout << "damage    " << (damage.empty() ? "none" : std::to_string(damage.size()) + " finding(s)")
            << "\n";
  for (const auto& line : damage) std::cout << "  " << line << "\n";
}

}  // namespace

int RunInfo(const std::vector<std::string>& args) {
  po::options_description options("gpucap info options");
  options.add_options()("capture", po::value<std::string>()->required(), "capture file");
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap info CAPTURE", options, positional, &vm, &code)) return code;
  std::string path = vm["capture"].as<std::string>();
  auto capture = LoadCapture(path);
  if (!capture.ok()) {
    std::cerr << "gpucap info: " << capture.status().message() << "\n";
    return 1;
  }
  PrintText(path, *capture, Summarise(*capture));
  return 0;
}

}  // namespace gpucap::tools
