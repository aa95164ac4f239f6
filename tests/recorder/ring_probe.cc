// Run by ring_test under GPUCAP_RING_MB: loads the recorder library as NVTX
// would, then asks for dumps the three ways a program does: gpucap_dump()
// through libgpucap_api (which finds the recorder by CUDA_INJECTION64_PATH),
// SIGUSR1 through the handler the recorder installed, and its exit
// (GPUCAP_RING_DUMP_AT_EXIT=1).
#include <dlfcn.h>
#include <signal.h>

#include <cstdint>
#include <cstdio>

#include "gpucap/gpucap.h"

namespace {
const void* NoExportTable(uint32_t) { return nullptr; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "ring_probe: %s\n", dlerror());
    return 3;
  }
  using InitNvtx = int (*)(const void* (*)(uint32_t));
  auto init = reinterpret_cast<InitNvtx>(dlsym(lib, "InitializeInjectionNvtx2"));
  if (!init) return 4;
  init(NoExportTable);
  if (!gpucap_is_recording()) return 5;
  gpucap_range_push("before the dumps");
  gpucap_range_pop();
  if (gpucap_dump("probe") != 1) return 6;
  if (raise(SIGUSR1) != 0) return 7;  // killed here if the recorder took no SIGUSR1
  return 0;
}
