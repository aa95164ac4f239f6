#include "open_ranges.h"

#include <algorithm>

namespace gpucap::format {

void OpenRanges::AddFrame(uint64_t order, std::span<const SmallMessage> messages) {
  departures_.AddFrame(order);
  uint64_t first_of_frame = next_number_;
  fresh_.clear();
  for (const SmallMessage& m : messages) {
    const auto* e = std::get_if<RangeEvent>(&m);
    if (!e) continue;
    switch (e->kind) {
      case RangeKind::kPush:
        Open(*e, next_number_++);
        break;
      case RangeKind::kStart:
        // Its end came first (from another thread's events): it is closed.
        if (early_ends_.erase(e->id)) break;
        Open(*e, next_number_++);
        break;
      case RangeKind::kPop: {
        auto it = stacks_.find({e->os_tid, e->domain});
        if (it == stacks_.end() || it->second.empty()) break;
        uint64_t number = it->second.back();
        it->second.pop_back();
        Close(number, order, first_of_frame);
        break;
      }
      case RangeKind::kEnd:
        CloseStarted(e->id, order, first_of_frame);
        break;
      default:
        break;
    }
  }
  // What the frame leaves open is kept; its ranges closed in it, never.
  for (size_t i = 0; i < fresh_.size(); ++i) {
    if (fresh_[i]) kept_.emplace_hint(kept_.end(), first_of_frame + i, Kept{*fresh_[i], order});
  }
  fresh_.clear();
  // Threads come and go: a stack emptied goes (once a frame, not at every
  // pop, which would cost a thread's outermost push an allocation).
  std::erase_if(stacks_, [](const auto& stack) { return stack.second.empty(); });
  while (kept_.size() > kMaxKept) {
    Forget(kept_.begin());
    ++forgotten_;
  }
}

void OpenRanges::Open(const RangeEvent& e, uint64_t number) {
  fresh_.push_back(&e);
  if (e.kind == RangeKind::kPush) {
    stacks_[{e.os_tid, e.domain}].push_back(number);
  } else {
    // A second start of an id supersedes the first, as in the builder,
    // which leaves the first never closed.
    started_[e.id] = number;
  }
}

void OpenRanges::Close(uint64_t number, uint64_t order, uint64_t first_of_frame) {
  if (number >= first_of_frame) {
    fresh_[number - first_of_frame] = nullptr;
    return;
  }
  auto it = kept_.find(number);
  if (it == kept_.end()) return;
  it->second.close_frame = order;
  departures_.Closed(order, number);
}

void OpenRanges::CloseStarted(uint64_t id, uint64_t order, uint64_t first_of_frame) {
  auto it = started_.find(id);
  if (it != started_.end()) {
    uint64_t number = it->second;
    started_.erase(it);
    Close(number, order, first_of_frame);
    return;
  }
  if (!early_ends_.insert(id).second) return;
  early_end_order_.push_back(id);
  if (early_end_order_.size() > kMaxEarlyEnds) {
    early_ends_.erase(early_end_order_.front());
    early_end_order_.pop_front();
  }
}

void OpenRanges::Forget(std::map<uint64_t, Kept>::iterator it) {
  const RangeEvent& e = it->second.opened;
  if (it->second.close_frame == kStillOpen) {
    // Nothing may close it any more: a later pop of its thread and domain
    // finds the pushes above it, or none (ignored, as the builder does).
    if (e.kind == RangeKind::kPush) {
      auto stack = stacks_.find({e.os_tid, e.domain});
      if (stack != stacks_.end()) {
        auto at = std::find(stack->second.begin(), stack->second.end(), it->first);
        if (at != stack->second.end()) stack->second.erase(at);
      }
    } else {
      auto started = started_.find(e.id);
      if (started != started_.end() && started->second == it->first) started_.erase(started);
    }
  }
  kept_.erase(it);
}

bool OpenRanges::Advance(uint64_t oldest_held) {
  return departures_.Advance(oldest_held, [this](uint64_t frame, uint64_t number) {
    auto it = kept_.find(number);
    if (it != kept_.end() && it->second.close_frame == frame) kept_.erase(it);
  });
}

std::vector<SmallMessage> OpenRanges::Carried() const {
  std::vector<SmallMessage> out;
  // Numbers follow frames: the kept ranges opened before the ring's start
  // come first.
  for (const auto& [number, k] : kept_) {
    if (k.open_frame >= departures_.oldest_held()) break;
    out.emplace_back(k.opened);
  }
  return out;
}

}  // namespace gpucap::format
