// Run by exec_test with libgpucap_exec.so preloaded: loads the recorder
// library as NVTX would, records a range through the gpucap API table, then
// execs /bin/true. The shim must close the capture before the exec.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

#include "gpucap/gpucap_recorder_api.h"

namespace {
// NVTX's export table lookup, here offering no table: the recorder starts,
// declines to hook NVTX, and the process is recorded all the same.
const void* NoExportTable(uint32_t) { return nullptr; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "exec_probe: %s\n", dlerror());
    return 3;
  }
  using InitNvtx = int (*)(const void* (*)(uint32_t));
  using Api = const GpucapRecorderApiV1* (*)();
  auto init = reinterpret_cast<InitNvtx>(dlsym(lib, "InitializeInjectionNvtx2"));
  auto api = reinterpret_cast<Api>(dlsym(lib, "gpucap_recorder_api_v1"));
  if (!init || !api) return 4;
  init(NoExportTable);
  const GpucapRecorderApiV1* t = api();
  if (!t || !t->is_recording()) return 5;
  t->range_push("before exec");
  t->range_pop();
  char* const args[] = {const_cast<char*>("/bin/true"), nullptr};
  execv(args[0], args);
  return 6;
}
