// Wrapping driver entry points of unknown signature in the entry gate
// (entry_gate.h): Wrap(fn) returns a stub that, called with any arguments,
// enters the gate, calls fn with those arguments untouched (registers and
// stack), leaves the gate and returns fn's result to the caller.
//
// How: each stub loads fn's address into r11 and jumps to one shared
// trampoline (driver_wrap_x86_64.S), which saves the argument registers,
// enters the gate, replaces its caller's return address with its own (the
// caller's is kept on a per-thread stack, so that stack arguments stay where
// fn expects them), calls fn, leaves the gate and returns to the saved
// address. Every driver API function returns CUresult in eax: rax and rdx
// are kept across the leave, vector registers are not.
// Deeper than kMaxDepth nested wrapped calls on one thread, the stub jumps
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

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_DRIVER_WRAP_H_
