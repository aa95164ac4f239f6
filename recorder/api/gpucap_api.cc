// libgpucap_api: the functions of gpucap.h. They find the recorder the CUDA
// driver loaded (CUDA_INJECTION64_PATH) without loading anything themselves,
// and do nothing when there is none.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>

#include "gpucap/gpucap.h"
#include "gpucap/gpucap_recorder_api.h"

namespace {

std::atomic<const GpucapRecorderApiV1*> g_api{nullptr};
std::atomic<int64_t> g_next_lookup_ns{0};

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

const GpucapRecorderApiV1* Api() {
  const GpucapRecorderApiV1* api = g_api.load(std::memory_order_acquire);
  if (api) return api;
  // Not found yet: look again at most every 100 ms, since the recorder
  // arrives with CUDA's initialisation, possibly after the first call.
  int64_t now = NowNs();
  if (now < g_next_lookup_ns.load(std::memory_order_relaxed)) return nullptr;
  g_next_lookup_ns.store(now + 100000000, std::memory_order_relaxed);
  using Fn = const GpucapRecorderApiV1* (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "gpucap_recorder_api_v1"));
  if (!fn) {
    const char* path = std::getenv("CUDA_INJECTION64_PATH");
    if (path && *path) {
      if (void* h = dlopen(path, RTLD_NOLOAD | RTLD_LAZY)) {
        fn = reinterpret_cast<Fn>(dlsym(h, "gpucap_recorder_api_v1"));
        dlclose(h);  // the driver still holds it
      }
    }
  }
  if (!fn) return nullptr;
  api = fn();
  // A recorder older than the last fields added is still used: they are
  // checked where called.
  if (api && api->size >= offsetof(GpucapRecorderApiV1, dump)) {
    g_api.store(api, std::memory_order_release);
    return api;
  }
  return nullptr;
}

}  // namespace

extern "C" {

int gpucap_range_push(const char* name) {
  const auto* a = Api();
  return a ? a->range_push(name) : -1;
}

int gpucap_range_pop(void) {
  const auto* a = Api();
  return a ? a->range_pop() : -1;
}

void gpucap_mark(const char* name) {
  if (const auto* a = Api()) a->mark(name);
}

uint64_t gpucap_window_begin(const char* label) {
  const auto* a = Api();
  return a ? a->window_begin(label) : 0;
}

void gpucap_window_end(uint64_t window) {
  if (const auto* a = Api()) a->window_end(window);
}

int gpucap_metadata(const char* name, const char* content_type, const void* data, size_t size) {
  const auto* a = Api();
  return a ? a->metadata(name, content_type, data, size) : -1;
}

int gpucap_is_recording(void) {
  const auto* a = Api();
  return a ? a->is_recording() : 0;
}

int gpucap_dump(const char* why) {
  const auto* a = Api();
  if (!a || a->size < offsetof(GpucapRecorderApiV1, dump) + sizeof(a->dump) || !a->dump) return 0;
  return a->dump(why);
}

}  // extern "C"
