// Run with libgpucap_gate.so preloaded and the fake libcuda.so.1
// (fake_driver.cc) on LD_LIBRARY_PATH: looks the driver up the way libcudart
// does (dlopen, dlsym of cuGetProcAddress_v2, then every entry point through
// it) and checks that every function it obtains is wrapped in the entry
// gate. Prints one line per failure and "checked N" at the end; exits 0
// only when nothing failed.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "gate_api.h"

#undef cuGetProcAddress

namespace {

int g_failed = 0, g_checked = 0;

void Check(bool ok, const char* what) {
  ++g_checked;
  if (!ok) {
    ++g_failed;
    printf("FAILED: %s\n", what);
  }
}

using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

}  // namespace

int main() {
  auto gate_fn = reinterpret_cast<GpucapEntryGateV1Fn>(dlsym(RTLD_DEFAULT, "gpucap_entry_gate_v1"));
  if (!gate_fn) {
    printf("FAILED: libgpucap_gate.so is not preloaded\n");
    return 1;
  }
  const GpucapEntryGateV1* gate = gate_fn();
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("FAILED: dlopen libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  auto* last_depth = static_cast<unsigned*>(dlsym(h, "fake_last_depth"));
  Check(last_depth != nullptr, "a data symbol of the driver comes back as it is");

  // The runtime's route: dlsym(handle, "cuGetProcAddress_v2").
  auto get = reinterpret_cast<GetProcV2>(dlsym(h, "cuGetProcAddress_v2"));
  Check(get != nullptr, "cuGetProcAddress_v2 found");
  if (!get) return 1;
  Check(reinterpret_cast<void*>(get) == dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"),
        "dlsym(libcuda, cuGetProcAddress_v2) is gpucap's");
  CUdriverProcAddressQueryResult q;
  const char* names[] = {"cuInit", "cuDriverGetVersion", "cuLaunchKernel", "cuCtxSynchronize"};
  void* fns[4] = {};
  for (int i = 0; i < 4; ++i) {
    char what[96];
    snprintf(what, sizeof what, "%s through cuGetProcAddress_v2 is wrapped", names[i]);
    Check(get(names[i], &fns[i], 13000, 0, &q) == CUDA_SUCCESS && gate->is_stub(fns[i]), what);
  }
  // The lookup asked for through itself comes back as gpucap's, both ABIs.
  void* self = nullptr;
  Check(get("cuGetProcAddress", &self, 13000, 0, &q) == CUDA_SUCCESS &&
            self == dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"),
        "cuGetProcAddress (12.0+) through itself is gpucap's _v2");
  Check(get("cuGetProcAddress", &self, 11030, 0, &q) == CUDA_SUCCESS &&
            self == dlsym(RTLD_DEFAULT, "cuGetProcAddress"),
        "cuGetProcAddress (11.3) through itself is gpucap's first ABI");
  void* again = nullptr;
  Check(reinterpret_cast<GetProcV1>(self)("cuInit", &again, 11030, 0) == CUDA_SUCCESS && again == fns[0],
        "the first ABI's lookups are wrapped too, by the same stub");
  // A direct dlsym of a driver entry point (Triton's launchers).
  Check(gate->is_stub(dlsym(h, "cuLaunchKernel")), "dlsym(libcuda, cuLaunchKernel) is wrapped");
  Check(!gate->is_stub(dlsym(RTLD_DEFAULT, "printf")), "other libraries' symbols are untouched");
  Check(dlsym(RTLD_NEXT, "printf") != nullptr, "RTLD_NEXT lookups still find the next object's");

  // Calls: arguments intact, the gate's depth 1 inside, 0 after.
  Check(reinterpret_cast<CUresult (*)(unsigned)>(fns[0])(0) == CUDA_SUCCESS && *last_depth == 1,
        "cuInit ran inside the gate");
  // cuLaunchKernel with every argument k times its position: a checksum of
  // sum(w * w * k) for w = 1..9, 285 k.
  auto launch = [&](unsigned k) {
    unsigned sum = 0;
    void* params[] = {&sum};
    CUresult r = reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                               unsigned, CUstream, void**, void**)>(fns[2])(
        reinterpret_cast<CUfunction>(uintptr_t{9} * k), k, 2 * k, 3 * k, 4 * k, 5 * k, 6 * k, 7 * k,
        reinterpret_cast<CUstream>(uintptr_t{8} * k), params, nullptr);
    return r == CUDA_SUCCESS && sum == 285 * k && *last_depth == 1;
  };
  Check(launch(1), "cuLaunchKernel's eleven arguments arrived intact");
  // The calls after a thread's first take the stubs' fast path (with the
  // preloaded library's thread-local data).
  for (unsigned k = 2; k <= 4; ++k) {
    char what[96];
    snprintf(what, sizeof what, "cuLaunchKernel call %u: arguments intact, inside the gate", k);
    Check(launch(k), what);
  }
  bool other_thread_ok = false;
  std::thread([&] { other_thread_ok = launch(5) && launch(6) && gate->depth() == 0; }).join();
  Check(other_thread_ok, "a second thread's calls, its first and then the fast path");
  // A driver call inside a driver call counts as nested.
  Check(reinterpret_cast<CUresult (*)()>(fns[3])() == CUDA_SUCCESS && *last_depth == 2,
        "a wrapped call inside a wrapped call is nested (depth 2)");
  Check(gate->depth() == 0, "every call left the gate");
  printf("checked %d, failed %d, stubs %llu\n", g_checked, g_failed,
         static_cast<unsigned long long>(gate->stubs_made()));
  return g_failed == 0 ? 0 : 1;
}
