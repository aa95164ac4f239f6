// Converts CUPTI timestamps to CLOCK_REALTIME through the capture's clock
// samples (CUPTI, monotonic, realtime read back to back). Between samples the
// offset is interpolated, so drift between the clocks is followed; outside
// them the nearest sample's offset holds. Integer arithmetic only, so the
// same capture always gives the same nanoseconds.
#ifndef GPUCAP_BUILDER_CLOCK_H_
#define GPUCAP_BUILDER_CLOCK_H_

#include <cstdint>
#include <vector>

#include "gpucap/format/capture.h"

namespace gpucap::builder {

class ClockMap {
 public:
  // From the capture's samples; without any, from the session's start
  // times; without those, CUPTI time is taken as realtime (it is realtime
  // based on Linux).
  explicit ClockMap(const format::Capture& capture);
  explicit ClockMap(std::vector<format::ClockSample> samples);

  int64_t ToRealtime(uint64_t cupti_ns) const;
  bool calibrated() const { return !points_.empty(); }
  // Samples left out as impossible: past 2^63, before 1970, or jumping away
  // from the samples before them by more than drift explains.
  uint64_t rejected() const { return rejected_; }

 private:
  struct Point {
    uint64_t cupti;
    int64_t realtime;
  };
  std::vector<Point> points_;  // by cupti time, strictly increasing
  uint64_t rejected_ = 0;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_CLOCK_H_
