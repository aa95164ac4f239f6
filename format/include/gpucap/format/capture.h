// A capture loaded for reading: every small message decoded into typed lists,
// activity chunks kept as views into the mapping and decompressed on demand.
// This is what the builder and the tools start from.
#ifndef GPUCAP_FORMAT_CAPTURE_H_
#define GPUCAP_FORMAT_CAPTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpucap/format/capture_file.h"
#include "gpucap/format/model.h"
#include "gpucap/status.h"

namespace gpucap::format {

// A string definition with the frame sequence it was written at: a chunk
// uses the latest definition of a pointer written before the chunk.
struct SequencedString {
  uint32_t sequence = 0;
  StringDef def;
};

struct Capture {
  std::unique_ptr<CaptureFile> file;
  std::optional<SessionInfo> session;
  std::vector<DeviceInfo> devices;
  std::vector<ClockSample> clocks;
  std::vector<SequencedString> strings;
  std::vector<RangeEvent> ranges;
  std::vector<GraphEvent> graphs;
  std::vector<WindowMark> windows;
  std::vector<ThreadInfo> threads;
  std::vector<StreamInfo> streams;
  std::vector<MetadataBlob> metadata;
  std::vector<RecorderStats> stats;     // snapshots in file order; the last is the latest
  std::vector<CounterDef> counter_defs;
  std::vector<CounterSample> counter_samples;
  std::vector<ChunkView> chunks;        // file order
  std::optional<Trailer> trailer;
  ScanReport report;                    // damage, unknown types, lost bytes
};

struct LoadOptions {
  ReadOptions read;
  // Check every chunk's payload checksum while loading. Off, chunk frames
  // found through the trailer index are only checked when decompressed.
  bool verify_chunks = false;
};

// Opens and loads a capture. Fails only when the file cannot be a capture
// at all (missing, not a capture, newer major version); damage inside is
// reported in `report` and the rest is loaded.
Result<Capture> LoadCapture(const std::string& path, const LoadOptions& options = {});

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CAPTURE_H_
