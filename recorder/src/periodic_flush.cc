#include "periodic_flush.h"

namespace gpucap::recorder {

bool PeriodicFlush::Due(uint64_t now_ns, bool recording) {
  if (period_ns_ == 0 || !recording) {
    counting_ = false;
    return false;
  }
  if (!counting_) {
    // A recording's first records are no older than its start.
    counting_ = true;
    since_ns_ = now_ns;
    return false;
  }
  if (now_ns - since_ns_ < period_ns_) return false;
  since_ns_ = now_ns;
  return true;
}

}  // namespace gpucap::recorder
