// Run by ring_steps_test under GPUCAP_RING_MB with the hang and slow-step
// triggers on: loads the recorder library as NVTX would and steps through
// the C API, named as torch.profiler names its steps (the default step
// pattern, ProfilerStep#N). It waits for each dump it provokes by what the
// dump says, never for a time: a step ten times its peers (ProfilerStep#10),
// then no step at all until the hang's dump (naming ProfilerStep#13), then
// one step that re-arms the hang and a second hang's dump (ProfilerStep#14).
// Exit status: 0, or which wait gave up (after a minute).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpucap/gpucap.h"
#include "recorder_as_nvtx.h"
#include "ring_dumps.h"

namespace {

using gpucap::testing::SleepMs;
using gpucap::testing::SomeDumpSays;

void Step(int n, long ms) {
  gpucap_range_push(("ProfilerStep#" + std::to_string(n)).c_str());
  SleepMs(ms);
  gpucap_range_pop();
}

bool WaitForDump(const std::string& output, const std::string& text) {
  for (int i = 0; i < 6000; ++i) {
    if (SomeDumpSays(output, text)) return true;
    SleepMs(10);
  }
  std::fprintf(stderr, "step_probe: no dump says '%s'\n", text.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* output = std::getenv("GPUCAP_OUTPUT");
  if (argc < 2 || !output) return 2;
  void* lib = nullptr;
  if (int failed = gpucap::testing::StartRecorderAsNvtx(argv[1], "step_probe", &lib)) return failed;
  if (!gpucap_is_recording()) return 5;
  for (int n = 0; n < 10; ++n) Step(n, 10);
  Step(10, 300);
  for (int n = 11; n < 14; ++n) Step(n, 10);
  if (!WaitForDump(output, "slow step: ProfilerStep#10 took")) return 6;
  if (!WaitForDump(output, "hang: no step closed for 1 s (the last, ProfilerStep#13,")) return 7;
  Step(14, 10);
  if (!WaitForDump(output, "hang: no step closed for 1 s (the last, ProfilerStep#14,")) return 8;
  return 0;
}
