#include "gpucap/tools/merge/trace_merge.h"

#include "gpucap/format/output_file.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "gpucap/builder/trace_keys.h"
#include "gpucap/builder/work_queue.h"

namespace gpucap::tools {
namespace {

using builder::Process;
using builder::Track;
using builder::TraceHeader;

constexpr uint32_t kCapturePidBase = 0x10000000;  // above any Linux pid (pid_max <= 2^22)

// Takes the header and stops the join: the merged header needs every
// capture's processes and tracks before any slice is written.
class HeaderProbe : public builder::TraceSink {
 public:
  Status Begin(const TraceHeader& header) override {
    header_ = header;
    taken_ = true;
    return Status(Status::Code::kInternal, "header taken");
  }
  Status AddSlice(const builder::Slice&) override { return Status::Ok(); }
  Status AddCounter(const builder::CounterPoint&) override { return Status::Ok(); }
  Status End() override { return Status::Ok(); }
  bool taken() const { return taken_; }
  const TraceHeader& header() const { return header_; }

 private:
  TraceHeader header_;
  bool taken_ = false;
};

// Forwards one capture's join into the merged renderer, its tracks and
// flow ids moved into the capture's share of the trace, its times onto the
// reference clock when the clocks were aligned.
class CaptureShare : public builder::TraceSink {
 public:
  CaptureShare(builder::TraceSink* out, uint32_t track_offset, size_t tracks, uint64_t capture, uint64_t captures,
               const RankClock* clock)
      : out_(*out), track_offset_(track_offset), tracks_(tracks), capture_(capture), captures_(captures),
        clock_(clock && clock->aligned ? clock : nullptr) {}

  Status Begin(const TraceHeader& header) override {
    // The join is deterministic: the second pass must see the first's tracks.
    if (header.tracks.size() != tracks_) return Status::Internal("a capture's tracks changed between two joins");
    return Status::Ok();
  }
  Status AddSlice(const builder::Slice& s) override {
    builder::Slice m = s;
    m.track += track_offset_;
    if (clock_) {
      m.ts_ns = clock_->Apply(s.ts_ns);
      // The end moves by its own shift: a slice keeps its place among the
      // host's others, whatever the drift does to its length.
      if (!s.instant()) m.dur_ns = std::max<int64_t>(0, clock_->Apply(s.ts_ns + s.dur_ns) - m.ts_ns);
    }
    GPUCAP_RETURN_IF_ERROR(Remap(s.flows_out, &out_flows_));
    GPUCAP_RETURN_IF_ERROR(Remap(s.flows_in, &in_flows_));
    m.flows_out = out_flows_;
    m.flows_in = in_flows_;
    return out_.AddSlice(m);
  }
  Status AddCounter(const builder::CounterPoint& p) override {
    builder::CounterPoint m = p;
    m.track += track_offset_;
    if (clock_) m.ts_ns = clock_->Apply(p.ts_ns);
    return out_.AddCounter(m);
  }
  Status End() override { return Status::Ok(); }

 private:
  // Flow ids are unique per kind within one capture's trace: interleaving
  // the captures keeps them unique in the merged one.
  Status Remap(std::span<const builder::FlowEnd> in, std::vector<builder::FlowEnd>* out) {
    out->clear();
    for (builder::FlowEnd f : in) {
      uint64_t base = builder::trace_keys::FlowIdBase(f.id);
      uint64_t low = f.id - base;
      if (low > (builder::trace_keys::FlowIdLowMax() - capture_) / captures_) {
        return Status::ResourceExhausted("too many captures to merge: flow ids would collide");
      }
      f.id = base + low * captures_ + capture_;
      out->push_back(f);
    }
    return Status::Ok();
  }

