#include "step_log.h"

#include <algorithm>
#include <cstring>

namespace gpucap::recorder {

void StepLog::Slot::Open(uint64_t domain, uint64_t start_ns, std::string_view name) {
  Opened o{domain, start_ns, {}};
  std::memcpy(o.name.data(), name.data(), std::min(name.size(), sizeof(o.name) - 1));
  open_.push_back(o);
}

bool StepLog::Slot::Close(uint64_t domain, uint64_t end_ns) {
  for (size_t i = open_.size(); i-- > 0;) {
    if (open_[i].domain != domain) continue;
    Opened o = open_[i];
    open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
    // Seqlock: claim, then write, then publish; the reader checks the
    // claim after reading, so a slot overwritten under it is dropped.
    uint64_t n = published_.load(std::memory_order_relaxed);
    claimed_.store(n + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    Closed& c = closed_[n % kSlots];
    c.end_ns.store(end_ns, std::memory_order_relaxed);
    c.duration_ns.store(end_ns >= o.start_ns ? end_ns - o.start_ns : 0, std::memory_order_relaxed);
    for (size_t w = 0; w < kNameWords; ++w) c.name[w].store(o.name[w], std::memory_order_relaxed);
    published_.store(n + 1, std::memory_order_release);
    return true;
  }
  return false;
}

StepLog::Slot* StepLog::Register(uint32_t os_tid) {
  auto slot = std::make_unique<Slot>();
  slot->os_tid_ = os_tid;
  std::lock_guard<std::mutex> lock(mu_);
  slots_.push_back(std::move(slot));
  return slots_.back().get();
}

void StepLog::Drain(std::vector<StepEnd>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& slot : slots_) {
    Slot& s = *slot;
    uint64_t published = s.published_.load(std::memory_order_acquire);
    if (published - s.drained_ > kSlots) {
      lost_ += published - s.drained_ - kSlots;
      s.drained_ = published - kSlots;
    }
    for (uint64_t i = s.drained_; i < published; ++i) {
      const Slot::Closed& c = s.closed_[i % kSlots];
      StepEnd e;
      e.os_tid = s.os_tid_;
      e.end_ns = c.end_ns.load(std::memory_order_relaxed);
      e.duration_ns = c.duration_ns.load(std::memory_order_relaxed);
      std::array<uint64_t, kNameWords> words;
      for (size_t w = 0; w < kNameWords; ++w) words[w] = c.name[w].load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (s.claimed_.load(std::memory_order_relaxed) > i + kSlots) {
        ++lost_;  // overwritten while read
        continue;
      }
      const char* text = reinterpret_cast<const char*>(words.data());
      e.name.assign(text, strnlen(text, sizeof(words)));
      out->push_back(std::move(e));
    }
    s.drained_ = published;
  }
}

}  // namespace gpucap::recorder
