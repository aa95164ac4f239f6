#include "thread_buffers.h"

namespace gpucap::recorder {

uint64_t NextThreadBuffersOwner() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace gpucap::recorder
