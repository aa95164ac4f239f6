#include "cupti_detach.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpucap::recorder {
namespace {

constexpr size_t kMaxHoldSamples = 1 << 16;

uint64_t NsSince(std::chrono::steady_clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

const GpucapEntryGateV1* CuptiDetach::FindGate() {
  auto get = reinterpret_cast<GpucapEntryGateV1Fn>(dlsym(RTLD_DEFAULT, "gpucap_entry_gate_v1"));
  const GpucapEntryGateV1* g = get ? get() : nullptr;
  // The detach needs the fields up to export_tables; later ones are asked
  // for where they are used (GPUCAP_GATE_HAS).
  if (!g || !GPUCAP_GATE_HAS(g, export_tables)) return nullptr;
  return g;
}

CuptiDetach::CuptiDetach(const GpucapEntryGateV1* gate, std::chrono::microseconds wait,
                         const std::vector<std::pair<const void*, const void*>>& exempt)
    : gate_(gate), wait_(wait) {
  if (!gate_) return;
  for (const auto& [b, e] : exempt) gate_->add_exempt_range(b, e);
}

CuptiDetach::Outcome CuptiDetach::Run(const std::function<Finalized()>& finalize) {
  std::lock_guard<std::mutex> lock(mu_);
  ++attempts_;
  pending_ = true;
  // A gate nothing went through cannot say who is in CUDA: the program got
  // its driver functions some other way.
  if (!Usable()) {
    ++no_gate_;
    pending_ = false;
    return Outcome::kNoGate;
  }
  Finalized f = Finalized::kBusy;
  uint64_t waited = 0;
  std::optional<Hold> held = Held([&] { f = finalize(); }, &waited);
  if (!held) {
    ++give_ups_;
    return Outcome::kGaveUp;
  }
  wait_ns_max_ = std::max(wait_ns_max_, waited);
  switch (f) {
    case Finalized::kYes:
      ++detaches_;
      pending_ = false;
      if (hold_ns_.size() < kMaxHoldSamples) {
        hold_ns_.push_back(held->hold_ns);
        stall_ns_.push_back(held->stall_ns);
      }
      return Outcome::kDetached;
    case Finalized::kBusy:
      ++busy_;
      return Outcome::kBusy;
    case Finalized::kError:
      ++failures_;
      pending_ = false;  // CUPTI said no: not again this pause
      return Outcome::kFailed;
  }
  return Outcome::kFailed;
}

CuptiDetach::Switched CuptiDetach::Switch(const std::function<void()>& change) {
  if (!Usable()) return Switched::kNoGate;
  uint64_t waited = 0;
  std::optional<Hold> held = Held(change, &waited);
  std::lock_guard<std::mutex> lock(switch_record_mu_);
  if (!held) {
    ++switch_give_ups_;
    return Switched::kGaveUp;
  }
  ++switches_;
  if (switch_hold_ns_.size() < kMaxHoldSamples) {
    switch_hold_ns_.push_back(held->hold_ns);
    switch_stall_ns_.push_back(held->stall_ns);
  }
  return Switched::kMade;
}

std::optional<CuptiDetach::Hold> CuptiDetach::Held(const std::function<void()>& inside, uint64_t* waited_ns) {
  auto t0 = std::chrono::steady_clock::now();
  uint32_t in_flight = 0;
  if (!gate_->close(static_cast<uint64_t>(wait_.count()) * 1000, &in_flight, waited_ns)) return std::nullopt;
  inside();
  Hold h;
  if (GPUCAP_GATE_HAS(gate_, open_stall)) {
    h.stall_ns = gate_->open_stall();
    h.hold_ns = NsSince(t0);
  } else {
    gate_->open();
    h.hold_ns = h.stall_ns = NsSince(t0);
  }
  return h;
}

bool CuptiDetach::Usable() const { return gate_ && gate_->stubs_made() != 0 && !HooksUnwrapped(); }

bool CuptiDetach::HooksUnwrapped() const {
  uint64_t refused = 0;
  gate_->export_tables(nullptr, nullptr, &refused);
  return refused != 0;
}

void CuptiDetach::NewPause() {
  std::lock_guard<std::mutex> lock(mu_);
  attempts_ = 0;
  pending_ = false;
}

void CuptiDetach::CountGiveUp() {
  std::lock_guard<std::mutex> lock(mu_);
  ++attempts_;
  pending_ = true;
  ++give_ups_;
}

bool CuptiDetach::RetryDue() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_ && attempts_ < kMaxAttempts;
}

uint64_t CuptiDetach::Quantile(std::vector<uint64_t> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  // Nearest rank: the smallest sample with at least q of them at or below it.
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
  return samples[rank == 0 ? 0 : std::min(rank, samples.size()) - 1];
}

void CuptiDetach::Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const {
  std::lock_guard<std::mutex> lock(mu_);
  extra->emplace_back("cupti_detaches", detaches_);
  extra->emplace_back("cupti_detach_give_ups", give_ups_);
  extra->emplace_back("cupti_detach_busy", busy_);
  extra->emplace_back("cupti_detach_failures", failures_);
  extra->emplace_back("cupti_detach_without_gate", no_gate_);
  extra->emplace_back("cupti_detach_hold_ns_p50", Quantile(hold_ns_, 0.50));
  extra->emplace_back("cupti_detach_hold_ns_p99", Quantile(hold_ns_, 0.99));
  extra->emplace_back("cupti_detach_hold_ns_max", Quantile(hold_ns_, 1.0));
  extra->emplace_back("cupti_detach_stall_ns_p50", Quantile(stall_ns_, 0.50));
  extra->emplace_back("cupti_detach_stall_ns_p99", Quantile(stall_ns_, 0.99));
  extra->emplace_back("cupti_detach_stall_ns_max", Quantile(stall_ns_, 1.0));
  extra->emplace_back("cupti_detach_wait_ns_max", wait_ns_max_);
  {
    std::lock_guard<std::mutex> switches(switch_record_mu_);
    extra->emplace_back("cupti_switches_gated", switches_);
    extra->emplace_back("cupti_switch_give_ups", switch_give_ups_);
    extra->emplace_back("cupti_switch_hold_ns_p50", Quantile(switch_hold_ns_, 0.50));
    extra->emplace_back("cupti_switch_hold_ns_p99", Quantile(switch_hold_ns_, 0.99));
    extra->emplace_back("cupti_switch_hold_ns_max", Quantile(switch_hold_ns_, 1.0));
    extra->emplace_back("cupti_switch_stall_ns_p50", Quantile(switch_stall_ns_, 0.50));
    extra->emplace_back("cupti_switch_stall_ns_p99", Quantile(switch_stall_ns_, 0.99));
    extra->emplace_back("cupti_switch_stall_ns_max", Quantile(switch_stall_ns_, 1.0));
  }
  if (gate_) {
    extra->emplace_back("entry_gate_stubs", gate_->stubs_made());
    extra->emplace_back("entry_gate_held_calls", gate_->held());
    uint64_t tables = 0, entries = 0, refused = 0;
    gate_->export_tables(&tables, &entries, &refused);
    extra->emplace_back("entry_gate_hook_entries", entries);
    extra->emplace_back("entry_gate_tables_unwrapped", refused);
  }
}

}  // namespace gpucap::recorder
