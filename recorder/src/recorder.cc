#include "recorder.h"

#include <cuda.h>
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "buffer_walk.h"
#include "device_facts.h"
#include "graph_events.h"
#include "process_recorder.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/frame.h"
#include "cupti_records.h"

#ifndef GPUCAP_VERSION
#define GPUCAP_VERSION "0.0.0"
#endif

namespace gpucap::recorder {

uint32_t CurrentOsTid() {
  thread_local uint32_t tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

namespace {

void StopPmSamplersAtExit() {
  if (Recorder* r = ProcessRecorder()) r->StopPmSamplers();
}

int64_t ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}

}  // namespace

Recorder::Recorder(const Config& config) : config_(config) {}

Recorder* Recorder::Create(const Config& config) {
  auto* r = new Recorder(config);
  if (!r->Open()) {
    delete r;
    return nullptr;
  }
  return r;
}

uint64_t Recorder::Now() const {
  uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return ts;
}

bool Recorder::Open() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  int pid = getpid();
  int rank = EnvInt("RANK", EnvInt("LOCAL_RANK", -1));
  output_path_ = ExpandOutputPath(config_.output, pid, host, rank, ClockNs(CLOCK_REALTIME) / 1000000000);

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
      std::string suffix = "." + std::to_string(pid);
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
  pool_ = std::make_unique<BufferPool>(config_.pool_buffers, config_.buffer_bytes);
  events_ = std::make_unique<EventLog>(
      [this](std::vector<format::SmallMessage> batch) { return writer_->Submit(std::move(batch)); },
      512);
  if (!config_.window_nvtx.empty()) {
    std::string why;
    window_names_ = RangeMatcher::Make(config_.window_nvtx, &why);
    if (!window_names_) {
      fprintf(stderr, "gpucap: GPUCAP_WINDOW_NVTX '%s' is not a valid regex (%s); ignored\n",
              config_.window_nvtx.c_str(), why.c_str());
    }
  }

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
  {
    std::lock_guard<std::mutex> lock(seen_mu_);
    threads_seen_.insert(static_cast<uint32_t>(pid));
    new_threads_.push_back(static_cast<uint32_t>(pid));
  }
  for (const auto& [key, value] : config_.raw) {
    if (key == "pm_counters") LogOnce("gpucap: PM sampling " + value);
  }
  if (config_.nvml_counters) {
    std::string why;
    nvml_ = NvmlSampler::Start(
        config_.counter_interval_ms, [this] { return Now(); },
        [this](std::vector<format::SmallMessage> batch) { writer_->Submit(std::move(batch)); }, &why);
    if (!nvml_) LogOnce("gpucap: NVML counters off: " + why);
  }
  // NVTX events may arrive before CUDA starts: accept them from now on,
  // unless asked to start later.
  if (config_.start_delay_s <= 0 && !config_.start_paused) state_.store(kRecording);
  OpenGate();
  {
    // The control thread may call Stop(), which reads control_: assign it
    // under the lock the loop takes before doing anything else.
    std::lock_guard<std::mutex> lock(control_mu_);
    control_ = std::thread([this] { ControlLoop(); });
  }
  return true;
}

void Recorder::OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  uint8_t* b = state_.load(std::memory_order_acquire) == kStopped ? nullptr : pool_->Take();
  if (!b) {
    pool_empty_.fetch_add(1, std::memory_order_relaxed);
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *buffer = b;
  *size = pool_->buffer_bytes();
  // CUPTI hands full buffers back on its own schedule, which at high record
  // rates is too late for a fixed pool. Past half the pool, ask the control
  // thread for a flush (never flush from a CUPTI callback).
  if (pool_->outstanding() * 2 >= pool_->capacity() && !flush_wanted_.exchange(true)) {
    control_cv_.notify_one();
  }
}

