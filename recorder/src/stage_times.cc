#include "stage_times.h"

#include "cupti_detach.h"

namespace gpucap::recorder {
namespace {

constexpr const char* kNames[StageTimes::kStages] = {"settle", "attributes", "register", "subscribe", "kinds_on",
                                                      "kinds_off", "flush", "finalize"};

}  // namespace

StageTimes::Scope::~Scope() {
  if (!times_) return;
  times_->Add(stage_, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - t0_)
                                                .count()));
}

void StageTimes::Add(Stage stage, uint64_t ns) {
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[stage];
  if (ns_[stage].size() < kMaxSamples) ns_[stage].push_back(ns);
}

void StageTimes::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (int s = 0; s < kStages; ++s) {
    if (counts_[s] == 0) continue;
    std::string key = std::string("cupti_stage_") + kNames[s];
    extra->emplace_back(key + "_count", counts_[s]);
    extra->emplace_back(key + "_ns_p50", CuptiDetach::Quantile(ns_[s], 0.50));
    extra->emplace_back(key + "_ns_p99", CuptiDetach::Quantile(ns_[s], 0.99));
    extra->emplace_back(key + "_ns_max", CuptiDetach::Quantile(ns_[s], 1.0));
  }
}

}  // namespace gpucap::recorder
