#include "track_registry.h"

#include <algorithm>
#include <tuple>

#include "gpucap/builder/trace_keys.h"

namespace gpucap::builder {
namespace {

// Tids of tracks that are no OS thread or stream: above any Linux tid
// (pid_max <= 2^22) and any stream id CUPTI hands out in practice.
constexpr uint32_t kSyntheticTid = 0x40000000;
// CPU pids below this could be a device's; moved to kMovedCpuPid | pid,
// above pid_max (2^22) and below the overhead process's.
constexpr uint32_t kMaxDevicePid = 256;
constexpr uint32_t kMovedCpuPid = 0x20000000;

}  // namespace


uint32_t TrackRegistry::CpuProcess(uint32_t pid) {
  auto it = cpu_processes_.find(pid);
  if (it != cpu_processes_.end()) return it->second;
  Process p;
  p.kind = Process::Kind::kCpu;
  // GPU processes are numbered by device (as Kineto) and the overhead one
  // is -1: a CPU pid among those (PID 1 in a container) would merge its
  // threads into a device's process, so it is shown above any OS pid.
  p.pid = pid < kMaxDevicePid || pid == kOverheadPid ? kMovedCpuPid | (pid & 0xffff) : pid;
  p.os_pid = pid;
  p.name = pid == idx_.pid() ? std::string(idx_.process_name()) : "process " + std::to_string(pid);
  if (p.name.empty()) p.name = "process " + std::to_string(pid);
  p.label = "CPU";
  p.sort_index = pid;
  processes_.push_back(p);
  return cpu_processes_[pid] = static_cast<uint32_t>(processes_.size() - 1);
}

uint32_t TrackRegistry::GpuProcess(uint32_t device) {
  auto it = gpu_processes_.find(device);
  if (it != gpu_processes_.end()) return it->second;
  Process p;
  p.kind = Process::Kind::kGpu;
  p.pid = device;
  p.name = std::string(idx_.process_name());
  p.label = "GPU " + std::to_string(device);
  p.sort_index = 5000000 + static_cast<int64_t>(device);
  processes_.push_back(p);
  return gpu_processes_[device] = static_cast<uint32_t>(processes_.size() - 1);
}

uint32_t TrackRegistry::OverheadTrack() {
  if (overhead_track_ != UINT32_MAX) return overhead_track_;
  Process p;
  p.kind = Process::Kind::kOverhead;
  p.pid = kOverheadPid;
  p.name = "CUPTI overhead";
  p.sort_index = 0x100000;
  processes_.push_back(p);
  overhead_process_ = static_cast<uint32_t>(processes_.size() - 1);
  Track t;
  t.kind = Track::Kind::kThread;
  t.id = static_cast<uint32_t>(tracks_.size());
  t.process = overhead_process_;
  t.tid = 0;  // as Kineto
  t.name = "CUPTI overhead";
  tracks_.push_back(t);
  return overhead_track_ = t.id;
}

uint32_t TrackRegistry::ThreadTrack(uint32_t pid, uint32_t tid) {
  auto key = std::pair{pid, tid};
  auto it = thread_tracks_.find(key);
  if (it != thread_tracks_.end()) return it->second;
  Track t;
  t.kind = Track::Kind::kThread;
  t.id = static_cast<uint32_t>(tracks_.size());
  t.process = CpuProcess(pid);
  t.tid = tid;
  std::string_view name = idx_.ThreadName(tid);
  if (name.empty()) name = idx_.process_name();
  t.name = "thread " + std::to_string(tid) + " (" + std::string(name) + ")";
  t.sort_index = tid;
  tracks_.push_back(t);
  return thread_tracks_[key] = t.id;
}

uint32_t TrackRegistry::StreamTrack(uint32_t device, uint32_t stream) {
  auto key = std::pair{device, stream};
  auto it = stream_tracks_.find(key);
  if (it != stream_tracks_.end()) return it->second;
  uint32_t id;
  if (stream == kStreamInvalid) {
    // Context and device syncs name no stream; Kineto draws them on tid
    // int32(-1), which importers cannot hold.
    id = SyntheticTrack(GpuProcess(device), "context sync", 0x7fffffff);
  } else {
    Track t;
    t.kind = Track::Kind::kStream;
    t.id = static_cast<uint32_t>(tracks_.size());
    t.process = GpuProcess(device);
    t.tid = stream;
    t.stream = stream;
    // Kineto's name less its trailing space, which text readers trip on.
    t.name = "stream " + std::to_string(stream);
    t.sort_index = stream;
    tracks_.push_back(t);
    id = t.id;
  }
  return stream_tracks_[key] = id;
}

uint32_t TrackRegistry::SyntheticTrack(uint32_t process, const std::string& name, int64_t sort_index,
                                    Track::Kind kind, uint32_t lane_of) {
  Track t;
  t.kind = kind;
  t.id = static_cast<uint32_t>(tracks_.size());
  t.process = process;
  auto [it, inserted] = next_synthetic_tid_.try_emplace(process, kSyntheticTid);
  t.tid = it->second++;
  t.lane_of = kind == Track::Kind::kLane ? lane_of : t.id;
  t.name = name;
  t.sort_index = sort_index;
  tracks_.push_back(t);
  return t.id;
}

uint32_t TrackRegistry::CounterTrack(uint32_t device, const std::string& name, const std::string& unit) {
  auto key = std::pair{device, name + " (" + unit + ")"};
  auto it = counter_tracks_.find(key);
  if (it != counter_tracks_.end()) return it->second;
  uint32_t id = SyntheticTrack(GpuProcess(device), unit.empty() ? name : key.second, 0x7ffffff0,
                               Track::Kind::kCounter);
  tracks_[id].unit = unit;
  return counter_tracks_[key] = id;
}

uint32_t TrackRegistry::CaptureLaneTrack(uint32_t device, uint32_t stream) {
  auto key = std::pair{device, stream};
  auto it = capture_lanes_.find(key);
  if (it != capture_lanes_.end()) return it->second;
  // A synthetic tid: the stream's own track (eager work on it) keeps tid =
  // stream; at the same sort index the synthetic tid sorts after it.
  uint32_t id = SyntheticTrack(GpuProcess(device),
                               "stream " + std::to_string(stream) + std::string(trace_keys::kCaptureLaneSuffix),
                               stream);
  tracks_[id].stream = stream;
  return capture_lanes_[key] = id;
}

uint32_t TrackRegistry::LaneTrack(uint32_t track, size_t lane) {
  const Track parent = tracks_[track];
  return SyntheticTrack(parent.process, parent.name + " (overlap " + std::to_string(lane) + ")",
                        parent.sort_index, Track::Kind::kLane, track);
}

TrackRegistry::Ordered TrackRegistry::Order() const {
  std::vector<uint32_t> process_order(processes_.size());
  for (uint32_t i = 0; i < process_order.size(); ++i) process_order[i] = i;
  std::sort(process_order.begin(), process_order.end(), [&](uint32_t a, uint32_t b) {
    const Process& x = processes_[a];
    const Process& y = processes_[b];
    return std::tie(x.sort_index, x.pid, x.kind) < std::tie(y.sort_index, y.pid, y.kind);
  });
  std::vector<uint32_t> process_id(processes_.size());
  for (uint32_t i = 0; i < process_order.size(); ++i) process_id[process_order[i]] = i;
  std::vector<uint32_t> track_order(tracks_.size());
  for (uint32_t i = 0; i < track_order.size(); ++i) track_order[i] = i;
  auto key = [&](uint32_t id) {
    const Track& t = tracks_[id];
    const Track& base = t.kind == Track::Kind::kLane ? tracks_[t.lane_of] : t;
    return std::tuple(process_id[t.process], base.kind == Track::Kind::kCounter, base.sort_index, base.tid,
                      t.kind == Track::Kind::kLane, t.tid);
  };
  std::sort(track_order.begin(), track_order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  Ordered o;
  o.track_id.resize(tracks_.size());
  for (uint32_t i = 0; i < track_order.size(); ++i) o.track_id[track_order[i]] = i;
  for (uint32_t p : process_order) o.processes.push_back(processes_[p]);
  for (uint32_t t : track_order) {
    Track track = tracks_[t];
    track.id = o.track_id[t];
    track.process = process_id[track.process];
    track.lane_of = o.track_id[track.lane_of];
    o.tracks.push_back(std::move(track));
  }
  return o;
}

}  // namespace gpucap::builder
