// What the stubs' trampoline (driver_wrap_x86_64.S, assembly) knows of the
// entry gate's and the stubs' C++ data: the names, layouts and constants it
// reads and writes on its fast path. Included by the assembly and by
// entry_gate.cc / driver_wrap.cc, whose static_asserts hold the layouts to
// these numbers.
#ifndef GPUCAP_RECORDER_DRIVER_WRAP_ABI_H_
#define GPUCAP_RECORDER_DRIVER_WRAP_ABI_H_

// Nested wrapped calls a thread keeps return addresses for; deeper ones run
// unwrapped (driver_wrap.h).
#define GPUCAP_GATE_MAX_DEPTH 64

// gpucap_gate_state, the process's one gate word (uint32_t): 0 lets a call
// take the fast path; any bit sends it to EntryGate::Enter.
#define GPUCAP_GATE_CLOSED 1     // closed: new outermost calls of others wait
#define GPUCAP_GATE_SYMMETRIC 2  // no membarrier: every call takes Enter's fenced path

// EntryGate::t_slot (initial-exec TLS): the thread's Slot, or null before
// its first call. Slot's depth word (uint32_t) is at offset 0: its low 16
// bits are the thread's wrapped calls in flight, its high 16 bits count its
// entries (modulo 65536). An entry adds GPUCAP_GATE_ENTRY, a leave takes 1
// away: one instruction each way, as a plain depth count costs, and a word
// unchanged from one look to the next with calls in flight is one call that
// has not returned (a blocked call: EntryGate::CallsInFlight).
#define GPUCAP_GATE_SLOT_TLS _ZN6gpucap4gate9EntryGate6t_slotE
#define GPUCAP_GATE_SLOT_DEPTH 0
#define GPUCAP_GATE_ENTRY 0x10001
#define GPUCAP_GATE_DEPTH_MASK 0xffff

// gpucap_gate_frames (initial-exec TLS): the caller return addresses of the
// thread's wrapped calls in flight, a uint32_t count at offset 0 and the
// addresses from offset 8.
#define GPUCAP_GATE_FRAMES_N 0
#define GPUCAP_GATE_FRAMES_RET 8

#endif  // GPUCAP_RECORDER_DRIVER_WRAP_ABI_H_
