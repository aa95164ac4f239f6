// The builder's entry point: capture + window spec -> one trace per window.
//
//   auto index = CaptureIndex::Open("run.gpucap");
//   BuildOptions o;
//   o.window = "nvtx:ProfilerStep#\\d+";
//   o.output = "trace.json.gz";
//   auto report = BuildTraces(**index, o);   // trace.0-ProfilerStep#1.json.gz, ...
//
// In windows of the program's work (nvtx, marks) a GPU op belongs to the
// window holding its launch (window.h says why); in time windows, to the
// window holding its start.
//
// Per window, only the chunks whose time span overlaps it are decoded (in
// parallel), plus, when some op's launch record is missing, chunks ending
// shortly before it (the lookback) with their launch records only, and, for
// windows of the program's work, chunks after it while launches in the window
// have found no op (the lookahead). Decoded
// chunks are kept while the next window can use them, so consecutive windows
// decode each chunk about once, and memory follows the largest window, not
// the capture.
#ifndef GPUCAP_BUILDER_BUILDER_H_
#define GPUCAP_BUILDER_BUILDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpucap/builder/build_times.h"
#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/decode.h"
#include "gpucap/builder/join.h"
#include "gpucap/builder/output.h"
#include "gpucap/builder/renderer.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/builder/window.h"
#include "gpucap/status.h"

namespace gpucap::builder {

// A long run's progress, for a line on a terminal: what is being done, and
// how many of how many steps are done. May be empty.
using ProgressFn = std::function<void(std::string_view step, size_t done, size_t total)>;

struct BuildOptions {
  std::string window = "all";
  std::string select;  // e.g. "2,5-7"; empty keeps every window
  std::string output;  // with several windows, ".<index>[-<label>]" goes before the extension
  OutputFormat format = OutputFormat::kChromeJson;
  JoinOptions join;
  OutputOptions output_options;
  // How far before a window launch records of its ops are looked for.
  uint64_t launch_lookback_ns = 2'000'000'000;
  // How far after a window GPU work launched inside it is looked for: a GPU
  // op belongs to the window that holds its launch, and runs after it.
  uint64_t gpu_lookahead_ns = 2'000'000'000;
  // Threads in all, the caller's included: windows are built on up to this
  // many workers at once (window_workers.h), and the workers' decoding and
  // gzip members run on the same threads (work_queue.h); 1 is the caller
  // alone. Peak memory grows with the workers: about workers x the largest
  // window's decoded rows. 0: one per core.
  int threads = 0;
  // The threads to run on; BuildTraces makes them. Null: a Builder of its
  // own makes `threads` of them when it first decodes.
  WorkQueue* queue = nullptr;
  // A window whose chunks hold more kernel records than this keeps only
  // the kernels' join columns through its join, and decodes each chunk's
  // kernels again as their slices are written (decode.h, kNoKernelArgs;
  // kernel rows 104 -> 40 bytes), for the CPU time of decoding its kernels
  // twice. The trace is the same either way. 0: every window with kernels.
  uint64_t kernels_kept_whole = 1'000'000;
  // BuildTraces writes one file per window: past this many it writes none
  // (`every:100` once meant 100 ns, 3.7M files). 0: no bound.
  size_t max_windows = 10'000;
  // Called as BuildTraces starts each window (a progress line), `done`
  // windows finished; never from two threads at once. May be empty.
  std::function<void(const Window& w, size_t done, size_t total)> on_window;
  // Note when each window's phases ran (WindowReport::times, build_times.h).
  bool phase_times = false;
};

struct WindowReport {
  Window window;
  std::string path;
  JoinStats join;
  uint64_t chunks_used = 0;     // decoded chunks the window drew on
  uint64_t chunks_decoded = 0;  // of those, decoded for it (not kept from the previous window)
  uint64_t rows = 0;
  uint64_t table_bytes = 0;     // decoded rows held while building it
  uint64_t launches_unfound = 0;  // GPU launches in the window whose ops the lookahead did not reach
  // The chunks the window drew on (indices into Capture::chunks, ascending),
  // each with the record families (decode.h) it was decoded with: exactly
  // what a capture trimmed to this window must keep.
  std::vector<std::pair<size_t, uint32_t>> chunks;
  // Set by the caller to learn what the join referenced (join_use.h; parts
  // are indices into `chunks`); left null, nothing is collected.
  JoinUse* use = nullptr;
  // start_ns, decoded_ns and done_ns always; the rest with phase_times.
  WindowTimes times;
};

struct BuildReport {
  std::vector<WindowReport> windows;
  std::vector<std::string> warnings;  // capture damage, skipped records, ...
  uint64_t chunks_decoded = 0;
  uint64_t peak_table_bytes = 0;
  BuildTimes times;
};

// Builds windows one after another, keeping decoded chunks between them.
class Builder {
 public:
  Builder(const CaptureIndex& index, const BuildOptions& options);
  ~Builder();

