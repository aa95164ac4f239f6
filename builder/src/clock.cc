#include "gpucap/builder/clock.h"

#include <algorithm>
#include <limits>

namespace gpucap::builder {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

int64_t Clamp(__int128 v) {
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

__int128 Offset(uint64_t cupti, int64_t realtime) { return static_cast<__int128>(realtime) - cupti; }

}  // namespace

ClockMap::ClockMap(std::vector<format::ClockSample> samples) {
  std::sort(samples.begin(), samples.end(),
            [](const format::ClockSample& a, const format::ClockSample& b) {
              return a.cupti_ns < b.cupti_ns;
            });
  for (const format::ClockSample& s : samples) {
    if (s.cupti_ns == 0 || s.realtime_ns == 0) continue;
    // Two readings at one CUPTI time cannot both hold; keep the first.
    if (!points_.empty() && points_.back().cupti == s.cupti_ns) continue;
    // A pair read back to back agrees with the last one up to drift: clocks
    // drift by parts per million, so more than a second plus 1% of the time
    // between them (or a time past 2^63, or before 1970) is a damaged sample.
    bool plausible = s.cupti_ns < (uint64_t{1} << 63) && s.realtime_ns > 0;
    if (plausible && !points_.empty()) {
      const Point& last = points_.back();
      __int128 jump = Offset(s.cupti_ns, s.realtime_ns) - Offset(last.cupti, last.realtime);
      if (jump < 0) jump = -jump;
      plausible = jump <= kSecond + static_cast<__int128>(s.cupti_ns - last.cupti) / 100;
    }
    if (!plausible) {
      rejected_++;
      continue;
    }
    points_.push_back({s.cupti_ns, s.realtime_ns});
  }
}

ClockMap::ClockMap(const format::Capture& capture) : ClockMap(capture.clocks) {
  if (points_.empty() && capture.session && capture.session->start_cupti_ns != 0 &&
      capture.session->start_cupti_ns < (uint64_t{1} << 63) && capture.session->start_realtime_ns > 0) {
    points_.push_back({capture.session->start_cupti_ns, capture.session->start_realtime_ns});
  }
}

int64_t ClockMap::ToRealtime(uint64_t t) const {
  if (points_.empty()) return Clamp(t);
  auto offset = [](const Point& p) { return Offset(p.cupti, p.realtime); };
  if (t <= points_.front().cupti) return Clamp(t + offset(points_.front()));
  if (t >= points_.back().cupti) return Clamp(t + offset(points_.back()));
  auto hi = std::upper_bound(points_.begin(), points_.end(), t,
                             [](uint64_t v, const Point& p) { return v < p.cupti; });
  const Point& b = *hi;
  const Point& a = *(hi - 1);
  __int128 span = static_cast<__int128>(b.cupti - a.cupti);
  __int128 drift = offset(b) - offset(a);
  __int128 along = static_cast<__int128>(t - a.cupti);
  return Clamp(t + offset(a) + drift * along / span);
}

}  // namespace gpucap::builder
