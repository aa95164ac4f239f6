// For the probes that wait for the flight recorder's dumps (step_probe,
// call_probe): whether a dump next to GPUCAP_OUTPUT says a text (a
// trigger), read as bytes: the trailer is the dump's last frame, its
// strings stored as they are.
#pragma once
#include <time.h>

#include <fstream>
#include <iterator>
#include <string>

namespace gpucap::testing {

inline void SleepMs(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&t, &t) != 0) {
  }
}

// Whether job.ring-N.gpucap (N up to 100) beside `output` (job.gpucap) holds `text`.
inline bool SomeDumpSays(const std::string& output, const std::string& text) {
  std::string stem = output.substr(0, output.rfind('.'));
  for (int n = 1; n <= 100; ++n) {
    std::ifstream in(stem + ".ring-" + std::to_string(n) + ".gpucap", std::ios::binary);
    if (!in) continue;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace gpucap::testing
