#include "recorder.h"

#include <cuda.h>
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "buffer_walk.h"
#include "device_facts.h"
#include "graph_events.h"
#include "host_node_timer.h"
#include "process_recorder.h"
#include "proc_text.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/frame.h"
#include "cupti_records.h"

#ifndef GPUCAP_VERSION
#define GPUCAP_VERSION "0.0.0"
#endif

namespace gpucap::recorder {

namespace {

int64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

}  // namespace

namespace {
// A bound in seconds as ns; one of centuries (or inf) is no bound anything
// reaches, clamped before the cast, which would be undefined past 2^64 ns.
uint64_t BoundNs(double seconds) { return static_cast<uint64_t>(std::clamp(seconds * 1e9, 0.0, 1.8e19)); }

uint64_t CuptiNow() {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return ts;
}

void StopPmSamplersAtExit() {
  if (Recorder* r = ProcessRecorder()) r->StopPmSamplers();
}
}  // namespace

Recorder::Recorder(const Config& config)
    : config_(config),
      facts_([this](std::vector<format::SmallMessage> batch) { writer_->Submit(std::move(batch)); },
             [this] { return Now(); }),
      cupti_(config_, &state_, &log_, CuptiEntry(), [this](bool late) { OnCuptiAttached(late); }),
      range_clock_(CuptiNow, RangeClock::Realtime, config.range_clock_direct),
      capture_(config_, &state_, &cupti_, &log_,
               CaptureSwitch::Hooks{
                   &stop_mu_, [this] { return writer_->stopped(); }, [this] { return Now(); },
                   [this] { return NextWindowId(); },
                   [this](format::SmallMessage event) { AddEvent(std::move(event)); },
                   [this](format::RecordingState state, const std::string& why, uint64_t at) {
                     NoteRecordingState(state, why, at);
                   },
                   [this] { control_.Wake(); }}),
      pm_(config_, [this](std::vector<format::SmallMessage> batch) { writer_->Submit(std::move(batch)); },
          StopPmSamplersAtExit, &log_) {}

Recorder* Recorder::Create(const Config& config) {
  auto* r = new Recorder(config);
  if (!r->Open()) {
    delete r;
    return nullptr;
  }
  return r;
}

uint64_t Recorder::Now() const { return CuptiNow(); }

bool Recorder::Open() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  int pid = getpid();
  if (!OpenOutput(host, pid)) return false;
  WriteSessionInfo(host, pid);
  cupti_.MakeDetach();
  StartThreads(pid);
  return true;
}

// The output file (its name expanded, kept apart from other processes')
// or the flight recorder's ring, the writer behind it and what feeds the
// writer.
bool Recorder::OpenOutput(const char* host, int pid) {
  int rank = EnvInt("RANK", EnvInt("LOCAL_RANK", -1));
  output_path_ = ExpandOutputPath(config_.output, pid, host, rank, ClockNs(CLOCK_REALTIME) / 1000000000);

  if (!(config_.ring() ? OpenRing() : OpenFile(pid))) return false;
  buffers_ = std::make_unique<CuptiBuffers>(config_.pool_buffers, config_.buffer_bytes, writer_.get(), &state_,
                                            facts_.seen(), [this] { control_.WantFlush(); }, cupti_.correlations());
  cupti_.UseBuffers(buffers_.get());
  events_ = std::make_unique<EventLog>(
      [this](std::vector<format::SmallMessage> batch) { return writer_->Submit(std::move(batch)); },
      512);
  ranges_ = std::make_unique<RangeLog>(
      [this](std::vector<format::SmallMessage> batch) { return writer_->Submit(std::move(batch)); },
      RangeLog::Limits{}, [this] { control_.WantRanges(); });
  if (config_.watches_steps() && !config_.ring()) {
    log_.Log("gpucap: GPUCAP_RING_HANG_S and GPUCAP_RING_SLOW_STEP need the flight recorder (GPUCAP_RING_MB or "
             "GPUCAP_RING_S); ignored");
  } else if (config_.watches_steps()) {
    StepWatchOptions o;
    o.hang_ns = BoundNs(config_.ring_hang_s);
    o.slow_factor = config_.ring_slow_step;
    o.slow_window = config_.ring_slow_window;
    o.min_interval_ns = BoundNs(config_.ring_dump_interval_s);
    o.settle_ns = kSlowStepSettleNs;
    steps_ = std::make_unique<StepLog>();
    step_watch_ = std::make_unique<StepWatch>(o);
  }
  if (config_.ring_hang_call_s > 0) {
    call_gate_ = config_.ring() ? CuptiDetach::FindGate() : nullptr;
    if (!config_.ring()) {
      log_.Log("gpucap: GPUCAP_RING_HANG_CALL_S needs the flight recorder (GPUCAP_RING_MB or GPUCAP_RING_S); ignored");
    } else if (!call_gate_ || !GPUCAP_GATE_HAS(call_gate_, calls_in_flight)) {
      call_gate_ = nullptr;
      log_.Log("gpucap: GPUCAP_RING_HANG_CALL_S needs gpucap's entry gate (libgpucap_gate.so preloaded, as "
               "`gpucap record --ring-hang-call` does); ignored");
    } else {
      call_watch_ = std::make_unique<CallWatch>(BoundNs(config_.ring_hang_call_s));
      calls_seen_.resize(256);
    }
  }
  range_recorder_ = std::make_unique<RangeRecorder>(ranges_.get(), events_.get(), facts_.seen(), config_.window_nvtx,
                                                    steps_.get(), kDefaultStepPattern);
  return true;
}

