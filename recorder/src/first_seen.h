// The threads and devices the recorder has met, and those met since the
// control thread last described them. Callbacks on any thread (CUPTI's
// buffer completions name threads, context creation names devices) only
// note an id under one short lock; the control thread reads /proc and the
// device's facts later, off the application's threads. A thread that names
// itself (its first NVTX range) is noted as seen without being queued.
#ifndef GPUCAP_RECORDER_FIRST_SEEN_H_
#define GPUCAP_RECORDER_FIRST_SEEN_H_

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace gpucap::recorder {

class FirstSeen {
 public:
  // Queued for description, seen before or not (the main thread at start).
  void QueueThread(uint32_t tid);
  // Each tid not seen before is queued, all under one hold of the lock.
  void SeeThreads(const std::vector<uint32_t>& tids);
  // Marks `tid` seen without queuing it; true the first time.
  bool ClaimThread(uint32_t tid);
  // Queues `device` if it is new; true the first time.
  bool SeeDevice(uint32_t device);
  // Devices 0..count-1, each queued if new (after a late attach, when
  // contexts made meanwhile announced none).
  void SeeDevices(int count);

  // What was queued since the last call; the control thread's.
  std::vector<uint32_t> TakeNewThreads();
  std::vector<uint32_t> TakeNewDevices();

 private:
  std::mutex mu_;
  std::unordered_set<uint32_t> threads_seen_;
  std::vector<uint32_t> new_threads_;
  std::unordered_set<uint32_t> devices_seen_;
  std::vector<uint32_t> new_devices_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_FIRST_SEEN_H_
