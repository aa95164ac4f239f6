#include "event_log.h"

#include <algorithm>

namespace gpucap::recorder {

EventLog::EventLog(Submit submit, size_t batch_events)
    : submit_(std::move(submit)), batch_events_(batch_events) {}

EventLog::~EventLog() = default;

void EventLog::Hand(std::vector<format::SmallMessage>* events) {
  size_t n = events->size();
  if (!submit_(std::move(*events))) dropped_.fetch_add(n, std::memory_order_relaxed);
  events->clear();
}

void EventLog::Add(format::SmallMessage event) {
  ThreadBuffer* b = buffers_.Mine();
  // A thread's events are handed over under its lock, by it or by Collect:
  // one thread's batches reach the writer in the order they were made.
  // Handing over only queues them, it never waits for the disk.
  std::lock_guard<std::mutex> lock(b->mu);
  b->events.push_back(std::move(event));
  if (b->events.size() >= batch_events_) Hand(&b->events);
}

void EventLog::Collect() {
  buffers_.Collect(
      [this](ThreadBuffer& b) {
        if (!b.events.empty()) Hand(&b.events);
      },
      [](const ThreadBuffer& b) { return b.events.empty(); });
}

uint64_t EventLog::dropped() const { return dropped_.load(std::memory_order_relaxed); }

}  // namespace gpucap::recorder
