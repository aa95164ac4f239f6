// Small events (graph topology, metadata blobs, thread names, payload
// schemas; ranges and window marks go to range_log.h) collected per
// thread. The adding path touches only the calling thread's buffer, under
// that thread's own lock, which only the periodic collector ever contends
// for; full buffers go to the writer from the thread that filled them.
#ifndef GPUCAP_RECORDER_EVENT_LOG_H_
#define GPUCAP_RECORDER_EVENT_LOG_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "gpucap/format/model.h"
#include "thread_buffers.h"

namespace gpucap::recorder {

class EventLog {
 public:
  // `submit` hands a batch to the writer; false means it was dropped.
  using Submit = std::function<bool(std::vector<format::SmallMessage>)>;
  EventLog(Submit submit, size_t batch_events);
  ~EventLog();

  void Add(format::SmallMessage event);
  // Hands every thread's pending events to the writer.
  void Collect();
  uint64_t dropped() const;

 private:
  struct ThreadBuffer {
    std::mutex mu;
    std::vector<format::SmallMessage> events;
    bool retired = false;  // its thread exited; collected once more, then dropped
  };
  void Hand(std::vector<format::SmallMessage>* events);

  Submit submit_;
  size_t batch_events_;
  ThreadBuffers<ThreadBuffer> buffers_;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_EVENT_LOG_H_
