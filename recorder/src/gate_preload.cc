// libgpucap_gate.so, preloaded by `gpucap record`: routes the process's CUDA
// driver entry points through the entry gate (entry_gate.h,
// driver_wrap.h), the way GPU-sharing layers (HAMi-core's libvgpu) do:
// - dlsym: a driver function looked up in libcuda (libcudart, static or
//   shared, looks up cuGetProcAddress[_v2] this way; so do Triton's
//   launchers for cuLaunchKernelEx) comes back wrapped, and
//   cuGetProcAddress[_v2] as gpucap's own;
// - cuGetProcAddress, cuGetProcAddress_v2 (exported here too, for programs
//   linked against libcuda): every function they hand out comes back wrapped.
// Not covered: calls bound directly to libcuda's other exported symbols (a
// program linked with -lcuda calling cuLaunchKernel by name) and the
// tables of cuGetExportTable (docs/recorder-detach.md says what that means).
// In a process without CUDA it costs one dlsym check per lookup.
#include <cuda.h>
#include <dlfcn.h>
// cuda.h maps the name to _v2; the exported cuGetProcAddress keeps the
// first ABI (no status argument).
#undef cuGetProcAddress

#include <atomic>
#include <cstring>

#include "driver_wrap.h"
#include "entry_gate.h"
#include "gate_api.h"

using gpucap::gate::EntryGate;
using gpucap::gate::Wrap;

namespace {

using DlsymFn = void* (*)(void*, const char*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

std::atomic<GetProcV1> g_real_v1{nullptr};
std::atomic<GetProcV2> g_real_v2{nullptr};

DlsymFn RealDlsym();

bool InDriver(const void* p) {
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, "libcuda.so", 10) == 0;
}

// The real cuGetProcAddress[_v2]: from a lookup the program made, or from
// libcuda (loaded by whoever calls us).
template <typename Fn>
Fn Real(std::atomic<Fn>* slot, const char* name) {
  Fn f = slot->load(std::memory_order_acquire);
  if (f) return f;
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h) f = reinterpret_cast<Fn>(RealDlsym()(h, name));
  if (f) slot->store(f, std::memory_order_release);
  return f;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                                                 cuuint64_t flags);
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                                                    cuuint64_t flags,
                                                                    CUdriverProcAddressQueryResult* status);

}  // extern "C"

namespace {

// What a lookup hands out: gpucap's cuGetProcAddress for the real one, a
// stub for every other driver function.
void* Route(const char* symbol, void* fn) {
  if (!fn) return fn;
  // Ours already (a driver whose own references bind to the preloaded
  // names): never taken for the real one.
  if (fn == reinterpret_cast<void*>(&cuGetProcAddress_v2) || fn == reinterpret_cast<void*>(&cuGetProcAddress)) {
    return fn;
  }
  if (fn == reinterpret_cast<void*>(g_real_v2.load()) ||
      (symbol && std::strcmp(symbol, "cuGetProcAddress_v2") == 0)) {
    if (!g_real_v2.load()) g_real_v2.store(reinterpret_cast<GetProcV2>(fn));
    return reinterpret_cast<void*>(&cuGetProcAddress_v2);
  }
  if (fn == reinterpret_cast<void*>(g_real_v1.load())) return reinterpret_cast<void*>(&cuGetProcAddress);
  if (symbol && std::strcmp(symbol, "cuGetProcAddress") == 0) {
    // By name through cuGetProcAddress: which ABI depends on the version
    // asked for; tell them apart by the address.
    if (fn == reinterpret_cast<void*>(Real(&g_real_v2, "cuGetProcAddress_v2"))) {
      return reinterpret_cast<void*>(&cuGetProcAddress_v2);
    }
    if (!g_real_v1.load()) g_real_v1.store(reinterpret_cast<GetProcV1>(fn));
    return reinterpret_cast<void*>(&cuGetProcAddress);
  }
  return Wrap(fn);
}

// --- the C interface for the recorder ---
int GateClose(uint64_t bound_ns, uint32_t* in_flight, uint64_t* waited_ns) {
  gpucap::gate::CloseResult r = EntryGate::Process().Close(std::chrono::nanoseconds(bound_ns));
  if (in_flight) *in_flight = r.in_flight;
  if (waited_ns) *waited_ns = r.waited_ns;
  return r.closed ? 1 : 0;
}
void GateOpen() { EntryGate::Process().Open(); }
void GateExempt(const void* b, const void* e) { EntryGate::Process().AddExemptRange(b, e); }
uint64_t GateStubs() { return gpucap::gate::stubs_made(); }
uint64_t GateHeld() { return EntryGate::Process().held(); }
uint32_t GateDepth() { return EntryGate::Process().depth(); }
int GateIsStub(const void* p) { return gpucap::gate::IsStub(p) ? 1 : 0; }

const GpucapEntryGateV1 kGate = {sizeof(GpucapEntryGateV1), GateClose, GateOpen, GateExempt,
                                 GateStubs, GateHeld, GateDepth, GateIsStub};

}  // namespace

extern "C" {

// Set before main by the constructor below; read by dlsym's RTLD_NEXT path.
__attribute__((visibility("hidden"))) DlsymFn gpucap_real_dlsym = nullptr;

__attribute__((visibility("hidden"))) void* gpucap_gate_dlsym(void* handle, const char* name) {
  void* p = RealDlsym()(handle, name);
  if (!p || !name || name[0] != 'c' || name[1] != 'u' || !InDriver(p)) return p;
  return Route(name, p);
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  GetProcV1 real = Real(&g_real_v1, "cuGetProcAddress");
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn) *pfn = Route(symbol, *pfn);
  return r;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  GetProcV2 real = Real(&g_real_v2, "cuGetProcAddress_v2");
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn) *pfn = Route(symbol, *pfn);
  return r;
}

__attribute__((visibility("default"))) const GpucapEntryGateV1* gpucap_entry_gate_v1(void) {
  EntryGate::Process();  // made before any closer can ask
  return &kGate;
}

}  // extern "C"

namespace {

DlsymFn RealDlsym() {
  DlsymFn f = gpucap_real_dlsym;
  if (f) return f;
  // glibc 2.34 moved dlsym into libc with a new version; older ones have
  // only the first.
  f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  if (!f) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
  gpucap_real_dlsym = f;
  return f;
}

__attribute__((constructor(101))) void Init() {
  RealDlsym();
  EntryGate::Process();
}

}  // namespace
