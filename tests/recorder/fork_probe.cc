// Run by fork_test with NVTX_INJECTION64_PATH naming the real recorder: NVTX
// loads it at the first range, the recorder starts, then the process forks.
// The child uses NVTX and the gpucap API as a forked worker would; none of it
// may reach the parent's recorder or its capture. Exit status: 0, or where it
// went wrong.
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gpucap/gpucap_recorder_api.h"

namespace {

const GpucapRecorderApiV1* Api() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (!lib) return nullptr;
  using Get = const GpucapRecorderApiV1* (*)();
  auto get = reinterpret_cast<Get>(dlsym(lib, "gpucap_recorder_api_v1"));
  return get ? get() : nullptr;
}

int Child() {
  const GpucapRecorderApiV1* api = Api();
  if (!api) return 20;
  if (api->is_recording()) return 21;
  nvtxRangePushA("child range");
  nvtxMarkA("child mark");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("child domain");
  nvtxDomainMarkEx(domain, nullptr);
  nvtxNameOsThreadA(static_cast<uint32_t>(getpid()), "child thread");
  nvtxRangePop();
  if (api->range_push("child api range") != -1) return 22;
  return 0;  // exit handlers run: they must not close the parent's capture
}

}  // namespace

int main() {
  nvtxRangePushA("parent before fork");
  const GpucapRecorderApiV1* api = Api();
  if (!api || !api->is_recording()) return 2;
  pid_t child = fork();
  if (child < 0) return 3;
  if (child == 0) std::exit(Child());
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 4;
  nvtxRangePop();
  nvtxMarkA("parent after fork");
  if (!WIFEXITED(status)) {
    std::fprintf(stderr, "fork_probe: the child died of signal %d\n", WTERMSIG(status));
    return 5;
  }
  if (WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "fork_probe: the child exited with %d\n", WEXITSTATUS(status));
    return 6;
  }
  return 0;
}
