// One set of threads for a whole build, so that `-j N` is N threads in all:
// the windows' workers, chunk decoding and gzip members share them (before,
// each had threads of its own, and -j1 kept ~1.45 cores busy). Public so
// that what runs builds side by side shares one too (tools/export: a
// worker per capture, and their joins' decoding).
//
// Two kinds of work:
//  - Each(n, fn): n long tasks at once (a window worker each), fn(0) on the
//    caller and the others on idle threads of the queue. They may wait on
//    short tasks (below), never on each other.
//  - Ordered: short tasks (a chunk to decode, a gzip member) whose results
//    are taken in the order they were submitted. A short task never waits
//    on anything.
//
// Nothing blocks forever: a thread that waits for a short task runs it
// itself if it is still queued, else runs other queued short tasks meanwhile
// (any, oldest first), so a task it waits for is either queued (it runs one)
// or being run by a thread that does not wait. Its own task first: with ten
// windows at once, a window that waited by running the others' older gzip
// members made every window as slow as all of them.
// With one thread in all no thread is started: short tasks run on the
// thread that waits for them, in submission order. Results and failures
// cross as Status; an exception out of a task becomes one.
#ifndef GPUCAP_BUILDER_WORK_QUEUE_H_
#define GPUCAP_BUILDER_WORK_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpucap/status.h"

namespace gpucap::builder {

class WorkQueue {
  struct Task;  // a short task and its outcome
  struct Long;

 public:
  // `threads` in all, the callers' included (0: one per core): threads - 1
  // are started (fewer if the system has no more to give).
  explicit WorkQueue(int threads);
  // Every Ordered made on it must be gone.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // The threads asked for (0 resolved to the cores).
  int threads() const { return threads_; }

  // Runs fn(0), ..., fn(n - 1) at once, fn(0) on the caller, the others on
  // idle threads (or on the caller after fn(0), when none is idle), and
  // returns once all are done: the first failing status by index, else Ok.
  // Not from inside a task.
  Status Each(int n, const std::function<Status(int)>& fn);

  // Short tasks taken in submission order. Not shared between threads: one
  // thread submits and takes.
  class Ordered {
   public:
    explicit Ordered(WorkQueue* queue);
    // Waits for the tasks not taken (their statuses are dropped).
    ~Ordered();
    Ordered(const Ordered&) = delete;
    Ordered& operator=(const Ordered&) = delete;

    void Submit(std::function<Status()> task);
    // Submitted and not yet taken.
    size_t size() const { return slots_.size(); }
    // Whether the oldest task not taken has finished (false when none is left).
    bool OldestDone();
    // Waits for the oldest task not taken (running queued ones meanwhile)
    // and returns its status. Ok when none is left.
    Status TakeOldest();

   private:
    WorkQueue* queue_;
    std::deque<std::unique_ptr<Task>> slots_;
  };

 private:
  void Serve();                                 // a started thread's loop
  void RunShort(std::unique_lock<std::mutex>* lock);  // the oldest queued short task
  // `t` itself when it is still queued (taken out of its turn); false when a
  // thread has it already.
  bool RunIfQueued(Task* t, std::unique_lock<std::mutex>* lock);
  void RunLong(std::unique_lock<std::mutex>* lock);   // the oldest queued long task

  int threads_;
  std::mutex mu_;
  std::condition_variable cv_;  // any change: a task queued or finished, stop
  std::deque<Task*> short_;      // queued, not yet taken by a thread
  std::deque<Long*> long_;
  bool stop_ = false;
  std::vector<std::thread> started_;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_WORK_QUEUE_H_
