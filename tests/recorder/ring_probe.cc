// Run by ring_test under GPUCAP_RING_MB: loads the recorder library as NVTX
// would, then asks for dumps the three ways a program does: gpucap_dump()
// through libgpucap_api (which finds the recorder by CUDA_INJECTION64_PATH),
// SIGUSR1 through the handler the recorder installed, and its exit
// (GPUCAP_RING_DUMP_AT_EXIT=1).
#include <signal.h>

#include "gpucap/gpucap.h"
#include "recorder_as_nvtx.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = nullptr;
  if (int failed = gpucap::testing::StartRecorderAsNvtx(argv[1], "ring_probe", &lib)) return failed;
  if (!gpucap_is_recording()) return 5;
  gpucap_range_push("before the dumps");
  gpucap_range_pop();
  if (gpucap_dump("probe") != 1) return 6;
  if (raise(SIGUSR1) != 0) return 7;  // killed here if the recorder took no SIGUSR1
  return 0;
}
