// A stand-in libcuda.so.1 for the interposition test: a few driver entry
// points with the driver's signatures (cuLaunchKernel has stack arguments),
// handed out by its own cuGetProcAddress[_v2]. Each records the entry gate's
// depth it ran at, so the probe can tell a wrapped call from a bare one.
#include <cuda.h>
#include <dlfcn.h>

#include <cstring>

#include "gate_api.h"

#undef cuGetProcAddress

namespace {

unsigned DepthNow() {
  static auto get = reinterpret_cast<GpucapEntryGateV1Fn>(dlsym(RTLD_DEFAULT, "gpucap_entry_gate_v1"));
  return get ? get()->depth() : 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) unsigned fake_last_depth = 99;

__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  fake_last_depth = DepthNow();
  return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* v) {
  fake_last_depth = DepthNow();
  *v = 13000;
  return CUDA_SUCCESS;
}

// Returns a checksum of every argument through sharedMemBytes, so that a
// stub that moved an argument shows.
__attribute__((visibility("default"))) CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                               unsigned bx, unsigned by, unsigned bz,
                                                               unsigned shmem, CUstream stream, void** params,
                                                               void** extra) {
  fake_last_depth = DepthNow();
  unsigned sum = gx + 2 * gy + 3 * gz + 4 * bx + 5 * by + 6 * bz + 7 * shmem +
                 8 * static_cast<unsigned>(reinterpret_cast<uintptr_t>(stream)) +
                 9 * static_cast<unsigned>(reinterpret_cast<uintptr_t>(f));
  if (params) *static_cast<unsigned*>(params[0]) = sum;
  return extra == nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// A driver call made from inside another (as CUPTI's callbacks do).
__attribute__((visibility("default"))) CUresult cuCtxSynchronize() {
  int v = 0;
  void* inner = nullptr;
  CUdriverProcAddressQueryResult q;
  // Through the process's lookup, like a library inside the call would.
  auto get = reinterpret_cast<CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*)>(
      dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
  if (get && get("cuDriverGetVersion", &inner, 13000, 0, &q) == CUDA_SUCCESS && inner) {
    reinterpret_cast<CUresult (*)(int*)>(inner)(&v);
  }
  return v == 13000 ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

// Export tables: the runtime-callback hooks table (a size word, two
// functions around a data word, as the driver's mixes them) and one other.
__attribute__((visibility("default"))) unsigned fake_hook_calls = 0;
__attribute__((visibility("default"))) uint64_t fake_hook_data = 42;

void FakeHookEnter(unsigned* out) {
  fake_last_depth = DepthNow();
  ++fake_hook_calls;
  if (out) *out = 7;
}
uint64_t FakeHookSum(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f, uint64_t g,
                     uint64_t h) {
  fake_last_depth = DepthNow();
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

__attribute__((visibility("default"))) const void* fake_hooks_table[4] = {
    reinterpret_cast<const void*>(4 * sizeof(void*)), reinterpret_cast<const void*>(&FakeHookEnter),
    &fake_hook_data, reinterpret_cast<const void*>(&FakeHookSum)};
__attribute__((visibility("default"))) const void* fake_other_table[2] = {
    reinterpret_cast<const void*>(2 * sizeof(void*)), reinterpret_cast<const void*>(&FakeHookEnter)};

__attribute__((visibility("default"))) CUresult cuGetExportTable(const void** table, const CUuuid* id) {
  static const unsigned char kHooks[16] = {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
                                           0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66};
  if (!table || !id) return CUDA_ERROR_INVALID_VALUE;
  *table = std::memcmp(id->bytes, kHooks, 16) == 0 ? static_cast<const void*>(fake_hooks_table)
                                                   : static_cast<const void*>(fake_other_table);
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* s);

__attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                                                 cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                                    cuuint64_t, CUdriverProcAddressQueryResult* s) {
  struct Entry {
    const char* name;
    void* fn;
  };
  const Entry table[] = {
      {"cuInit", reinterpret_cast<void*>(&cuInit)},
      {"cuDriverGetVersion", reinterpret_cast<void*>(&cuDriverGetVersion)},
      {"cuLaunchKernel", reinterpret_cast<void*>(&cuLaunchKernel)},
      {"cuCtxSynchronize", reinterpret_cast<void*>(&cuCtxSynchronize)},
      {"cuGetExportTable", reinterpret_cast<void*>(&cuGetExportTable)},
      // The lookup itself, by the ABI the version asks for.
      {"cuGetProcAddress", version >= 12000 ? reinterpret_cast<void*>(&cuGetProcAddress_v2)
                                            : reinterpret_cast<void*>(&cuGetProcAddress)},
  };
  for (const Entry& e : table) {
    if (std::strcmp(e.name, symbol) == 0) {
      *pfn = e.fn;
      if (s) *s = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *pfn = nullptr;
  if (s) *s = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
