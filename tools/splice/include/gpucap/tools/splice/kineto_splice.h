// Puts a capture's GPU activity into a torch.profiler (Kineto) trace that was
// recorded with CPU activities only, so one file shows the profiler's CPU
// ops and gpucap's GPU work together.
//
// Clocks: Kineto writes ts in us relative to baseTimeNanoseconds, on
// CLOCK_REALTIME; the join converts CUPTI times to CLOCK_REALTIME through
// the capture's recorded clock pairs. So the GPU events are rendered against
// the profiler's base and need no other shift.
//
// Links: Kineto ties a launch to its CPU op by the op's "External id". A
// launch takes the id of the innermost profiler op enclosing it on its
// thread, as Kineto's own correlation push would have given it, and the GPU
// ops it launched take it too. Only where the profiler has no op around the
// launch does the join's id stay: the one the process pushed (external
// correlation records), else the stand-in of its innermost NVTX range.
//
// The profiler's document is copied through byte for byte; the GPU events
// go at the end of traceEvents, and the top-level keys a CPU-only trace
// lacks (deviceProperties, CUDA versions) are added from the capture.
#ifndef GPUCAP_TOOLS_KINETO_SPLICE_H_
#define GPUCAP_TOOLS_KINETO_SPLICE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/builder.h"
#include "gpucap/tools/json/json_text.h"

namespace gpucap::tools {

class KinetoTrace {
 public:
  // Reads a trace, gzipped or not; errors name the file and the byte offset.
  static Result<KinetoTrace> Read(const std::string& path);
  static Result<KinetoTrace> Parse(std::string text, const std::string& path);
  static Result<KinetoTrace> Parse(JsonText text, const std::string& path);

  const std::string& path() const { return path_; }
  std::string_view text() const { return text_.view(); }
  int64_t base_time_ns() const { return base_ns_; }
  // Where the document's top-level object opens and traceEvents' ']' is.
  size_t root_open() const { return root_open_; }
  size_t events_close() const { return events_close_; }
  bool has_events() const { return events_ > 0; }
  bool HasKey(const std::string& key) const { return keys_.count(key) != 0; }
  // The span of its X events, CLOCK_REALTIME ns; {0, 0} when none.
  std::pair<int64_t, int64_t> span() const { return {first_ns_, last_ns_}; }
  const std::set<uint32_t>& cpu_pids() const { return cpu_pids_; }
  uint64_t gpu_events() const { return gpu_events_; }

  // The External id of the innermost CPU op on (pid, tid) open at `ns`
  // (CLOCK_REALTIME), or 0.
  uint64_t ExternalIdAt(uint32_t pid, uint32_t tid, int64_t ns) const;
  bool NamesProcess(uint32_t pid) const { return named_pids_.count(pid) != 0; }
  bool NamesThread(uint32_t pid, uint32_t tid) const { return named_threads_.count({pid, tid}) != 0; }

 private:
  friend class KinetoReader;
  struct Op {
    int64_t start, end;
    uint64_t external_id;
    int32_t parent;  // enclosing op on the thread, -1: none
  };
  std::string path_;
  JsonText text_;
  int64_t base_ns_ = 0;
  size_t root_open_ = 0, events_close_ = 0;
  uint64_t events_ = 0, gpu_events_ = 0;
  std::set<std::string> keys_;
  int64_t first_ns_ = 0, last_ns_ = 0;
  std::set<uint32_t> cpu_pids_, named_pids_;
  std::set<std::pair<uint32_t, uint32_t>> named_threads_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Op>> ops_;  // by start, then longest first
};

struct SpliceReport {
  builder::WindowReport window;
  uint64_t launches_linked_by_capture = 0;  // no profiler op around it: the capture's id (pushed, else NVTX stand-in)
  uint64_t launches_linked_by_time = 0;     // from the enclosing profiler op
  uint64_t launches_unlinked = 0;
  uint64_t ops_linked = 0;                  // GPU ops given their launch's External id
  std::vector<std::string> warnings;
};

// Builds `window` of the capture into the profiler's trace, written to
// `output` (.json or .json.gz).
Result<SpliceReport> SpliceIntoKineto(const builder::CaptureIndex& index, const builder::BuildOptions& options,
                                      const builder::Window& window, const KinetoTrace& kineto,
                                      const std::string& output);

// The window a profiler trace covers, in the capture's CUPTI time: its X
// events' span, GPU ops belonging by launch (the profiler collects the GPU
// work of the ops it saw, whenever that ran).
builder::Window KinetoWindow(const builder::CaptureIndex& index, const KinetoTrace& kineto);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_KINETO_SPLICE_H_
