// Which capture ranges --sample N records: one in every N. Periodic (the
// last of each block of N, as before) or, with a seed, stratified random:
// exactly one chosen uniformly within each consecutive block of N ranges
// (ranges bN .. bN+N-1), so that a job whose behaviour repeats with some
// period is not aliased to the same phase of it every time.
//
// The choice is a pure function of (seed, N, range index): every process
// given the same seed (`gpucap record` draws one for the whole job) picks
// the same steps, and the capture's options name the seed, so a trace says
// which ranges were chosen and why.
#ifndef GPUCAP_RECORDER_RANGE_SAMPLE_H_
#define GPUCAP_RECORDER_RANGE_SAMPLE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace gpucap::recorder {

class RangeSample {
 public:
  // every <= 1: every range is chosen. No seed: the last range of each block.
  RangeSample(uint32_t every, std::optional<uint64_t> seed);

  bool Chosen(uint64_t index) const { return every_ <= 1 || index % every_ == Offset(index / every_); }
  // The chosen range's position inside block `block` (0 .. every-1).
  uint32_t Offset(uint64_t block) const;
  // "1 in 100" or "1 in 100 at random (seed 42)", for the recording's `why`.
  std::string Describe() const;

  uint32_t every() const { return every_; }
  const std::optional<uint64_t>& seed() const { return seed_; }

 private:
  uint32_t every_;
  std::optional<uint64_t> seed_;
};

// "auto" (or empty): a seed drawn from the system's entropy; otherwise a
// decimal u64. False and *error for anything else.
bool ParseSampleSeed(const std::string& text, uint64_t* seed, std::string* error);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_SAMPLE_H_
