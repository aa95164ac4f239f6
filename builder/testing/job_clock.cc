#include "job_clock.h"

#include <cstdio>
#include <cstdlib>

namespace gpucap::builder::testing {

int64_t HostClock::Realtime(int64_t true_ns) const {
  __int128 along = static_cast<__int128>(true_ns - t0_) * drift_ppb_;
  // Round half away from zero, the same on both sides of T0.
  __int128 half = 500'000'000;
  __int128 drift = along >= 0 ? (along + half) / 1'000'000'000 : -((-along + half) / 1'000'000'000);
  return true_ns + offset_ + static_cast<int64_t>(drift);
}

format::ClockSample HostClock::Sample(int64_t true_ns, format::ClockKind kind) const {
  format::ClockSample s;
  s.kind = kind;
  s.cupti_ns = Cupti(true_ns);
  s.monotonic_ns = static_cast<int64_t>(s.cupti_ns);
  s.realtime_ns = Realtime(true_ns);
  return s;
}

std::string DriftPpmText(int64_t drift_ppb) {
  char text[32];
  int64_t a = std::llabs(drift_ppb);
  std::snprintf(text, sizeof text, "%s%lld.%03lld", drift_ppb < 0 ? "-" : "", static_cast<long long>(a / 1000),
                static_cast<long long>(a % 1000));
  return text;
}

}  // namespace gpucap::builder::testing