void Recorder::OnBufferCompleted(uint32_t context_id, uint32_t stream_id, uint8_t* buffer,
                                 size_t size, size_t valid, size_t dropped) {
  (void)size;
  in_completion_.fetch_add(1, std::memory_order_acq_rel);
  if (dropped) cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (!buffer) {
    in_completion_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  if (valid == 0 || state_.load(std::memory_order_acquire) == kStopped) {
    pool_->Give(buffer);
    in_completion_.fetch_sub(1, std::memory_order_acq_rel);
    completions_.fetch_add(1, std::memory_order_release);
    return;
  }
  WalkResult walk = WalkBuffer(buffer, valid, &strings_);
  walk.info.context_id = context_id;
  walk.info.stream_id = stream_id;
  if (!walk.threads.empty()) {
    std::lock_guard<std::mutex> lock(seen_mu_);
    for (uint32_t tid : walk.threads) {
      if (threads_seen_.insert(tid).second) new_threads_.push_back(tid);
    }
  }
  if (!walk.strings.empty()) {
    std::vector<format::SmallMessage> defs = walk.strings;
    if (!writer_->Submit(std::move(defs))) {
      strings_.Forget(walk.strings);
      strings_dropped_.fetch_add(walk.strings.size(), std::memory_order_relaxed);
    }
  }
  format::ActivityBuffer ab;
  ab.data = buffer;
  ab.size = valid;
  ab.info = std::move(walk.info);
  BufferPool* pool = pool_.get();
  ab.release = [pool, buffer] { pool->Give(buffer); };
  writer_->SubmitActivity(std::move(ab));
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  in_completion_.fetch_sub(1, std::memory_order_acq_rel);
  completions_.fetch_add(1, std::memory_order_release);
}

void Recorder::OnResource(uint32_t cbid, const void* data) {
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: {
      const auto* rd = static_cast<const CUpti_ResourceData*>(data);
      uint32_t device = 0;
      if (rd && rd->context && cuptiGetDeviceId(rd->context, &device) == CUPTI_SUCCESS) {
        bool first;
        {
          std::lock_guard<std::mutex> lock(seen_mu_);
          first = devices_seen_.insert(device).second;
          if (first) new_devices_.push_back(device);
        }
        // Described (and its NVML counters started) on the control thread's
        // next pass, not its next one-second tick.
        if (first) {
          uint64_t zero = 0;
          device_seen_ns_.compare_exchange_strong(zero, Now());
          devices_pending_.store(true, std::memory_order_release);
        }
        // Configured here, on the creating thread with the new context
        // current and the device still idle: from the control thread, with
        // the device busy, cuptiPmSamplingSetConfig fails.
        if (first && config_.pm_counters) StartPmSampling(device, rd->context);
      }
      return;
    }
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
      const auto* rd = static_cast<const CUpti_ResourceData*>(data);
      if (rd && rd->context && config_.pm_counters) StopPmSampling(rd->context);
      return;
    }
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      // Name memory of an unloaded module may be reused for other names.
      strings_.Clear();
      return;
    default:
      break;
  }
  if (!config_.graphs || state_.load(std::memory_order_acquire) == kStopped) return;
  // Topology is kept while paused: a graph built now may be replayed later.
  if (auto e = GraphEventFor(cbid, data, Now(), CurrentOsTid())) AddEvent(std::move(*e));
}

void Recorder::AddEvent(format::SmallMessage event) {
  if (state_.load(std::memory_order_acquire) == kStopped) return;
  events_->Add(std::move(event));
}

bool Recorder::WindowName(const std::string& name) const {
  return window_names_ && window_names_->Matches(name);
}

void Recorder::AddRange(format::RangeEvent e) {
  if (!accepting()) return;
  thread_local bool announced = false;
  if (!announced) {
    // Name the thread now, from itself: short-lived threads are gone by the
    // time the control thread could read /proc.
    announced = true;
    bool first;
    {
      std::lock_guard<std::mutex> lock(seen_mu_);
      first = threads_seen_.insert(e.os_tid).second;
    }
    if (first) {
      char name[64] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      format::ThreadInfo t{static_cast<uint32_t>(getpid()), e.os_tid, e.os_tid, name};
      events_->Add(std::move(t));
    }
  }
  if (window_names_) AddWindowMarks(e);
  events_->Add(std::move(e));
}

