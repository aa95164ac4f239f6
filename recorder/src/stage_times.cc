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
  for (int s = 0; s < kStages; ++s) {
    // Copied under the lock, ranked outside it (Quantile sorts its copy):
    // Add runs inside the gate's holds, which must not wait for a sort.
    std::vector<uint64_t> samples;
    uint64_t count;
    {
      std::lock_guard<std::mutex> lock(mu_);
      count = counts_[s];
      if (count == 0) continue;
      samples = ns_[s];
    }
    std::string key = std::string("cupti_stage_") + kNames[s];
    extra->emplace_back(key + "_count", count);
    extra->emplace_back(key + "_ns_p50", CuptiDetach::Quantile(samples, 0.50));
    extra->emplace_back(key + "_ns_p99", CuptiDetach::Quantile(samples, 0.99));
    extra->emplace_back(key + "_ns_max", CuptiDetach::Quantile(std::move(samples), 1.0));
  }
}

}  // namespace gpucap::recorder
