// Run by exec_test with libgpucap_exec.so preloaded: loads the recorder
// library as NVTX would, records a range through the gpucap API table, then
// execs /bin/true. The shim must close the capture before the exec.
#include <dlfcn.h>
#include <unistd.h>

#include "gpucap/gpucap_recorder_api.h"
#include "recorder_as_nvtx.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = nullptr;
  if (int failed = gpucap::testing::StartRecorderAsNvtx(argv[1], "exec_probe", &lib)) return failed;
  using Api = const GpucapRecorderApiV1* (*)();
  auto api = reinterpret_cast<Api>(dlsym(lib, "gpucap_recorder_api_v1"));
  if (!api) return 4;
  const GpucapRecorderApiV1* t = api();
  if (!t || !t->is_recording()) return 5;
  t->range_push("before exec");
  t->range_pop();
  char* const args[] = {const_cast<char*>("/bin/true"), nullptr};
  execv(args[0], args);
  return 6;
}
