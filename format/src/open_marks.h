// The window marks (--window-nvtx, the gpucap API) a flight-recorder dump
// must carry from before its span, so that the `marks` window its span
// begins in is the one a whole recording has (issue 46): the open marks
// whose window is still open at the start of the oldest windows frame the
// ring holds, and the latest instant mark before it. The sibling of
// OpenRanges (open_ranges.h), for the windows frames: the capture writer
// (ring mode only) hands this class every windows frame it puts into the
// ring, and, after each change of the ring, where the ring now begins; it
// writes what Carried returns as the ring's windows lead frame
// (frame_ring.h), which a dump writes first among its spans.
//
// Marks make windows as the builder makes them (ResolveWindows' marks,
// builder/src/window.cc, after sorting them by time):
//  - an open mark and the close mark with its id make a window. An open
//    mark is kept while its close has not come, or until the frame that
//    closed it leaves the ring; one opened and closed in the same frame is
//    never kept. A close that came before its open (marks of NVTX start/end
//    ranges, ended on another thread whose events came first) is
//    remembered (the latest kMaxEarlyCloses), as OpenRanges remembers ends.
//  - an open mark whose close is not in the capture ends at the next open
//    mark of its label less its digits. So one still unclosed is not
//    carried once a later open of its family (by time) left the ring: its
//    window ended there, before the span. The family is taken from the
//    label as recorded; the builder takes it from the label as shown
//    (ShownStepName: PyTorch's "step#3, op_id = 7" is "step#3"), which
//    differs only for such labels, mixed with plain ones in one family.
//  - instant marks make back-to-back windows, each from one instant mark
//    to the next in time, whatever their thread or label. The one that
//    begins the window holding the span's start is the latest (by time)
//    of those in the frames the ring dropped: it is carried, and no other.
//
// At most kMaxKept open marks are kept: past that the one opened first is
// forgotten (counted), since a mark open that long is far more likely a
// lost close than a window still running, and each dump carries all.
//
// Not thread-safe: the writer's thread is its only user.
#ifndef GPUCAP_FORMAT_SRC_OPEN_MARKS_H_
#define GPUCAP_FORMAT_SRC_OPEN_MARKS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "gpucap/format/model.h"
#include "ring_departures.h"

namespace gpucap::format {

class OpenMarks {
 public:
  static constexpr size_t kMaxKept = 1 << 14;
  static constexpr size_t kMaxEarlyCloses = 1 << 10;
  static constexpr size_t kMaxFamilies = 1 << 10;

  // The messages of the windows frame the ring numbers `order` (its
  // RingFrame::order; each frame's is higher than the last's), in the order
  // they are encoded in it. Messages other than window marks are ignored.
  void AddFrame(uint64_t order, std::span<const SmallMessage> messages);

  // The ring now holds no span frame numbered below `oldest_held`
  // (FrameRing::oldest_span_order): marks whose window closed in the frames
  // it dropped are forgotten. True when Carried may have changed since the
  // last call: a windows frame given to AddFrame is among those dropped, or
  // a close came for a mark opened in one whose window had ended (at a
  // later open of its family in one).
  bool Advance(uint64_t oldest_held);

  // The marks, as recorded, made in a frame below the last `oldest_held`
  // whose window is open there: the open marks (in the order they were
  // made), then the latest instant mark.
  std::vector<SmallMessage> Carried() const;

  size_t kept() const { return kept_.size(); }
  uint64_t forgotten() const { return forgotten_; }

 private:
  static constexpr uint64_t kNever = UINT64_MAX;
  struct Kept {
    WindowMark opened;
    uint64_t open_frame = 0;
    uint64_t close_frame = kNever;
    // The first frame with a later open of its family: where its window
    // ends while its close has not come.
    uint64_t ended_frame = kNever;
  };

  // Open marks are numbered in the order they were opened, across frames.
  void Open(const WindowMark& m, uint64_t order);
  void Close(uint64_t id, uint64_t order, uint64_t first_of_frame);
  void Forget(std::map<uint64_t, Kept>::iterator it);
  void Unended(const Kept& k, uint64_t number);  // no longer unended

  std::map<uint64_t, Kept> kept_;  // by number
  std::unordered_map<uint64_t, uint64_t> open_by_id_;  // id -> number, while not closed
  struct Family {
    uint64_t latest_open_ns = 0;  // of the opens of the family seen
    std::vector<uint64_t> unended;  // its kept marks not yet closed nor ended, by number
  };
  // Drops the families with no mark unended, which only remember their
  // latest open, once there are more than kMaxFamilies.
  void TrimFamilies();

  std::map<std::string, Family> families_;  // by label less its digits
  RingDepartures departures_;  // windows frames given, and the marks closed in each
  std::unordered_set<uint64_t> early_closes_;  // ids closed before their open came
  std::deque<uint64_t> early_close_order_;
  // The latest instant mark of each frame given that has one, not yet known
  // dropped, and the latest of those dropped.
  std::deque<std::pair<uint64_t, WindowMark>> instants_;
  std::optional<WindowMark> last_dropped_instant_;
  uint64_t next_number_ = 0;
  uint64_t forgotten_ = 0;
  bool revived_ = false;  // a close made a mark carried again since Advance
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_SRC_OPEN_MARKS_H_
