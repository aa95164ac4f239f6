// PM samples on the capture's timeline: which decoded samples are real, how
// many went missing, and how their timestamps map onto the CUPTI activity
// clock (cuptiGetTimestamp) that everything else in a capture carries.
//
// What the raw timestamps are. A PM sample covers [start, end) as reported
// by cuptiPmSamplingCounterDataGetSampleInfo, in nanoseconds. NVIDIA's CUPTI
// guide (PM sampling, "Evaluating Counter Data") says these are CPU based
// timestamps; the activity records' timestamps are, on Linux, in the clock
// cuptiGetTimestamp reads. So the expected conversion is the identity. It is
// not verified on our GPU machine yet, so PmClock checks it on the first real
// sample instead of trusting it: a start that falls between the reading taken
// just before cuptiPmSamplingStart and the reading taken before the decode
// that produced the sample (give or take a tolerance) is in the CUPTI clock.
// Anything else (a GPU-local time base, say ns since GPU boot) is anchored:
// the first sample's start is taken to be the moment sampling started, which
// is off by at most the latency of cuptiPmSamplingStart plus one interval.
// Which one applied is reported (PmSampler::clock_description) and the
// pm_probe prints raw values next to cuptiGetTimestamp readings so the lead
// can tell.
//
// A counter track draws a value from its timestamp until the next one, and
// a PM value is the average over its sample, so a sample's value is stamped
// at the sample's start.
#ifndef GPUCAP_RECORDER_PM_TIMELINE_H_
#define GPUCAP_RECORDER_PM_TIMELINE_H_

#include <cstdint>
#include <string>

namespace gpucap::recorder {

class PmClock {
 public:
  enum class Mode { kUndecided, kSame, kAnchored };

  // `cupti_at_start`: cuptiGetTimestamp() read just before sampling started.
  explicit PmClock(uint64_t cupti_at_start, uint64_t tolerance_ns = 1'000'000'000);

  // Decides the mapping from the first real sample's start, decoded after
  // `cupti_now` was read. Later calls change nothing.
  void Observe(uint64_t raw_start_ns, uint64_t cupti_now);

  uint64_t ToCupti(uint64_t raw_ns) const;
  Mode mode() const { return mode_; }
  int64_t offset_ns() const { return offset_; }
  std::string Describe() const;

 private:
  uint64_t cupti_at_start_;
  uint64_t tolerance_;
  Mode mode_ = Mode::kUndecided;
  int64_t offset_ = 0;  // cupti = raw + offset_
};

// Sorts decoded samples into kept, empty and invalid ones and counts the
// samples missing between kept ones. What CUPTI hands back, as measured on
// an H100 by others (CUPTI 13.3; to be confirmed on our H200 with 13.0):
// samples are contiguous, each starting where the previous one ended; the
// decode after cuptiPmSamplingStop yields one or two zero-length samples
// stamped at the start of sampling, which cover no time; after a decode
// stopped because the counter-data image was full, later samples come back
// with both timestamps 0.
class PmSampleSequence {
 public:
  enum class Verdict { kKeep, kEmpty, kInvalid };

  explicit PmSampleSequence(uint64_t interval_ns) : interval_(interval_ns) {}

  Verdict Add(uint64_t start_ns, uint64_t end_ns);

  uint64_t kept() const { return kept_; }
  uint64_t empty() const { return empty_; }
  uint64_t invalid() const { return invalid_; }
  // Whole intervals between the end of one kept sample and the start of the next.
  uint64_t lost() const { return lost_; }
  uint64_t first_start() const { return first_start_; }
  uint64_t last_end() const { return last_end_; }

 private:
  uint64_t interval_;
  uint64_t kept_ = 0, empty_ = 0, invalid_ = 0, lost_ = 0;
  uint64_t first_start_ = 0, last_end_ = 0;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PM_TIMELINE_H_