void Recorder::AddWindowMarks(const format::RangeEvent& e) {
  // Window marks from ranges whose names match --window-nvtx. A push's mark
  // id is kept per thread until the pop of the same domain: NVTX nests
  // push/pop per thread and domain, and NCCL's ranges interleave with the
  // application's on one thread.
  struct Open {
    uint64_t domain;
    uint64_t id;  // 0: the push opened no window
  };
  thread_local std::vector<Open> open_pushes;
  auto mark = [&](format::WindowMarkKind kind, uint64_t id, const std::string& label) {
    format::WindowMark m;
    m.kind = kind;
    m.timestamp_ns = e.timestamp_ns;
    m.os_tid = e.os_tid;
    m.id = id;
    m.label = label;
    events_->Add(std::move(m));
  };
  switch (e.kind) {
    case format::RangeKind::kPush: {
      uint64_t id = WindowName(e.name) ? NextWindowId() : 0;
      open_pushes.push_back({e.domain, id});
      if (id) mark(format::WindowMarkKind::kOpen, id, e.name);
      break;
    }
    case format::RangeKind::kPop:
      for (size_t i = open_pushes.size(); i-- > 0;) {
        if (open_pushes[i].domain != e.domain) continue;
        uint64_t id = open_pushes[i].id;
        open_pushes.erase(open_pushes.begin() + static_cast<std::ptrdiff_t>(i));
        if (id) mark(format::WindowMarkKind::kClose, id, "");
        break;
      }
      break;
    case format::RangeKind::kStart:
      if (WindowName(e.name)) {
        {
          std::lock_guard<std::mutex> lock(started_windows_mu_);
          started_windows_.insert(e.id);
        }
        started_window_count_.fetch_add(1, std::memory_order_release);
        mark(format::WindowMarkKind::kOpen, e.id | kStartedWindowBit, e.name);
      }
      break;
    case format::RangeKind::kEnd: {
      // Any thread may end a started range; only ends of window ranges
      // (rare) take the lock.
      if (started_window_count_.load(std::memory_order_acquire) == 0) break;
      bool was_window;
      {
        std::lock_guard<std::mutex> lock(started_windows_mu_);
        was_window = started_windows_.erase(e.id) > 0;
      }
      if (was_window) {
        started_window_count_.fetch_sub(1, std::memory_order_release);
        mark(format::WindowMarkKind::kClose, e.id | kStartedWindowBit, "");
      }
      break;
    }
    default:
      break;
  }
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
}

void Recorder::ReportDevices() {
  std::vector<uint32_t> devices;
  {
    std::lock_guard<std::mutex> lock(seen_mu_);
    devices.swap(new_devices_);
  }
  std::vector<format::SmallMessage> out;
  // When the first device is described, and how long that takes, against
  // its context's creation (issue 17 item 8: NVML's first sample came late).
  uint64_t began = devices.empty() ? 0 : Now();
  for (uint32_t d : devices) {
    auto info = ReadDevice(d);
    if (!info) continue;
    uint64_t read = Now();
    if (nvml_) nvml_->AddDevice(d, info->pci_bus_id);
    uint64_t added = Now();
    uint64_t seen = device_seen_ns_.load();
    if (device_report_lag_ns_.load() == 0 && seen) {
      device_report_lag_ns_.store(began > seen ? began - seen : 1);
      device_read_ns_.store(read - began);
      nvml_add_ns_.store(added - read);
    }
    out.emplace_back(std::move(*info));
  }
  if (!out.empty()) writer_->Submit(std::move(out));
}

