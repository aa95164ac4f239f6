// The entry gate's C interface between libgpucap_gate.so (preloaded by
// `gpucap record`, where the gate and the driver interposition live) and the
// recorder library (which finds it with dlsym(RTLD_DEFAULT,
// "gpucap_entry_gate_v1") and detaches CUPTI through it). Fields are only
// ever added at the end; `size` says how many there are.
#ifndef GPUCAP_RECORDER_GATE_API_H_
#define GPUCAP_RECORDER_GATE_API_H_

#include <stddef.h>
#include <stdint.h>

extern "C" {

// A thread with a wrapped call in flight (calls_in_flight below).
struct GpucapGateCall {
  uint32_t os_tid;
  // Its entries (high 16 bits, modulo 65536) and calls in flight (low 16):
  // the same word seen twice means the same call all along (driver_wrap_abi.h).
  uint32_t word;
};

struct GpucapEntryGateV1 {
  size_t size;
  // EntryGate::Close: 1 closed (hold until open()), 0 gave up after bound_ns.
  int (*close)(uint64_t bound_ns, uint32_t* in_flight, uint64_t* waited_ns);
  void (*open)(void);
  void (*add_exempt_range)(const void* begin, const void* end);
  // Driver entry points handed out wrapped so far (0: nothing went through
  // the gate, so it cannot vouch for quiescence).
  uint64_t (*stubs_made)(void);
  uint64_t (*held)(void);
  uint32_t (*depth)(void);          // the calling thread's nesting depth
  int (*is_stub)(const void* fn);
  // The driver's export tables handed out as wrapped copies, the functions
  // among their entries, and the tables handed out as they were (then a
  // thread can be inside CUPTI unseen: never finalize). export_tables.h.
  void (*export_tables)(uint64_t* tables, uint64_t* entries, uint64_t* refused);
  // The threads other than the caller with a wrapped call in flight: up to
  // `max` into `out`; returns how many there are (call_watch.h).
  size_t (*calls_in_flight)(GpucapGateCall* out, size_t max);
  // open(), returning the stall: how long the first call held since the
  // last close waited, in ns (0: none was held). EntryGate::Open. Like
  // open(), only by the thread whose close() returned 1.
  uint64_t (*open_stall)(void);
};

typedef const GpucapEntryGateV1* (*GpucapEntryGateV1Fn)(void);

// Whether `gate` (its `size`) has the field `member`: a gate library older
// than the recorder lacks the fields added after it was built.
#define GPUCAP_GATE_HAS(gate, member) \
  ((gate)->size >= offsetof(GpucapEntryGateV1, member) + sizeof((gate)->member))

}  // extern "C"

#endif  // GPUCAP_RECORDER_GATE_API_H_