// The capture file of a whole recording.
bool Recorder::OpenFile(int pid) {
  // Processes of one job that share an output name (no %p) must not clobber
  // each other: the first takes the name, later ones add their pid. A file
  // left by an earlier run (older than this recording session) is replaced.
  int fd = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    int64_t session_start = 0;
    if (const char* s = getenv("GPUCAP_SESSION_START_NS")) session_start = atoll(s);
    format::FileHeader existing{};
    int rfd = open(output_path_.c_str(), O_RDONLY | O_CLOEXEC);
    bool stale = true;
    if (rfd >= 0) {
      if (read(rfd, &existing, sizeof(existing)) == static_cast<ssize_t>(sizeof(existing)) &&
          std::memcmp(existing.magic, format::kFileMagic, sizeof(existing.magic)) == 0 &&
          session_start > 0 && existing.created_realtime_ns >= session_start) {
        stale = false;
      }
      close(rfd);
    }
    if (stale) {
      fd = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } else {
      size_t dot = output_path_.rfind('.');
      size_t slash = output_path_.rfind('/');
      std::string suffix(1, '.');
      suffix += std::to_string(pid);
      if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
        output_path_ += suffix;
      } else {
        output_path_.insert(dot, suffix);
      }
      fd = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
  }
  if (fd < 0) {
    fprintf(stderr, "gpucap: cannot create %s: %s; not recording\n", output_path_.c_str(),
            std::strerror(errno));
    return false;
  }
  format::WriterOptions options;
  options.max_file_bytes = config_.max_file_bytes;
  options.queue_capacity = 4096;
  auto writer = format::CaptureWriter::Start(format::FileSinkFromFd(fd, output_path_), options);
  if (!writer.ok()) {
    fprintf(stderr, "gpucap: %s; not recording\n", writer.status().message().c_str());
    return false;
  }
  writer_ = std::move(writer).value();
  return true;
}

// The flight recorder: frames kept in a ring, dumps numbered next to the
// output's name, each created anew (O_EXCL), so that no dump ever replaces
// a file, another process's dump included.
bool Recorder::OpenRing() {
  format::WriterOptions options;
  options.queue_capacity = 4096;
  options.ring_crash_snapshots = true;  // for the crash handler (crash_dump.h)
  format::RingLimits limits;
  limits.max_span_bytes = config_.ring_bytes;
  limits.max_age_ns = static_cast<uint64_t>(config_.ring_seconds * 1e9);
  auto dump_sink = [this, next = uint64_t{0}](uint64_t) mutable -> Result<std::unique_ptr<format::Sink>> {
    for (int tries = 0; tries < 100000; ++tries) {
      std::string path = RingDumpPath(output_path_, ++next);
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd >= 0) return format::FileSinkFromFd(fd, path);
      if (errno != EEXIST) return Status::IoError(path + ": cannot create the dump: " + std::strerror(errno));
    }
    return Status::IoError(output_path_ + ": no free dump name");
  };
  auto writer = format::CaptureWriter::StartRing(std::move(dump_sink), limits, options);
  if (!writer.ok()) {
    fprintf(stderr, "gpucap: %s; not recording\n", writer.status().message().c_str());
    return false;
  }
  writer_ = std::move(writer).value();
  return true;
}

