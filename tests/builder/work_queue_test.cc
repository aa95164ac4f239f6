// The build's one set of threads (gpucap/builder/work_queue.h): results in
// submission order whatever order tasks finish in, a taker's own task first,
// never more threads than
// asked, one thread meaning the caller alone, failures as statuses, and no
// wait that never ends when every thread is inside a long task.
#include "gpucap/builder/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gpucap::builder {
namespace {

// Counts the threads running tasks at once, and which threads ran any.
class Occupancy {
 public:
  void Enter() {
    int now = ++busy_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    std::lock_guard<std::mutex> lock(mu_);
    ids_.insert(std::this_thread::get_id());
  }
  void Leave() { --busy_; }
  int most() const { return most_.load(); }
  size_t threads() {
    std::lock_guard<std::mutex> lock(mu_);
    return ids_.size();
  }
  bool only(std::thread::id id) {
    std::lock_guard<std::mutex> lock(mu_);
    return ids_.size() == 1 && *ids_.begin() == id;
  }

 private:
  std::atomic<int> busy_{0}, most_{0};
  std::mutex mu_;
  std::set<std::thread::id> ids_;
};

void Spin(int micros) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(WorkQueue, ResultsAreTakenInSubmissionOrder) {
  for (int threads : {1, 2, 4}) {
    WorkQueue queue(threads);
    WorkQueue::Ordered tasks(&queue);
    std::vector<int> value(64, -1);
    for (int i = 0; i < 64; ++i) {
      // Early tasks take longest, so with helpers later ones finish first.
      tasks.Submit([&value, i] {
        Spin((64 - i) * 20);
        value[i] = i;
        return i % 7 == 3 ? Status::NotFound("task " + std::to_string(i)) : Status::Ok();
      });
    }
    for (int i = 0; i < 64; ++i) {
      Status s = tasks.TakeOldest();
      EXPECT_EQ(value[i], i) << threads << " threads: task " << i << " taken before it ran";
      if (i % 7 == 3) {
        EXPECT_EQ(s.message(), "task " + std::to_string(i)) << threads << " threads";
      } else {
        EXPECT_TRUE(s.ok()) << threads << " threads, task " << i << ": " << s.ToString();
      }
    }
    EXPECT_EQ(tasks.size(), 0u);
    EXPECT_TRUE(tasks.TakeOldest().ok());  // none left
  }
}

// A taker runs the task it waits for ahead of older ones of other takers
// (another window's gzip members), which wait for their own takers.
TEST(WorkQueue, ATakerRunsItsOwnTaskBeforeOlderOnes) {
  WorkQueue queue(1);
  WorkQueue::Ordered others(&queue), mine(&queue);
  std::vector<int> ran;
  for (int i = 0; i < 3; ++i) {
    others.Submit([&ran, i] {
      ran.push_back(i);
      return Status::Ok();
    });
  }
  mine.Submit([&ran] {
    ran.push_back(100);
    return Status::Ok();
  });
  EXPECT_TRUE(mine.TakeOldest().ok());
  EXPECT_EQ(ran, std::vector<int>{100});
  while (others.size() > 0) EXPECT_TRUE(others.TakeOldest().ok());
  EXPECT_EQ(ran, (std::vector<int>{100, 0, 1, 2}));
}

TEST(WorkQueue, OneThreadRunsEverythingOnTheCaller) {
  WorkQueue queue(1);
  Occupancy occupancy;
  Status s = queue.Each(3, [&](int) {
    WorkQueue::Ordered tasks(&queue);
    for (int i = 0; i < 8; ++i) {
      tasks.Submit([&] {
        occupancy.Enter();
        occupancy.Leave();
        return Status::Ok();
      });
    }
    // Nothing runs a task before its taker waits for it.
    EXPECT_FALSE(tasks.OldestDone());
    while (tasks.size() > 0) GPUCAP_RETURN_IF_ERROR(tasks.TakeOldest());
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(occupancy.only(std::this_thread::get_id()));
}

// Long tasks on every thread, each waiting for short ones of its own: the
// waiters run them (no thread is left to), and no more than `threads` run
// at once in all. The first `threads` long tasks meet at a gate before
// they submit anything, so every thread is inside a long task when the
// short ones come, whichever threads the scheduler runs first: the caller
// runs fn(0) and cannot run another long task until fn(0) returns, so the
// others through the gate ran on the queue's own threads.
TEST(WorkQueue, NeverMoreThreadsThanAskedAndNoWaitWithoutEnd) {
  for (int threads : {2, 3}) {
    WorkQueue queue(threads);
    Occupancy occupancy;
    std::atomic<int> ran{0};
    std::mutex gate_mu;
    std::condition_variable gate_cv;
    int arrived = 0;
    bool gate_timed_out = false;
    Status s = queue.Each(threads * 2, [&](int) {
      occupancy.Enter();
      {
        // Not a timing assumption: the wait ends when all have arrived;
        // the bound only turns a broken queue (too few threads) into a
        // failure instead of a hung test.
        std::unique_lock<std::mutex> lock(gate_mu);
        if (++arrived <= threads) {
          gate_cv.notify_all();
          if (!gate_cv.wait_for(lock, std::chrono::seconds(120), [&] { return arrived >= threads; })) {
            gate_timed_out = true;
          }
        }
      }
      WorkQueue::Ordered tasks(&queue);
      occupancy.Leave();  // a waiter that runs a short task counts once
      for (int i = 0; i < 50; ++i) {
        tasks.Submit([&] {
          occupancy.Enter();
          ran++;
          occupancy.Leave();
          return Status::Ok();
        });
      }
      while (tasks.size() > 0) GPUCAP_RETURN_IF_ERROR(tasks.TakeOldest());
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(gate_timed_out) << threads << " threads: fewer than " << threads << " long tasks ran at once";
    EXPECT_EQ(ran.load(), threads * 2 * 50);
    EXPECT_LE(occupancy.most(), threads);
    EXPECT_EQ(occupancy.threads(), static_cast<size_t>(threads)) << "each of the threads ran a long task";
  }
}

TEST(WorkQueue, FailuresComeBackAsStatuses) {
  WorkQueue queue(2);
  {
    WorkQueue::Ordered tasks(&queue);
    tasks.Submit([]() -> Status { throw std::runtime_error("out of luck"); });
    Status s = tasks.TakeOldest();
    EXPECT_EQ(s.code(), Status::Code::kInternal);
    EXPECT_NE(s.message().find("out of luck"), std::string::npos) << s.message();
  }
  // The first failing long task by index, whichever failed first in time.
  Status s = queue.Each(4, [](int i) {
    if (i == 3) return Status::IoError("three");
    if (i == 1) {
      Spin(2000);
      return Status::Corrupt("one");
    }
    return Status::Ok();
  });
  EXPECT_EQ(s.message(), "one");
}

// Tasks not taken are waited for by their Ordered, so what they refer to
// may go with it.
TEST(WorkQueue, OrderedWaitsForWhatWasNotTaken) {
  WorkQueue queue(3);
  std::atomic<int> ran{0};
  {
    WorkQueue::Ordered tasks(&queue);
    for (int i = 0; i < 20; ++i) {
      tasks.Submit([&ran] {
        Spin(200);
        ran++;
        return Status::Ok();
      });
    }
  }
  EXPECT_EQ(ran.load(), 20);
}

}  // namespace
}  // namespace gpucap::builder
