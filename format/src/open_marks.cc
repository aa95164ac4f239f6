#include "open_marks.h"

#include <algorithm>
#include <cctype>

namespace gpucap::format {
namespace {

// The builder ends an unclosed open mark at the next open whose label is
// the same once digits are dropped (EndUnclosedMarks, builder/src/window.cc).
std::string FamilyOf(const std::string& label) {
  std::string s;
  for (char c : label) {
    if (!std::isdigit(static_cast<unsigned char>(c))) s.push_back(c);
  }
  return s;
}

// Of two instant marks, the one the builder takes last: the later in time,
// at equal times the later made (its sort is stable).
bool NotBefore(const WindowMark& later, const WindowMark& earlier) {
  return later.timestamp_ns >= earlier.timestamp_ns;
}

}  // namespace

void OpenMarks::AddFrame(uint64_t order, std::span<const SmallMessage> messages) {
  departures_.AddFrame(order);
  uint64_t first_of_frame = next_number_;
  const WindowMark* instant = nullptr;
  for (const SmallMessage& message : messages) {
    const auto* m = std::get_if<WindowMark>(&message);
    if (!m) continue;
    switch (m->kind) {
      case WindowMarkKind::kOpen:
        Open(*m, order);
        break;
      case WindowMarkKind::kClose:
        Close(m->id, order, first_of_frame);
        break;
      case WindowMarkKind::kInstant:
        if (!instant || NotBefore(*m, *instant)) instant = m;
        break;
    }
  }
  if (instant) instants_.emplace_back(order, *instant);
  TrimFamilies();
  while (kept_.size() > kMaxKept) {
    Forget(kept_.begin());
    ++forgotten_;
  }
}

void OpenMarks::Open(const WindowMark& m, uint64_t order) {
  Family& family = families_[FamilyOf(m.label)];
  // It ends the earlier unclosed marks of its family, should their closes
  // never come.
  std::erase_if(family.unended, [&](uint64_t number) {
    Kept& k = kept_.at(number);
    if (k.opened.timestamp_ns >= m.timestamp_ns) return false;
    k.ended_frame = order;
    return true;
  });
  // Its close came first (from another thread's events): it is closed.
  if (early_closes_.erase(m.id)) {
    family.latest_open_ns = std::max(family.latest_open_ns, m.timestamp_ns);
    return;
  }
  uint64_t number = next_number_++;
  Kept& k = kept_.emplace_hint(kept_.end(), number, Kept{m, order})->second;
  // And is ended by a later one already made (another thread's, whose
  // marks came first), in a frame no later than its own.
  if (family.latest_open_ns > m.timestamp_ns) {
    k.ended_frame = order;
  } else {
    family.latest_open_ns = m.timestamp_ns;
    family.unended.push_back(number);
  }
  // A second open of an id supersedes the first, as in the builder, where
  // the first is then closed by nothing.
  open_by_id_[m.id] = number;
}

void OpenMarks::Close(uint64_t id, uint64_t order, uint64_t first_of_frame) {
  auto open = open_by_id_.find(id);
  if (open == open_by_id_.end()) {
    if (!early_closes_.insert(id).second) return;
    early_close_order_.push_back(id);
    if (early_close_order_.size() > kMaxEarlyCloses) {
      early_closes_.erase(early_close_order_.front());
      early_close_order_.pop_front();
    }
    return;
  }
  uint64_t number = open->second;
  open_by_id_.erase(open);
  auto it = kept_.find(number);
  if (it == kept_.end()) return;
  Unended(it->second, number);
  if (number >= first_of_frame) {
    kept_.erase(it);  // opened and closed in one frame: both go together
    return;
  }
  Kept& k = it->second;
  // Ended before the ring's start while not closed, it was not carried:
  // closed in a frame held, its window is open to the close.
  if (k.open_frame < departures_.oldest_held() && k.ended_frame < departures_.oldest_held()) revived_ = true;
  k.close_frame = order;
  departures_.Closed(order, number);
}

void OpenMarks::Forget(std::map<uint64_t, Kept>::iterator it) {
  const Kept& k = it->second;
  if (k.close_frame == kNever) {
    // Nothing may close it any more: its close, should it come, is one
    // without an open (ignored, as the builder does).
    auto open = open_by_id_.find(k.opened.id);
    if (open != open_by_id_.end() && open->second == it->first) open_by_id_.erase(open);
    Unended(k, it->first);
  }
  kept_.erase(it);
}

void OpenMarks::Unended(const Kept& k, uint64_t number) {
  auto family = families_.find(FamilyOf(k.opened.label));
  if (family != families_.end()) std::erase(family->second.unended, number);
}

void OpenMarks::TrimFamilies() {
  if (families_.size() <= kMaxFamilies) return;
  std::erase_if(families_, [](const auto& f) { return f.second.unended.empty(); });
}

bool OpenMarks::Advance(uint64_t oldest_held) {
  bool dropped = departures_.Advance(oldest_held, [this](uint64_t frame, uint64_t number) {
    auto it = kept_.find(number);
    if (it != kept_.end() && it->second.close_frame == frame) kept_.erase(it);
  });
  while (!instants_.empty() && instants_.front().first < departures_.oldest_held()) {
    WindowMark& m = instants_.front().second;
    if (!last_dropped_instant_ || NotBefore(m, *last_dropped_instant_)) last_dropped_instant_ = std::move(m);
    instants_.pop_front();
  }
  bool changed = dropped || revived_;
  revived_ = false;
  return changed;
}

std::vector<SmallMessage> OpenMarks::Carried() const {
  std::vector<SmallMessage> out;
  // Numbers follow frames: the kept marks opened before the ring's start
  // come first.
  for (const auto& [number, k] : kept_) {
    if (k.open_frame >= departures_.oldest_held()) break;
    // Closed: in a frame held (those closed in one dropped are gone).
    // Not closed: unless a later open of its family left the ring.
    if (k.close_frame != kNever || k.ended_frame >= departures_.oldest_held()) out.emplace_back(k.opened);
  }
  if (last_dropped_instant_) out.emplace_back(*last_dropped_instant_);
  return out;
}

}  // namespace gpucap::format
