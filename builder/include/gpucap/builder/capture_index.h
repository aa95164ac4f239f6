// A loaded capture with everything the builder derives from it once, whatever
// windows are built later: the decoder for its CUPTI version, the clock map,
// ranges, graph topology, the time extent, chunks by time, thread and device
// lookups, and demangled kernel names.
#ifndef GPUCAP_BUILDER_CAPTURE_INDEX_H_
#define GPUCAP_BUILDER_CAPTURE_INDEX_H_

#include <atomic>
#include <functional>
#include <deque>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpucap/builder/annotation_stacks.h"
#include "gpucap/builder/clock.h"
#include "gpucap/builder/collectives.h"
#include "gpucap/builder/decode.h"
#include "gpucap/builder/graph.h"
#include "gpucap/builder/ranges.h"
#include "gpucap/builder/torch_operators.h"
#include "gpucap/builder/window.h"
#include "gpucap/format/capture.h"
#include "gpucap/status.h"

namespace gpucap::builder {

class CaptureIndex {
 public:
  // With `verify`, every chunk's checksum is checked as it is loaded (info).
  static Result<std::unique_ptr<CaptureIndex>> Open(const std::string& path, bool verify = false);
  static std::unique_ptr<CaptureIndex> FromCapture(format::Capture capture, std::string path);

  const format::Capture& capture() const { return capture_; }
  const std::string& path() const { return path_; }
  const Decoder& decoder() const { return *decoder_; }
  const ClockMap& clock() const { return *clock_; }
  const RangeIndex& ranges() const { return *ranges_; }
  // The ranges whose whole names `pattern` matches, as steps of the step
  // rule (annotation_stacks.h); an empty pattern is DefaultStepPattern's.
  // Derived once per pattern, safe from several threads at once; an
  // InvalidArgument when the pattern does not compile.
  Result<const StepRanges*> Steps(std::string_view pattern) const;
  // The ranges that are PyTorch operators (emit_nvtx), derived on first
  // use; safe from several threads at once.
  const TorchOperators& operators() const;
  const GraphIndex& graphs() const { return *graphs_; }
  // In a flight-recorder dump (a capture whose trailer names its trigger),
  // the lowest correlation id of the launch records it holds: CUPTI numbers
  // calls in the order they begin, so an op whose id is lower was launched
  // before the dump's span, its launch record gone with the ring's oldest
  // frames (the join leaves such ops out: docs/semantics.md). 0 for any
  // other capture, and for a dump without launch records. Derived on first
  // use (decodes the launch records once); safe from several threads at once.
  uint32_t FirstLaunchCorrelation() const;
  // The stretches the recorder was paused in, [start, end) in CUPTI ns and
  // time order, from the capture's recording changes (recording_state.h);
  // the join leaves out the calls made in them (docs/semantics.md,
  // "Recorded while paused"). Derived on first use; safe from several
  // threads at once.
  const std::vector<std::pair<uint64_t, uint64_t>>& PausedStretches() const;
  const CollectiveIndex& collectives() const { return *collectives_; }
  const CaptureExtent& extent() const { return extent_; }
  // What was left out or cut because the capture claimed the impossible
  // (timestamps past any plausible run, clock samples that cannot be, range
  // nesting or names over their budgets): lines for a person.
  std::vector<std::string> Warnings() const;
  // The part of Warnings() that is contradictions the capture states
  // (record counts its bytes cannot hold, a device without properties, NaN
  // counters, cyclic graph dependencies).
  std::vector<std::string> Contradictions() const;

  // Chunks (indices into capture().chunks, ascending) holding a record that
  // starts or ends in [start, end), judged by each chunk's time span; chunks
  // without any timestamp are always included since nothing places them.
  std::vector<size_t> ChunksOverlapping(uint64_t start, uint64_t end) const;
  // Chunks whose span ends in [start, end), latest first: where launch
  // records of ops in a window are looked for.
  std::vector<size_t> ChunksEndingIn(uint64_t start, uint64_t end) const;

  // The demangled text of a capture string, demangled on first use. Safe
  // from several threads at once: windows are joined in parallel.
  std::string_view KernelName(uint32_t string_index) const;
  std::string_view ThreadName(uint32_t os_tid) const;
  const format::DeviceInfo* Device(uint32_t id) const;
  // The stream the program created as (context, CUPTI stream id), with its
  // priority and flags; null for the default streams and for streams made
  // before the recorder was subscribed (or by a recorder before issue 17).
  const format::StreamInfo* Stream(uint32_t context_id, uint32_t stream_id) const;
  // Metadata blobs the application attached to `key` of `kind`, in file order.
  // Blobs by key; kRange blobs are keyed by the index (in ranges()) of the
  // innermost range open on their thread when they were written.
  std::span<const format::MetadataBlob* const> Metadata(format::MetadataKey kind, uint64_t key) const;
  // The recorded process: the session's pid, else a thread's, else a pid no
  // device uses (GPU processes are numbered by device, from 0).
  uint32_t pid() const;
  std::string_view process_name() const;

 ~CaptureIndex();

 private:
  CaptureIndex(format::Capture capture, std::string path);
  const std::string* DemangleOnce(uint32_t string_index) const;

  format::Capture capture_;
  std::string path_;
  std::unique_ptr<Decoder> decoder_;
  std::unique_ptr<ClockMap> clock_;
  CaptureExtent extent_;
  std::unique_ptr<RangeIndex> ranges_;
  mutable std::mutex steps_mutex_;
  mutable std::map<std::string, std::unique_ptr<StepRanges>, std::less<>> steps_;  // by pattern
  mutable std::once_flag operators_once_;
  mutable std::unique_ptr<TorchOperators> operators_;
  mutable std::once_flag first_launch_once_;
  mutable uint32_t first_launch_correlation_ = 0;
  mutable std::once_flag paused_once_;
  mutable std::vector<std::pair<uint64_t, uint64_t>> paused_;
  std::unique_ptr<GraphIndex> graphs_;
  std::unique_ptr<CollectiveIndex> collectives_;
  struct Span {
    uint64_t first, last;  // earliest and latest timestamp in the chunk
    size_t chunk;
  };
  std::vector<Span> spans_;  // chunks with timestamps
  std::vector<size_t> untimed_;
  std::unordered_map<uint32_t, std::string_view> thread_names_;
  std::deque<std::string> cut_thread_names_;  // names over kMaxNameBytes, cut (views above point here)
  std::unordered_map<uint64_t, const format::StreamInfo*> streams_;  // by context << 32 | stream
  std::map<std::pair<format::MetadataKey, uint64_t>, std::vector<const format::MetadataBlob*>> metadata_;
  // One slot per capture string, null until first demangled. The first
  // worker to publish a name wins; a slot never changes once set, so the
  // views handed out stay valid for the index's life.
  std::unique_ptr<std::atomic<const std::string*>[]> demangled_;
  size_t demangled_count_ = 0;
};

// Capture `i` of a job, opened when a reader of many captures reaches it
// (report, stats, export): a thousand ranks' indexes would not fit at once.
using CaptureOpener = std::function<Result<std::shared_ptr<const CaptureIndex>>(size_t i)>;

// An opener over indexes already open (not owned).
CaptureOpener OpenedCaptures(std::span<const CaptureIndex* const> captures);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_CAPTURE_INDEX_H_
