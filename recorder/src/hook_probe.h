// A diagnostic of the runtime-callback hooks table (export_tables.h), on
// with GPUCAP_GATE_HOOK_PROBE=1 only: each call of the table's functions,
// as libcudart makes them, is written to stderr (slot, thread, the six
// argument registers, 32 bytes at each of the first two, and the result),
// so that which slot libcudart calls at a runtime API's enter and which at
// its exit can be read off a known program (tests/gpu/hook_probe.cu).
//
// What it showed (driver 580.159, CUDA 13.0, static and shared libcudart
// alike; docs/recorder-detach.md): the table is seven words; words 2 and 6
// are called once, at the runtime's start; for each runtime call made while
// CUPTI listens, word 4 is called at the enter and again at the exit with
// (state, record), the record's first 32-bit word 0 at the enter and 1 at
// the exit and the record at the same stack address both times, and word 1
// after each with the call's callback id (0x137 for cudaGraphLaunch); word
// 3 once before the enter's word 1 in stream calls. With CUPTI not
// attached (paused before any recording) none is called.
#ifndef GPUCAP_RECORDER_HOOK_PROBE_H_
#define GPUCAP_RECORDER_HOOK_PROBE_H_

#include <cstdint>

namespace gpucap::gate {

bool HookProbeOn();
// `copy`: the wrapped table (size word first); its function entries are
// replaced by probes that call what they held.
void InstallHookProbes(uintptr_t* copy, uint64_t bytes);

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_HOOK_PROBE_H_
