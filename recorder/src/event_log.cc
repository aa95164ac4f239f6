#include "event_log.h"

#include <algorithm>

namespace gpucap::recorder {

struct EventLog::ThreadBuffer {
  std::mutex mu;
  std::vector<format::SmallMessage> events;
  bool retired = false;  // its thread exited; collected once more, then dropped
};

namespace {

// Ties a thread to its buffer; at thread exit the buffer is retired so the
// registry does not grow with every thread a job ever started.
struct ThreadSlot {
  uint64_t owner = 0;  // the EventLog's id: an address can be reused by a later log
  std::shared_ptr<void> buffer;
  std::function<void()> on_exit;
  ~ThreadSlot() {
    if (on_exit) on_exit();
  }
};
thread_local ThreadSlot t_slot;
std::atomic<uint64_t> g_next_log_id{1};

}  // namespace

EventLog::EventLog(Submit submit, size_t batch_events)
    : submit_(std::move(submit)), batch_events_(batch_events), id_(g_next_log_id.fetch_add(1)) {}

EventLog::~EventLog() = default;

EventLog::ThreadBuffer* EventLog::Mine() {
  if (t_slot.owner == id_) return static_cast<ThreadBuffer*>(t_slot.buffer.get());
  auto buffer = std::make_shared<ThreadBuffer>();
  {
    std::lock_guard<std::mutex> lock(registry_mu_);
    buffers_.push_back(buffer);
  }
  t_slot.owner = id_;
  t_slot.buffer = buffer;
  std::weak_ptr<ThreadBuffer> weak = buffer;
  t_slot.on_exit = [weak] {
    if (auto b = weak.lock()) {
      std::lock_guard<std::mutex> lock(b->mu);
      b->retired = true;
    }
  };
  return buffer.get();
}

void EventLog::Hand(std::vector<format::SmallMessage>* events) {
  size_t n = events->size();
  if (!submit_(std::move(*events))) dropped_.fetch_add(n, std::memory_order_relaxed);
  events->clear();
}

void EventLog::Add(format::SmallMessage event) {
  ThreadBuffer* b = Mine();
  // A thread's events are handed over under its lock, by it or by Collect:
  // one thread's batches reach the writer in the order they were made.
  // Handing over only queues them, it never waits for the disk.
  std::lock_guard<std::mutex> lock(b->mu);
  b->events.push_back(std::move(event));
  if (b->events.size() >= batch_events_) Hand(&b->events);
}

void EventLog::Collect() {
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(registry_mu_);
    buffers = buffers_;
  }
  bool any_retired = false;
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> lock(b->mu);
    if (!b->events.empty()) Hand(&b->events);
    any_retired |= b->retired;
  }
  if (any_retired) {
    std::lock_guard<std::mutex> lock(registry_mu_);
    buffers_.erase(std::remove_if(buffers_.begin(), buffers_.end(),
                                  [](const std::shared_ptr<ThreadBuffer>& b) {
                                    std::lock_guard<std::mutex> l(b->mu);
                                    return b->retired && b->events.empty();
                                  }),
                   buffers_.end());
  }
}

uint64_t EventLog::dropped() const { return dropped_.load(std::memory_order_relaxed); }

}  // namespace gpucap::recorder
