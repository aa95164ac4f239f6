#include "first_seen.h"

namespace gpucap::recorder {

void FirstSeen::QueueThread(uint32_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  threads_seen_.insert(tid);
  new_threads_.push_back(tid);
}

void FirstSeen::SeeThreads(const std::vector<uint32_t>& tids) {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint32_t tid : tids) {
    if (threads_seen_.insert(tid).second) new_threads_.push_back(tid);
  }
}

bool FirstSeen::ClaimThread(uint32_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_seen_.insert(tid).second;
}

bool FirstSeen::SeeDevice(uint32_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  bool first = devices_seen_.insert(device).second;
  if (first) new_devices_.push_back(device);
  return first;
}

void FirstSeen::SeeDevices(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int d = 0; d < count; ++d) {
    if (devices_seen_.insert(static_cast<uint32_t>(d)).second) {
      new_devices_.push_back(static_cast<uint32_t>(d));
    }
  }
}

std::vector<uint32_t> FirstSeen::TakeNewThreads() {
  std::vector<uint32_t> tids;
  std::lock_guard<std::mutex> lock(mu_);
  tids.swap(new_threads_);
  return tids;
}

std::vector<uint32_t> FirstSeen::TakeNewDevices() {
  std::vector<uint32_t> devices;
  std::lock_guard<std::mutex> lock(mu_);
  devices.swap(new_devices_);
  return devices;
}

}  // namespace gpucap::recorder
