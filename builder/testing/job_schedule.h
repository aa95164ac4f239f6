// The time model of a synthetic job (synthetic_job.h), one rank at a time,
// in true ns. A job is planned collective by collective: every rank's
// schedule is advanced to its arrival at collective c of step s (Arrive),
// the collective's end is the last arrival + transfer_ns, and every rank is
// told it (Finish), which fixes where its next compute may start. Replayed
// with the same ends, a schedule lists the rank's events for its capture.
// Durations and small host delays come from a hash of (seed, rank, step,
// kernel), not a sequence, so a schedule is the same whatever the order in
// which ranks are advanced.
#ifndef GPUCAP_BUILDER_TESTING_JOB_SCHEDULE_H_
#define GPUCAP_BUILDER_TESTING_JOB_SCHEDULE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "synthetic_job.h"

namespace gpucap::builder::testing {

struct KernelKind {
  std::string name;  // as CUPTI reports it (mangled where the compiler mangles it)
  int64_t nominal_ns;
  int32_t grid_x, block_x;
  uint16_t registers;
};
const std::vector<KernelKind>& ComputeKernels();
const std::vector<KernelKind>& CollectiveKernels();  // nominal_ns unused

inline constexpr uint32_t kComputeStream = 7;
inline constexpr uint32_t kCollectiveStream = 13;
inline constexpr uint32_t kLaunchKernelCbid = 211;       // runtime cudaLaunchKernel
inline constexpr uint32_t kStreamSynchronizeCbid = 131;  // runtime cudaStreamSynchronize
inline constexpr uint32_t kLaunchKernelExCbid = 652;     // driver cuLaunchKernelEx

// One thing a rank's capture shows, in true ns.
struct PlannedEvent {
  enum class Kind : uint8_t { kPush, kPop, kRuntimeApi, kDriverApi, kKernel, kStreamSync };
  Kind kind;
  uint32_t step = 0;         // index among the steps
  int64_t start = 0, end = 0;  // push/pop: start only
  uint32_t correlation = 0;  // API records, kernels and the sync
  uint32_t cbid = 0;         // API records
  uint32_t stream = 0;       // kernels and the sync
  bool collective = false;   // kernels: NCCL or compute
  uint32_t kind_index = 0;   // kernels: into CollectiveKernels() or ComputeKernels()
};

// 64 well-mixed bits of its arguments (splitmix64 over them in turn).
uint64_t JobHash(uint64_t seed, std::initializer_list<uint64_t> parts);

// Nominal compute of one step of a rank at speed 1.
int64_t NominalStepCompute(const JobSpec& spec);

class RankSchedule {
 public:
  // `spec` resolved (ResolveJobSpec); `events`, when given, receives the
  // rank's events in the order they are planned.
  RankSchedule(const JobSpec& spec, uint32_t rank, std::vector<PlannedEvent>* events);

  // Plans up to the launch of collective c of step s (the step's start when
  // c is 0) and returns when the rank reaches it. Calls go in order: for
  // each step, for each collective, Arrive then Finish.
  int64_t Arrive(uint32_t step, uint32_t collective);
  // The collective ends at end_ns plus this rank's jitter; after a step's
  // last collective, the host's wait and the step's pop follow.
  void Finish(uint32_t step, uint32_t collective, int64_t end_ns);

  // The last true time the rank's events reach (its last pop).
  int64_t last_ns() const { return step_end_; }

 private:
  int64_t ComputeNs(uint32_t step, uint32_t kernel) const;
  void Emit(const PlannedEvent& e);
  void Api(PlannedEvent::Kind kind, uint32_t cbid, uint32_t step, int64_t duration);

  const JobSpec& spec_;
  uint32_t rank_;
  std::vector<PlannedEvent>* events_;
  int64_t host_ = 0;          // the main thread's next free time
  int64_t compute_free_ = 0;  // the compute stream's
  int64_t collective_end_ = 0;  // this rank's end of its last collective
  int64_t step_end_ = 0;      // the pop of the last step
  uint32_t correlation_ = 0;
  uint32_t pending_correlation_ = 0;  // the collective arrived at, not yet finished
  int64_t pending_arrival_ = 0;
};

}  // namespace gpucap::builder::testing

#endif  // GPUCAP_BUILDER_TESTING_JOB_SCHEDULE_H_
