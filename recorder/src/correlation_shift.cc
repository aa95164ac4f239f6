#include "correlation_shift.h"

namespace gpucap::recorder {

void CorrelationShift::Saw(uint32_t shifted_id) {
  uint32_t seen = highest_.load(std::memory_order_relaxed);
  while (shifted_id > seen &&
         !highest_.compare_exchange_weak(seen, shifted_id, std::memory_order_acq_rel, std::memory_order_relaxed)) {
  }
}

void CorrelationShift::NextSession() {
  sessions_.fetch_add(1, std::memory_order_relaxed);
  uint32_t highest = highest_.load(std::memory_order_acquire);
  // A session that wrote nothing leaves the shift where it was: its ids,
  // were there any, would have been at least the shift.
  if (highest >= shift_.load(std::memory_order_relaxed)) shift_.store(highest + 1, std::memory_order_release);
}

}  // namespace gpucap::recorder
