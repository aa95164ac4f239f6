// The shift that keeps CUPTI's correlation ids unique over a capture that
// detaches.
//
// CUPTI numbers the calls it sees (correlation ids: what ties each GPU op to
// the call that launched it, and the builder's join key) from its
// initialisation on, and a cuptiFinalize starts the count again. After a
// detach (cupti_detach.h) the next attach gives the same ids to other calls:
// on an H100 every `--sample 100` cycle's calls were numbered from 22 up, and
// the builder tied later steps' ops to earlier steps' calls, their backward
// passes left out of their windows (2026-12-06). So every id the recorder
// writes is shifted past the ids of the CUPTI sessions before it: unique and
// rising over the capture, as in one that never detached. The first
// session's ids are CUPTI's own, so a capture that never detaches is
// unchanged.
//
// shift() is read where an id is written: CUPTI's buffers take the shift of
// the session they were lent in (cupti_buffers.h), callback records the one
// of the moment (api_records.h, capture_streams.h). Saw() is told the
// highest id written (the buffer walk, the callback records' hand-over).
// NextSession(), at an attach after a finalize and before CUPTI numbers any
// call, moves the shift past everything seen: the detach's flush walked
// every buffer of the sessions before or the finalize's reclaim dropped it,
// and the attach first hands over the callback records and lets a running
// completion end (CuptiSession::Attach). A buffer of an earlier session
// walked later anyway is counted (CuptiBuffers::correlation_overlaps).
//
// Not shifted: the records of kinds the builder does not join by (MEMORY2,
// MEMORY_POOL), whose ids then repeat across sessions.
//
// Past 2^32 ids the shifted ids wrap: they repeat after four billion calls.
#ifndef GPUCAP_RECORDER_CORRELATION_SHIFT_H_
#define GPUCAP_RECORDER_CORRELATION_SHIFT_H_

#include <atomic>
#include <cstdint>

namespace gpucap::recorder {

class CorrelationShift {
 public:
  // Added to every non-zero id CUPTI gives in the current session.
  uint32_t shift() const { return shift_.load(std::memory_order_acquire); }
  // An id, shifted, that went into the capture. Any thread.
  void Saw(uint32_t shifted_id);
  // A CUPTI session begins after a finalize: its ids go past all seen.
  void NextSession();
  // CUPTI sessions so far, the first included.
  uint32_t sessions() const { return sessions_.load(std::memory_order_relaxed); }

  // Shifts `id` (0 means "no call" in CUPTI's records and stays 0).
  static uint32_t Apply(uint32_t id, uint32_t shift) { return id == 0 ? 0 : id + shift; }

 private:
  std::atomic<uint32_t> shift_{0};
  std::atomic<uint32_t> highest_{0};
  std::atomic<uint32_t> sessions_{1};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CORRELATION_SHIFT_H_
