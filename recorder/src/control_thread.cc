#include "control_thread.h"

#include <chrono>
#include <utility>

namespace gpucap::recorder {

void ControlThread::Start(std::function<void()> loop) {
  // The control thread may call Stop(), which reads thread_ (Quit): assign
  // it under the lock the loop takes before doing anything else.
  std::lock_guard<std::mutex> lock(mu_);
  thread_ = std::thread(std::move(loop));
}

bool ControlThread::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  // Wake's flag is in the predicate: a notify whose predicate stays false
  // puts the thread back to sleep, and a wake-up was lost so until the
  // 50 ms timeout (the attach ahead of a sampled range came too late).
  cv_.wait_for(lock, std::chrono::milliseconds(50), [&] {
    return quit_ || flush_wanted_.load() || ranges_wanted_.load() || dump_wanted_.load() || wake_wanted_.load();
  });
  wake_wanted_.store(false);
  return !quit_;
}

void ControlThread::Quit() {
  {
    std::lock_guard<std::mutex> l(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

void ControlThread::WantRanges() {
  // Never blocks: a lost wake-up is the control loop's 50 ms timeout.
  if (!ranges_wanted_.exchange(true, std::memory_order_acq_rel)) cv_.notify_one();
}

void ControlThread::WantFlush() {
  if (!flush_wanted_.exchange(true)) cv_.notify_one();
}

void ControlThread::Wake() {
  if (!wake_wanted_.exchange(true)) cv_.notify_one();
}

void ControlThread::RequestDump(std::string trigger) {
  {
    std::lock_guard<std::mutex> lock(dumps_mu_);
    dumps_.push_back(std::move(trigger));
  }
  if (!dump_wanted_.exchange(true)) cv_.notify_one();
}

std::vector<std::string> ControlThread::TakeDumps() {
  std::vector<std::string> out;
  if (signal_dump_.exchange(false)) out.emplace_back("signal");
  if (dump_wanted_.exchange(false)) {
    std::lock_guard<std::mutex> lock(dumps_mu_);
    for (auto& t : dumps_) out.push_back(std::move(t));
    dumps_.clear();
  }
  return out;
}

}  // namespace gpucap::recorder
