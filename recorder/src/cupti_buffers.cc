#include "cupti_buffers.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "buffer_walk.h"

namespace gpucap::recorder {

CuptiBuffers::CuptiBuffers(size_t count, size_t bytes, format::CaptureWriter* writer, const RecorderPhase* phase,
                           FirstSeen* seen, std::function<void()> want_flush, CorrelationShift* shift)
    : writer_(writer),
      phase_(phase),
      seen_(seen),
      want_flush_(std::move(want_flush)),
      shift_(shift),
      pool_(std::make_unique<BufferPool>(count, bytes)) {}

void CuptiBuffers::OnRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  uint8_t* b = phase_->load(std::memory_order_acquire) == RecorderPhase::kStopped ? nullptr : pool_->Take();
  if (!b) {
    pool_empty_.fetch_add(1, std::memory_order_relaxed);
    *buffer = nullptr;
    *size = 0;
    return;
  }
  {
    // The shift now: CUPTI fills the buffer in this session only (a
    // finalize drops what it was lent, TakeLent).
    std::lock_guard<std::mutex> lock(lent_mu_);
    lent_.push_back({b, shift_ ? shift_->shift() : 0});
  }
  *buffer = b;
  *size = pool_->buffer_bytes();
  // CUPTI hands full buffers back on its own schedule, which at high record
  // rates is too late for a fixed pool. Past half the pool, ask the control
  // thread for a flush (never flush from a CUPTI callback).
  if (pool_->outstanding() * 2 >= pool_->capacity()) want_flush_();
}

void CuptiBuffers::OnCompleted(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t size,
                               size_t valid, size_t dropped) {
  (void)size;
  in_completion_.fetch_add(1, std::memory_order_acq_rel);
  if (dropped) cupti_dropped_.fetch_add(dropped, std::memory_order_relaxed);
  if (!buffer) {
    in_completion_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  uint32_t correlation_shift = 0;
  {
    std::lock_guard<std::mutex> lock(lent_mu_);
    auto it = std::find_if(lent_.begin(), lent_.end(), [buffer](const Lent& l) { return l.buffer == buffer; });
    if (it == lent_.end()) {
      // Not lent: taken back at a finalize (TakeLent) and given to the
      // pool already, so CUPTI kept it after all. Neither read nor given
      // back a second time: counted. What this cannot see: the same buffer
      // lent again before this completion came is taken for that lending's
      // (a double lend); none of either was seen in 600 stress runs.
      completed_unlent_.fetch_add(1, std::memory_order_relaxed);
      in_completion_.fetch_sub(1, std::memory_order_acq_rel);
      completions_.fetch_add(1, std::memory_order_release);
      return;
    }
    correlation_shift = it->correlation_shift;
    *it = lent_.back();
    lent_.pop_back();
  }
  Deliver(context_id, stream_id, buffer, valid, correlation_shift, /*ours=*/false);
}

void CuptiBuffers::OnFilled(uint8_t* buffer, size_t valid) {
  in_completion_.fetch_add(1, std::memory_order_acq_rel);
  Deliver(0, 0, buffer, valid, 0, /*ours=*/true);
}

// Ends the completion OnCompleted or OnFilled began.
void CuptiBuffers::Deliver(uint32_t context_id, uint32_t stream_id, uint8_t* buffer, size_t valid,
                           uint32_t correlation_shift, bool ours) {
  if (valid == 0 || phase_->load(std::memory_order_acquire) == RecorderPhase::kStopped) {
    pool_->Give(buffer);
    in_completion_.fetch_sub(1, std::memory_order_acq_rel);
    completions_.fetch_add(1, std::memory_order_release);
    return;
  }
  WalkResult walk = WalkBuffer(buffer, valid, &strings_, correlation_shift);
  if (shift_) {
    // The recorder's own records took the shift of their moment, and are
    // all handed over before it moves (CuptiSession::Attach): never late.
    uint32_t now = shift_->shift();
    if (!ours && correlation_shift < now && walk.highest_correlation >= now) {
      correlation_overlaps_.fetch_add(1, std::memory_order_relaxed);
    }
    shift_->Saw(walk.highest_correlation);
  }
  walk.info.context_id = context_id;
  walk.info.stream_id = stream_id;
  if (!walk.threads.empty()) seen_->SeeThreads(walk.threads);
  if (!walk.strings.empty()) {
    std::vector<format::SmallMessage> defs = walk.strings;
    if (!writer_->Submit(std::move(defs))) {
      strings_.Forget(walk.strings);
      strings_dropped_.fetch_add(walk.strings.size(), std::memory_order_relaxed);
    }
  }
  format::ActivityBuffer ab;
  ab.data = buffer;
  ab.size = valid;
  ab.info = std::move(walk.info);
  BufferPool* pool = pool_.get();
  ab.release = [pool, buffer] { pool->Give(buffer); };
  writer_->SubmitActivity(std::move(ab));
  buffers_completed_.fetch_add(1, std::memory_order_relaxed);
  in_completion_.fetch_sub(1, std::memory_order_acq_rel);
  completions_.fetch_add(1, std::memory_order_release);
}

std::vector<uint8_t*> CuptiBuffers::TakeLent() {
  std::vector<uint8_t*> lost;
  std::lock_guard<std::mutex> lock(lent_mu_);
  for (const Lent& l : lent_) lost.push_back(l.buffer);
  lent_.clear();
  return lost;
}

void CuptiBuffers::GiveBack(const std::vector<uint8_t*>& buffers) {
  for (uint8_t* b : buffers) pool_->Give(b);
  reclaimed_.fetch_add(buffers.size(), std::memory_order_relaxed);
}

void CuptiBuffers::WaitForRunningCompletions(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (in_completion_.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void CuptiBuffers::WaitForCompletions(std::chrono::milliseconds limit) {
  // Completion callbacks may still be running on CUPTI's thread: wait until
  // they are done, briefly.
  auto deadline = std::chrono::steady_clock::now() + limit;
  uint64_t seen = completions_.load();
  int quiet_polls = 0;
  while (std::chrono::steady_clock::now() < deadline && quiet_polls < 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    uint64_t c = completions_.load();
    if (in_completion_.load() == 0 && c == seen) {
      ++quiet_polls;
    } else {
      quiet_polls = 0;
    }
    seen = c;
  }
}

}  // namespace gpucap::recorder
