// The buffers CUPTI records into: lent from a fixed pool (buffer_pool.h) on
// whatever thread CUPTI asks from, taken back complete, walked once to
// intern name pointers, note the threads they name and shift their
// correlation ids by the CUPTI session they were lent in (buffer_walk.h,
// correlation_shift.h), and handed to the writer, which gives them back to
// the pool.
//
// Never blocks the asking thread: an empty pool is a counted drop, and past
// half the pool the control thread is asked (never from here) to flush.
// After the recorder stopped, requests get no buffer and completions go
// straight back to the pool. Counts what the stats report (drops, buffers,
// string definitions) and how many completions have run, so that a flush
// can wait for CUPTI's completion thread to be done.
#ifndef GPUCAP_RECORDER_CUPTI_BUFFERS_H_
#define GPUCAP_RECORDER_CUPTI_BUFFERS_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "buffer_pool.h"
#include "correlation_shift.h"
#include "first_seen.h"
#include "gpucap/format/capture_writer.h"
#include "recorder_phase.h"
#include "string_interner.h"

namespace gpucap::recorder {

class CuptiBuffers {
 public:
  // `count` buffers of `bytes` each. `want_flush`: asks the control thread
  // for a flush of completed buffers; called from CUPTI's request, it must
  // not block.
  // `shift`: the correlation ids' shift of each CUPTI session; null keeps
  // CUPTI's ids.
  CuptiBuffers(size_t count, size_t bytes, format::CaptureWriter* writer, const RecorderPhase* phase,
               FirstSeen* seen, std::function<void()> want_flush, CorrelationShift* shift = nullptr);

  // CUPTI's buffer callbacks (cuptiActivityRegisterCallbacks), by way of
  // the recorder.
  void OnRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  void OnCompleted(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid,
                   size_t cupti_dropped);
  // A buffer of the pool the recorder filled itself (api_records.h: CUPTI's
  // layout, ids already shifted), never lent to CUPTI: walked and written
  // as a completed one.
  void OnFilled(uint8_t* buffer, size_t valid);

  // After a flush: waits, at most `limit`, until no completion is running
  // and none has come for two polls a millisecond apart.
  void WaitForCompletions(std::chrono::milliseconds limit);
  // Waits, at most `limit`, until no completion is running (none new is
  // waited for): a wait of nothing in the usual case.
  void WaitForRunningCompletions(std::chrono::milliseconds limit);

  // The buffers CUPTI dropped at a finalize, unreturned: a detaching pause
  // keeps the kinds on until the detach (CuptiSession::PauseActivity), so
  // CUPTI takes fresh buffers after the pause's flush, and without their
  // return the pool ran dry after seven --sample cycles on an H100 and
  // every later sampled step lost its records. TakeLent, right after
  // cuptiFinalize and before anything can attach again: the buffers lent
  // and not completed, forgotten as lent. GiveBack, later, off the hold:
  // zeroes them into the pool and counts them.
  std::vector<uint8_t*> TakeLent();
  void GiveBack(const std::vector<uint8_t*>& buffers);
  uint64_t reclaimed() const { return reclaimed_.load(); }
  // Completions of buffers not lent (taken back at a finalize): none is
  // expected; each one says CUPTI kept a buffer past its finalize.
  uint64_t completed_unlent() const { return completed_unlent_.load(); }
  // Buffers of an earlier CUPTI session walked after the correlation shift
  // moved past it whose ids reach the new shift: ids that may repeat in the
  // capture (GPUCAP_RECLAIM_AT_DETACH=0 leaves such buffers lent). None is
  // expected with the reclaim.
  uint64_t correlation_overlaps() const { return correlation_overlaps_.load(); }

  // A module's name memory may be reused once it unloads.
  void ForgetStrings() { strings_.Clear(); }

  BufferPool* pool() { return pool_.get(); }
  uint64_t cupti_dropped() const { return cupti_dropped_.load(); }
  uint64_t pool_empty() const { return pool_empty_.load(); }
  uint64_t buffers_completed() const { return buffers_completed_.load(); }
  uint64_t strings_dropped() const { return strings_dropped_.load(); }
  size_t strings_interned() { return strings_.size(); }

 private:
  struct Lent {
    uint8_t* buffer;
    uint32_t correlation_shift;  // of the CUPTI session it was lent in
  };
  // Walks (shifting CUPTI's ids by `correlation_shift`), writes, counts;
  // `ours`: a buffer the recorder filled (OnFilled), never late for a shift.
  void Deliver(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t valid, uint32_t correlation_shift,
               bool ours);

  format::CaptureWriter* const writer_;
  const RecorderPhase* const phase_;
  FirstSeen* const seen_;
  const std::function<void()> want_flush_;
  CorrelationShift* const shift_;
  std::unique_ptr<BufferPool> pool_;
  StringInterner strings_;
  std::atomic<uint64_t> cupti_dropped_{0};
  std::atomic<uint64_t> pool_empty_{0};
  std::atomic<uint64_t> buffers_completed_{0};
  std::atomic<uint64_t> strings_dropped_{0};
  std::atomic<int> in_completion_{0};
  std::atomic<uint64_t> completions_{0};
  std::atomic<uint64_t> reclaimed_{0};
  std::atomic<uint64_t> completed_unlent_{0};
  std::atomic<uint64_t> correlation_overlaps_{0};
  std::mutex lent_mu_;  // one lock per buffer lent or returned
  std::vector<Lent> lent_;  // lent to CUPTI, not yet completed
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CUPTI_BUFFERS_H_
