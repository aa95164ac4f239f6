// The clocks of one host of a synthetic job (synthetic_job.h). Events are
// planned in "true" ns (one time for the whole job, on the realtime scale);
// a host reads them on its own clocks:
//
//   CUPTI = CLOCK_MONOTONIC = true - T0 + base          (base: any, per host)
//   CLOCK_REALTIME          = true + offset_ns + drift_ppb * (true - T0) / 1e9
//                             (rounded to the nearest ns)
//
// T0 is the job's t0_realtime_ns. Host 0 keeps true time (offset 0, drift
// 0); the others are off by up to the spec's bounds, as unsynchronised hosts
// are. A rank's clock samples pair its CUPTI and realtime readings, so the
// builder's ClockMap (interpolating between samples) shows each event at its
// host's realtime, wrong by the offset and drift the truth file states.
#ifndef GPUCAP_BUILDER_TESTING_JOB_CLOCK_H_
#define GPUCAP_BUILDER_TESTING_JOB_CLOCK_H_

#include <cstdint>
#include <string>

#include "gpucap/format/model.h"

namespace gpucap::builder::testing {

class HostClock {
 public:
  HostClock(int64_t t0_ns, int64_t offset_ns, int64_t drift_ppb, uint64_t base_ns)
      : t0_(t0_ns), offset_(offset_ns), drift_ppb_(drift_ppb), base_(base_ns) {}

  uint64_t Cupti(int64_t true_ns) const { return static_cast<uint64_t>(true_ns - t0_) + base_; }
  int64_t Realtime(int64_t true_ns) const;
  // The three clocks read at `true_ns`.
  format::ClockSample Sample(int64_t true_ns, format::ClockKind kind) const;

  int64_t offset_ns() const { return offset_; }
  int64_t drift_ppb() const { return drift_ppb_; }

 private:
  int64_t t0_, offset_, drift_ppb_;
  uint64_t base_;
};

// drift_ppb as the truth writes it: ppm with three decimals ("-12.345").
std::string DriftPpmText(int64_t drift_ppb);

}  // namespace gpucap::builder::testing

#endif  // GPUCAP_BUILDER_TESTING_JOB_CLOCK_H_