// The session message first, then the first clock sample.
void Recorder::WriteSessionInfo(const char* host, int pid) {
  format::SessionInfo s;
  s.tool_version = "gpucap " GPUCAP_VERSION;
  s.host = host;
  s.pid = static_cast<uint32_t>(pid);
  s.ppid = static_cast<uint32_t>(getppid());
  s.process_name = Trim(ReadText("/proc/self/comm"));
  std::string cmdline = ReadText("/proc/self/cmdline");
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    s.command_line.push_back(cmdline.substr(at, end - at));
    at = end + 1;
  }
  s.start_realtime_ns = ClockNs(CLOCK_REALTIME);
  s.start_monotonic_ns = ClockNs(CLOCK_MONOTONIC);
  s.start_cupti_ns = Now();
  cuptiGetVersion(&s.cupti_runtime_version);
  s.cupti_header_version = CUPTI_API_VERSION;
  s.cuda_driver_version = DriverVersion();
  s.cuda_runtime_version = RuntimeVersion();
  s.enabled_kinds = config_.kinds;
  using K = format::ActivityKind;
  s.record_sizes = {
      {static_cast<uint32_t>(K::kConcurrentKernel), sizeof(cupti_records::KernelRecord)},
      {static_cast<uint32_t>(K::kMemcpy), sizeof(cupti_records::MemcpyRecord)},
      {static_cast<uint32_t>(K::kMemcpy2), sizeof(cupti_records::PeerMemcpyRecord)},
      {static_cast<uint32_t>(K::kMemset), sizeof(cupti_records::MemsetRecord)},
      {static_cast<uint32_t>(K::kRuntime), sizeof(CUpti_ActivityAPI)},
      {static_cast<uint32_t>(K::kDriver), sizeof(CUpti_ActivityAPI)},
      {static_cast<uint32_t>(K::kExternalCorrelation), sizeof(CUpti_ActivityExternalCorrelation)},
      {static_cast<uint32_t>(K::kOverhead), sizeof(cupti_records::OverheadRecord)},
      {static_cast<uint32_t>(K::kSynchronization), sizeof(cupti_records::SyncRecord)},
      {static_cast<uint32_t>(K::kCudaEvent), sizeof(cupti_records::CudaEventRecord)},
      {static_cast<uint32_t>(K::kMarker), sizeof(cupti_records::MarkerRecord)},
  };
  s.rank = EnvInt("RANK", -1);
  s.local_rank = EnvInt("LOCAL_RANK", -1);
  s.world_size = EnvInt("WORLD_SIZE", -1);
  s.options = config_.raw;
  writer_->Submit(format::SmallMessage(std::move(s)));
  SampleClock(format::ClockKind::kStart);
}

// The main thread's announcement, the NVML sampler, the recording state
// and the control thread.
void Recorder::StartThreads(int pid) {
  facts_.seen()->QueueThread(static_cast<uint32_t>(pid));
  for (const auto& [key, value] : config_.raw) {
    if (key == "pm_counters") log_.Log("gpucap: PM sampling " + value);
  }
  if (config_.nvml_counters) facts_.StartNvml(config_.counter_interval_ms, &log_);
  // NVTX events may arrive before CUDA starts: accept them from now on,
  // unless asked to start later.
  if (config_.start_delay_s <= 0 && !config_.start_paused) state_.store(kRecording);
  capture_.Open();
  control_.Start([this] { ControlLoop(); });
}

void Recorder::AddRange(format::RangeEvent e) {
  if (!accepting()) return;
  AddRangeFields(FieldsOf(e), e.name, e.ext_payloads.empty() ? nullptr : &e.ext_payloads);
}

void Recorder::AddEvent(format::SmallMessage event) {
  if (state_.load(std::memory_order_acquire) == kStopped) return;
  // Range events and window marks go with the calling thread's ranges, in
  // its order. Payload schemas and enums carry more than a range record
  // holds; they are definitions, looked up by id, so their place in the
  // stream does not matter.
  if (auto* m = std::get_if<format::WindowMark>(&event)) {
    ranges_->AddMark(ranges_->Mine(), m->kind, m->timestamp_ns, m->os_tid, m->id, m->label);
    return;
  }
  if (auto* e = std::get_if<format::RangeEvent>(&event)) {
    if (e->kind != format::RangeKind::kPayloadSchema && e->kind != format::RangeKind::kPayloadEnum) {
      ranges_->AddRange(ranges_->Mine(), FieldsOf(*e), e->name, e->ext_payloads.empty() ? nullptr : &e->ext_payloads);
      return;
    }
  }
  events_->Add(std::move(event));
}

void Recorder::NoteRecordingState(format::RecordingState state, const std::string& why, uint64_t at) {
  format::RecordingChange c;
  c.state = state;
  c.why = why;
  c.timestamp_ns = at;
  c.os_tid = CurrentOsTid();
  AddEvent(format::RecordingChangeBlob(c));
}

