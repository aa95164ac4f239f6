#include "runtime_entries.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

extern "C" {
// libc's dlsym (gate_preload.cc interposes the name).
extern __attribute__((visibility("hidden"))) void* (*gpucap_real_dlsym)(void*, const char*);
}

namespace {

// One stub's entry (runtime_entries_x86_64.S): the runtime's function once
// resolved, and the stub's name.
struct RuntimeEntry {
  std::atomic<void*> function;
  const char* name;
};
static_assert(sizeof(RuntimeEntry) == 16);

std::atomic<uint64_t> g_resolved{0}, g_missing{0};

// cudaErrorInsufficientDriver: what the runtime itself answers where it
// finds no driver.
int MissingRuntime() { return 35; }
const char* MissingRuntimeText(int) { return "gpucap: libcudart.so.13 is not loaded"; }

const char* const kNames[] = {
#define GPUCAP_RUNTIME_ENTRY(name) #name,
#include "runtime_entries.inc"
#undef GPUCAP_RUNTIME_ENTRY
};

}  // namespace

extern "C" __attribute__((visibility("hidden"))) void* gpucap_runtime_resolve_entry(RuntimeEntry* entry) {
  // By the runtime's handle rather than RTLD_NEXT: a runtime loaded with
  // RTLD_LOCAL (PyTorch's, a dependency of a Python extension) is not in the
  // global scope RTLD_NEXT searches.
  static std::atomic<void*> loaded{nullptr};
  void* runtime = loaded.load(std::memory_order_acquire);
  if (!runtime) {
    runtime = dlopen(gpucap::gate::kRuntimeLibrary, RTLD_NOW | RTLD_NOLOAD);
    loaded.store(runtime, std::memory_order_release);
  }
  void* f = runtime ? dlvsym(runtime, entry->name, gpucap::gate::kRuntimeLibrary) : nullptr;
  if (!f && runtime && gpucap_real_dlsym) f = gpucap_real_dlsym(runtime, entry->name);  // a runtime without versions
  if (!f) {
    // Not kept: a later call, once the runtime is loaded, resolves again.
    g_missing.fetch_add(1, std::memory_order_relaxed);
    bool text = std::strcmp(entry->name, "cudaGetErrorName") == 0 || std::strcmp(entry->name, "cudaGetErrorString") == 0;
    return text ? reinterpret_cast<void*>(&MissingRuntimeText) : reinterpret_cast<void*>(&MissingRuntime);
  }
  g_resolved.fetch_add(1, std::memory_order_relaxed);
  // Two threads may resolve at once: they find the same function.
  entry->function.store(f, std::memory_order_release);
  return f;
}

namespace gpucap::gate {

RuntimeEntryCounts runtime_entry_counts() {
  return {g_resolved.load(std::memory_order_relaxed), g_missing.load(std::memory_order_relaxed)};
}

bool IsRuntimeEntry(const char* name) {
  if (!name) return false;
  for (const char* n : kNames) {
    if (std::strcmp(n, name) == 0) return true;
  }
  return false;
}

}  // namespace gpucap::gate
