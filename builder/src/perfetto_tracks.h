// How a trace's processes and tracks (trace_model.h) become Perfetto track
// descriptors: the tree a person sees in Perfetto UI.
//
//   python3 (pid 744)                 process track, children in explicit order
//     python3 744                     thread track: API calls, NVTX ranges
//     python3 744                     its overflow lane (same name, never merged)
//     NVTX start/end ranges
//     GPU 0 (NVIDIA H200)             a group per GPU, after the threads
//       stream 7                      one track per stream, by stream id
//       power                         counter tracks, with units
//     CUPTI overhead
//
// GPUs sit inside the host process because that is the only place an
// explicit order can put them after it: Perfetto UI draws root tracks that
// belong to no process before every process.
#ifndef GPUCAP_BUILDER_SRC_PERFETTO_TRACKS_H_
#define GPUCAP_BUILDER_SRC_PERFETTO_TRACKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

struct TrackDescriptorSpec {
  enum class Kind : uint8_t { kProcess, kThread, kGroup, kSlices, kCounter };
  Kind kind = Kind::kSlices;
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;  // 0: a root track
  std::string name;          // process_name, thread_name or the track's name
  std::string description;
  int32_t pid = 0;           // kProcess, kThread
  int64_t tid = 0;           // kThread
  bool explicit_child_order = false;
  std::optional<int32_t> rank;  // sibling_order_rank
  bool never_merge = false;     // sibling_merge_behavior NONE
  std::string unit_name;        // kCounter: W, MHz, %
  bool unit_bytes = false;      // kCounter: the builtin SIZE_BYTES unit instead
};

struct TrackLayout {
  // Parents before their children.
  std::vector<TrackDescriptorSpec> descriptors;
  // The uuid events of header track i go to.
  std::vector<uint64_t> track_uuid;
};

// Small uuids (1, 2, ...) in descriptor order: they are written once per
// track, but small ones keep every reference to them one byte.
TrackLayout LayOutTracks(const TraceHeader& header);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_PERFETTO_TRACKS_H_
