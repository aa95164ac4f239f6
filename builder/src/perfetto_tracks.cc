#include "perfetto_tracks.h"

#include <limits>
#include <string_view>

namespace gpucap::builder {
namespace {

// Siblings under a process: its threads and tracks in the join's order, then
// the GPUs, then CUPTI's overhead.
constexpr int32_t kGpuRank = 1 << 24;
constexpr int32_t kOverheadRank = 1 << 25;

// Perfetto takes pid and tid 0 for the idle process; an id that does not fit
// its int32 pid is no OS pid either.
bool OsId(uint32_t id) { return id != 0 && id <= static_cast<uint32_t>(std::numeric_limits<int32_t>::max()); }

// The join names threads "thread <tid> (<name>)", as Kineto; Perfetto shows
// a thread's tid beside its name by itself.
std::string ThreadName(const Track& t) {
  std::string prefix = "thread " + std::to_string(t.tid) + " (";
  std::string_view n = t.name;
  if (n.size() > prefix.size() + 1 && n.substr(0, prefix.size()) == prefix && n.back() == ')') {
    return std::string(n.substr(prefix.size(), n.size() - prefix.size() - 1));
  }
  return t.name;
}

// Kineto's stream names end in a space.
std::string Trimmed(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// "power (W)" with unit "W" -> "power": the unit is shown with the values.
std::string CounterName(const Track& t) {
  std::string suffix = " (" + t.unit + ")";
  if (!t.unit.empty() && t.name.size() > suffix.size() &&
      t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return t.name.substr(0, t.name.size() - suffix.size());
  }
  return t.name;
}

std::string GpuName(const TraceHeader& h, const Process& p) {
  std::string name = p.label.empty() ? "GPU " + std::to_string(p.pid) : p.label;
  for (const format::DeviceInfo& d : h.devices) {
    if (d.id == p.pid && !d.name.empty()) return name + " (" + d.name + ")";
  }
  return name;
}

// The CPU process GPU work is drawn under: the one the GPUs are named after
// (the recorded process), else the first.
std::optional<size_t> HostProcess(const TraceHeader& h) {
  std::optional<size_t> first;
  for (size_t i = 0; i < h.processes.size(); ++i) {
    if (h.processes[i].kind != Process::Kind::kCpu) continue;
    if (!first) first = i;
    for (const Process& g : h.processes) {
      if (g.kind == Process::Kind::kGpu && g.name == h.processes[i].name) return i;
    }
  }
  return first;
}

}  // namespace

TrackLayout LayOutTracks(const TraceHeader& h) {
  TrackLayout out;
  uint64_t next_uuid = 1;
  std::vector<uint64_t> process_uuid(h.processes.size(), 0);
  std::optional<size_t> host = HostProcess(h);

  for (size_t i = 0; i < h.processes.size(); ++i) {
    const Process& p = h.processes[i];
    if (p.kind != Process::Kind::kCpu) continue;
    TrackDescriptorSpec d;
    d.uuid = process_uuid[i] = next_uuid++;
    d.name = p.name;
    if (OsId(p.pid)) {
      d.kind = TrackDescriptorSpec::Kind::kProcess;
      d.pid = static_cast<int32_t>(p.pid);
    } else {
      d.kind = TrackDescriptorSpec::Kind::kGroup;
      d.name = p.name + " (pid " + std::to_string(p.pid) + ")";
    }
    d.explicit_child_order = true;
    out.descriptors.push_back(std::move(d));
  }
  const uint64_t host_uuid = host ? process_uuid[*host] : 0;
  for (size_t i = 0; i < h.processes.size(); ++i) {
    const Process& p = h.processes[i];
    if (p.kind == Process::Kind::kOverhead) {
      process_uuid[i] = host_uuid;
      continue;
    }
    if (p.kind != Process::Kind::kGpu) continue;
    TrackDescriptorSpec d;
    d.kind = TrackDescriptorSpec::Kind::kGroup;
    d.uuid = process_uuid[i] = next_uuid++;
    d.parent_uuid = host_uuid;
    d.name = GpuName(h, p);
    d.explicit_child_order = true;
    d.rank = kGpuRank + static_cast<int32_t>(i);
    d.never_merge = true;
    out.descriptors.push_back(std::move(d));
  }

  // Names first: a lane takes the name of the track it relieves.
  std::vector<std::string> shown(h.tracks.size());
  for (size_t i = 0; i < h.tracks.size(); ++i) {
    const Track& t = h.tracks[i];
    switch (t.kind) {
      case Track::Kind::kThread:
        // CUPTI's overhead track is a thread of no process (tid 0).
        shown[i] = h.processes[t.process].kind == Process::Kind::kCpu ? ThreadName(t) + " " + std::to_string(t.tid)
                                                                       : t.name;
        break;
      case Track::Kind::kStream: shown[i] = Trimmed(t.name); break;
      case Track::Kind::kCounter: shown[i] = CounterName(t); break;
      case Track::Kind::kLane:
      case Track::Kind::kSynthetic: shown[i] = t.name; break;
    }
  }
  out.track_uuid.resize(h.tracks.size());
  for (size_t i = 0; i < h.tracks.size(); ++i) {
    const Track& t = h.tracks[i];
    const Process& p = h.processes[t.process];
    TrackDescriptorSpec d;
    d.uuid = out.track_uuid[i] = next_uuid++;
    d.parent_uuid = process_uuid[t.process];
    d.rank = (p.kind == Process::Kind::kOverhead ? kOverheadRank : 0) + static_cast<int32_t>(i);
    d.name = shown[i];
    d.never_merge = true;
    switch (t.kind) {
      case Track::Kind::kThread:
        if (p.kind == Process::Kind::kCpu && OsId(p.pid) && OsId(t.tid)) {
          d.kind = TrackDescriptorSpec::Kind::kThread;
          d.name = ThreadName(t);
          d.pid = static_cast<int32_t>(p.pid);
          d.tid = t.tid;
          d.never_merge = false;
        }
        break;
      case Track::Kind::kCounter:
        d.kind = TrackDescriptorSpec::Kind::kCounter;
        if (t.unit == "bytes" || t.unit == "B") {
          d.unit_bytes = true;
        } else {
          d.unit_name = t.unit;
        }
        break;
      case Track::Kind::kLane:
        if (t.lane_of < h.tracks.size() && t.lane_of != i) {
          d.name = shown[t.lane_of];
          d.description = "slices that overlap others on " + shown[t.lane_of];
        }
        break;
      case Track::Kind::kStream:
      case Track::Kind::kSynthetic:
        break;
    }
    out.descriptors.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpucap::builder
