// Random captures for the reference join: threads, NVTX domains, nesting,
// ranges never closed or ended on another thread, step ranges on the main
// thread (named as Kineto names them or as users do: RandomStepNaming),
// record-time marks (some without their close), graph captures and
// replays, a paused stretch whose calls were recorded, and activity buffers
// delivered out of order; some are flight-recorder dumps of a ring that
// dropped its oldest frames. One seed, one
// capture, byte for byte.
#ifndef GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_
#define GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_

#include <cstdint>
#include <string>

#include "gpucap/status.h"

namespace gpucap::testing {

Status WriteRandomCapture(uint64_t seed, const std::string& path);

// How the steps of seed's capture are named.
struct StepNaming {
  std::string prefix;   // a step is prefix + its number
  std::string pattern;  // RE2 and std::regex alike
  // The session says the recorder marked windows by `pattern`
  // (GPUCAP_WINDOW_NVTX), so a build takes them as steps unasked; else a
  // build must be told (--steps) unless they are Kineto's ProfilerStep.
  bool recorded = false;
};
StepNaming RandomStepNaming(uint64_t seed);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_
