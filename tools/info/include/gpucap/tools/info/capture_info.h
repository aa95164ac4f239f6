// What `gpucap info` says about a capture, gathered once as values; the text
// and the JSON form are two views of the same facts.
#ifndef GPUCAP_TOOLS_CAPTURE_INFO_H_
#define GPUCAP_TOOLS_CAPTURE_INFO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/format/recording_state.h"

namespace gpucap::tools {

struct CaptureInfo {
  std::string path;
  uint64_t file_bytes = 0;
  uint16_t format_major = 0, format_minor = 0;
  std::optional<format::SessionInfo> session;
  std::vector<format::DeviceInfo> devices;

  // Time, in CUPTI ns: everything timed (the builder's extent), and the GPU
  // activity chunks alone.
  uint64_t start_ns = 0, end_ns = 0;
  uint64_t activity_first_ns = 0, activity_last_ns = 0;
  int64_t start_realtime_ns = 0;
  size_t clock_samples = 0;

  uint64_t frames = 0;
  std::map<uint16_t, uint64_t> frames_by_type, unknown_frame_types;

  uint64_t records = 0, chunks = 0, raw_bytes = 0, stored_bytes = 0;
  std::map<uint32_t, uint64_t> records_per_kind;
  std::optional<uint64_t> records_written;  // the trailer's total, when there is one
  size_t strings = 0;
  std::vector<std::pair<uint32_t, std::string>> threads;  // OS tid, name
  std::map<int32_t, uint32_t> streams_by_priority;         // streams the program made, per priority

  uint64_t range_events = 0, push_pop_ranges = 0, start_end_ranges = 0, range_marks = 0;
  uint64_t unclosed_ranges = 0, unmatched_range_ends = 0;
  // NVTX extended payloads: registered schemas and enums, events carrying bytes.
  uint64_t payload_schemas = 0, payload_enums = 0, payload_events = 0;
  struct Domain {
    uint64_t id = 0;
    std::string name;
    uint64_t ranges = 0;
    uint64_t distinct_names = 0;
  };
  std::vector<Domain> domains;
  std::vector<std::pair<std::string, uint64_t>> top_ranges;  // most frequent names

  uint64_t graphs = 0, graph_nodes = 0, node_clones = 0, graph_edges = 0, graph_execs = 0, graph_updates = 0;
  uint64_t host_node_runs = 0;  // timed by the recorder's host-node trampoline
  std::map<std::string, uint64_t> nodes_by_type;

  uint64_t marks_open = 0, marks_close = 0, marks_instant = 0;
  std::vector<std::string> mark_labels;  // distinct, in file order
  size_t mark_windows = 0;               // windows `--window marks` yields

  std::vector<format::CounterDef> counters;
  uint64_t counter_samples = 0;
  uint64_t metadata_blobs = 0;
  std::vector<std::string> metadata_names;  // distinct
  // When the recorder recorded (capture ranges, sampling, triggers,
  // SIGUSR2); empty for a capture recorded whole.
  std::vector<format::RecordingInterval> recording;

  std::optional<format::RecorderStats> recorder;  // the recorder's last word on drops
  bool has_trailer = false, clean_shutdown = false;
  std::string stop_reason;
  // A flight-recorder dump's trigger ("signal", "api: <why>", "exit");
  // empty for a whole recording.
  std::string trigger;

  std::vector<format::Damage> damage;
  uint64_t tail_bytes_lost = 0, sequence_gaps = 0;
  std::vector<std::string> damage_lines;  // for a person, naming file and offsets
  // What the capture claims that cannot be (CaptureIndex::Warnings): the
  // same lines `build` warns with, so the two agree on what is wrong.
  std::vector<std::string> contradictions;

  // True when nothing suggests lost data: no damage, no drops, a clean close.
  bool Intact() const;
};

CaptureInfo DescribeCapture(const builder::CaptureIndex& index);
std::string InfoText(const CaptureInfo& info);
// Stable keys in a fixed order; times as integers (CUPTI ns unless named
// *_realtime_ns).
std::string InfoJson(const CaptureInfo& info);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_CAPTURE_INFO_H_