void Recorder::StartPmSampling(uint32_t device, const void* context) {
  PmSamplerOptions options;
  if (!config_.pm_metrics.empty()) options.metrics = SplitPmMetricList(config_.pm_metrics);
  options.interval_ns = config_.pm_interval_us * 1000;
  std::string why;
  // Counter ids: NVML's count up from 1; PM sampling's from 1000 per device.
  auto sampler = PmSampler::Start(
      device, options,
      [this](std::vector<format::SmallMessage> batch) { writer_->Submit(std::move(batch)); },
      1000 + device * 100, &why);
  if (!sampler) {
    LogOnce("gpucap: PM sampling off on device " + std::to_string(device) + ": " + why);
    return;
  }
  for (const std::string& d : sampler->dropped()) LogOnce("gpucap: PM sampling: " + d);
  {
    std::lock_guard<std::mutex> lock(pm_mu_);
    pm_.push_back(PmSession{context, std::move(sampler)});
  }
  // CUPTI has just loaded libnvperf_host, whose static destructors now run
  // before any exit handler registered earlier, Stop's included. PM
  // sampling must end before them, so it gets an exit handler of its own.
  std::call_once(pm_exit_hook_, [] { atexit(StopPmSamplersAtExit); });
}

void Recorder::StopPmSampling(const void* context) {
  PmSampler* sampler = nullptr;
  {
    std::lock_guard<std::mutex> lock(pm_mu_);
    for (PmSession& s : pm_) {
      if (s.context == context) sampler = s.sampler.get();
    }
  }
  if (sampler == nullptr) return;
  // On the application's thread, inside cuCtxDestroy: wait for a poll in
  // progress, but not for one that may be waiting on this very thread.
  if (!sampler->StopWithin(std::chrono::milliseconds(500))) {
    LogOnce("gpucap: PM sampling of device " + std::to_string(sampler->device_index()) +
            " could not be stopped before its context was destroyed");
  }
}

std::vector<PmSampler*> Recorder::PmSamplers() {
  // Sessions are never removed, so the pointers outlive the lock.
  std::lock_guard<std::mutex> lock(pm_mu_);
  std::vector<PmSampler*> out;
  for (PmSession& s : pm_) out.push_back(s.sampler.get());
  return out;
}

void Recorder::StopPmSamplers() {
  for (PmSampler* pm : PmSamplers()) pm->Stop();
}

void Recorder::ReportThreads() {
  std::vector<uint32_t> tids;
  {
    std::lock_guard<std::mutex> lock(seen_mu_);
    tids.swap(new_threads_);
  }
  std::vector<format::SmallMessage> out;
  uint32_t pid = static_cast<uint32_t>(getpid());
  for (uint32_t tid : tids) {
    format::ThreadInfo t;
    t.pid = pid;
    t.cupti_thread_id = tid;
    t.os_tid = tid;
    t.name = Trim(ReadText("/proc/self/task/" + std::to_string(tid) + "/comm"));
    out.emplace_back(std::move(t));
  }
  if (!out.empty()) writer_->Submit(std::move(out));
}

format::RecorderStats Recorder::Stats() {
  format::RecorderStats s;
  s.timestamp_ns = Now();
  format::WriterCounters c = writer_->counters();
  s.cupti_dropped_records = cupti_dropped_.load();
  s.buffers_dropped_pool_empty = pool_empty_.load();
  s.buffers_dropped_queue_full = c.buffers_dropped_queue_full;
  s.bytes_dropped = c.bytes_dropped;
  s.messages_dropped = c.messages_dropped + events_->dropped();
  s.queue_high_water = c.queue_high_water;
  s.frames_written = c.frames_written;
  s.bytes_written = c.bytes_written;
  Status err = writer_->error();
  if (!err.ok()) s.writer_error = err.message();
  s.extra = {{"buffers_completed", buffers_completed_.load()},
             {"buffers_dropped_writer_stopped", c.buffers_dropped_stopped},
             {"chunk_raw_bytes", c.chunk_raw_bytes},
             {"chunk_stored_bytes", c.chunk_stored_bytes},
             {"string_defs_dropped", strings_dropped_.load()},
             {"strings_interned", strings_.size()},
             {"cupti_detaches", detaches_.load()}};
  if (device_report_lag_ns_.load()) {
    s.extra.emplace_back("device_report_lag_ns", device_report_lag_ns_.load());
    s.extra.emplace_back("device_read_ns", device_read_ns_.load());
    s.extra.emplace_back("nvml_add_ns", nvml_add_ns_.load());
  }
  GateStats(&s.extra);
  for (const PmSampler* pm : PmSamplers()) {
    PmSamplerStats ps = pm->stats();
    std::string d = "pm" + std::to_string(pm->device_index()) + "_";
    s.extra.emplace_back(d + "samples", ps.samples);
    s.extra.emplace_back(d + "lost_samples", ps.lost_samples);
    s.extra.emplace_back(d + "hw_overflows", ps.hw_overflow_flags);
  }
  return s;
}

