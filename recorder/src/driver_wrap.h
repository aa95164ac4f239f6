// Wrapping driver entry points of unknown signature in the entry gate
// (entry_gate.h): Wrap(fn) returns a stub that, called with any arguments,
// enters the gate, calls fn with those arguments untouched (registers and
// stack), leaves the gate and returns fn's result to the caller.
//
// How: each stub loads fn's address into r11 and jumps to one shared
// trampoline (driver_wrap_x86_64.S), which enters the gate, replaces its
// caller's return address with its own (the caller's is kept on a
// per-thread stack, so that stack arguments stay where fn expects them),
// calls fn, leaves the gate and returns to the saved address with fn's
// results as fn left them (rax rdx xmm0 xmm1; every driver API function
// returns CUresult in eax).
//
// Cost on the call path: 27 instructions a call on the fast path, the stub
// included (counted by callgrind: bench/gate/call_cost.sh; 112 before it
// existed): taken once the thread has called through the gate before
// (has its slot), while the gate is open and runs the membarrier protocol,
// and fewer than 64 wrapped calls of the thread are in flight
// (GPUCAP_GATE_MAX_DEPTH, driver_wrap_abi.h). It is
// EntryGate::Enter's asymmetric path in assembly (depth + 1, then the gate
// word); it changes r10 and r11 only (rax is borrowed and given back),
// reads the gate word and writes only the thread's own data. Otherwise the
// full path: every argument register saved around EntryGate::Enter
// (registration, the wait while closed, exemptions) and Leave, about 130
// instructions when nothing waits.
// Deeper than 64 nested wrapped calls on one thread, the stub jumps
// to fn unwrapped (counted: unwrapped_calls()).
//
// Stubs are written once into a double mapping of one memory file (a
// writable view and an executable one), never made writable while
// executable; they live until the process ends. Wrap is idempotent per
// fn and thread-safe; IsStub tells a stub from any other address.
// x86-64 Linux only; elsewhere Wrap returns fn (and Supported() false).
#ifndef GPUCAP_RECORDER_DRIVER_WRAP_H_
#define GPUCAP_RECORDER_DRIVER_WRAP_H_

#include <cstdint>

namespace gpucap::gate {

bool WrapSupported();
void* Wrap(void* fn);
bool IsStub(const void* p);
// The function a stub calls, or nullptr when p is not a stub.
void* StubTarget(const void* p);
uint64_t stubs_made();
uint64_t unwrapped_calls();
// The calling thread's calls that took the trampoline's full path rather
// than its fast one, the too-deep included (tests).
uint64_t full_path_calls();

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_DRIVER_WRAP_H_
