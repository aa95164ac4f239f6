#include "buffer_pool.h"

#include <sys/mman.h>

#include <cstring>

namespace gpucap::recorder {

BufferPool::BufferPool(size_t count, size_t bytes) : count_(count), bytes_(bytes) {
  free_.reserve(count);
}

BufferPool::~BufferPool() {
  // Buffers still out belong to CUPTI at exit; only free what came back.
  for (uint8_t* b : free_) munmap(b, bytes_);
}

uint8_t* BufferPool::Take() {
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else if (allocated_ < count_) {
      // mmap rather than malloc: anonymous pages are zero without a write,
      // whatever allocator the program brought (jemalloc, tcmalloc).
      void* m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m != MAP_FAILED) {
        b = static_cast<uint8_t*>(m);
        ++allocated_;
      }
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
  // The whole buffer, not only the bytes CUPTI said were valid: its
  // contract is a buffer of zeros, and a byte it wrote past them would
  // otherwise come back as garbage in a later record.
  std::memset(buffer, 0, bytes_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(buffer);
  }
  outstanding_.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace gpucap::recorder