void Recorder::Tick(bool final_tick) {
  SampleClock(final_tick ? format::ClockKind::kEnd : format::ClockKind::kPeriodic);
  ReportDevices();
  ReportThreads();
  events_->Collect();
  writer_->Submit(format::SmallMessage(Stats()));
}

void Recorder::LogOnce(const std::string& line) {
  std::lock_guard<std::mutex> lock(logged_mu_);
  if (logged_.insert(line).second) fprintf(stderr, "%s\n", line.c_str());
}

void Recorder::RequestToggle() { toggle_requested_.store(true, std::memory_order_relaxed); }
void Recorder::RequestStop(int signal) { stop_signal_.store(signal, std::memory_order_relaxed); }

void Recorder::ControlLoop() {
  using Clock = std::chrono::steady_clock;
  auto started = Clock::now();
  auto last_tick = started;
  auto last_pm_poll = started;
  Clock::time_point recording_since = started;
  bool delay_done = config_.start_delay_s <= 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(control_mu_);
      control_cv_.wait_for(lock, std::chrono::milliseconds(50),
                           [&] { return control_quit_ || flush_wanted_.load(); });
      if (control_quit_) return;
    }
    if (flush_wanted_.exchange(false) && activity_enabled_.load()) {
      cuptiActivityFlushAll(0);  // completed buffers only: cheap, nothing cut short
    }
    auto now = Clock::now();
    if (int sig = stop_signal_.exchange(0)) {
      Stop(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "signal");
      // Die as the signal would have killed us before we flushed.
      signal(sig, SIG_DFL);
      raise(sig);
      return;
    }
    if (!delay_done && std::chrono::duration<double>(now - started).count() >= config_.start_delay_s) {
      delay_done = true;
      if (!config_.start_paused) {
        state_.store(kRecording);
        RecordCupti();
        recording_since = now;
      }
    }
    if (toggle_requested_.exchange(false) && delay_done) {
      if (state_.load() == kRecording) {
        state_.store(kPaused);
        PauseCupti();
        NoteRecordingState(format::RecordingState::kPaused, "SIGUSR2");
        if (!config_.quiet) fprintf(stderr, "gpucap: paused (SIGUSR2)\n");
      } else if (writer_->stopped()) {
        // Past the size cap or a disk error there is nothing to resume into.
        LogOnce("gpucap: SIGUSR2 ignored: the capture is closed to new data");
      } else if (state_.load() == kPaused || state_.load() == kStarting) {
        state_.store(kRecording);
        RecordCupti();
        recording_since = now;
        NoteRecordingState(format::RecordingState::kRecording, "SIGUSR2");
        if (!config_.quiet) fprintf(stderr, "gpucap: recording (SIGUSR2)\n");
      }
    }
    if (state_.load() == kPaused) HoldWhilePaused();
    if (gate_ && PollGate()) {
      Stop("capture range end");
      return;
    }
    if (config_.duration_s > 0 && state_.load() == kRecording &&
        std::chrono::duration<double>(now - recording_since).count() >= config_.duration_s) {
      Stop("duration reached");
      return;
    }
    if (writer_->stopped() && !logged_writer_stop_) {
      // Disk full, I/O error or the size cap: stop paying for tracing.
      logged_writer_stop_ = true;
      PauseCupti();
      Status err = writer_->error();
      fprintf(stderr, "gpucap: stopped recording to %s: %s; the program continues\n",
              output_path_.c_str(), err.ok() ? "size cap reached" : err.message().c_str());
    }
    if (now - last_pm_poll >= std::chrono::milliseconds(200)) {
      last_pm_poll = now;
      for (PmSampler* pm : PmSamplers()) pm->Poll();
    }
    if (devices_pending_.exchange(false, std::memory_order_acq_rel)) ReportDevices();
    if (now - last_tick >= std::chrono::seconds(1)) {
      last_tick = now;
      Tick(false);
    }
  }
}

