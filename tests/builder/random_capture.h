// Random captures for the reference join: threads, NVTX domains, nesting,
// ranges never closed or ended on another thread, step ranges on the main
// thread, record-time marks (some without their close), graph captures and
// replays, and activity buffers delivered out of order. One seed, one
// capture, byte for byte.
#ifndef GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_
#define GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_

#include <cstdint>
#include <string>

#include "gpucap/status.h"

namespace gpucap::testing {

Status WriteRandomCapture(uint64_t seed, const std::string& path);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_RANDOM_CAPTURE_H_
