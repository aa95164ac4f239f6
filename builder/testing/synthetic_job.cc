#include "synthetic_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "gpucap/builder/clock.h"
#include "job_clock.h"
#include "job_schedule.h"
#include "job_truth.h"
#include "synthetic_capture.h"

namespace gpucap::builder::testing {
namespace {

constexpr uint64_t kComputeNames = 0x7f3a'0000'1000ull;     // string pointers of the kernel names
constexpr uint64_t kCollectiveNames = 0x7f3a'0000'8000ull;
constexpr int64_t kSampleLead = 10'000;                    // a clock sample before each step's push
constexpr int64_t kTail = 1'000'000;                        // the last pop to the end sample
constexpr uint64_t kDrawHost = 5;                           // JobHash draws (job_schedule.cc uses 1..4)
constexpr uint64_t kDrawUuid = 6;

Status Bad(const std::string& what) { return Status::InvalidArgument("synthetic job: " + what); }

std::string HostName(uint32_t host) { return "node-" + std::to_string(host); }

uint32_t PidOf(const JobSpec& s, uint32_t rank) {
  // Distinct among a host's ranks; hosts reuse pids, as containers do.
  return 3000 + 100 * (rank % s.ranks_per_host) + (rank / s.ranks_per_host) % 100;
}

// A value in [-bound, bound] drawn for host `host`.
int64_t Within(const JobSpec& s, uint32_t host, uint64_t what, int64_t bound) {
  if (bound <= 0) return 0;
  uint64_t span = 2 * static_cast<uint64_t>(bound) + 1;
  return static_cast<int64_t>(JobHash(s.seed, {kDrawHost, host, what}) % span) - bound;
}

std::vector<HostTruth> MakeHosts(const JobSpec& s) {
  std::vector<HostTruth> hosts((s.ranks + s.ranks_per_host - 1) / s.ranks_per_host);
  int64_t max_drift_ppb = std::llround(s.max_drift_ppm * 1000);
  for (uint32_t h = 0; h < hosts.size(); ++h) {
    hosts[h].host = HostName(h);
    if (h == 0) continue;  // host 0 keeps true time
    hosts[h].offset_ns = Within(s, h, 1, s.max_offset_ns);
    hosts[h].drift_ppb = Within(s, h, 2, max_drift_ppb);
  }
  return hosts;
}

HostClock ClockOf(const JobSpec& s, const HostTruth& h, uint32_t host) {
  // CLOCK_MONOTONIC: the host booted a day or more before T0.
  uint64_t base = 86'400'000'000'000ull + host * 3'607'000'000'000ull + JobHash(s.seed, {kDrawHost, host, 3}) % 1'000'000'000;
  return HostClock(s.t0_realtime_ns, h.offset_ns, h.drift_ppb, base);
}

// Plans every rank collective by collective: the true end of each.
std::vector<std::vector<int64_t>> PlanEnds(const JobSpec& s) {
  std::vector<RankSchedule> ranks;
  ranks.reserve(s.ranks);
  for (uint32_t r = 0; r < s.ranks; ++r) ranks.emplace_back(s, r, nullptr);
  std::vector<std::vector<int64_t>> ends(s.steps, std::vector<int64_t>(s.collectives_per_step));
  for (uint32_t step = 0; step < s.steps; ++step) {
    for (uint32_t c = 0; c < s.collectives_per_step; ++c) {
      int64_t last = 0;
      for (RankSchedule& r : ranks) last = std::max(last, r.Arrive(step, c));
      ends[step][c] = last + s.transfer_ns;
      for (RankSchedule& r : ranks) r.Finish(step, c, ends[step][c]);
    }
  }
  return ends;
}

format::SessionInfo SessionOf(const JobSpec& s, uint32_t rank, const HostClock& clock) {
  format::SessionInfo session = DefaultSession();
  session.tool_version = "gpucap-synthetic-job";
  session.host = HostName(rank / s.ranks_per_host);
  session.pid = PidOf(s, rank);
  session.ppid = 1;
  session.command_line = {"python3", "train.py", "--seed", std::to_string(s.seed)};
  session.start_realtime_ns = clock.Realtime(s.t0_realtime_ns);
  session.start_cupti_ns = clock.Cupti(s.t0_realtime_ns);
  session.start_monotonic_ns = static_cast<int64_t>(session.start_cupti_ns);
  session.rank = static_cast<int32_t>(rank);
  session.local_rank = static_cast<int32_t>(rank % s.ranks_per_host);
  session.world_size = static_cast<int32_t>(s.ranks);
  return session;
}

format::DeviceInfo DeviceOf(const JobSpec& s, uint32_t rank) {
  format::DeviceInfo d = H200(rank % s.ranks_per_host);
  for (size_t i = 0; i < d.uuid.size(); ++i) {
    d.uuid[i] = static_cast<uint8_t>(JobHash(s.seed, {kDrawUuid, rank, i}));
  }
  char bus[32];
  std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x18 + 0x10 * (rank % s.ranks_per_host));
  d.pci_bus_id = bus;
  return d;
}

// Writes one rank's capture; fills its figures as the builder will show them.
Status WriteRank(const std::string& path, const JobSpec& s, uint32_t rank, const HostClock& clock,
                 const std::vector<std::vector<int64_t>>& ends, RankTruth* truth) {
  std::vector<PlannedEvent> events;
  events.reserve(s.steps * (2 * (s.kernels_per_step + s.collectives_per_step) + 4));
  RankSchedule schedule(s, rank, &events);
  for (uint32_t step = 0; step < s.steps; ++step) {
    for (uint32_t c = 0; c < s.collectives_per_step; ++c) {
      schedule.Arrive(step, c);
      schedule.Finish(step, c, ends[step][c]);
    }
  }
  std::vector<format::ClockSample> samples;
  samples.push_back(clock.Sample(s.t0_realtime_ns, format::ClockKind::kStart));
  for (const PlannedEvent& e : events) {
    if (e.kind == PlannedEvent::Kind::kPush) samples.push_back(clock.Sample(e.start - kSampleLead, format::ClockKind::kPeriodic));
  }
  samples.push_back(clock.Sample(schedule.last_ns() + kTail, format::ClockKind::kEnd));

  format::SessionInfo session = SessionOf(s, rank, clock);
  auto made = SyntheticCapture::Create(path, session, {DeviceOf(s, rank)}, {.reproducible = true});
  if (!made.ok()) return made.status();
  SyntheticCapture& out = **made;
  const auto& compute = ComputeKernels();
  const auto& collective = CollectiveKernels();
  for (size_t i = 0; i < compute.size(); ++i) GPUCAP_RETURN_IF_ERROR(out.String(kComputeNames + i * 0x100, compute[i].name));
  for (size_t i = 0; i < collective.size(); ++i) {
    GPUCAP_RETURN_IF_ERROR(out.String(kCollectiveNames + i * 0x100, collective[i].name));
  }
  const uint32_t tid = session.pid, device = rank % s.ranks_per_host;
  // The main thread: CUPTI's id for it in the API records is its OS tid.
  GPUCAP_RETURN_IF_ERROR(out.Message(format::ThreadInfo{session.pid, tid, tid, "python3"}));
  GPUCAP_RETURN_IF_ERROR(out.Message(samples.front()));
  size_t next_sample = 1;
  for (const PlannedEvent& e : events) {
    switch (e.kind) {
      case PlannedEvent::Kind::kPush:
        GPUCAP_RETURN_IF_ERROR(out.Message(samples[next_sample++]));
        GPUCAP_RETURN_IF_ERROR(out.Push(tid, clock.Cupti(e.start), StepName(s.first_step + e.step)));
        break;
      case PlannedEvent::Kind::kPop:
        GPUCAP_RETURN_IF_ERROR(out.EndChunk());
        GPUCAP_RETURN_IF_ERROR(out.Pop(tid, clock.Cupti(e.start)));
        break;
      case PlannedEvent::Kind::kRuntimeApi:
      case PlannedEvent::Kind::kDriverApi: {
        ApiRecord a;
        a.driver = e.kind == PlannedEvent::Kind::kDriverApi;
        a.cbid = e.cbid;
        a.start = clock.Cupti(e.start);
        a.end = clock.Cupti(e.end);
        a.pid = session.pid;
        a.tid = tid;
        a.correlation = e.correlation;
        out.Api(a);
        break;
      }
      case PlannedEvent::Kind::kKernel: {
        const KernelKind& kind = (e.collective ? collective : compute)[e.kind_index];
        KernelRecord k;
        k.start = clock.Cupti(e.start);
        k.end = clock.Cupti(e.end);
        k.correlation = e.correlation;
        k.device = device;
        k.stream = e.stream;
        k.name_pointer = (e.collective ? kCollectiveNames : kComputeNames) + e.kind_index * 0x100;
        k.grid_x = kind.grid_x;
        k.block_x = kind.block_x;
        k.registers_per_thread = kind.registers;
        out.Kernel(k);
        break;
      }
      case PlannedEvent::Kind::kStreamSync: {
        SyncRecord sync;
        sync.start = clock.Cupti(e.start);
        sync.end = clock.Cupti(e.end);
        sync.correlation = e.correlation;
        sync.stream = e.stream;
        out.Sync(sync);
        break;
      }
    }
  }
  GPUCAP_RETURN_IF_ERROR(out.Message(samples.back()));
  GPUCAP_RETURN_IF_ERROR(out.Close());

  // The figures as gpucap shows them: on the realtime its ClockMap gives.
  ClockMap map(samples);
  auto real = [&](int64_t t) { return map.ToRealtime(clock.Cupti(t)); };
  truth->rank = rank;
  truth->file = RankFileName(rank);
  truth->host = session.host;
  truth->pid = session.pid;
  truth->nccl_ns_per_step.assign(s.steps, 0);
  truth->step_ns.assign(s.steps, 0);
  for (const PlannedEvent& e : events) {
    if (e.kind == PlannedEvent::Kind::kPush) truth->step_ns[e.step] -= real(e.start);
    if (e.kind == PlannedEvent::Kind::kPop) truth->step_ns[e.step] += real(e.start);
    if (e.kind == PlannedEvent::Kind::kKernel && e.collective) truth->nccl_ns_per_step[e.step] += real(e.end) - real(e.start);
  }
  return Status::Ok();
}

}  // namespace

