#include "job_schedule.h"

#include <algorithm>
#include <cmath>

namespace gpucap::builder::testing {
namespace {

// Host-side figures of the model, in ns.
constexpr int64_t kLead = 1'000'000;        // T0 to the first step's push
constexpr int64_t kStepGap = 300'000;       // a pop to the next push (data loading)
constexpr int64_t kSkew = 20'000;           // up to this much more, per rank and step
constexpr int64_t kPushToLaunch = 2'000;
constexpr int64_t kLaunch = 5'000;          // cudaLaunchKernel, up to 1 us more
constexpr int64_t kCollectiveLaunch = 8'000;  // cuLaunchKernelEx, up to 1 us more
constexpr int64_t kBetweenCalls = 1'000;
constexpr int64_t kSyncReturn = 2'000;      // the last collective's end to the sync's return
constexpr int64_t kSyncToPop = 1'000;

// What each hash draws.
enum Draw : uint64_t { kNoise = 1, kApi = 2, kStepSkew = 3, kEndJitter = 4 };

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

uint64_t JobHash(uint64_t seed, std::initializer_list<uint64_t> parts) {
  uint64_t h = SplitMix(seed);
  for (uint64_t p : parts) h = SplitMix(h ^ p);
  return h;
}

const std::vector<KernelKind>& ComputeKernels() {
  static const std::vector<KernelKind> kinds = {
      {"ampere_sgemm_128x64_tn", 1'600'000, 264, 256, 128},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 100'000,
       4096, 128, 16},
      {"ampere_sgemm_64x32_sliced1x4_nn", 800'000, 528, 128, 96},
      {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal10"
       "MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_",
       150'000, 8192, 128, 18},
  };
  return kinds;
}

const std::vector<KernelKind>& CollectiveKernels() {
  static const std::vector<KernelKind> kinds = {
      {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", 0, 32, 640, 96},
      {"_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", 0, 32, 640, 96},
      {"_Z43ncclDevKernel_ReduceScatter_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE", 0, 32, 640, 96},
  };
  return kinds;
}

int64_t NominalStepCompute(const JobSpec& spec) {
  int64_t total = 0;
  const auto& kinds = ComputeKernels();
  for (uint32_t k = 0; k < spec.kernels_per_step; ++k) total += kinds[k % kinds.size()].nominal_ns;
  return total;
}

RankSchedule::RankSchedule(const JobSpec& spec, uint32_t rank, std::vector<PlannedEvent>* events)
    : spec_(spec), rank_(rank), events_(events) {}

int64_t RankSchedule::ComputeNs(uint32_t step, uint32_t kernel) const {
  const auto& kinds = ComputeKernels();
  int64_t nominal = kinds[kernel % kinds.size()].nominal_ns;
  // Within +-2% of nominal, per rank, step and kernel.
  int64_t noise = static_cast<int64_t>(JobHash(spec_.seed, {kNoise, rank_, step, kernel}) % 41) - 20;
  int64_t ns = nominal + nominal * noise / 1000;
  if (rank_ == *spec_.slow_rank) ns = std::llround(static_cast<double>(ns) * spec_.slow_factor);
  return ns;
}

void RankSchedule::Emit(const PlannedEvent& e) {
  if (events_ != nullptr) events_->push_back(e);
}

void RankSchedule::Api(PlannedEvent::Kind kind, uint32_t cbid, uint32_t step, int64_t duration) {
  PlannedEvent e{kind};
  e.step = step;
  e.start = host_;
  e.end = host_ + duration;
  e.correlation = ++correlation_;
  e.cbid = cbid;
  Emit(e);
  host_ = e.end + kBetweenCalls;
}

int64_t RankSchedule::Arrive(uint32_t step, uint32_t collective) {
  const uint32_t k = spec_.kernels_per_step, c_per_step = spec_.collectives_per_step;
  if (collective == 0) {
    int64_t skew = static_cast<int64_t>(JobHash(spec_.seed, {kStepSkew, rank_, step}) % (kSkew + 1));
    int64_t push = (step == 0 ? spec_.t0_realtime_ns + kLead : step_end_ + kStepGap) + skew;
    Emit({PlannedEvent::Kind::kPush, step, push});
    host_ = push + kPushToLaunch;
  }
  // The segment's compute: launched by the host, run in order on the
  // compute stream once the previous collective has ended.
  for (uint32_t j = collective * k / c_per_step; j < (collective + 1) * k / c_per_step; ++j) {
    int64_t api = kLaunch + static_cast<int64_t>(JobHash(spec_.seed, {kApi, rank_, step, j}) % 1001);
    Api(PlannedEvent::Kind::kRuntimeApi, kLaunchKernelCbid, step, api);
    PlannedEvent kernel{PlannedEvent::Kind::kKernel, step};
    kernel.start = std::max({host_ - kBetweenCalls, compute_free_, collective_end_});
    kernel.end = kernel.start + ComputeNs(step, j);
    kernel.correlation = correlation_;
    kernel.stream = kComputeStream;
    kernel.kind_index = j % ComputeKernels().size();
    Emit(kernel);
    compute_free_ = kernel.end;
  }
  if (collective == 0 && step == *spec_.straggling_step - spec_.first_step && rank_ == *spec_.straggling_rank) {
    host_ += *spec_.stall_ns;
  }
  int64_t api = kCollectiveLaunch + static_cast<int64_t>(JobHash(spec_.seed, {kApi, rank_, step, k + collective}) % 1001);
  Api(PlannedEvent::Kind::kDriverApi, kLaunchKernelExCbid, step, api);
  pending_correlation_ = correlation_;
  pending_arrival_ = std::max({host_ - kBetweenCalls, compute_free_, collective_end_});
  return pending_arrival_;
}

void RankSchedule::Finish(uint32_t step, uint32_t collective, int64_t end_ns) {
  PlannedEvent kernel{PlannedEvent::Kind::kKernel, step};
  kernel.start = pending_arrival_;
  kernel.end = end_ns + static_cast<int64_t>(JobHash(spec_.seed, {kEndJitter, rank_, step, collective}) %
                                            static_cast<uint64_t>(spec_.end_jitter_ns + 1));
  kernel.correlation = pending_correlation_;
  kernel.stream = kCollectiveStream;
  kernel.collective = true;
  kernel.kind_index = collective % CollectiveKernels().size();
  Emit(kernel);
  collective_end_ = kernel.end;
  if (collective + 1 < spec_.collectives_per_step) return;
  // The host waits for the step's last collective, then closes the step.
  PlannedEvent sync{PlannedEvent::Kind::kRuntimeApi, step};
  sync.start = host_;
  sync.end = std::max(host_ + kBetweenCalls, collective_end_ + kSyncReturn);
  sync.correlation = ++correlation_;
  sync.cbid = kStreamSynchronizeCbid;
  Emit(sync);
  PlannedEvent waited = sync;
  waited.kind = PlannedEvent::Kind::kStreamSync;
  waited.stream = kCollectiveStream;
  Emit(waited);
  step_end_ = sync.end + kSyncToPop;
  Emit({PlannedEvent::Kind::kPop, step, step_end_});
}

}  // namespace gpucap::builder::testing
