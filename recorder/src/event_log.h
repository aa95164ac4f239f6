// Small events (NVTX ranges, gpucap API calls, graph topology) collected per
// thread. The push/pop path touches only the calling thread's buffer, under
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
  struct ThreadBuffer;
  ThreadBuffer* Mine();
  void Hand(std::vector<format::SmallMessage>* events);

  Submit submit_;
  size_t batch_events_;
  std::mutex registry_mu_;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers_;
  std::atomic<uint64_t> dropped_{0};
  const uint64_t id_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_EVENT_LOG_H_
