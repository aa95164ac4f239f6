// For the probes that run the real recorder library in a process of their
// own (exec_probe, ring_probe): load it and start it the way NVTX does, with
// NVTX's export-table lookup offering no table (the recorder starts,
// declines to hook NVTX, and the process is recorded all the same).
#pragma once
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>

namespace gpucap::testing {

inline const void* NoExportTable(uint32_t) { return nullptr; }

// The library's handle in *lib and 0, or the probe's exit status: 3 when it
// does not load (dlerror on stderr, after `who`), 4 when it has no NVTX entry.
inline int StartRecorderAsNvtx(const char* path, const char* who, void** lib) {
  *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!*lib) {
    std::fprintf(stderr, "%s: %s\n", who, dlerror());
    return 3;
  }
  using InitNvtx = int (*)(const void* (*)(uint32_t));
  auto init = reinterpret_cast<InitNvtx>(dlsym(*lib, "InitializeInjectionNvtx2"));
  if (!init) return 4;
  init(NoExportTable);
  return 0;
}

}  // namespace gpucap::testing
