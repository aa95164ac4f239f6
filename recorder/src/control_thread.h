// The recorder's own thread, and how the rest of the process reaches it.
// It wakes every 50 ms, or at once when asked: a flush of CUPTI's completed
// buffers (CUPTI asked for a buffer past half the pool), a thread's full
// chunk of range records to collect, a capture range's end. Asking never
// blocks the asking thread (an atomic exchange, then a notify only for the
// first ask); a wake-up lost to a race is the next 50 ms timeout. Signal
// handlers leave their requests here with one relaxed store each, which is
// async-signal-safe; the loop takes them.
//
// What a pass does is the recorder's (Recorder::ControlLoop): this class
// owns the thread, its wake-ups and its end.
#ifndef GPUCAP_RECORDER_CONTROL_THREAD_H_
#define GPUCAP_RECORDER_CONTROL_THREAD_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpucap::recorder {

class ControlThread {
 public:
  // Starts the thread running `loop`, which calls Wait at the top of each
  // pass and returns when Wait says so (or after stopping the recorder).
  void Start(std::function<void()> loop);
  // Sleeps up to 50 ms, or until a flush, a range collection or a dump is
  // wanted, Wake was called or Quit was; false after Quit.
  bool Wait();
  // Ends the loop and, from another thread, joins it; from the control
  // thread itself (a Stop the loop made), detaches it.
  void Quit();

  // Wake-ups, from any thread; never block.
  void WantRanges();
  void WantFlush();
  void Wake();  // a pass now, for whatever the caller left for the loop
  // The loop's side: whether each was asked since the last pass.
  bool TakeRangesWanted() { return ranges_wanted_.exchange(false); }
  bool TakeFlushWanted() { return flush_wanted_.exchange(false); }

  // From signal handlers (async-signal-safe): SIGUSR2's toggle, a stop
  // signal's number; taken by the loop.
  void RequestToggle() { toggle_requested_.store(true, std::memory_order_relaxed); }
  void RequestStop(int signal) { stop_signal_.store(signal, std::memory_order_relaxed); }
  bool TakeToggle() { return toggle_requested_.exchange(false); }
  // Flight-recorder dumps: SIGUSR1's (async-signal-safe, trigger "signal")
  // and the C API's (any thread; takes a lock, never blocks on the loop).
  // The loop takes them all at once, the signal's first.
  void RequestSignalDump() { signal_dump_.store(true, std::memory_order_relaxed); }
  void RequestDump(std::string trigger);
  std::vector<std::string> TakeDumps();
  int TakeStopSignal() { return stop_signal_.exchange(0); }

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::atomic<bool> toggle_requested_{false};
  std::atomic<bool> flush_wanted_{false};
  std::atomic<bool> ranges_wanted_{false};
  std::atomic<int> stop_signal_{0};
  std::atomic<bool> signal_dump_{false};
  std::atomic<bool> dump_wanted_{false};
  std::atomic<bool> wake_wanted_{false};
  std::mutex dumps_mu_;
  std::vector<std::string> dumps_;  // guarded by dumps_mu_
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_CONTROL_THREAD_H_
