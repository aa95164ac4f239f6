// A synthetic training job of N ranks, one capture each, with a truth file
// saying what a correct analysis must find: multi-rank features (merge, the
// report's straggler view, export of many captures, clock alignment,
// recipes) testable at 64, 256 or 1,024 ranks without GPUs.
//
// THE CONTRACT (other code reads these files; keep it):
//
//   DIR/rank-0000.gpucap ... DIR/rank-NNNN.gpucap   one per rank, the rank
//       zero-padded to 4 digits (more past 9999)
//   DIR/job.json                                    the truth, written last
//
// Each rank is one process: session rank r, local_rank r % ranks_per_host,
// world_size N, host "node-<r / ranks_per_host>", a pid distinct among its
// host's ranks, one H200 (device id = local_rank). Its main thread (tid =
// pid) pushes NVTX "ProfilerStep#<n>" around each step (n from first_step)
// and per step launches kernels_per_step compute kernels (cudaLaunchKernel,
// stream 7; a few cuBLAS / ATen names) and collectives_per_step NCCL
// kernels (cuLaunchKernelEx, stream 13, named as NCCL >= 2.19 names them:
// ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)
// ...), then waits in cudaStreamSynchronize for the step's last collective
// and pops the step. Every launch's API record and kernel share a
// correlation id. Compute kernel c*K/C .. (c+1)*K/C-1 precede collective c.
//
// Time model, in true ns: a rank reaches collective c of a step when its
// compute before it ends (and its launch was made); the collective kernel
// starts there on each rank and ends at one true time on every rank,
// collective_end_true_ns[s][c] = the last arrival + transfer_ns, plus a
// per-rank end jitter in [0, end_jitter_ns]. So the rank arriving last has
// the least NCCL time in a step: the straggler. slow_rank runs its compute
// kernels slow_factor times as long, and is the straggler of every step
// but one: in straggling_step, straggling_rank stalls on the host for
// stall_ns before launching its first collective, so that step is long
// for every rank and straggling_rank is its straggler.
//
// Clocks: each host has its own (job_clock.h); a rank's CUPTI timestamps are
// its host's monotonic clock and its clock samples (at T0, before each step,
// after the last) map them to its host's CLOCK_REALTIME = true + offset_ns +
// drift_ppm * 1e-6 * (true - t0_realtime_ns). gpucap build / merge / export
// show each rank at its host's realtime; job.json says by how much it is off.
//
// job.json:
//   {"world_size": N, "ranks_per_host": 8, "seed": 1, "steps": S, "first_step": 0,
//    "step_names": ["ProfilerStep#0", ...], "collectives_per_step": C, "kernels_per_step": K,
//    "slow_rank": r, "slow_factor": 1.3, "straggling_step": "ProfilerStep#k",
//    "straggling_rank": r2, "stall_ns": n, "end_jitter_ns": n, "transfer_ns": n,
//    "hosts": [{"host": "node-0", "offset_ns": 0, "drift_ppm": 0.000}, ...],
//    "t0_realtime_ns": n,
//    "collective_end_true_ns": [[per collective of step 0], ...],
//    "ranks": [{"rank": r, "file": "rank-0007.gpucap", "host": "node-0", "pid": p,
//               "nccl_ns_per_step": [...], "step_ns": [...]}, ...]}
//   The world size is "world_size" (the brief's "ranks": N would have
//   shared its key with the per-rank list). nccl_ns_per_step and step_ns are
//   what `gpucap stats` gives for the rank's ProfilerStep windows: the NVTX
//   range's duration, and the sum of the NCCL kernels' durations (all
//   launched inside their step), both on the rank's realtime as the builder
//   converts it: true durations stretched by the host's drift (<= 20 ppm).
//
// Deterministic: the same spec gives byte-identical files.
#ifndef GPUCAP_BUILDER_TESTING_SYNTHETIC_JOB_H_
#define GPUCAP_BUILDER_TESTING_SYNTHETIC_JOB_H_

#include <cstdint>
#include <optional>
#include <string>

#include "gpucap/status.h"

namespace gpucap::builder::testing {

struct JobSpec {
  uint32_t ranks = 16;
  uint32_t ranks_per_host = 8;
  uint64_t seed = 1;
  uint32_t steps = 8;
  int64_t first_step = 0;
  uint32_t kernels_per_step = 40;
  uint32_t collectives_per_step = 4;
  std::optional<uint32_t> slow_rank;          // default ranks / 2
  double slow_factor = 1.3;                   // at least 1.1
  std::optional<int64_t> straggling_step;     // a step number; default first_step + steps / 2
  std::optional<uint32_t> straggling_rank;    // default a rank a quarter of the job from slow_rank
  std::optional<int64_t> stall_ns;            // default 5 x a step's nominal compute
  int64_t end_jitter_ns = 1000;
  int64_t transfer_ns = 400'000;              // last arrival to a collective's end
  int64_t max_offset_ns = 2'000'000;          // host clock offsets within +-this
  double max_drift_ppm = 20;                  // host clock drifts within +-this
  int64_t t0_realtime_ns = 1'790'857'026'000'000'000;
};

// The spec with its defaults filled in; InvalidArgument naming the field
// when it cannot make a job (fewer than 2 ranks, slow_rank == straggling_rank,
// a step out of range, fewer compute kernels than collectives per step...).
Result<JobSpec> ResolveJobSpec(JobSpec spec);

// "rank-0007.gpucap"
std::string RankFileName(uint32_t rank);

// Writes the job into `dir` (created if missing). Refuses, before writing
// anything, when one of the files it would write exists.
Status MakeSyntheticJob(const std::string& dir, const JobSpec& spec);

}  // namespace gpucap::builder::testing

#endif  // GPUCAP_BUILDER_TESTING_SYNTHETIC_JOB_H_