  builder::TraceSink& out_;
  uint32_t track_offset_;
  size_t tracks_;
  uint64_t capture_, captures_;
  const RankClock* clock_;  // null: times as the join gives them
  std::vector<builder::FlowEnd> out_flows_, in_flows_;
};

// "rank 3", or "capture 2" for a process started without a rank.
std::string Tag(const builder::CaptureIndex& index, size_t k) {
  const auto& s = index.capture().session;
  if (s && s->rank >= 0) return "rank " + std::to_string(s->rank);
  return "capture " + std::to_string(k);
}

int64_t RankOf(const builder::CaptureIndex& index, size_t k) {
  const auto& s = index.capture().session;
  return s && s->rank >= 0 ? s->rank : static_cast<int64_t>(k);
}

struct Member {
  size_t capture;
  builder::Window window;
  TraceHeader header;
};

// The merged header: every member's processes and tracks, renumbered.
TraceHeader MergeHeaders(const std::vector<const builder::CaptureIndex*>& captures, const std::vector<Member>& members,
                         const std::optional<JobClocks>& clocks, std::vector<uint32_t>* track_offsets,
                         std::vector<std::string>* warnings) {
  TraceHeader h;
  const TraceHeader& first = members.front().header;
  h.cuda_driver_version = first.cuda_driver_version;
  h.cuda_runtime_version = first.cuda_runtime_version;
  h.cupti_version = first.cupti_version;
  h.world_size = first.world_size;
  h.window_index = first.window_index;
  h.window_label = first.window_label;
  auto on_reference = [&](const Member& m, int64_t t) { return clocks ? clocks->ranks[m.capture].Apply(t) : t; };
  h.base_time_ns = on_reference(members.front(), first.base_time_ns);
  h.window_start_ns = on_reference(members.front(), first.window_start_ns);
  h.window_end_ns = on_reference(members.front(), first.window_end_ns);
  std::set<std::string> hosts;
  std::map<std::string, size_t> count_at;
  std::set<uint32_t> cpu_pids_used;
  for (const Member& m : members) {
    const TraceHeader& in = m.header;
    const builder::CaptureIndex& index = *captures[m.capture];
    std::string tag = Tag(index, m.capture);
    h.base_time_ns = std::min(h.base_time_ns, on_reference(m, in.base_time_ns));
    h.window_start_ns = std::min(h.window_start_ns, on_reference(m, in.window_start_ns));
    h.window_end_ns = std::max(h.window_end_ns, on_reference(m, in.window_end_ns));
    h.capture_path.append(h.capture_path.empty() ? "" : ", ").append(in.capture_path);
    if (!in.host.empty() && hosts.insert(in.host).second) h.host.append(h.host.empty() ? "" : ", ").append(in.host);
    for (const format::DeviceInfo& d : in.devices) {
      bool known = std::any_of(h.devices.begin(), h.devices.end(),
                               [&](const format::DeviceInfo& e) { return e.id == d.id && e.uuid == d.uuid; });
      if (!known) h.devices.push_back(d);
    }
    for (const auto& [name, n] : in.counts) {
      auto [it, inserted] = count_at.try_emplace(name, h.counts.size());
      if (inserted) h.counts.push_back({name, 0});
      h.counts[it->second].second += n;
    }
    for (const std::string& w : in.warnings) {
      h.warnings.push_back(w.find(in.capture_path) == std::string::npos ? in.capture_path + ": " + w : w);
    }
    uint32_t process_offset = static_cast<uint32_t>(h.processes.size());
    track_offsets->push_back(static_cast<uint32_t>(h.tracks.size()));
    int64_t rank_sort = RankOf(index, m.capture) * 100'000'000;
    for (Process p : in.processes) {
      uint32_t local = p.pid;
      switch (p.kind) {
        case Process::Kind::kCpu:
          // An OS pid two captures share (two hosts) gets one of the capture's own.
          if (!cpu_pids_used.insert(p.pid).second) {
            p.pid = kCapturePidBase + static_cast<uint32_t>(m.capture) * 0x1000 + 0xffe;
          }
          p.name = tag + ": " + p.name;
          break;
        case Process::Kind::kGpu:
          p.pid = kCapturePidBase + static_cast<uint32_t>(m.capture) * 0x1000 + (local & 0xff);
          p.name = tag + ": " + p.name;
          p.label = tag + " " + p.label;
          break;
        case Process::Kind::kOverhead:
          p.pid = kCapturePidBase + static_cast<uint32_t>(m.capture) * 0x1000 + 0xfff;
          p.name = tag + ": " + p.name;
          break;
      }
      p.sort_index += rank_sort;
      h.processes.push_back(std::move(p));
    }
    uint32_t track_offset = track_offsets->back();
    for (Track t : in.tracks) {
      t.id += track_offset;
      t.process += process_offset;
      t.lane_of += track_offset;
      h.tracks.push_back(std::move(t));
    }
  }
  if (hosts.size() > 1 && !clocks) {
    warnings->push_back("the captures come from " + std::to_string(hosts.size()) +
                        " hosts: their CLOCK_REALTIME agree only as well as the hosts' clocks do");
  }
  return h;
}

// `threads` as BuildOptions means it: 0 is one per core.
int Threads(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The header of each member of a window group: each capture's join up to
// its header (the decode, most of a join's work), several at once on the
// merge's work queue (their decoding on the same threads), one capture
// each; `members` in the group's order. Each builder is left fresh, holding
// nothing decoded.
Status ProbeHeaders(const std::vector<const builder::CaptureIndex*>& captures,
                    std::vector<std::unique_ptr<builder::Builder>>& builders, const builder::BuildOptions& each,
                    const std::vector<std::pair<size_t, builder::Window>>& group, builder::WorkQueue* queue,
                    const builder::ProgressFn& progress, size_t* step, size_t steps, std::vector<Member>* members) {
  std::vector<Status> status(group.size(), Status::Ok());
  std::vector<TraceHeader> headers(group.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  auto work = [&](int) {
    for (size_t i; (i = next.fetch_add(1)) < group.size();) {
      const auto& [k, w] = group[i];
      {
        std::lock_guard<std::mutex> lock(mu);
        if (progress) progress("joining " + captures[k]->path(), ++*step, steps);
      }
      HeaderProbe probe;
      builder::WindowReport wr;
      Status s = builders[k]->BuildWindow(w, &probe, &wr);
      if (!probe.taken()) {
        status[i] = s.ok() ? Status::Internal("the join wrote no header") : s;
      } else {
        headers[i] = probe.header();
      }
      // Its decoded chunks go: held for every capture until its turn to
      // stream, they made 64 ranks' merge hold all 64 windows at once (1.5 GB
      // for 64 x 50k kernels, 42 MB for one). The streaming pass decodes
      // again, with the same options, so it sees the same tracks.
      builders[k] = std::make_unique<builder::Builder>(*captures[k], each);
    }
    return Status::Ok();
  };
  int workers = static_cast<int>(std::min<size_t>(group.size(), static_cast<size_t>(queue->threads())));
  GPUCAP_RETURN_IF_ERROR(queue->Each(workers, work));
  for (size_t i = 0; i < group.size(); ++i) {
    GPUCAP_RETURN_IF_ERROR(status[i]);
    members->push_back({group[i].first, group[i].second, std::move(headers[i])});
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> SameProcessConflicts(const std::vector<const builder::CaptureIndex*>& captures) {
  constexpr int64_t kYearNs = 366ll * 24 * 3600 * 1'000'000'000;
  std::vector<std::string> out;
  for (size_t a = 0; a < captures.size(); ++a) {
    for (size_t b = a + 1; b < captures.size(); ++b) {
      const auto& sa = captures[a]->capture().session;
      const auto& sb = captures[b]->capture().session;
      if (!sa || !sb || sa->host != sb->host || sa->pid != sb->pid || sa->rank != sb->rank) continue;
      std::vector<std::string> why;
      for (const format::DeviceInfo& da : captures[a]->capture().devices) {
        for (const format::DeviceInfo& db : captures[b]->capture().devices) {
          if (da.id == db.id && da.name != db.name) {
            why.push_back("device " + std::to_string(da.id) + " is \"" + da.name + "\" in one and \"" + db.name +
                          "\" in the other");
          }
        }
      }
      // Saturating: hostile start times may be anywhere in int64.
      int64_t ta = sa->start_realtime_ns, tb = sb->start_realtime_ns;
      uint64_t apart = ta > tb ? static_cast<uint64_t>(ta) - static_cast<uint64_t>(tb)
                               : static_cast<uint64_t>(tb) - static_cast<uint64_t>(ta);
      if (apart > static_cast<uint64_t>(kYearNs)) {
        why.push_back("they started " + std::to_string(apart / static_cast<uint64_t>(kYearNs / 366 * 365)) +
                      " year(s) apart");
      }
      if (why.empty()) continue;
      std::string line = captures[a]->path() + " and " + captures[b]->path() + " both claim host '" + sa->host +
                         "' pid " + std::to_string(sa->pid) + " rank " + std::to_string(sa->rank) +
                         " but cannot be one process: ";
      for (size_t i = 0; i < why.size(); ++i) line += (i ? "; " : "") + why[i];
      out.push_back(std::move(line));
    }
  }
  return out;
}

Result<MergeReport> MergeTraces(const std::vector<const builder::CaptureIndex*>& captures,
                                const builder::BuildOptions& options, const builder::ProgressFn& progress,
                                const MergeChecks& checks) {
  if (captures.empty()) return Status::InvalidArgument("no captures to merge");
  if (options.output.empty()) return Status::InvalidArgument("no output path given (-o)");
  auto spec = builder::ParseWindowSpec(options.window);
  if (!spec.ok()) return spec.status();
  MergeReport report;
  std::vector<std::string> conflicts = SameProcessConflicts(captures);
  if (!conflicts.empty() && !checks.keep_apart) {
    return Status::InvalidArgument(conflicts.front() +
                                   " (check the files; --keep-apart merges them as separate processes)");
  }
  for (std::string& c : conflicts) report.warnings.push_back(std::move(c) + ": merged as separate processes");
  std::set<int64_t> ranks;
  for (size_t k = 0; k < captures.size(); ++k) {
    const auto& s = captures[k]->capture().session;
    if (s && s->rank >= 0 && !ranks.insert(s->rank).second) {
      report.warnings.push_back(captures[k]->path() + ": rank " + std::to_string(s->rank) +
                                " appears in more than one capture");
    }
    for (const std::string& line : captures[k]->capture().report.Describe(captures[k]->path())) {
      report.warnings.push_back(line);
    }
  }

  // One set of threads for the whole merge: the captures' joins side by side
  // and their decoding. Declared first: the builders use it to the end.
  builder::WorkQueue queue(Threads(options.threads));
  if (checks.align == ClockAlign::kOn || (checks.align == ClockAlign::kAuto && SeveralHosts(captures))) {
    if (progress) progress("aligning clocks", 0, 0);
    report.clocks = AlignCaptures(captures, &queue);
    for (const RankClock& rc : report.clocks->ranks) {
      if (!rc.note.empty()) report.warnings.push_back("rank " + std::to_string(rc.rank) + " (" + rc.host + "): " + rc.note);
    }
  }
  // Windows, matched across captures by label, else by index.
  std::vector<std::unique_ptr<builder::Builder>> builders;
  std::vector<std::string> keys;
  std::map<std::string, std::vector<std::pair<size_t, builder::Window>>> groups;
  // The captures' first joins run side by side (ProbeHeaders), each
  // decoding on its share of the threads.
  builder::BuildOptions each = options;
  each.queue = &queue;
  each.threads = std::max(1, Threads(options.threads) / static_cast<int>(std::max<size_t>(1, captures.size())));
  for (size_t k = 0; k < captures.size(); ++k) {
    builders.push_back(std::make_unique<builder::Builder>(*captures[k], each));
    auto windows = builders.back()->Windows();
    if (!windows.ok()) return Status(windows.status().code(), captures[k]->path() + ": " + windows.status().message());
    for (const builder::Window& w : *windows) {
      std::string key = w.label;
      if (key.empty()) key.append("#").append(std::to_string(w.index));
      auto& g = groups[key];
      if (g.empty()) keys.push_back(key);
      if (std::none_of(g.begin(), g.end(), [&](const auto& m) { return m.first == k; })) g.emplace_back(k, w);
    }
  }
  if (keys.empty()) return Status::NotFound("--window '" + options.window + "' matches nothing in the captures");
  for (const std::string& key : keys) {
    if (groups[key].size() < captures.size()) {
      report.warnings.push_back("window " + key + " is in " + std::to_string(groups[key].size()) + " of " +
                                std::to_string(captures.size()) + " captures");
    }
  }
  uint32_t last_index = 0;  // the width of the windows' numbers in file names
  for (const std::string& key : keys) {
    for (const auto& member : groups[key]) last_index = std::max(last_index, member.second.index);
  }
  bool one = spec->kind == builder::WindowSpec::Kind::kAll || spec->kind == builder::WindowSpec::Kind::kRange;
  if (one && keys.size() > 1) one = false;
  if (format::IsStandardOutput(options.output) && keys.size() > 1) {
    return Status::InvalidArgument("-o " + options.output + " takes one window; --window '" + options.window +
                                   "' yields " + std::to_string(keys.size()) + " (pick one with --select)");
  }

  size_t step = 0, steps = 0;
  for (const std::string& key : keys) steps += groups[key].size();
  for (const std::string& key : keys) {
    std::vector<Member> members;
    GPUCAP_RETURN_IF_ERROR(ProbeHeaders(captures, builders, each, groups[key], &queue, progress, &step, steps,
                                        &members));
    std::vector<uint32_t> offsets;
    TraceHeader header = MergeHeaders(captures, members, report.clocks, &offsets, &report.warnings);
    MergeReport::Output out;
    out.path = builder::WindowOutputPath(options.output, members.front().window, one, last_index);
    out.label = key;
    out.captures = members.size();
    size_t slash = out.path.find_last_of('/');
    header.trace_name = options.join.trace_name.empty()
                            ? (slash == std::string::npos ? out.path : out.path.substr(slash + 1))
                            : options.join.trace_name;
    auto file = builder::OpenOutput(out.path, options.output_options);
    if (!file.ok()) return file.status();
    std::unique_ptr<builder::TraceSink> renderer = builder::MakeRenderer(options.format, std::move(file).value());
    GPUCAP_RETURN_IF_ERROR(renderer->Begin(header));
    for (size_t i = 0; i < members.size(); ++i) {
      const Member& m = members[i];
      CaptureShare share(renderer.get(), offsets[i], m.header.tracks.size(), m.capture, captures.size(),
                         report.clocks ? &report.clocks->ranks[m.capture] : nullptr);
      builder::WindowReport wr;
      GPUCAP_RETURN_IF_ERROR(builders[m.capture]->BuildWindow(m.window, &share, &wr));
      builders[m.capture] = std::make_unique<builder::Builder>(*captures[m.capture], each);  // drops its rows
    }
    GPUCAP_RETURN_IF_ERROR(renderer->End());
    report.outputs.push_back(std::move(out));
  }
  return report;
}

}  // namespace gpucap::tools
