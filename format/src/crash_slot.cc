#include "gpucap/format/crash_slot.h"

#include <time.h>

namespace gpucap::format {

bool RingCrashSlot::Publish(std::unique_ptr<RingSnapshot> next, std::vector<std::vector<uint8_t>> retired) {
  mutating_.store(true, std::memory_order_seq_cst);
  if (reading_.load(std::memory_order_seq_cst)) {
    mutating_.store(false, std::memory_order_seq_cst);
    // The reader may walk the current snapshot, whose frames these are.
    for (auto& p : retired) deferred_.push_back(std::move(p));
    return false;  // `next` goes: no one saw it
  }
  std::unique_ptr<RingSnapshot> old = std::move(current_);
  current_ = std::move(next);
  published_.store(current_.get(), std::memory_order_seq_cst);
  old.reset();
  retired.clear();
  deferred_.clear();
  mutating_.store(false, std::memory_order_seq_cst);
  return true;
}

RingSnapshot* RingCrashSlot::BeginRead(int self_tid, int wait_ms) {
  reading_.store(true, std::memory_order_seq_cst);
  bool on_writer = self_tid != 0 && self_tid == writer_tid_.load(std::memory_order_relaxed);
  for (int waited = 0; mutating_.load(std::memory_order_seq_cst); ++waited) {
    if (on_writer || waited >= wait_ms) return nullptr;
    timespec ms{0, 1000000};
    nanosleep(&ms, nullptr);  // async-signal-safe
  }
  return published_.load(std::memory_order_seq_cst);
}

}  // namespace gpucap::format
