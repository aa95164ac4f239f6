#include "gpucap/builder/clock.h"

#include <algorithm>

namespace gpucap::builder {

ClockMap::ClockMap(std::vector<format::ClockSample> samples) {
  std::sort(samples.begin(), samples.end(),
            [](const format::ClockSample& a, const format::ClockSample& b) {
              return a.cupti_ns < b.cupti_ns;
            });
  for (const format::ClockSample& s : samples) {
    if (s.cupti_ns == 0 || s.realtime_ns == 0) continue;
    // Two readings at one CUPTI time cannot both hold; keep the first.
    if (!points_.empty() && points_.back().cupti == s.cupti_ns) continue;
    points_.push_back({s.cupti_ns, s.realtime_ns});
  }
}

ClockMap::ClockMap(const format::Capture& capture) : ClockMap(capture.clocks) {
  if (points_.empty() && capture.session && capture.session->start_cupti_ns != 0 &&
      capture.session->start_realtime_ns != 0) {
    points_.push_back({capture.session->start_cupti_ns, capture.session->start_realtime_ns});
  }
}

int64_t ClockMap::ToRealtime(uint64_t t) const {
  if (points_.empty()) return static_cast<int64_t>(t);
  auto offset = [](const Point& p) { return p.realtime - static_cast<int64_t>(p.cupti); };
  if (t <= points_.front().cupti) return static_cast<int64_t>(t) + offset(points_.front());
  if (t >= points_.back().cupti) return static_cast<int64_t>(t) + offset(points_.back());
  auto hi = std::upper_bound(points_.begin(), points_.end(), t,
                             [](uint64_t v, const Point& p) { return v < p.cupti; });
  const Point& b = *hi;
  const Point& a = *(hi - 1);
  __int128 span = static_cast<__int128>(b.cupti - a.cupti);
  __int128 drift = static_cast<__int128>(offset(b)) - offset(a);
  __int128 along = static_cast<__int128>(t - a.cupti);
  int64_t off = offset(a) + static_cast<int64_t>(drift * along / span);
  return static_cast<int64_t>(t) + off;
}

}  // namespace gpucap::builder
