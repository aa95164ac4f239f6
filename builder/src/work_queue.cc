#include "gpucap/builder/work_queue.h"

#include <algorithm>
#include <exception>
#include <string>
#include <system_error>

namespace gpucap::builder {

struct WorkQueue::Task {
  std::function<Status()> fn;
  Status status;
  bool done = false;  // under mu_
};

struct WorkQueue::Long {
  const std::function<Status(int)>* fn = nullptr;
  int index = 0;
  Status status;
  bool done = false;  // under mu_
};

namespace {

// A task's status; what it throws (bad_alloc, most likely) as a status too,
// so that whoever waits for it hears of it instead of the process ending.
template <typename Fn>
Status Guarded(const Fn& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("a build task failed: ") + e.what());
  } catch (...) {
    return Status::Internal("a build task failed");
  }
}

}  // namespace

WorkQueue::WorkQueue(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = threads;
  try {
    for (int i = 1; i < threads; ++i) started_.emplace_back([this] { Serve(); });
  } catch (const std::system_error&) {
    // Fewer threads: waiting threads run the tasks the others cannot.
  }
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : started_) t.join();
}

void WorkQueue::Serve() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // Long tasks first: a window worker waiting for a thread would leave
    // this one serving another worker's gzip members.
    if (!long_.empty()) {
      RunLong(&lock);
    } else if (!short_.empty()) {
      RunShort(&lock);
    } else if (stop_) {
      return;
    } else {
      cv_.wait(lock);
    }
  }
}

void WorkQueue::RunShort(std::unique_lock<std::mutex>* lock) {
  Task* t = short_.front();
  short_.pop_front();
  lock->unlock();
  Status s = Guarded(t->fn);
  lock->lock();
  t->status = std::move(s);
  t->done = true;  // its Ordered may free it from here on
  cv_.notify_all();
}

bool WorkQueue::RunIfQueued(Task* t, std::unique_lock<std::mutex>* lock) {
  auto it = std::find(short_.begin(), short_.end(), t);
  if (it == short_.end()) return false;
  short_.erase(it);
  lock->unlock();
  Status s = Guarded(t->fn);
  lock->lock();
  t->status = std::move(s);
  t->done = true;
  cv_.notify_all();
  return true;
}

void WorkQueue::RunLong(std::unique_lock<std::mutex>* lock) {
  Long* t = long_.front();
  long_.pop_front();
  lock->unlock();
  Status s = Guarded([t] { return (*t->fn)(t->index); });
  lock->lock();
  t->status = std::move(s);
  t->done = true;
  cv_.notify_all();
}

Status WorkQueue::Each(int n, const std::function<Status(int)>& fn) {
  if (n <= 0) return Status::Ok();
  std::vector<Long> others(static_cast<size_t>(n - 1));
  if (!others.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 1; i < n; ++i) {
      others[i - 1].fn = &fn;
      others[i - 1].index = i;
      long_.push_back(&others[i - 1]);
    }
  }
  cv_.notify_all();
  Status first = Guarded([&] { return fn(0); });
  std::unique_lock<std::mutex> lock(mu_);
  while (!std::all_of(others.begin(), others.end(), [](const Long& t) { return t.done; })) {
    if (!long_.empty()) {
      RunLong(&lock);
    } else if (!short_.empty()) {
      RunShort(&lock);
    } else {
      cv_.wait(lock);
    }
  }
  if (!first.ok()) return first;
  for (Long& t : others) {
    if (!t.status.ok()) return std::move(t.status);
  }
  return Status::Ok();
}

WorkQueue::Ordered::Ordered(WorkQueue* queue) : queue_(queue) {}

WorkQueue::Ordered::~Ordered() {
  while (!slots_.empty()) (void)TakeOldest();
}

void WorkQueue::Ordered::Submit(std::function<Status()> task) {
  slots_.push_back(std::make_unique<Task>());
  Task* t = slots_.back().get();
  t->fn = std::move(task);
  {
    std::lock_guard<std::mutex> lock(queue_->mu_);
    queue_->short_.push_back(t);
  }
  if (!queue_->started_.empty()) queue_->cv_.notify_all();
}

bool WorkQueue::Ordered::OldestDone() {
  if (slots_.empty()) return false;
  std::lock_guard<std::mutex> lock(queue_->mu_);
  return slots_.front()->done;
}

Status WorkQueue::Ordered::TakeOldest() {
  if (slots_.empty()) return Status::Ok();
  Task* t = slots_.front().get();
  {
    std::unique_lock<std::mutex> lock(queue_->mu_);
    // Not done and nothing queued: a thread that never waits is running it.
    if (!t->done) queue_->RunIfQueued(t, &lock);
    while (!t->done) {
      if (!queue_->short_.empty()) {
        queue_->RunShort(&lock);
      } else {
        queue_->cv_.wait(lock);
      }
    }
  }
  Status s = std::move(t->status);
  slots_.pop_front();
  return s;
}

}  // namespace gpucap::builder
