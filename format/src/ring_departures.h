// What leaves the flight recorder's ring, as the writer's carriers of open
// ranges and window marks (open_ranges.h, open_marks.h) need to know it:
// the frames of their type given to the ring, numbered as the ring numbers
// them (RingFrame::order), and the entries closed in each. Once the ring
// holds no span frame below `oldest_held` (FrameRing::oldest_span_order),
// a carrier learns whether one of its frames left and which of its closed
// entries left with the frame that closed them.
//
// Not thread-safe: the writer's thread is its only user.
#ifndef GPUCAP_FORMAT_SRC_RING_DEPARTURES_H_
#define GPUCAP_FORMAT_SRC_RING_DEPARTURES_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

namespace gpucap::format {

class RingDepartures {
 public:
  // A frame of the carrier's type, given to the ring as `order`; each
  // frame's order is higher than the last's.
  void AddFrame(uint64_t order) { frames_.push_back(order); }
  // The carrier's entry `number` was closed in the frame `order`.
  void Closed(uint64_t order, uint64_t number) { closed_.emplace_back(order, number); }

  // The ring holds nothing below `oldest_held` now (a lower value than an
  // earlier call's changes nothing). Calls gone(order, number) for each
  // entry closed in a frame that left, in the order they were closed; true
  // when a frame given to AddFrame left.
  template <typename Gone>
  bool Advance(uint64_t oldest_held, Gone&& gone) {
    oldest_held_ = std::max(oldest_held_, oldest_held);
    bool left = false;
    while (!frames_.empty() && frames_.front() < oldest_held_) {
      frames_.pop_front();
      left = true;
    }
    while (!closed_.empty() && closed_.front().first < oldest_held_) {
      auto [order, number] = closed_.front();
      closed_.pop_front();
      gone(order, number);
    }
    return left;
  }

  uint64_t oldest_held() const { return oldest_held_; }

 private:
  std::deque<uint64_t> frames_;                       // given, not yet known left
  std::deque<std::pair<uint64_t, uint64_t>> closed_;  // (close frame, number), in the order closed
  uint64_t oldest_held_ = 0;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_SRC_RING_DEPARTURES_H_