void Recorder::WaitForCompletions(std::chrono::milliseconds limit) {
  // Completion callbacks may still be running on CUPTI's thread: wait until
  // they are done, briefly.
  auto deadline = std::chrono::steady_clock::now() + limit;
  uint64_t seen = completions_.load();
  int quiet_polls = 0;
  while (std::chrono::steady_clock::now() < deadline && quiet_polls < 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    uint64_t c = completions_.load();
    if (in_completion_.load() == 0 && c == seen) {
      ++quiet_polls;
    } else {
      quiet_polls = 0;
    }
    seen = c;
  }
}

void Recorder::Stop(const char* reason) {
  std::lock_guard<std::mutex> lock(stop_mu_);
  int state = state_.load();
  if (state == kStopped) return;
  auto stop_began = std::chrono::steady_clock::now();
  state_.store(kPaused);  // no new events from the application
  {
    std::lock_guard<std::mutex> l(control_mu_);
    control_quit_ = true;
  }
  control_cv_.notify_all();
  if (control_.joinable()) {
    if (control_.get_id() == std::this_thread::get_id()) {
      control_.detach();
    } else {
      control_.join();
    }
  }
  if (cupti_started_.load()) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    WaitForCompletions(std::chrono::milliseconds(300));
    // Already stopped when this runs at exit (StopPmSamplersAtExit).
    StopPmSamplers();
    SetActivityEnabled(false);
  }
  if (nvml_) nvml_->Stop();
  Tick(true);
  format::Trailer trailer;
  trailer.clean_shutdown = true;
  trailer.end_cupti_ns = Now();
  trailer.stats = Stats();
  trailer.stop_reason = reason;
  state_.store(kStopped);
  Status s = writer_->Close(std::move(trailer), std::chrono::seconds(5));
  format::WriterCounters c = writer_->counters();
  if (!s.ok()) {
    fprintf(stderr, "gpucap: %s\n", s.message().c_str());
  } else if (!config_.quiet) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stop_began).count();
    fprintf(stderr, "gpucap: wrote %s (%.1f MB, %llu chunks, %s; stop took %.1f ms)\n",
            output_path_.c_str(), c.bytes_written / 1e6,
            static_cast<unsigned long long>(c.chunks_written), reason, ms);
  }
  uint64_t drops = cupti_dropped_.load() + pool_empty_.load() + c.buffers_dropped_queue_full;
  if (drops && !config_.quiet) {
    fprintf(stderr,
            "gpucap: dropped %llu CUPTI records, %llu buffer requests (pool empty), %llu buffers "
            "(writer behind); see GPUCAP_POOL_MB\n",
            static_cast<unsigned long long>(cupti_dropped_.load()),
            static_cast<unsigned long long>(pool_empty_.load()),
            static_cast<unsigned long long>(c.buffers_dropped_queue_full));
  }
}

void Recorder::AbandonAfterFork() {
  // The writer thread and the control thread do not exist in the child, and
  // the file is the parent's: keep every path away from both for good.
  state_.store(kStopped);
  (void)writer_.release();
}

}  // namespace gpucap::recorder
