// What the recorder is told to do. It reads everything from the environment,
// because it is loaded into a process that was not written for it; `gpucap
// record` translates its options into these variables.
#ifndef GPUCAP_RECORDER_CONFIG_H_
#define GPUCAP_RECORDER_CONFIG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capture_range.h"

namespace gpucap::recorder {

enum class ApiSelection { kLean, kAll, kNone };
// Where the lean API records come from: CUPTI's RUNTIME/DRIVER activity
// records, or the recorder's own from CUPTI's callbacks (api_records.h).
enum class ApiRecordSource { kActivity, kCallback };

inline constexpr uint64_t kDefaultRingBytes = 256ull << 20;
// The steps the flight recorder watches when no --window-nvtx names them:
// torch.profiler's, as the builder's default step rule has it.
inline constexpr const char* kDefaultStepPattern = R"(ProfilerStep#\d+)";

struct Config {
  std::string output = "gpucap-%h-%p.gpucap";  // GPUCAP_OUTPUT, %p %r %h %t expanded
  std::vector<uint32_t> kinds;                // GPUCAP_KINDS: names, comma separated; empty = defaults
  ApiSelection api = ApiSelection::kLean;     // GPUCAP_API=lean|all|none
  // GPUCAP_API_RECORDS=activity|callback; `all` always uses activity records,
  // and so does a recorder with no subscriber (GPUCAP_SUBSCRIBE=0). Activity
  // by default: callback records cost +17.8% +-3.6 per launch on the H200.
  ApiRecordSource api_source = ApiRecordSource::kActivity;
  size_t buffer_bytes = 4u << 20;             // GPUCAP_BUFFER_KB
  size_t pool_buffers = 32;                   // GPUCAP_POOL_MB (128) / buffer size
  uint32_t device_buffer_bytes = 0;           // GPUCAP_DEVICE_BUFFER_KB (0: CUPTI default)
  // GPUCAP_DEVICE_BUFFERS_AHEAD: device buffers CUPTI allocates for a context
  // at its initialisation (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE;
  // -1: CUPTI's 3), again after every re-attach: a knob for measuring what a
  // --sample cycle costs the launching thread.
  int32_t device_buffers_ahead = -1;
  uint32_t flush_period_ms = 1000;            // GPUCAP_FLUSH_MS: CUPTI's own periodic flush
  double start_delay_s = 0;                   // GPUCAP_DELAY_S
  double duration_s = 0;                      // GPUCAP_DURATION_S (0: until exit)
  uint64_t max_file_bytes = 0;                // GPUCAP_MAX_MB
  // The flight recorder (frame_ring.h): GPUCAP_RING_MB bounds the span
  // frames kept in memory instead of written, GPUCAP_RING_S drops those
  // older than that (with no GPUCAP_RING_MB, kDefaultRingBytes bound it);
  // SIGUSR1, gpucap_dump() and, with GPUCAP_RING_DUMP_AT_EXIT=1, the end of
  // the recording write dumps next to `output` (RingDumpPath).
  uint64_t ring_bytes = 0;
  double ring_seconds = 0;
  bool ring_dump_at_exit = false;
  // A crash writes a dump too (crash_dump.h); GPUCAP_RING_CRASH=0 leaves the
  // crash signals alone (a program that takes SIGSEGV in its normal work).
  bool ring_crash = true;
  // GPUCAP_RING_FLUSH_MS: while recording in ring mode, the control thread
  // asks CUPTI for its buffers of complete records this often (periodic_flush.h), so
  // that a crash dump, whose handler cannot call CUPTI, lacks at most about
  // this long of GPU activity; 0 turns it off. CUPTI's own flush period
  // (flush_period_ms) returns full buffers only.
  uint32_t ring_flush_ms = 500;
  bool ring() const { return ring_bytes > 0; }
  // The flight recorder's own triggers (step_watch.h): GPUCAP_RING_HANG_S,
  // a dump when no step closed for that long; GPUCAP_RING_SLOW_STEP (K) with
  // GPUCAP_RING_SLOW_WINDOW (M), a dump when a step lasts more than K times
  // the median of its family's last M; GPUCAP_RING_DUMP_INTERVAL_S, at most
  // one slow-step dump per that many seconds. The steps: the window_nvtx
  // ranges, else kDefaultStepPattern. Ignored (said once) without a ring.
  double ring_hang_s = 0;
  double ring_slow_step = 0;
  uint32_t ring_slow_window = 20;
  double ring_dump_interval_s = 60;
  bool watches_steps() const { return ring_hang_s > 0 || ring_slow_step > 0; }
  // GPUCAP_RING_HANG_CALL_S: a dump when a thread has been inside one CUDA
  // call that long (call_watch.h); needs the entry gate, which
  // `gpucap record --ring-hang-call` preloads. 0: off.
  double ring_hang_call_s = 0;
  bool start_paused = false;                  // GPUCAP_START_PAUSED: wait for SIGUSR2
  bool toggle_signal = true;                  // GPUCAP_SIGUSR2=0 disables the toggle
  bool graphs = true;                         // GPUCAP_GRAPHS=0
  bool host_node_times = true;                // GPUCAP_HOST_NODE_TIMES=0: leave host nodes unwrapped
  // The stream each captured graph node was made on (capture_streams.h).
  // Costs only while a stream capture is open; GPUCAP_CAPTURE_STREAMS=0.
  bool capture_streams = true;
  bool nvtx = true;                           // GPUCAP_NVTX=0
  // Kernel `queued`/`submitted` timestamps (cuptiActivityEnableLatencyTimestamps).
  // Off: they cost +5.5% +-4.1 per launch on the H200 (bench/README.md,
  // "Latency timestamps"); `gpucap record --latency-timestamps` or
  // GPUCAP_LATENCY_TIMESTAMPS=1.
  bool latency_timestamps = false;
  std::string window_nvtx;                    // GPUCAP_WINDOW_NVTX: regex of range names that mark windows
  // GPUCAP_CAPTURE_RANGE (nvtx:REGEX | cudaProfilerApi), GPUCAP_CAPTURE_RANGE_END
  // (stop | repeat | repeat:N), GPUCAP_SAMPLE (N), GPUCAP_TRIGGER_FILE,
  // GPUCAP_TRIGGER_WINDOWS (K), GPUCAP_CAPTURE_ARM (exact | early). With a
  // capture range the recorder starts paused; an nvtx one also marks windows
  // unless GPUCAP_WINDOW_NVTX names others; --sample or a trigger file
  // without a capture range gate on the --window-nvtx ranges.
  CaptureRangeSpec capture;
  std::string capture_error;                  // why the settings above were refused (logged)
  // Why GPUCAP_CUDA_GRAPH_TRACE=graph was not honoured (logged; empty when
  // it was, or was not asked): CUPTI's graph-level records need a
  // recording from the start (config.cc, KeepGraphTraceOnlyFromTheStart).
  std::string graph_trace_refused;
  bool quiet = false;                         // GPUCAP_QUIET=1: nothing on stderr but errors
  bool nvml_counters = false;                 // GPUCAP_COUNTERS contains "nvml"
  // CUPTI PM sampling, configured in the first context's creation callback:
  // it delays that first CUDA call by the configure time (~0.75 s on the
  // H200).
  bool pm_counters = false;                   // GPUCAP_COUNTERS contains "pm"
  uint32_t counter_interval_ms = 100;         // GPUCAP_COUNTER_MS: NVML sampling interval
  std::string pm_metrics;                     // GPUCAP_PM_METRICS: comma separated; empty = defaults
  // Evaluating a sample costs the control thread ~0.1 ms (pm_probe on the
  // H200): 10 ms keeps that near 1% of a core.
  uint64_t pm_interval_us = 10000;            // GPUCAP_PM_INTERVAL_US
  bool subscribe = true;                      // GPUCAP_SUBSCRIBE=0: no resource callbacks (no graphs, devices)
  // The resource callbacks enabled: only those the recorder handles
  // (contexts, module unloads, graphs), or GPUCAP_RESOURCE=domain: the whole
  // domain, which cost every kernel launch about 1 us on the H200, paused or
  // recording (bench/README.md, "The recorder's price").
  bool resource_domain = false;
  // A pause after recording detaches CUPTI (cuptiFinalize with every other
  // thread held out of CUDA by the entry gate, then attaches again without
  // activity), which takes away the work CUPTI leaves on every CUDA call once
  // its kinds were on (+45% to +88% of an empty kernel's launch
  // instructions). GPUCAP_PAUSE_DETACH=1 turns it on where the entry gate
  // is in the process (entry_gate.h); without the gate nothing finalizes.
  // `gpucap record` sets it, and preloads the gate, wherever the run is set
  // up to pause (record_command.cc); off here for a recorder injected
  // without it.
  bool pause_detach = false;
  // Where pauses detach: attach CUPTI and switch its kinds on from the
  // control thread when the range before a recorded one opens
  // (GPUCAP_ATTACH_AHEAD, on), rather than on the application's thread as
  // the recorded range opens (CuptiSession::RecordAhead).
  bool attach_ahead = true;
  // GPUCAP_ATTACH_PREPARE (default 1): an attach ahead first registers
  // CUPTI again (its attributes and buffer callbacks, where CUPTI starts
  // again after a finalize) without the entry gate, and holds the other
  // threads only for the subscriber and the kinds (CuptiSession::Prepare):
  // the registration took 12-65 ms at p99 inside the hold on an H100.
  bool attach_prepare = true;
  // GPUCAP_DETACH_QUIET_MS (default 100; 0: off): before each attempt of a
  // pause's detach closes the gate, wait within this long, the gate open
  // and off the control thread, for the GPU work queued (gpu_quiet.h),
  // again and again until one wait finds the queue shallow: the gated flush
  // and finalize wait for the work in flight.
  uint32_t detach_quiet_ms = 100;
  // GPUCAP_DETACH_LATE_OFF (default 1): a pause that will detach leaves the
  // kinds on until the detach, which switches them off inside the gate
  // (CuptiSession::PauseActivity); 0 switches them off at the pause.
  bool detach_late_off = true;
  // GPUCAP_RECLAIM_AT_DETACH (default 1): the buffers CUPTI holds at a
  // finalize go back to the pool (CuptiBuffers::TakeLent); 0 leaves them
  // lost, as before (a switch to tell the two apart on a GPU).
  bool reclaim_at_detach = true;
  // GPUCAP_PER_THREAD_BUFFERS (default 1, CUPTI's default): CUPTI records
  // into a buffer per thread (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER),
  // so a process with more launching threads than the pool has buffers
  // runs it dry; 0 asks for CUPTI's shared buffers.
  bool per_thread_buffers = true;
  // GPUCAP_FLUSH_GATED (default 1): where pauses detach, CUPTI's flushes
  // are made with the entry gate closed too (CuptiSession::Flush).
  bool flush_gated = true;
  // GPUCAP_SWITCHES_GATED (default 1): where pauses detach, the attach and
  // the kinds' switches are made with the entry gate closed
  // (CuptiSession::Switched); 0 makes them beside the other threads' calls,
  // as before, to tell on a GPU whether the gated flush alone is enough
  // (a switch's hold was 10-16 ms at p50 on an H100).
  bool switches_gated = true;
  // GPUCAP_DETACH_WAIT_US: how long a detach waits for the calls in flight
  // to leave CUDA while new ones are held, before it gives up for this pause.
  uint32_t detach_wait_us = 2000;
  // GPUCAP_PAUSED_GRAPHS=1: a recorder that starts paused (or that a pause
  // detached) attaches to CUPTI with the resource callbacks, so that graphs
  // built while paused keep their topology. Off by default: attached, CUPTI
  // costs every CUDA call of the program ~290 instructions (+3.6% of an empty
  // kernel's launch), so a paused recorder holds nothing of CUPTI until it
  // first records.
  bool paused_subscribe = false;
  // GPUCAP_RANGE_CLOCK=cupti: range timestamps from cuptiGetTimestamp
  // always, not from the system clock it was checked to read (range_clock.h).
  bool range_clock_direct = true;
  bool system_thread_ids = true;              // GPUCAP_SYSTEM_TIDS=0: CUPTI's default thread ids
  std::vector<std::pair<std::string, std::string>> raw;  // every GPUCAP_* seen, for the session

  static Config FromEnvironment();
};

// Default activity kinds: cheap enough to leave on in production.
// SYNCHRONIZATION and CUDA_EVENT are not among them: on the PyTorch eager
// step they cost about a third more per iteration (bench/README.md); ask for
// them with --kinds default,synchronization,cuda_event.
std::vector<uint32_t> DefaultKinds();
// Parses "kernel,memcpy,..." into kind numbers; unknown names are reported in *bad.
std::vector<uint32_t> ParseKinds(const std::string& text, std::string* bad);

// A flight-recorder dump's name: `output` with ".ring-N" before its
// extension (job.gpucap -> job.ring-1.gpucap), or after it when it has none.
std::string RingDumpPath(const std::string& output, uint64_t n);
// The same name's two sides of N: {"job.ring-", ".gpucap"} for job.gpucap.
std::pair<std::string, std::string> RingDumpPathParts(const std::string& output);

// Expands %p (pid), %r (rank from RANK, else LOCAL_RANK, else "pid<pid>"), %h (host),
// %t (start time, seconds) and %% in an output template.
std::string ExpandOutputPath(const std::string& pattern, int pid, const std::string& host,
                             int rank, int64_t start_s);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CONFIG_H_
