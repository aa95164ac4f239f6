// The runtime's entry points through the entry gate (entry_gate.h,
// docs/recorder-detach.md): libgpucap_gate.so exports every function of
// libcudart.so.13 (runtime_entries.inc) as a stub that enters the gate,
// calls the runtime's own and leaves, so that a thread is held before the
// runtime begins a call and is in flight for the whole of it.
//
// Why: a thread held at a driver call inside a runtime call is held after
// the runtime began the call (and told CUPTI of it); held at the runtime's
// entry, the call starts after the finalize, as any call of a program paused
// from the start. (What crashed the H100 was another thing:
// CuptiSession::PauseActivity.)
//
// Contract:
// - The stubs carry the runtime's symbol version (gate.map): they stand in
//   for references to libcudart.so.13's functions only.
// - A stub resolves the runtime's function on its first call, in the
//   loaded libcudart.so.13 (dlopen with RTLD_NOLOAD, then dlvsym with the
//   runtime's version, else dlsym), and calls it through the gate's
//   trampoline: arguments, stack and results untouched (driver_wrap.h).
//   dlsym of one of these names in libcudart.so.13 gives the stub.
// - A call before any libcudart.so.13 is loaded (a program asking the
//   global scope for the name) returns cudaErrorInsufficientDriver
//   (35), and a fixed text for cudaGetErrorName/cudaGetErrorString.
// - Only a runtime loaded as libcudart.so.13 is covered: a runtime linked
//   statically into a program or a library (nvcc's default; cuBLAS and
//   NCCL carry their own) is held at its driver calls and its hooks table
//   only, as before these stubs.
#ifndef GPUCAP_RECORDER_RUNTIME_ENTRIES_H_
#define GPUCAP_RECORDER_RUNTIME_ENTRIES_H_

#include <cstdint>

namespace gpucap::gate {

// The runtime library the stubs cover.
inline constexpr char kRuntimeLibrary[] = "libcudart.so.13";

// Stubs whose function was resolved so far, and those found nowhere.
struct RuntimeEntryCounts {
  uint64_t resolved = 0;
  uint64_t missing = 0;
};
RuntimeEntryCounts runtime_entry_counts();
// Whether `name` is one of the stubs' (tests).
bool IsRuntimeEntry(const char* name);

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_RUNTIME_ENTRIES_H_