Result<JobSpec> ResolveJobSpec(JobSpec s) {
  if (s.ranks < 2 || s.ranks > 100'000) return Bad("ranks must be 2 to 100000, not " + std::to_string(s.ranks));
  if (s.ranks_per_host == 0) return Bad("ranks_per_host must be at least 1");
  if (s.steps == 0 || s.steps > 100'000) return Bad("steps must be 1 to 100000, not " + std::to_string(s.steps));
  if (s.collectives_per_step == 0 || s.collectives_per_step > 10'000) {
    return Bad("collectives_per_step must be 1 to 10000, not " + std::to_string(s.collectives_per_step));
  }
  if (s.kernels_per_step < s.collectives_per_step || s.kernels_per_step > 100'000) {
    return Bad("kernels_per_step must be collectives_per_step (" + std::to_string(s.collectives_per_step) +
               ") to 100000, not " + std::to_string(s.kernels_per_step));
  }
  if (uint64_t{s.steps} * (s.kernels_per_step + s.collectives_per_step) > 10'000'000) {
    return Bad("steps x (kernels + collectives per step) must be at most 10000000 a rank");
  }
  if (!(s.slow_factor >= 1.1 && s.slow_factor <= 100)) return Bad("slow_factor must be 1.1 to 100");
  if (s.end_jitter_ns < 0 || s.transfer_ns < 0 || s.max_offset_ns < 0) {
    return Bad("end_jitter_ns, transfer_ns and max_offset_ns must not be negative");
  }
  if (s.end_jitter_ns > 1'000'000'000 || s.transfer_ns > 1'000'000'000 || s.max_offset_ns > 1'000'000'000'000) {
    return Bad("end_jitter_ns and transfer_ns must be at most 1 s, max_offset_ns 1000 s");
  }
  if (!(s.max_drift_ppm >= 0 && s.max_drift_ppm <= 1000)) return Bad("max_drift_ppm must be 0 to 1000");
  if (s.t0_realtime_ns <= 0 || s.t0_realtime_ns > (int64_t{1} << 62)) return Bad("t0_realtime_ns out of range");
  if (s.first_step < 0 || s.first_step > (int64_t{1} << 40)) return Bad("first_step out of range");
  if (!s.slow_rank) s.slow_rank = s.ranks / 2;
  if (*s.slow_rank >= s.ranks) return Bad("slow_rank " + std::to_string(*s.slow_rank) + " is not a rank");
  if (!s.straggling_rank) {
    s.straggling_rank = (3 * s.ranks / 4 + 1) % s.ranks;
    if (*s.straggling_rank == *s.slow_rank) s.straggling_rank = (*s.slow_rank + 1) % s.ranks;
  }
  if (*s.straggling_rank >= s.ranks) return Bad("straggling_rank " + std::to_string(*s.straggling_rank) + " is not a rank");
  if (*s.straggling_rank == *s.slow_rank) return Bad("straggling_rank must differ from slow_rank");
  if (!s.straggling_step) s.straggling_step = s.first_step + s.steps / 2;
  if (*s.straggling_step < s.first_step || *s.straggling_step >= s.first_step + s.steps) {
    return Bad("straggling_step " + std::to_string(*s.straggling_step) + " is not one of the steps");
  }
  if (!s.stall_ns) s.stall_ns = 5 * NominalStepCompute(s);
  if (*s.stall_ns < 0 || *s.stall_ns > 3'600'000'000'000) return Bad("stall_ns must be 0 to 1 hour");
  return s;
}

std::string RankFileName(uint32_t rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%04u.gpucap", rank);
  return name;
}

Status MakeSyntheticJob(const std::string& dir, const JobSpec& requested) {
  auto resolved = ResolveJobSpec(requested);
  if (!resolved.ok()) return resolved.status();
  const JobSpec& s = *resolved;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("synthetic job: cannot make " + dir + ": " + ec.message());
  std::vector<std::string> files;
  for (uint32_t r = 0; r < s.ranks; ++r) files.push_back(RankFileName(r));
  files.push_back("job.json");
  for (const std::string& f : files) {
    fs::path p = fs::path(dir) / f;
    if (fs::exists(fs::symlink_status(p))) {
      return Status::InvalidArgument("synthetic job: " + p.string() + " exists; a job is written into new files only");
    }
  }

  JobTruth truth;
  truth.spec = s;
  truth.hosts = MakeHosts(s);
  truth.collective_end_true_ns = PlanEnds(s);
  truth.ranks.resize(s.ranks);
  for (uint32_t r = 0; r < s.ranks; ++r) {
    uint32_t host = r / s.ranks_per_host;
    GPUCAP_RETURN_IF_ERROR(WriteRank((fs::path(dir) / files[r]).string(), s, r, ClockOf(s, truth.hosts[host], host),
                                     truth.collective_end_true_ns, &truth.ranks[r]));
  }
  std::string path = (fs::path(dir) / "job.json").string();
  std::ofstream out(path, std::ios::binary);
  out << JobTruthJson(truth);
  out.close();
  if (!out) return Status::IoError("synthetic job: cannot write " + path);
  return Status::Ok();
}

}  // namespace gpucap::builder::testing
