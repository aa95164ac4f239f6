// A fixed set of CUPTI activity buffers. CUPTI asks for a buffer from
// whatever thread needs one, including the application's: Take never blocks
// and never allocates past the pool's size; when every buffer is out, CUPTI
// gets none and drops records, which is counted, instead of the process
// growing without bound.
//
// Every buffer Take hands out is all zero bytes. CUPTI otherwise zeroes
// each buffer itself on the thread that asked for it, an application
// thread (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, cupti_activity.h):
// a 4 MiB memset after every forced flush and every re-attach, which
// callgrind counted as 2-5 M instructions on the launching thread
// (bench/README.md). Here a new buffer is fresh anonymous memory, zero
// without a write, and a returned one is zeroed by the thread that gives it
// back: the writer's for records written, CUPTI's completion thread for an
// empty one, the control thread for those a finalize dropped (an
// application thread only where it hands over a buffer of the lean API
// records it filled and the writer's queue refuses it).
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

  // A free buffer of zero bytes, mapped on first use; nullptr when all are
  // out or the mapping failed.
  uint8_t* Take();
  // Zeroes the buffer, then makes it free again.
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
