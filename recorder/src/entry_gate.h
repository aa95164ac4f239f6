// The entry gate: knows which threads are inside a CUDA driver call and can
// hold every new one out, so that cuptiFinalize runs with no other thread in
// CUDA or in CUPTI's hooks (docs/recorder-detach.md).
//
// Contract:
// - Enter()/Leave() bracket every driver call the process makes through a
//   wrapped entry point (driver_wrap.h; the stubs' fast path does their work
//   itself while the gate is open, and calls Enter() otherwise). They nest:
//   a driver call made inside another (from a CUPTI callback, from a wrapped
//   call's own work) is counted once per thread and never waits.
// - Close(bound) makes new outermost calls of other threads wait, then waits
//   up to `bound` for the calls in flight on other threads to leave. Either
//   it returns closed (no other thread in flight; new ones held until
//   Open()) or, past the bound, it opens again at once and reports how many
//   stayed in flight: a thread blocked in a synchronize stalls the others for
//   at most `bound`. The closing thread's own calls always pass.
// - Open() lets the held calls go; only after a Close() that returned closed.
//   One closer at a time (Close serialises closers). It returns the stall:
//   how long the first call held since that Close waited (0 when none was),
//   which is what the program felt, where the time from closing to opening
//   also counts the wait for calls in flight (a thread inside a synchronize
//   is not held by it).
// - A caller whose return address lies in an exempt range (libcupti: its own
//   driver calls while it finalizes) passes a closed gate.
// - After fork the child's gate is open, with only its one thread known.
//
// Cost on the call path: a thread-local load, a store of the thread's
// depth, then a load of the process's gate word and a branch (with
// membarrier(2)'s private expedited command; without it, a sequentially
// consistent store: an xchg on x86). The stubs (driver_wrap.h) do exactly
// this in assembly on their fast path and call Enter() only when the word
// is not 0 (closed, or no membarrier) or the thread has no slot yet; the
// two must stay one protocol (driver_wrap_abi.h names what they share).
#ifndef GPUCAP_RECORDER_ENTRY_GATE_H_
#define GPUCAP_RECORDER_ENTRY_GATE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "driver_wrap_abi.h"
#include "gate_api.h"

extern "C" {
// The process's gate word (GPUCAP_GATE_CLOSED | GPUCAP_GATE_SYMMETRIC): a
// global rather than a member, so that the stubs' assembly reads it at a
// fixed address. Written by the one EntryGate only.
extern __attribute__((visibility("hidden"))) std::atomic<uint32_t> gpucap_gate_state;
}

namespace gpucap::gate {

// A thread with a wrapped call in flight (EntryGate::CallsInFlight): its
// tid and its Slot's depth word, as the recorder gets them (gate_api.h).
using CallInFlight = GpucapGateCall;

struct CloseResult {
  bool closed = false;      // no other thread in flight; held until Open()
  uint32_t in_flight = 0;   // calls still in flight when it gave up
  uint64_t waited_ns = 0;   // from closing to quiescence or to giving up
};

class EntryGate {
 public:
  // The process's one gate.
  static EntryGate& Process();

  void Enter(const void* caller = nullptr) {
    Slot* s = t_slot;
    if (!s) s = Register();
    uint32_t d = s->depth.load(std::memory_order_relaxed);
    if (asymmetric_) {
      s->depth.store(d + GPUCAP_GATE_ENTRY, std::memory_order_relaxed);
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the closer's membarrier orders the rest
    } else {
      s->depth.store(d + GPUCAP_GATE_ENTRY, std::memory_order_seq_cst);
    }
    if ((d & GPUCAP_GATE_DEPTH_MASK) == 0 && (gpucap_gate_state.load(asymmetric_ ? std::memory_order_relaxed : std::memory_order_seq_cst) &
                   GPUCAP_GATE_CLOSED)) {
      WaitWhileClosed(s, caller);
    }
  }
  void Leave() {
    Slot* s = t_slot;
    s->depth.store(s->depth.load(std::memory_order_relaxed) - 1, std::memory_order_release);
  }

  CloseResult Close(std::chrono::nanoseconds bound);
  uint64_t Open();  // the stall, in ns

  // Callers in [begin, end) pass a closed gate. Up to four ranges.
  void AddExemptRange(const void* begin, const void* end);

  // The calling thread's nesting depth (tests).
  uint32_t depth() const {
    return t_slot ? t_slot->depth.load(std::memory_order_relaxed) & GPUCAP_GATE_DEPTH_MASK : 0;
  }
  // The threads other than the caller with a wrapped call in flight, up to
  // `max` of them into `out`; how many there are. A thread's `word` changes
  // with each call it enters or leaves (driver_wrap_abi.h), so the same word
  // seen twice, some time apart, is one call in flight all that time, or
  // exactly a multiple of 65,536 entries in between; call_watch.h asks for
  // the same word at every look over its whole bound (20 looks a second),
  // which no run of short calls keeps up. The tid is read before the word,
  // so a slot taken by a new thread in between pairs a new tid with its
  // own word.
  size_t CallsInFlight(CallInFlight* out, size_t max) const;
  uint64_t held() const { return held_.load(std::memory_order_relaxed); }  // calls that waited
  bool closed() const { return (gpucap_gate_state.load(std::memory_order_acquire) & GPUCAP_GATE_CLOSED) != 0; }
  bool asymmetric() const { return asymmetric_; }

  // In the child after fork (registered with pthread_atfork by Process()).
  void AfterForkInChild();

 private:
  struct alignas(64) Slot {
    std::atomic<uint32_t> depth{0};  // the stubs' assembly adds to it in place (driver_wrap_abi.h)
    std::atomic<bool> in_use{false};
    std::atomic<uint32_t> os_tid{0};  // the thread's, for CallsInFlight
  };
  static_assert(offsetof(Slot, depth) == GPUCAP_GATE_SLOT_DEPTH && sizeof(std::atomic<uint32_t>) == 4);
  static constexpr int kChunkSlots = 64;
  struct Chunk {
    Slot slots[kChunkSlots];
    std::atomic<Chunk*> next{nullptr};
  };

  EntryGate();
  Slot* Register();
  static void Unregister(void* slot);
  void WaitWhileClosed(Slot* s, const void* caller);
  bool Exempt(const void* caller) const;
  uint32_t InFlightOthers() const;
  void Barrier() const;

  // Read by the stubs' assembly as GPUCAP_GATE_SLOT_TLS.
  static thread_local Slot* t_slot __attribute__((tls_model("initial-exec")));

  bool asymmetric_ = false;  // membarrier registered
  std::atomic<long> owner_{0};  // the closing thread's tid
  std::atomic<uint64_t> held_{0};
  // steady_clock ns of the first call held since the last Close began (0:
  // none yet), and of that Close: a late arrival of an earlier closing
  // cannot stretch a stall past its own closing.
  std::atomic<int64_t> first_held_at_ns_{0};
  int64_t closed_at_ns_ = 0;  // the closer's
  std::atomic_flag closing_ = ATOMIC_FLAG_INIT;   // one closer
  std::atomic_flag registry_ = ATOMIC_FLAG_INIT;  // slot registration
  Chunk head_;
  static constexpr int kExempt = 4;
  std::atomic<uintptr_t> exempt_[kExempt][2] = {};
  std::atomic<int> exempt_count_{0};
};

}  // namespace gpucap::gate

#endif  // GPUCAP_RECORDER_ENTRY_GATE_H_