void Recorder::SampleClock(format::ClockKind kind) {
  // Best of three: the reading with the tightest monotonic bracket.
  format::ClockSample best;
  int64_t best_width = INT64_MAX;
  for (int i = 0; i < 3; ++i) {
    int64_t m0 = ClockNs(CLOCK_MONOTONIC);
    uint64_t c = Now();
    int64_t r = ClockNs(CLOCK_REALTIME);
    int64_t m1 = ClockNs(CLOCK_MONOTONIC);
    if (m1 - m0 < best_width) {
      best_width = m1 - m0;
      best = format::ClockSample{kind, c, m0 + (m1 - m0) / 2, r};
    }
  }
  writer_->Submit(format::SmallMessage(best));
  // Range timestamps read the system clock directly only while it is
  // CUPTI's (range_clock.h).
  range_clock_.Check();
}

format::RecorderStats Recorder::Stats(WriterDrops writer_drops) {
  format::RecorderStats s;
  s.timestamp_ns = Now();
  format::WriterCounters c = writer_->counters();
  s.cupti_dropped_records = buffers_->cupti_dropped();
  s.buffers_dropped_pool_empty = buffers_->pool_empty();
  s.buffers_dropped_queue_full = c.buffers_dropped_queue_full;
  const bool with_writer = writer_drops == WriterDrops::kInclude;
  s.bytes_dropped = with_writer ? c.bytes_dropped : 0;
  s.messages_dropped = (with_writer ? c.messages_dropped : 0) + events_->dropped() + ranges_->dropped();
  s.queue_high_water = c.queue_high_water;
  s.frames_written = c.frames_written;
  s.bytes_written = c.bytes_written;
  Status err = writer_->error();
  if (!err.ok()) s.writer_error = err.message();
  s.extra = {{"buffers_completed", buffers_->buffers_completed()},
             {"buffers_reclaimed_at_detach", buffers_->reclaimed()},
             {"buffers_completed_unlent", buffers_->completed_unlent()},
             {"correlation_overlaps", buffers_->correlation_overlaps()},
             {"buffers_dropped_writer_stopped", c.buffers_dropped_stopped},
             {"chunk_raw_bytes", c.chunk_raw_bytes},
             {"chunk_stored_bytes", c.chunk_stored_bytes},
             {"string_defs_dropped", buffers_->strings_dropped()},
             {"strings_interned", buffers_->strings_interned()},
             {"range_clock_direct", range_clock_.direct() ? 1u : 0u},
             {"range_clock_failed_checks", range_clock_.failed_checks()},
             {"range_chunk_bytes", ranges_->chunk_bytes_in_use()}};
  facts_.Stats(&s.extra);
  capture_.Stats(&s.extra);
  cupti_.Stats(&s.extra);
  HostNodeStats(&s.extra);
  if (api_records_) {
    s.extra.emplace_back("api_records", api_records_->records());
    s.extra.emplace_back("api_records_dropped", api_records_->dropped());
    s.extra.emplace_back("api_records_unmatched", api_records_->unmatched());
  }
  if (capture_streams_) {
    CaptureStreamStats cs = capture_streams_->stats();
    s.extra.emplace_back("capture_streams_captures_begun", cs.captures_begun);
    s.extra.emplace_back("capture_streams_captures_ended", cs.captures_ended);
    s.extra.emplace_back("capture_streams_open_at_stop", static_cast<uint64_t>(capture_streams_->open_captures()));
    s.extra.emplace_back("capture_streams_switches", cs.switches);
    s.extra.emplace_back("capture_streams_switch_ns_total", cs.switch_ns_total);
    s.extra.emplace_back("capture_streams_unresolved", cs.unresolved);
    s.extra.emplace_back("capture_streams_nodes_with_stream", cs.nodes_with_stream);
    s.extra.emplace_back("capture_streams_nodes_without_stream", cs.nodes_without_stream);
  }
  pm_.Stats(&s.extra);
  return s;
}

void Recorder::Tick(bool final_tick) {
  SampleClock(final_tick ? format::ClockKind::kEnd : format::ClockKind::kPeriodic);
  facts_.ReportDevices();
  // Before the threads: a collected buffer names the threads it saw.
  if (api_records_) api_records_->Collect();
  facts_.ReportThreads();
  events_->Collect();
  ranges_->Collect();
  writer_->Submit(format::SmallMessage(Stats()));
}

void Recorder::StopPmSamplers() { pm_.StopAll(); }

}  // namespace gpucap::recorder
