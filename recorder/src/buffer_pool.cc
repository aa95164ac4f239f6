#include "buffer_pool.h"

#include <cstdlib>

namespace gpucap::recorder {

BufferPool::BufferPool(size_t count, size_t bytes) : count_(count), bytes_(bytes) {
  free_.reserve(count);
}

BufferPool::~BufferPool() {
  // Buffers still out belong to CUPTI at exit; only free what came back.
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* BufferPool::Take() {
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else if (allocated_ < count_) {
      b = static_cast<uint8_t*>(std::aligned_alloc(64, bytes_));
      if (b) ++allocated_;
    }
  }
  if (!b) {
    exhausted_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  outstanding_.fetch_add(1, std::memory_order_acq_rel);
  return b;
}

void BufferPool::Give(uint8_t* buffer) {
  if (!buffer) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(buffer);
  }
  outstanding_.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace gpucap::recorder
