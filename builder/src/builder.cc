#include "gpucap/builder/builder.h"
#include "gpucap/format/output_file.h"
#include "gpucap/builder/build_progress.h"

#include <algorithm>
#include <filesystem>
#include <malloc.h>
#include <thread>
#include <unordered_set>

#include "flat_map.h"
#include "decode_again.h"
#include "window_workers.h"
#include "gpucap/builder/work_queue.h"

namespace gpucap::builder {

struct Builder::Cached {
  uint32_t families = 0;
  ActivityTables tables;
  DecodeStats stats;
};

Builder::Builder(const CaptureIndex& index, const BuildOptions& options) : index_(index), options_(options) {}
Builder::~Builder() = default;

WorkQueue* Builder::queue() {
  if (options_.queue != nullptr) return options_.queue;
  if (own_queue_ == nullptr) own_queue_ = std::make_unique<WorkQueue>(options_.threads);
  return own_queue_.get();
}

Result<std::vector<Window>> Builder::Windows() const {
  auto spec = ParseWindowSpec(options_.window);
  if (!spec.ok()) return spec.status();
  auto windows = ResolveWindows(*spec, index_.capture(), index_.extent(), index_.ranges());
  if (!windows.ok()) return windows.status();
  std::vector<uint32_t> selection;
  if (!options_.select.empty()) {
    auto s = ParseSelection(options_.select);
    if (!s.ok()) return s.status();
    selection = *s;
  }
  return SelectWindows(std::move(windows).value(), selection);
}

Result<std::vector<Window>> Builder::MatchedWindows() const {
  auto windows = Windows();
  if (windows.ok() && windows->empty()) {
    return Status::NotFound(index_.path() + ": --window '" + options_.window + "' matches nothing in the capture");
  }
  return windows;
}

void Builder::Evict(const Window& w, const std::vector<size_t>& core) {
  // Windows come in start order: a chunk that ended before this window's
  // lookback can serve no later window. Chunks only the lookback may still
  // need keep their launch records and drop the rest.
  uint64_t horizon = w.start_ns > options_.launch_lookback_ns ? w.start_ns - options_.launch_lookback_ns : 0;
  std::unordered_set<size_t> keep(core.begin(), core.end());
  for (auto it = cache_.begin(); it != cache_.end();) {
    const format::ChunkInfo& info = index_.capture().chunks[it->first].info;
    uint64_t last = std::max({info.min_start_ns, info.max_start_ns, info.max_end_ns});
    if (keep.count(it->first)) {
      ++it;
    } else if (last >= horizon && last != 0) {
      Cached& c = *it->second;
      c.families &= kApis | kExternals | kCudaEvents;
      ActivityTables lean;
      lean.apis = std::move(c.tables.apis);
      lean.externals = std::move(c.tables.externals);
      lean.cuda_events = std::move(c.tables.cuda_events);
      c.tables = std::move(lean);
      ++it;
    } else {
      it = cache_.erase(it);
    }
  }
}

void Builder::Decode(const std::vector<size_t>& chunks, uint32_t families, WindowReport* report) {
  auto enough = [families](uint32_t have) {
    if ((have & families & kAllFamilies) != (families & kAllFamilies)) return false;
    // Kernels without their argument columns serve only windows that do without them.
    return (families & kKernels) == 0 || (families & kNoKernelArgs) != 0 || (have & kNoKernelArgs) == 0;
  };
  std::vector<size_t> todo;
  for (size_t c : chunks) {
    auto it = cache_.find(c);
    if (it == cache_.end() || !enough(it->second->families)) todo.push_back(c);
  }
  if (todo.empty()) return;
  std::vector<std::unique_ptr<Cached>> out(todo.size());
  {
    WorkQueue::Ordered tasks(queue());
    for (size_t i = 0; i < todo.size(); ++i) {
      tasks.Submit([this, &todo, &out, families, i] {
        auto c = std::make_unique<Cached>();
        c->families = families;
        std::vector<uint64_t> scratch;
        index_.decoder().DecodeChunk(todo[i], families, &c->tables, &c->stats, &scratch);
        out[i] = std::move(c);
        return Status::Ok();
      });
    }
    // Decoding reports what it skipped in the stats, never as a failure.
    while (tasks.size() > 0) (void)tasks.TakeOldest();
  }
  for (size_t i = 0; i < todo.size(); ++i) {
    decoded_.Merge(out[i]->stats);
    ChunkDecode& d = chunk_decodes_[todo[i]];
    uint32_t decoded = families & kAllFamilies;  // what a trimmed capture must keep: the flag is no family
    if ((d.families | decoded) == decoded) d = {decoded, out[i]->stats};
    cache_[todo[i]] = std::move(out[i]);
  }
  report->chunks_decoded += todo.size();
}

namespace {

// Calls that put work on the GPU: the ones whose ops may run after the window.
bool LaunchesGpuWork(ApiDomain domain, uint32_t cbid) {
  std::string_view n = domain == ApiDomain::kDriver ? format::DriverApiName(cbid)
                                                    : format::RuntimeApiName(cbid);
  for (std::string_view p : {"cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch",
                             "cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset"}) {
    if (n.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace

uint32_t Builder::FamiliesFor(const std::vector<size_t>& core) const {
  uint64_t kernels = 0;
  for (size_t c : core) {
    for (const format::KindCount& k : index_.capture().chunks[c].info.kind_counts) {
      if (FamilyOf(k.kind) == kKernels) kernels += k.count;
    }
  }
  return kernels > options_.kernels_kept_whole ? kAllFamilies | kNoKernelArgs : kAllFamilies;
}

void Builder::LookAhead(const Window& w, uint32_t families, std::unordered_set<size_t>* used,
                        WindowReport* report) {
  if (!w.ops_by_launch || options_.gpu_lookahead_ns == 0) return;
  // Launches in the window, and those of them whose ops no decoded chunk holds.
  std::unordered_set<uint32_t> launches;
  for (size_t c : *used) {
    const ApiTable& t = cache_[c]->tables.apis;
    for (uint32_t r = 0; r < t.size(); ++r) {
      if (t.start[r] != 0 && w.Contains(t.start[r]) && LaunchesGpuWork(t.domain[r], t.cbid[r])) {
        launches.insert(t.correlation[r]);
      }
    }
  }
  std::unordered_set<uint32_t> pending = launches;
  // One op found of a graph launch says nothing of its others, which may sit
  // in later buffers (the reference join found replays cut short): a graph
  // launch waits for as many ops as its graph has op nodes.
  std::unordered_map<uint32_t, uint32_t> graph_ops_wanted;  // launch -> ops still to find
  auto see = [&](uint32_t id, uint64_t node) {
    if (!launches.count(id)) return false;
    const GraphNode* origin = node != 0 ? index_.graphs().Origin(node) : nullptr;
    if (origin == nullptr) {
      pending.erase(id);
      return true;
    }
    auto [it, first] = graph_ops_wanted.try_emplace(id, index_.graphs().OpNodes(origin->graph_id));
    if (it->second > 0) it->second--;
    if (it->second == 0) pending.erase(id);
    return true;
  };
  auto found = [&](size_t c) {  // true if the chunk holds ops of the window's launches
    const ActivityTables& t = cache_[c]->tables;
    bool hit = false;
    for (uint32_t r = 0; r < t.kernels.size(); ++r) hit |= see(t.kernels.correlation[r], t.kernels.graph_node_id[r]);
    for (uint32_t r = 0; r < t.memcpys.size(); ++r) hit |= see(t.memcpys.correlation[r], t.memcpys.graph_node_id[r]);
    for (uint32_t r = 0; r < t.memsets.size(); ++r) hit |= see(t.memsets.correlation[r], t.memsets.graph_node_id[r]);
    for (uint32_t r = 0; r < t.graph_traces.size(); ++r) hit |= see(t.graph_traces.correlation[r], 0);
    return hit;
  };
  for (size_t c : *used) found(c);
  if (pending.empty()) return;
  // Chunks after the window in start order, decoded a few at a time, while
  // launches wait for their ops, and once more after the last hit: the
  // kernels of one graph launch can spread over neighbouring chunks.
  std::vector<size_t> ahead;
  for (size_t c : index_.ChunksOverlapping(w.end_ns, w.end_ns + options_.gpu_lookahead_ns)) {
    if (!used->count(c)) ahead.push_back(c);
  }
  size_t batch = std::max<size_t>(1, options_.threads > 0 ? options_.threads : std::thread::hardware_concurrency());
  bool last_hit = false;
  for (size_t i = 0; i < ahead.size() && (!pending.empty() || last_hit); i += batch) {
    std::vector<size_t> step(ahead.begin() + i, ahead.begin() + std::min(ahead.size(), i + batch));
    Decode(step, families, report);
    last_hit = false;
    for (size_t c : step) {
      used->insert(c);
      last_hit |= found(c);
    }
  }
  report->launches_unfound = pending.size();
}

Status Builder::BuildWindow(const Window& w, TraceSink* sink, WindowReport* report) {
  report->window = w;
  std::vector<size_t> core = index_.ChunksOverlapping(w.start_ns, w.end_ns);
  Evict(w, core);
  uint32_t families = FamiliesFor(core);
  Decode(core, families, report);

  // Launch records of ops in the window that started before it: look back,
  // newest chunks first, only as far as some are still missing.
  std::unordered_set<size_t> used(core.begin(), core.end());
  // Correlation ids are handed out in call order, so a window's launches
  // cover a dense range: a bitset over it answers "launched in a decoded
  // chunk?" for every op at a bit per id.
  uint32_t lo = UINT32_MAX, hi = 0;
  size_t apis = 0;
  for (size_t c : core) {
    for (uint32_t id : cache_[c]->tables.apis.correlation) {
      lo = std::min(lo, id);
      hi = std::max(hi, id);
      apis++;
    }
  }
  bool dense = apis > 0 && uint64_t{hi} - lo < 64 * uint64_t{apis} + (1u << 20);
  std::vector<uint64_t> bits;
  FlatMap sparse(dense ? 0 : apis);
  if (dense) bits.assign((uint64_t{hi} - lo) / 64 + 1, 0);
  for (size_t c : core) {
    for (uint32_t id : cache_[c]->tables.apis.correlation) {
      if (dense) {
        bits[(id - lo) >> 6] |= uint64_t{1} << ((id - lo) & 63);
      } else {
        sparse.Insert(id, 1);
      }
    }
  }
  auto launched = [&](uint32_t id) {
    if (dense) return id >= lo && id <= hi && (bits[(id - lo) >> 6] >> ((id - lo) & 63) & 1);
    return sparse.Find(id) != FlatMap::kMissing;
  };
  std::unordered_set<uint32_t> missing;
  auto want = [&](uint64_t start, uint32_t correlation) {
    if (w.Contains(start) && !launched(correlation)) missing.insert(correlation);
  };
  for (size_t c : core) {
    const ActivityTables& t = cache_[c]->tables;
    for (uint32_t r = 0; r < t.kernels.size(); ++r) want(t.kernels.start[r], t.kernels.correlation[r]);
    for (uint32_t r = 0; r < t.memcpys.size(); ++r) want(t.memcpys.start[r], t.memcpys.correlation[r]);
    for (uint32_t r = 0; r < t.memsets.size(); ++r) want(t.memsets.start[r], t.memsets.correlation[r]);
    for (uint32_t r = 0; r < t.graph_traces.size(); ++r) want(t.graph_traces.start[r], t.graph_traces.correlation[r]);
  }
  if (!missing.empty()) {
    uint64_t from = w.start_ns > options_.launch_lookback_ns ? w.start_ns - options_.launch_lookback_ns : 0;
    std::vector<size_t> candidates = index_.ChunksEndingIn(from, w.start_ns);
    size_t batch = std::max<size_t>(1, options_.threads > 0 ? options_.threads : std::thread::hardware_concurrency());
    for (size_t i = 0; i < candidates.size() && !missing.empty(); i += batch) {
      std::vector<size_t> step;
      for (size_t j = i; j < std::min(candidates.size(), i + batch); ++j) {
        if (!used.count(candidates[j])) step.push_back(candidates[j]);
      }
      Decode(step, kApis | kExternals | kCudaEvents, report);
      for (size_t c : step) {
        used.insert(c);
        for (uint32_t id : cache_[c]->tables.apis.correlation) missing.erase(id);
      }
    }
  }
  LookAhead(w, families, &used, report);
  std::vector<size_t> order(used.begin(), used.end());
  std::sort(order.begin(), order.end());
  std::vector<const ActivityTables*> parts;
  DecodeStats decode;
  for (size_t c : order) {
    const Cached& cached = *cache_[c];
    parts.push_back(&cached.tables);
    report->chunks.emplace_back(c, cached.families & kAllFamilies);
    decode.Merge(cached.stats);
    report->rows += cached.tables.rows();
    report->table_bytes += cached.tables.memory_bytes();
  }
  report->chunks_used = parts.size();
  report->times.decoded_ns = BuildClockNs();
  // What a window frees (evicted rows, the renderer's and gzip's buffers)
  // stays with malloc for the next one. Handing it back to the kernel after
  // every window (malloc_trim) kept peak RSS 5-10% lower but faulted the
  // same pages in again: on the 5M-kernel bench with 100 ms windows, 396k
  // page faults against 113k, 1.4 s of system time against 0.6.
  // A window decoded without its kernels' arguments has them, and its
  // kernel and API rows once given back, again from the capture
  // (rows_again.h). A chunk given back no longer holds those families: a
  // later window decodes it again.
  RowSource rows;
  rows.again = [this, &order](uint16_t part, uint32_t family, const RowSource::Seen& first, ActivityTables* out) {
    return DecodeAgain(index_, order[part], family, first, out);
  };
  rows.release = [this, &order](uint32_t family) {
    for (size_t c : order) {
      Cached& cached = *cache_[c];
      if (family == kKernels) cached.tables.kernels = KernelTable();
      if (family == kApis) cached.tables.apis = ApiTable();
      cached.families &= ~family;
    }
    // The rows were many small blocks, amid others still held: malloc keeps
    // their pages, and the join's next large vectors (mapped afresh) would
    // not reuse them. Once per such window, not per window (see below).
    malloc_trim(0);
  };
  JoinOptions join = options_.join;
  join.queue = queue();
  return JoinWindow(index_, w, parts, decode, join, sink, &report->join, &workspace_, report->use, rows);
}

namespace {

std::string Sanitize(std::string_view label) {
  std::string s;
  for (char c : label.substr(0, 80)) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '#';
    s.push_back(ok ? c : '_');
  }
  return s;
}

}  // namespace

std::string WindowOutputPath(const std::string& output, const Window& w, bool one_window, uint32_t last_index) {
  if (one_window || format::IsStandardOutput(output)) return output;
  size_t slash = output.find_last_of('/');
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = output.find('.', base);
  // The index goes before the trace file's suffix (the registry's), else
  // before the name's first dot.
  std::string_view suffix = TraceFileSuffix(output);
  if (!suffix.empty() && output.size() >= suffix.size() + base) dot = output.size() - suffix.size();
  const bool tensorboard = IsTensorBoardSuffix(suffix) && output.size() >= suffix.size() + base;
  if (dot == std::string::npos) dot = output.size();
  std::string name = output.substr(0, dot);
  std::string index = std::to_string(w.index);
  const size_t width = std::to_string(last_index).size();
  if (tensorboard && index.size() < width) index.insert(0, width - index.size(), '0');
  name.append(".").append(index);
  // TensorBoard's plugin takes NAME.DIGITS.pt.trace.json as a span of worker
  // NAME: the label would make each window a worker of its own.
  if (!w.label.empty() && !tensorboard) name.append("-").append(Sanitize(w.label));
  name.append(output, dot);
  return name;
}

std::string TraceFileIn(const std::string& output, const std::string& capture, OutputFormat format) {
  std::error_code ec;
  if (output.empty() || (output.back() != '/' && !std::filesystem::is_directory(output, ec))) return output;
  std::string name = std::filesystem::path(capture).filename().string();
  if (name.ends_with(".gpucap")) name.resize(name.size() - 7);
  if (name.empty()) name = "trace";
  std::string dir = output.back() == '/' ? output : output + "/";
  return dir + name + std::string(OutputFormatOf(format).folder_file);
}

Result<BuildReport> BuildTraces(const CaptureIndex& index, const BuildOptions& options) {
  return BuildTraces(index, options, BuildProgressFn());
}

Result<BuildReport> BuildTraces(const CaptureIndex& index, const BuildOptions& options,
                                const BuildProgressFn& progress) {
  if (options.output.empty()) return Status::InvalidArgument("no output path given (-o)");
  auto spec = ParseWindowSpec(options.window);
  if (!spec.ok()) return spec.status();
  bool one = spec->kind == WindowSpec::Kind::kAll || spec->kind == WindowSpec::Kind::kRange;
  Builder builder(index, options);
  auto windows = builder.MatchedWindows();
  if (!windows.ok()) return windows.status();
  BuildReport report;
  if (options.max_windows != 0 && windows->size() > options.max_windows) {
    return Status::InvalidArgument(index.path() + ": --window '" + options.window + "' yields " +
                                   std::to_string(windows->size()) + " windows, one file each; more than " +
                                   std::to_string(options.max_windows) +
                                   " is written only with --max-windows N (or pick some with --select)");
  }
  if (format::IsStandardOutput(options.output) && windows->size() > 1) {
    return Status::InvalidArgument("-o " + options.output + " takes one window; --window '" + options.window +
                                   "' yields " + std::to_string(windows->size()) + " (pick one with --select)");
  }
  report.times.started_ns = BuildClockNs();
  report.warnings = index.capture().report.Describe(index.path());
  for (std::string& w : index.Warnings()) report.warnings.push_back(std::move(w));
  if (!index.decoder().version_warning().empty()) report.warnings.push_back(index.decoder().version_warning());
  GPUCAP_RETURN_IF_ERROR(BuildWindowFiles(index, options, *windows, one, progress, &report));
  report.times.done_ns = BuildClockNs();
  return report;
}

}  // namespace gpucap::builder
