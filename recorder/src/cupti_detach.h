// The detach sequence of a pause: close the entry gate (entry_gate.h), let
// CUPTI go (cuptiFinalize) while no other thread is in CUDA, open the gate
// (docs/recorder-detach.md). Owns the attempt, its bound and its record:
// how long each detach held the process's new CUDA calls, how often it gave
// up because calls stayed in flight, and when it may try again.
//
// CUPTI's other changes of state where pauses detach (the attach after a
// finalize, the subscriber's callbacks, the activity kinds) go through the
// same gate (Switch): CUPTI 13.0 changes the tables its callbacks dispatch
// from while other threads' launches read them, and the 64-thread stress
// crashed inside that dispatch (a SIGSEGV, std::bad_function_call) with
// the finalize held out of it ("Every change of CUPTI's state under the
// gate", docs/recorder-detach.md).
//
// Runs on the recorder's control thread. Without the gate in the process
// (libgpucap_gate.so not preloaded, or no driver function went through it),
// or when libcudart got the runtime-callback hooks table unwrapped
// (export_tables.h), nothing is finalized: Run answers kNoGate.
#ifndef GPUCAP_RECORDER_CUPTI_DETACH_H_
#define GPUCAP_RECORDER_CUPTI_DETACH_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gate_api.h"

namespace gpucap::recorder {

class CuptiDetach {
 public:
  enum class Outcome {
    kDetached,  // finalized; the gate was held for the hold time recorded
    kGaveUp,    // calls stayed in flight past the bound: try at a later tick
    kBusy,      // the finalize declined (a lock taken, recording again)
    kFailed,    // cuptiFinalize returned an error
    kNoGate,    // nothing can vouch that no other thread is in CUDA
  };
  enum class Finalized { kYes, kBusy, kError };

  // The process's gate, or nullptr when libgpucap_gate.so is not there.
  static const GpucapEntryGateV1* FindGate();

  // `gate` may be nullptr (then every Run is kNoGate). `exempt`: code whose
  // driver calls pass the closed gate (libcupti: CUPTI's own calls while it
  // finalizes), as [begin, end) pairs.
  CuptiDetach(const GpucapEntryGateV1* gate, std::chrono::microseconds wait,
              const std::vector<std::pair<const void*, const void*>>& exempt = {});

  // One attempt. `finalize` runs with the gate closed and every other
  // thread out of CUDA.
  Outcome Run(const std::function<Finalized()>& finalize);

  // Runs `change` with the gate closed and every other thread out of CUDA,
  // on any thread (the closer's own calls pass; closers take turns):
  // kMade; kGaveUp, with nothing run, when calls stayed in flight past the
  // bound (the caller leaves CUPTI as it is, or asks again); kNoGate, with
  // nothing run, when no gate can vouch (then nothing ever detaches either,
  // and the caller makes the change as it would without a detach). Its
  // holds are counted apart from the detaches'.
  enum class Switched { kMade, kGaveUp, kNoGate };
  Switched Switch(const std::function<void()>& change);

  // A new pause: its attempts count from zero. Retry says whether another
  // attempt is due (gave up or busy, fewer than kMaxAttempts this pause).
  void NewPause();
  bool RetryDue() const;
  // An attempt given up before it could run (the flush before it did not
  // get the gate): counted as Run's kGaveUp is, and tried again likewise.
  void CountGiveUp();
  static constexpr int kMaxAttempts = 20;

  // cupti_detaches, cupti_detach_give_ups, cupti_detach_busy,
  // cupti_detach_failures, cupti_detach_hold_ns_p50/p99/max,
  // cupti_detach_stall_ns_p50/p99/max, cupti_detach_wait_ns_max,
  // cupti_switches_gated, cupti_switch_give_ups,
  // cupti_switch_hold_ns_p50/p99/max, cupti_switch_stall_ns_p50/p99/max,
  // entry_gate_stubs, entry_gate_held_calls, entry_gate_hook_entries,
  // entry_gate_tables_unwrapped.
  void Stats(std::vector<std::pair<std::string, uint64_t>>* extra) const;

  // The q-quantile (0..1) of `samples` by nearest rank; 0 when empty.
  static uint64_t Quantile(std::vector<uint64_t> samples, double q);

 private:
  bool HooksUnwrapped() const;
  bool Usable() const;  // a gate something went through, hooks wrapped
  // A gate held: from closing to opening (the wait for calls in flight
  // included), and the stall, how long the first call held waited: what
  // the program felt (a thread in a synchronize when the gate closed is
  // not held by it). The stall is the hold where the gate library cannot
  // tell it (older than open_stall).
  struct Hold {
    uint64_t hold_ns = 0;
    uint64_t stall_ns = 0;
  };
  // Closes the gate (waiting up to the bound for the calls in flight),
  // runs `inside`, opens it; nothing (and `inside` not run) when calls
  // stayed in flight past the bound. `waited_ns`: from closing to
  // quiescence or to giving up.
  std::optional<Hold> Held(const std::function<void()>& inside, uint64_t* waited_ns);

  const GpucapEntryGateV1* gate_;
  std::chrono::microseconds wait_;
  mutable std::mutex mu_;
  std::vector<uint64_t> hold_ns_, stall_ns_;  // one per detach (bounded)
  uint64_t detaches_ = 0, give_ups_ = 0, busy_ = 0, failures_ = 0, no_gate_ = 0;
  uint64_t wait_ns_max_ = 0;
  // Switch's record, under switch_record_mu_ (a switch may run beside an
  // attempt: the gate, not mu_, makes them take turns).
  mutable std::mutex switch_record_mu_;
  std::vector<uint64_t> switch_hold_ns_, switch_stall_ns_;
  uint64_t switches_ = 0, switch_give_ups_ = 0;
  int attempts_ = 0;
  bool pending_ = false;  // the last attempt of this pause did not detach
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CUPTI_DETACH_H_
