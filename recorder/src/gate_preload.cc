// libgpucap_gate.so, preloaded by `gpucap record`: routes the process's CUDA
// driver entry points through the entry gate (entry_gate.h,
// driver_wrap.h), the way GPU-sharing layers (HAMi-core's libvgpu) do:
// - dlsym: a driver function looked up in libcuda (libcudart, static or
//   shared, looks up cuGetProcAddress[_v2] this way; so do Triton's
//   launchers for cuLaunchKernelEx) comes back wrapped, and
//   cuGetProcAddress[_v2] as gpucap's own;
// - cuGetProcAddress, cuGetProcAddress_v2 (exported here too, for programs
//   linked against libcuda): every function they hand out comes back wrapped.
// - cuGetExportTable: the runtime-callback hooks table (through which every
//   runtime API call reaches CUPTI) comes back as a copy whose functions are
//   wrapped (export_tables.h), except to libcupti itself;
//   GPUCAP_GATE_HOOKS=0 hands out the original (for measuring what the
//   wrapping prevents), and the gate then cannot vouch for quiescence.
// Not covered: calls bound directly to libcuda's other exported symbols (a
// program linked with -lcuda calling cuLaunchKernel by name) and the
// driver's other export tables (docs/recorder-detach.md).
// In a process without CUDA it costs one dlsym check per lookup.
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>
// cuda.h maps the name to _v2; the exported cuGetProcAddress keeps the
// first ABI (no status argument).
#undef cuGetProcAddress

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "code_ranges.h"
#include "driver_wrap.h"
#include "entry_gate.h"
#include "export_tables.h"
#include "gate_api.h"
#include "runtime_entries.h"

using gpucap::gate::EntryGate;
using gpucap::gate::Wrap;

namespace {

using DlsymFn = void* (*)(void*, const char*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
using GetExportTable = CUresult (*)(const void**, const CUuuid*);

std::atomic<GetProcV1> g_real_v1{nullptr};
std::atomic<GetProcV2> g_real_v2{nullptr};
std::atomic<GetExportTable> g_real_export{nullptr};

DlsymFn RealDlsym();

// Whether `p` lies in a loaded object whose file name starts with `prefix`.
bool InLibrary(const void* p, const char* prefix) {
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, prefix, std::strlen(prefix)) == 0;
}

bool InDriver(const void* p) { return InLibrary(p, "libcuda.so"); }

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

// An address in an executable segment of libcuda: a function of the
// driver's, as opposed to a data word of an export table.
bool InDriverCode(const void* p) { return InDriver(p) && gpucap::recorder::InCodeOf(p, p); }

bool HooksWrapped() {
  static const bool on = [] {
    const char* v = std::getenv("GPUCAP_GATE_HOOKS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

// The driver's cuGetExportTable as the program gets it: the runtime-callback
// hooks table wrapped (export_tables.h). libcupti gets the driver's own.
__attribute__((noinline)) CUresult GateGetExportTable(const void** table, const CUuuid* id) {
  GetExportTable real = g_real_export.load(std::memory_order_acquire);
  if (!real) return CUDA_ERROR_NOT_INITIALIZED;
  const void* caller = __builtin_return_address(0);
  EntryGate::Process().Enter(caller);
  CUresult r = real(table, id);
  EntryGate::Process().Leave();
  if (r != CUDA_SUCCESS || !table || !*table || !id || !gpucap::gate::IsRuntimeCallbackHooks(id->bytes)) return r;
  if (InLibrary(caller, "libcupti")) return r;
  if (!HooksWrapped()) {
    gpucap::gate::CountRefusedTable();
    return r;
  }
  if (const void* copy = gpucap::gate::WrapTable(*table, &InDriverCode)) *table = copy;
  return r;
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
  if (symbol && std::strcmp(symbol, "cuGetExportTable") == 0) {
    g_real_export.store(reinterpret_cast<GetExportTable>(fn), std::memory_order_release);
    return reinterpret_cast<void*>(&GateGetExportTable);
  }
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

// The gate's own stub for a runtime function (runtime_entries.h).
void* OwnRuntimeEntry(const char* name) {
  static void* self = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<const void*>(&GateGetExportTable), &info) || !info.dli_fname) return (void*)nullptr;
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  }();
  return self ? RealDlsym()(self, name) : nullptr;
}

// --- the C interface for the recorder ---
int GateClose(uint64_t bound_ns, uint32_t* in_flight, uint64_t* waited_ns) {
  gpucap::gate::CloseResult r = EntryGate::Process().Close(std::chrono::nanoseconds(bound_ns));
  if (in_flight) *in_flight = r.in_flight;
  if (waited_ns) *waited_ns = r.waited_ns;
  return r.closed ? 1 : 0;
}
void GateOpen() { EntryGate::Process().Open(); }
uint64_t GateOpenStall() { return EntryGate::Process().Open(); }
void GateExempt(const void* b, const void* e) { EntryGate::Process().AddExemptRange(b, e); }
uint64_t GateStubs() { return gpucap::gate::stubs_made(); }
uint64_t GateHeld() { return EntryGate::Process().held(); }
uint32_t GateDepth() { return EntryGate::Process().depth(); }
int GateIsStub(const void* p) { return gpucap::gate::IsStub(p) ? 1 : 0; }
void GateExportTables(uint64_t* tables, uint64_t* entries, uint64_t* refused) {
  gpucap::gate::ExportTableCounts c = gpucap::gate::export_table_counts();
  if (tables) *tables = c.tables_wrapped;
  if (entries) *entries = c.entries_wrapped;
  if (refused) *refused = c.tables_refused;
}

size_t GateCallsInFlight(GpucapGateCall* out, size_t max) { return EntryGate::Process().CallsInFlight(out, max); }

const GpucapEntryGateV1 kGate = {sizeof(GpucapEntryGateV1), GateClose,     GateOpen,         GateExempt,
                                 GateStubs,                 GateHeld,      GateDepth,        GateIsStub,
                                 GateExportTables,          GateCallsInFlight, GateOpenStall};

}  // namespace

extern "C" {

// Set before main by the constructor below; read by dlsym's RTLD_NEXT path.
__attribute__((visibility("hidden"))) DlsymFn gpucap_real_dlsym = nullptr;

__attribute__((visibility("hidden"))) void* gpucap_gate_dlsym(void* handle, const char* name) {
  void* p = RealDlsym()(handle, name);
  // The runtime's functions looked up by name get the gate's stubs, as
  // those the program links to do (runtime_entries.h).
  if (p && name && (std::strncmp(name, "cuda", 4) == 0 || std::strncmp(name, "__cuda", 6) == 0) &&
      InLibrary(p, gpucap::gate::kRuntimeLibrary) && gpucap::gate::IsRuntimeEntry(name)) {
    if (void* own = OwnRuntimeEntry(name)) return own;
  }
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
