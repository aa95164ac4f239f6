// A fixed set of CUPTI activity buffers. CUPTI asks for a buffer from
// whatever thread needs one, including the application's: Take never blocks
// and never allocates past the pool's size; when every buffer is out, CUPTI
// gets none and drops records, which is counted, instead of the process
// growing without bound.
#ifndef GPUCAP_RECORDER_BUFFER_POOL_H_
#define GPUCAP_RECORDER_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpucap::recorder {

class BufferPool {
 public:
  BufferPool(size_t count, size_t bytes);
  ~BufferPool();

  // A free buffer, allocated on first use; nullptr when all are out.
  uint8_t* Take();
  void Give(uint8_t* buffer);

  size_t buffer_bytes() const { return bytes_; }
  size_t capacity() const { return count_; }
  // Buffers currently handed out (to CUPTI or the writer).
  size_t outstanding() const { return outstanding_.load(std::memory_order_acquire); }
  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }

 private:
  const size_t count_;
  const size_t bytes_;
  std::mutex mu_;  // held for a few instructions; never across I/O
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
  std::atomic<size_t> outstanding_{0};
  std::atomic<uint64_t> exhausted_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_BUFFER_POOL_H_
