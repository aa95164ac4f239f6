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
#include <cstdlib>
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
  // Export tables: the runtime-callback hooks table comes back as a copy
  // whose functions are wrapped; its data words and every other table as
  // the driver made them.
  using GetExportTable = CUresult (*)(const void**, const CUuuid*);
  void* get_table = nullptr;
  Dl_info where{};
  Check(get("cuGetExportTable", &get_table, 13000, 0, &q) == CUDA_SUCCESS && get_table &&
            dladdr(get_table, &where) && where.dli_fname && strstr(where.dli_fname, "libgpucap_gate") &&
            get_table == dlsym(h, "cuGetExportTable"),
        "cuGetExportTable through cuGetProcAddress_v2 and dlsym is gpucap's own");
  const CUuuid hooks_id = {{static_cast<char>(0xa0), static_cast<char>(0x94), 0x79, static_cast<char>(0x8c), 0x2e,
                            0x74, 0x2e, 0x74, static_cast<char>(0x93), static_cast<char>(0xf2), 0x08, 0x00, 0x20,
                            0x0c, 0x0a, 0x66}};
  const CUuuid other_id = {{1, 2, 3}};
  const void* hooks = nullptr;
  const void* other = nullptr;
  // The runtime (fake_cudart.cc, a libcudart.so.13): its functions looked up
  // by name are the gate's stubs, which find the runtime's own and run it
  // inside the gate; it asks for the hooks table from inside itself.
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  Check(rt != nullptr, "the stand-in runtime loads");
  auto device_count = rt ? reinterpret_cast<int (*)(int*)>(dlsym(rt, "cudaGetDeviceCount")) : nullptr;
  Dl_info rt_where{};
  Check(device_count && dladdr(reinterpret_cast<void*>(device_count), &rt_where) && rt_where.dli_fname &&
            strstr(rt_where.dli_fname, "libgpucap_gate"),
        "dlsym(libcudart, cudaGetDeviceCount) is the gate's stub");
  int depth_in_runtime = -1;
  Check(device_count && device_count(&depth_in_runtime) == 0 && depth_in_runtime == 1 && gate->depth() == 0,
        "a runtime call through its stub runs inside the gate (depth 1) and leaves it");
  auto driver_version = rt ? reinterpret_cast<int (*)(int*)>(dlsym(rt, "cudaDriverGetVersion")) : nullptr;
  int version = 0;
  Check(driver_version && driver_version(&version) == 0 && version == 13000,
        "the runtime's own cuGetExportTable request, through its stub");
  auto* runtime_hooks = rt ? static_cast<const void* const*>(dlsym(rt, "fake_cudart_hooks")) : nullptr;
  auto* fake_hooks = static_cast<const void**>(dlsym(h, "fake_hooks_table"));
  auto* fake_other = dlsym(h, "fake_other_table");
  auto* hook_data = static_cast<uint64_t*>(dlsym(h, "fake_hook_data"));
  if (get_table && fake_hooks && fake_other && hook_data) {
    auto lookup = reinterpret_cast<GetExportTable>(get_table);
    const char* hooks_env = getenv("GPUCAP_GATE_HOOKS");
    // Asked from outside any libcudart.so.13 (a runtime linked statically,
    // as cuBLAS's is): the same table as the shared runtime's.
    const void* static_hooks = nullptr;
    Check(lookup(&static_hooks, &hooks_id) == CUDA_SUCCESS && runtime_hooks && static_hooks == *runtime_hooks,
          "a runtime linked statically gets the same hooks table as the shared one");
    hooks = runtime_hooks ? *runtime_hooks : nullptr;
    if (hooks_env && strcmp(hooks_env, "0") == 0) {
      // Not wrapped on request: handed out as the driver's, and counted, so
      // that the recorder knows it cannot finalize safely.
      Check(hooks == fake_hooks, "with GPUCAP_GATE_HOOKS=0 the hooks table is the driver's");
      Check(lookup(&other, &other_id) == CUDA_SUCCESS && other == fake_other, "another table comes back as it is");
      uint64_t tables = 0, entries = 0, refused = 0;
      gate->export_tables(&tables, &entries, &refused);
      Check(tables == 0 && refused == 2, "the gate counts both requests as handed out unwrapped");
    } else {
      Check(hooks && hooks != fake_hooks, "the runtime-callback hooks table comes back to the runtime as a copy");
      Check(lookup(&other, &other_id) == CUDA_SUCCESS && other == fake_other, "another table comes back as it is");
      if (hooks && hooks != fake_hooks) {
        auto* copy = static_cast<const void* const*>(hooks);
        Check(copy[0] == fake_hooks[0], "the copy keeps the size word");
        Check(gate->is_stub(copy[1]) && gate->is_stub(copy[3]), "the copy's functions are wrapped");
        Check(copy[2] == hook_data, "the copy's data word is the driver's");
        unsigned out = 0;
        reinterpret_cast<void (*)(unsigned*)>(copy[1])(&out);
        Check(out == 7 && *last_depth == 1, "a hook through the copy runs inside the gate");
        uint64_t sum = reinterpret_cast<uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                                     uint64_t, uint64_t)>(copy[3])(1, 2, 3, 4, 5, 6, 7, 8);
        Check(sum == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 && *last_depth == 1,
              "a hook's eight arguments (two on the stack) arrive intact");
        driver_version(&version);
        Check(*runtime_hooks == hooks, "the runtime's second request gets the same copy");
      }
      uint64_t tables = 0, entries = 0, refused = 0;
      gate->export_tables(&tables, &entries, &refused);
      Check(tables == 1 && entries == 2 && refused == 0, "the gate counts one table and its two functions wrapped");
    }
  } else {
    Check(false, "the fake driver's export tables are found");
  }
  Check(gate->depth() == 0, "every call left the gate");
  printf("checked %d, failed %d, stubs %llu\n", g_checked, g_failed,
         static_cast<unsigned long long>(gate->stubs_made()));
  return g_failed == 0 ? 0 : 1;
}
