// A stand-in for libcudart.so.13 (soname and symbol version as the real
// one's) for the gate's probes (gate_probe.cc, runtime_link_probe.cc,
// call_probe.cc): four of the runtime's functions, with made-up bodies
// that show whether they ran inside the entry gate, that ask the driver for
// the runtime-callback hooks table from inside a libcudart.so.13, as the
// runtime does at its start, and that stay in a call until released, as a
// synchronize with work that never ends does.
#include <cuda.h>
#include <dlfcn.h>
#include <time.h>

#include "gate_api.h"

extern "C" {

// The hooks table the driver handed this runtime (cudaDriverGetVersion).
__attribute__((visibility("default"))) const void* fake_cudart_hooks = nullptr;

// *count = the gate's depth on this thread while the call runs.
__attribute__((visibility("default"))) int cudaGetDeviceCount(int* count) {
  auto get = reinterpret_cast<GpucapEntryGateV1Fn>(dlsym(RTLD_DEFAULT, "gpucap_entry_gate_v1"));
  *count = get ? static_cast<int>(get()->depth()) : -1;
  return 0;
}

// Asks libcuda.so.1 for the hooks table the way the runtime does (through
// cuGetProcAddress_v2), and says 13000.
__attribute__((visibility("default"))) int cudaDriverGetVersion(int* version) {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get = h ? reinterpret_cast<GetProc>(dlsym(h, "cuGetProcAddress_v2")) : nullptr;
  void* table_fn = nullptr;
  CUdriverProcAddressQueryResult q;
  if (!get || get("cuGetExportTable", &table_fn, 13000, 0, &q) != CUDA_SUCCESS || !table_fn) return 3;
  const CUuuid hooks_id = {{static_cast<char>(0xa0), static_cast<char>(0x94), 0x79, static_cast<char>(0x8c), 0x2e,
                            0x74, 0x2e, 0x74, static_cast<char>(0x93), static_cast<char>(0xf2), 0x08, 0x00, 0x20,
                            0x0c, 0x0a, 0x66}};
  if (reinterpret_cast<CUresult (*)(const void**, const CUuuid*)>(table_fn)(&fake_cudart_hooks, &hooks_id) !=
      CUDA_SUCCESS) {
    return 3;
  }
  *version = 13000;
  return 0;
}

// A short call that takes a millisecond (a synchronize on little work).
__attribute__((visibility("default"))) int cudaDeviceSynchronize() {
  struct timespec t = {0, 1000000};
  nanosleep(&t, nullptr);
  return 0;
}

// Stays until fake_cudart_release is not 0 (another thread sets it).
__attribute__((visibility("default"))) int fake_cudart_release = 0;
__attribute__((visibility("default"))) int cudaStreamSynchronize(void* /*stream*/) {
  while (!__atomic_load_n(&fake_cudart_release, __ATOMIC_ACQUIRE)) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, nullptr);
  }
  return 0;
}

}  // extern "C"
