// Per-thread state of one owner (an EventLog, an ApiRecords), which the
// calling thread finds without taking a shared lock and another thread (the
// collector) drains. A thread's T is made on its first use and registered
// with the owner; at the thread's exit it is only marked retired (the owner
// may be gone by then, the T is not), and the owner's Collect forgets it once
// drained. T has a `std::mutex mu` (its thread's appends and the collector)
// and a `bool retired` under it.
#ifndef GPUCAP_RECORDER_THREAD_BUFFERS_H_
#define GPUCAP_RECORDER_THREAD_BUFFERS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace gpucap::recorder {

// Owners are told apart by a number, not an address: an address can be
// reused by a later owner while a thread still holds the old one's T.
uint64_t NextThreadBuffersOwner();

template <typename T>
class ThreadBuffers {
 public:
  ThreadBuffers() : owner_(NextThreadBuffersOwner()) {}

  // The calling thread's T.
  T* Mine() {
    Slot& slot = slot_;
    if (slot.owner == owner_) return slot.buffer.get();
    auto buffer = std::make_shared<T>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      all_.push_back(buffer);
    }
    slot.owner = owner_;
    slot.buffer = buffer;
    std::weak_ptr<T> weak = buffer;
    slot.on_exit = [weak] {
      if (auto b = weak.lock()) {
        std::lock_guard<std::mutex> lock(b->mu);
        b->retired = true;
      }
    };
    return buffer.get();
  }

  uint64_t owner() const { return owner_; }

  // drain(T&) for every thread's T under its lock; then forgets the retired
  // ones for which empty(T&) holds.
  void Collect(const std::function<void(T&)>& drain, const std::function<bool(const T&)>& empty) {
    std::vector<std::shared_ptr<T>> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      all = all_;
    }
    bool any_retired = false;
    for (auto& b : all) {
      std::lock_guard<std::mutex> lock(b->mu);
      drain(*b);
      any_retired |= b->retired;
    }
    if (!any_retired) return;
    std::lock_guard<std::mutex> lock(mu_);
    all_.erase(std::remove_if(all_.begin(), all_.end(),
                              [&](const std::shared_ptr<T>& b) {
                                std::lock_guard<std::mutex> l(b->mu);
                                return b->retired && empty(*b);
                              }),
               all_.end());
  }

 private:
  // Ties a thread to its T; at thread exit the T is retired so the registry
  // does not grow with every thread a job ever started.
  struct Slot {
    uint64_t owner = 0;
    std::shared_ptr<T> buffer;
    std::function<void()> on_exit;
    ~Slot() {
      if (on_exit) on_exit();
    }
  };
  static thread_local Slot slot_;

  std::mutex mu_;
  std::vector<std::shared_ptr<T>> all_;
  const uint64_t owner_;
};

template <typename T>
thread_local typename ThreadBuffers<T>::Slot ThreadBuffers<T>::slot_;

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_THREAD_BUFFERS_H_
