// Which runtime and driver API callbacks the recorder's one CUPTI subscriber
// has on. Several parts want overlapping ids: a capture range the profiler
// calls, capture streams the stream-ordered calls while a capture is open,
// API records (GPUCAP_API_RECORDS=callback) the lean calls while recording,
// stream facts the calls that make streams.
// An id is on while any part wants it, so one part switching off never
// silences another (capture streams switching the launch ids off at a
// capture's end would otherwise end the launch records).
#ifndef GPUCAP_RECORDER_CALLBACK_SWITCH_H_
#define GPUCAP_RECORDER_CALLBACK_SWITCH_H_

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gpucap::recorder {

class CallbackSwitch {
 public:
  enum Owner : uint8_t {
    kGate = 1,
    kCaptureBoundaries = 2,
    kCaptureStreamOps = 4,
    kApiRecords = 8,
    kStreamFacts = 16,
  };
  // cuptiEnableCallback's shape; tests pass their own.
  using EnableFn = int (*)(uint32_t enable, void* subscriber, uint32_t domain, uint32_t cbid);

  explicit CallbackSwitch(EnableFn enable = nullptr);  // nullptr: cuptiEnableCallback

  // `owner` wants (domain, cbid) on or no longer. Idempotent per owner; CUPTI
  // is called only when the id's first owner comes or its last one goes, and
  // only while a subscriber is attached.
  void Want(Owner owner, uint32_t domain, uint32_t cbid, bool on);

  // A subscriber (again): every wanted id on. Also after the API domains were
  // switched on and off whole (a detach called off), which forgets ids.
  void Attach(void* subscriber);
  // The subscriber is gone (cuptiFinalize). What is wanted is kept for the
  // next Attach.
  void Detach();

  uint64_t calls() const;  // CUPTI calls made, for tests and stats

 private:
  static uint64_t Key(uint32_t domain, uint32_t cbid) { return (uint64_t{domain} << 32) | cbid; }

  EnableFn enable_;
  mutable std::mutex mu_;
  void* subscriber_ = nullptr;
  std::unordered_map<uint64_t, uint8_t> owners_;  // ids with at least one owner
  uint64_t calls_ = 0;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CALLBACK_SWITCH_H_
