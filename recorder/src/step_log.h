// Steps that closed, handed from the application's threads to the control
// thread (step_watch.h decides from them). Each thread that steps has a
// slot of its own (found through its RangeLog::Writer, no thread_local): the
// steps it has open, owner only, and a ring of the last kSlots closes that
// the control thread drains each pass. A close costs its thread a copy of
// the step's name and a few relaxed stores; it never waits. A thread that
// closes more than kSlots steps between two drains (50 ms) loses the oldest
// to the watch, counted in lost(); the latest close is always seen.
#ifndef GPUCAP_RECORDER_STEP_LOG_H_
#define GPUCAP_RECORDER_STEP_LOG_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "step_watch.h"

namespace gpucap::recorder {

class StepLog {
 public:
  static constexpr size_t kSlots = 64;
  static constexpr size_t kNameWords = 8;  // names past 63 bytes are cut

  class Slot {
   public:
    // The owner thread's side: a matching push opened a step, a pop of
    // `domain` closed the newest step open in that domain (false: none was).
    void Open(uint64_t domain, uint64_t start_ns, std::string_view name);
    bool Close(uint64_t domain, uint64_t end_ns);

   private:
    friend class StepLog;
    struct Opened {
      uint64_t domain;
      uint64_t start_ns;
      std::array<uint64_t, kNameWords> name;
    };
    struct Closed {
      std::atomic<uint64_t> end_ns{0};
      std::atomic<uint64_t> duration_ns{0};
      std::array<std::atomic<uint64_t>, kNameWords> name{};
    };
    uint32_t os_tid_ = 0;
    std::vector<Opened> open_;                // owner only
    std::array<Closed, kSlots> closed_;
    std::atomic<uint64_t> claimed_{0};        // closes begun (seqlock: written before the slot)
    std::atomic<uint64_t> published_{0};      // closes complete
    uint64_t drained_ = 0;                    // the control thread's
  };

  // The calling thread's slot, made once (under a lock); lives as long as
  // the log.
  Slot* Register(uint32_t os_tid);

  // The control thread's: the steps closed since the last drain, appended.
  void Drain(std::vector<StepEnd>* out);
  uint64_t lost() const { return lost_; }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Slot>> slots_;  // guarded by mu_
  uint64_t lost_ = 0;                         // the control thread's
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_STEP_LOG_H_
