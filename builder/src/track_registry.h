// The processes and tracks of one trace, made as the join meets them, in
// Kineto's terms: a CPU process per OS pid with a track per thread, a GPU
// process per device with a track per stream, synthetic tracks (lanes,
// counters, context syncs) with tids no OS thread or stream uses.
#ifndef GPUCAP_BUILDER_SRC_TRACK_REGISTRY_H_
#define GPUCAP_BUILDER_SRC_TRACK_REGISTRY_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

// CUPTI's overhead as a process of its own. Kineto writes pid -1, which
// Perfetto's JSON importer turns into 0, on top of GPU 0, and UINT32_MAX is -1
// to readers that take pids as int32: INT32_MAX is the same number to every
// reader and above any Linux pid (pid_max <= 2^22).
inline constexpr uint32_t kOverheadPid = 0x7fffffff;
inline constexpr uint32_t kStreamInvalid = UINT32_MAX;  // syncs of a context or device

class TrackRegistry {
 public:
  explicit TrackRegistry(const CaptureIndex& index) : idx_(index) {}

  // Each returns the track's id, making it on first use.
  uint32_t ThreadTrack(uint32_t pid, uint32_t tid);
  uint32_t StreamTrack(uint32_t device, uint32_t stream);  // kStreamInvalid: the device's sync track
  uint32_t CounterTrack(uint32_t device, const std::string& name, const std::string& unit);
  uint32_t OverheadTrack();
  uint32_t SyntheticTrack(uint32_t process, const std::string& name, int64_t sort_index,
                          Track::Kind kind = Track::Kind::kSynthetic, uint32_t lane_of = 0);
  // The lane of graph replays captured on `stream` of `device`: a track of
  // its own, named after the stream, listed right after the stream's.
  uint32_t CaptureLaneTrack(uint32_t device, uint32_t stream);
  // Lane `lane` (1, 2, ...) beside `track`, for slices that overlap its own.
  uint32_t LaneTrack(uint32_t track, size_t lane);
  uint32_t CpuProcess(uint32_t pid);
  uint32_t GpuProcess(uint32_t device);

  size_t size() const { return tracks_.size(); }

  // Processes and tracks in the order a trace lists them: processes by
  // sort index; tracks by process, sort index and tid, lanes right after
  // the track they relieve. track_id maps the ids handed out so far to
  // positions in that order (Track::id, Track::process and Track::lane_of
  // are given in the new numbering).
  struct Ordered {
    std::vector<Process> processes;
    std::vector<Track> tracks;
    std::vector<uint32_t> track_id;
  };
  Ordered Order() const;

 private:
  const CaptureIndex& idx_;
  std::vector<Process> processes_;
  std::vector<Track> tracks_;
  std::map<uint32_t, uint32_t> cpu_processes_, gpu_processes_;
  uint32_t overhead_process_ = UINT32_MAX;
  uint32_t overhead_track_ = UINT32_MAX;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> thread_tracks_, stream_tracks_, capture_lanes_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> counter_tracks_;
  std::map<uint32_t, uint32_t> next_synthetic_tid_;  // per process
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_TRACK_REGISTRY_H_
