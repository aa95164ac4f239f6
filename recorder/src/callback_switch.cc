#include "callback_switch.h"

#include <cupti.h>

namespace gpucap::recorder {
namespace {

int CuptiEnable(uint32_t enable, void* subscriber, uint32_t domain, uint32_t cbid) {
  return cuptiEnableCallback(enable, static_cast<CUpti_SubscriberHandle>(subscriber),
                             static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(cbid));
}

}  // namespace

CallbackSwitch::CallbackSwitch(EnableFn enable) : enable_(enable ? enable : CuptiEnable) {}

void CallbackSwitch::Want(Owner owner, uint32_t domain, uint32_t cbid, bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t key = Key(domain, cbid);
  auto it = owners_.find(key);
  uint8_t before = it == owners_.end() ? 0 : it->second;
  uint8_t after = on ? (before | owner) : (before & ~owner);
  if (after == before) return;
  if (after == 0) {
    owners_.erase(it);
  } else {
    owners_[key] = after;
  }
  if (subscriber_ && (before == 0) != (after == 0)) {
    enable_(after != 0, subscriber_, domain, cbid);
    ++calls_;
  }
}

void CallbackSwitch::Attach(void* subscriber) {
  std::lock_guard<std::mutex> lock(mu_);
  subscriber_ = subscriber;
  if (!subscriber_) return;
  for (const auto& [key, owners] : owners_) {
    enable_(1, subscriber_, static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key));
    ++calls_;
  }
}

void CallbackSwitch::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  subscriber_ = nullptr;
}

uint64_t CallbackSwitch::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

}  // namespace gpucap::recorder