  // The windows `options.window` and `options.select` yield.
  Result<std::vector<Window>> Windows() const;
  // Windows(), or NotFound ("CAPTURE: --window 'SPEC' matches nothing in the
  // capture") where they are none: what every command that walks windows
  // answers for a window that picks nothing.
  Result<std::vector<Window>> MatchedWindows() const;

  // Joins `window` into `sink` (Begin to End). Windows go fastest in start
  // order.
  Status BuildWindow(const Window& window, TraceSink* sink, WindowReport* report);

  // The name written into the next traces (Kineto writes the file name).
  void set_trace_name(std::string name) { options_.join.trace_name = std::move(name); }
  // What decoding skipped or found damaged, over every chunk decoded so far.
  const DecodeStats& decode_stats() const { return decoded_; }
  // The same per chunk, each chunk once, from its decode with the most
  // record families: what builders sharing a capture's windows merge, so
  // their warnings do not depend on which chunks two of them both decoded.
  struct ChunkDecode {
    uint32_t families = 0;
    DecodeStats stats;
  };
  const std::map<size_t, ChunkDecode>& chunk_decodes() const { return chunk_decodes_; }

 private:
  struct Cached;
  void Evict(const Window& window, const std::vector<size_t>& core);
  void Decode(const std::vector<size_t>& chunks, uint32_t families, WindowReport* report);
  // kAllFamilies, with kNoKernelArgs for a window of many kernels.
  uint32_t FamiliesFor(const std::vector<size_t>& core) const;
  // Adds chunks after the window holding ops of launches inside it.
  void LookAhead(const Window& w, uint32_t families, std::unordered_set<size_t>* used, WindowReport* report);
  WorkQueue* queue();  // options_.queue, else own_queue_

  const CaptureIndex& index_;
  BuildOptions options_;
  std::map<size_t, std::unique_ptr<Cached>> cache_;
  DecodeStats decoded_;
  std::map<size_t, ChunkDecode> chunk_decodes_;
  JoinWorkspace workspace_;
  std::unique_ptr<WorkQueue> own_queue_;
};

// Writes one file per window. Fails on the first window that cannot be
// written; the report says what was written before.
Result<BuildReport> BuildTraces(const CaptureIndex& index, const BuildOptions& options);

// Where window `w`'s trace goes: `output` itself when the spec yields one
// window by nature (all, range:), else the index and label before the
// extension: trace.json.gz -> trace.3-ProfilerStep#3.json.gz. Names ending in
// TensorBoard's ".pt.trace.json[.gz]" get the index alone, which its plugin
// reads as a span of one worker: rank0.pt.trace.json.gz ->
// rank0.3.pt.trace.json.gz.
// `last_index` is the largest index among the windows written: TensorBoard's
// plugin orders a worker's spans by their digits as text, so its names get
// the index zero-padded to that many digits (rank0.03.pt.trace.json.gz, and
// 10 sorts after 09, not after 1).
std::string WindowOutputPath(const std::string& output, const Window& w, bool one_window, uint32_t last_index = 0);

// The suffix TensorBoard's profiler plugin lists traces by (it takes
// ".pt.trace.json" too).
inline constexpr std::string_view kTensorBoardSuffix = ".pt.trace.json.gz";

// `output` when it names a file; when it names a folder (ends in '/', or is
// one), the trace file in it for `capture`: DIR/<capture's name less
// .gpucap><extension>, the extension TensorBoard's for Chrome JSON
// (".pt.trace.json.gz") and ".pftrace.gz" for Perfetto.
std::string TraceFileIn(const std::string& output, const std::string& capture, OutputFormat format);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_BUILDER_H_
