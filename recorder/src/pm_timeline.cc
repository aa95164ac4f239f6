#include "pm_timeline.h"

namespace gpucap::recorder {

PmClock::PmClock(uint64_t cupti_at_start, uint64_t tolerance_ns)
    : cupti_at_start_(cupti_at_start), tolerance_(tolerance_ns) {}

void PmClock::Observe(uint64_t raw_start_ns, uint64_t cupti_now) {
  if (mode_ != Mode::kUndecided) return;
  uint64_t low = cupti_at_start_ > tolerance_ ? cupti_at_start_ - tolerance_ : 0;
  uint64_t high = cupti_now + tolerance_;
  if (raw_start_ns >= low && raw_start_ns <= high) {
    mode_ = Mode::kSame;
    offset_ = 0;
  } else {
    mode_ = Mode::kAnchored;
    // Two's complement difference: correct whichever clock is ahead.
    offset_ = static_cast<int64_t>(cupti_at_start_ - raw_start_ns);
  }
}

uint64_t PmClock::ToCupti(uint64_t raw_ns) const {
  if (offset_ < 0 && raw_ns < static_cast<uint64_t>(-offset_)) return 0;
  return raw_ns + static_cast<uint64_t>(offset_);
}

std::string PmClock::Describe() const {
  switch (mode_) {
    case Mode::kUndecided:
      return "undecided (no sample yet)";
    case Mode::kSame:
      return "same clock as cuptiGetTimestamp (sample times used as they are)";
    case Mode::kAnchored:
      return "different clock: anchored first sample to sampling start, offset " +
             std::to_string(offset_) + " ns";
  }
  return "";
}

PmSampleSequence::Verdict PmSampleSequence::Add(uint64_t start_ns, uint64_t end_ns) {
  if ((start_ns == 0 && end_ns == 0) || end_ns < start_ns) {
    ++invalid_;
    return Verdict::kInvalid;
  }
  if (start_ns == end_ns) {
    ++empty_;
    return Verdict::kEmpty;
  }
  if (last_end_ != 0 && end_ns <= last_end_) {
    ++invalid_;  // goes back in time: a repeat or garbage
    return Verdict::kInvalid;
  }
  if (last_end_ != 0 && interval_ > 0 && start_ns > last_end_) {
    lost_ += (start_ns - last_end_ + interval_ / 2) / interval_;
  }
  if (kept_ == 0) first_start_ = start_ns;
  last_end_ = end_ns;
  ++kept_;
  return Verdict::kKeep;
}

}  // namespace gpucap::recorder
