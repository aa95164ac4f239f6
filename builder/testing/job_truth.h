// job.json, the truth of a synthetic job: its spec, its hosts' clocks, the
// true end of every collective, and per rank the figures a correct
// `gpucap stats` gives for its steps. The layout is the contract written in
// synthetic_job.h.
#ifndef GPUCAP_BUILDER_TESTING_JOB_TRUTH_H_
#define GPUCAP_BUILDER_TESTING_JOB_TRUTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "synthetic_job.h"

namespace gpucap::builder::testing {

struct HostTruth {
  std::string host;
  int64_t offset_ns = 0;
  int64_t drift_ppb = 0;  // written as drift_ppm with three decimals
};

struct RankTruth {
  uint32_t rank = 0;
  std::string file, host;
  uint32_t pid = 0;
  std::vector<int64_t> nccl_ns_per_step, step_ns;
};

struct JobTruth {
  JobSpec spec;  // resolved
  std::vector<HostTruth> hosts;
  std::vector<std::vector<int64_t>> collective_end_true_ns;  // [step][collective]
  std::vector<RankTruth> ranks;
};

// "ProfilerStep#<number>"
std::string StepName(int64_t number);

std::string JobTruthJson(const JobTruth& truth);

}  // namespace gpucap::builder::testing

#endif  // GPUCAP_BUILDER_TESTING_JOB_TRUTH_H_
