// The NVTX ranges a flight-recorder dump must carry from before its span:
// those open at the start of the oldest ranges frame the ring still holds.
// A range whose push (or start) went with the ring's oldest frames while
// its pop (or end) is still held would otherwise reach the builder as a
// pop without a push, and a range open across the whole span would not
// reach it at all (issue 46). The capture writer (ring mode only) hands
// this class every ranges frame it puts into the ring, and, after each
// change of the ring, where the ring now begins; it writes what Carried
// returns as the ring's lead frame (frame_ring.h), which a dump writes
// first among its spans.
//
// Ranges pair as the builder pairs them (RangeIndex, builder/ranges.h): a
// pop closes the newest open push of its thread and domain, an end the
// start of its id (NVTX's range ids are the process's, whatever the
// domain); a close with nothing to close is ignored; marks, names and
// payload schemas are no ranges. Events come in the order the writer got
// them, which is each thread's own order but not the process's: an end may
// come before the start of its id, made on another thread whose events
// came later. Such an end is remembered (the latest kMaxEarlyEnds), so that
// its start does not stay open forever.
//
// A range is kept while it is open, or until the frame that closed it
// leaves the ring; one opened and closed in the same frame is never kept
// (both go together). At most kMaxKept are kept: past that the one opened
// first is forgotten (counted), since a range open that long is far more
// likely a lost pop than a range still running, and each dump carries all.
//
// Not thread-safe: the writer's thread is its only user.
#ifndef GPUCAP_FORMAT_SRC_OPEN_RANGES_H_
#define GPUCAP_FORMAT_SRC_OPEN_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpucap/format/model.h"
#include "ring_departures.h"

namespace gpucap::format {

class OpenRanges {
 public:
  static constexpr size_t kMaxKept = 1 << 14;
  static constexpr size_t kMaxEarlyEnds = 1 << 10;

  // The messages of the ranges frame the ring numbers `order` (its
  // RingFrame::order; each frame's is higher than the last's), in the order
  // they are encoded in it. Messages other than range events are ignored.
  void AddFrame(uint64_t order, std::span<const SmallMessage> messages);

  // The ring now holds no span frame numbered below `oldest_held`
  // (FrameRing::oldest_span_order): ranges closed in the frames it dropped
  // are forgotten. True when a ranges frame given to AddFrame is among
  // those, that is when Carried may have changed.
  bool Advance(uint64_t oldest_held);

  // The pushes and starts, as recorded, of the ranges opened in a frame
  // below the last `oldest_held` and not closed in one: still open, or
  // closed in a frame the ring holds. In the order they were made.
  std::vector<SmallMessage> Carried() const;

  size_t kept() const { return kept_.size(); }
  uint64_t forgotten() const { return forgotten_; }

 private:
  static constexpr uint64_t kStillOpen = UINT64_MAX;
  struct Kept {
    RangeEvent opened;  // the push or start
    uint64_t open_frame = 0;
    uint64_t close_frame = kStillOpen;
  };

  // Ranges are numbered in the order they were opened, across frames.
  void Open(const RangeEvent& e, uint64_t number);
  void Close(uint64_t number, uint64_t order, uint64_t first_of_frame);
  void CloseStarted(uint64_t id, uint64_t order, uint64_t first_of_frame);
  void Forget(std::map<uint64_t, Kept>::iterator it);

  std::map<uint64_t, Kept> kept_;  // by number
  // (os_tid, domain) -> its open pushes' numbers, the innermost last.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<uint64_t>> stacks_;
  std::unordered_map<uint64_t, uint64_t> started_;  // start/end id -> number
  RingDepartures departures_;  // ranges frames given, and the ranges closed in each
  std::unordered_set<uint64_t> early_ends_;  // ids ended before their start came
  std::deque<uint64_t> early_end_order_;
  // The frame being added: its ranges opened so far, by number from
  // first_of_frame on; null once closed in it (then never kept).
  std::vector<const RangeEvent*> fresh_;
  uint64_t next_number_ = 0;
  uint64_t forgotten_ = 0;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_SRC_OPEN_RANGES_H_
