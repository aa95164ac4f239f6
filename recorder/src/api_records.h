// Runtime and driver API records made by the recorder from CUPTI's callback
// API (GPUCAP_API_RECORDS=callback) instead of CUPTI's RUNTIME and DRIVER
// activity records: at a lean call's ENTER the thread notes CUPTI's clock,
// at its EXIT it appends a CUpti_ActivityAPI record (kind, callback id,
// start, end, process, thread, correlation id, return value) to a buffer of
// its own, with no lock anyone else waits on. The records have CUPTI's own
// layout and go out through the same path as CUPTI's completed buffers, so
// the capture and the builder cannot tell them apart: launch flows (the
// correlation id is CUPTI's, the one its kernel records carry), the NVTX
// join and thread lanes come out as before.
//
// Why it exists: on the launch path CUPTI's API activity records cost more
// than its kernel records, and the yardstick's kernel_cb floor (launch
// callbacks into a ring) looked cheaper. Measured on the H200 it is not:
// +17.8% +-3.6 per launch against CUPTI's records, whose recorder sits at the
// lean floor (bench/README.md, "API records from callbacks"). So it is off by
// default, kept for measuring again on other drivers and CUPTI versions.
//
// Buffers come from the recorder's pool; a full one is handed over by the
// thread that filled it, the rest by Collect (the control thread, every
// second, and at a pause or stop). With no buffer free a record is dropped
// and counted, never waited for.
#ifndef GPUCAP_RECORDER_API_RECORDS_H_
#define GPUCAP_RECORDER_API_RECORDS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "thread_buffers.h"

namespace gpucap::recorder {

class ApiRecords {
 public:
  // A buffer to fill (nullptr: none free) and the hand-off of a filled one.
  using Take = std::function<uint8_t*()>;
  using Hand = std::function<void(uint8_t* buffer, size_t valid)>;
  // (domain, callback id) with CUPTI's numbers: CUPTI_CB_DOMAIN_RUNTIME_API
  // records as CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_CB_DOMAIN_DRIVER_API as DRIVER.
  using Id = std::pair<uint32_t, uint32_t>;

  ApiRecords(std::vector<Id> ids, size_t buffer_bytes, uint32_t process_id, Take take, Hand hand);
  ~ApiRecords();

  const std::vector<Id>& ids() const { return ids_; }
  bool Records(uint32_t domain, uint32_t cbid) const;

  // Recording or not; calls whose ENTER came while off make no record.
  void SetOn(bool on) { on_.store(on, std::memory_order_release); }
  bool on() const { return on_.load(std::memory_order_acquire); }

  // One callback of a recorded id, on the calling thread. `now`: CUPTI's
  // clock; `thread_id`: what CUPTI would write as the record's thread. A
  // driver call inside a runtime call makes no record, as in CUPTI's own.
  void OnEnter(uint32_t domain, uint32_t correlation, uint64_t now);
  void OnExit(uint32_t domain, uint32_t cbid, uint32_t correlation, uint32_t return_value, uint64_t now,
              uint32_t thread_id);

  // Hands every thread's partly filled buffer over.
  void Collect();

  // Records handed over so far (those still in a thread's buffer are not).
  uint64_t records() const { return records_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // EXITs with no ENTER seen (switched on inside the call, or nesting deeper
  // than a thread's slots).
  uint64_t unmatched() const { return unmatched_.load(std::memory_order_relaxed); }

  struct ThreadBuffer;

 private:
  void HandLocked(ThreadBuffer* b);

  const std::vector<Id> ids_;
  std::vector<uint8_t> runtime_, driver_;  // by callback id: recorded or not
  const size_t buffer_bytes_;
  const uint32_t process_id_;
  Take take_;
  Hand hand_;
  std::atomic<bool> on_{false};
  std::unique_ptr<ThreadBuffers<ThreadBuffer>> buffers_;
  std::atomic<uint64_t> records_{0}, dropped_{0}, unmatched_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_API_RECORDS_H_
