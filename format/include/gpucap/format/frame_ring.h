// The flight recorder's memory (`gpucap record --ring-mb N / --ring S`):
// a capture's frames, already encoded and compressed, kept in memory instead
// of written, so that a dump can write the last stretch of the recording as
// a complete capture.
//
// Frames are of two sorts (IsDefinitionFrame):
//  - definitions: what records refer to by id or pointer and what a reader
//    needs first (session, devices, threads, streams, strings, graphs,
//    clocks; and the ranges frames the writer fills with NVTX's thread,
//    domain and category names and payload schemas only). They are small and cumulative, and never dropped: a dump
//    without the name of a kernel in its span would be useless.
//  - spans: activity chunks, ranges, window marks, metadata, counters,
//    stats. They are what the ring bounds: when a new one takes the span
//    bytes past the bound, or the oldest is older than the age bound, the
//    oldest spans go first, counted.
// Every frame keeps the place it was added in (`order`), so that a dump
// writes definitions and spans interleaved as they were produced (a string
// pointer reused later keeps its later meaning).
//
// Besides, the ring may hold "lead" frames (SetLead), one of each type:
// the capture writer's ranges frame of the NVTX ranges open at the start of
// the oldest ranges frame held (open_ranges.h), whose pushes went with
// dropped frames, and its windows frame of the window marks whose window is
// open at the start of the oldest windows frame held (open_marks.h). They
// are no spans of their own: never dropped nor aged, not in the span counts
// or the bound (they are small: nesting depth times threads), and walked
// first among the spans, so that a dump (and a crash snapshot) holds the
// push of every range whose pop it holds, and the open mark of every
// window its span begins in, after the names they refer to.
//
// Not thread-safe: the capture writer's thread is its only user. A crash
// handler may read the payloads of the frames it holds through a
// RingSnapshot (ring_snapshot.h): a ring made with `hold_dropped` keeps the
// payloads of the frames it drops until TakeRetired hands them to the
// caller, who frees them when no handler can be reading (crash_slot.h).
#ifndef GPUCAP_FORMAT_FRAME_RING_H_
#define GPUCAP_FORMAT_FRAME_RING_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "gpucap/format/frame.h"
#include "gpucap/format/model.h"
#include "gpucap/format/sink.h"

namespace gpucap::format {

struct RingLimits {
  uint64_t max_span_bytes = 64ull << 20;  // payload + header bytes of span frames held
  uint64_t max_age_ns = 0;                // 0: no age bound; else spans added longer ago go
};

struct RingFrame {
  uint64_t order = 0;      // 0, 1, 2, ... in the order frames were added (a lead's: 0, placed, not ordered)
  FrameHeader header{};    // as the frame was encoded (its sequence is rewritten on dump)
  uint64_t min_ts = 0, max_ts = 0;
  uint64_t added_ns = 0;   // the caller's clock at Add, for the age bound
  uint64_t activity_records = 0;
  std::vector<KindCount> kind_counts;
  std::vector<uint8_t> payload;
  uint64_t bytes() const { return sizeof(FrameHeader) + payload.size(); }
};

struct RingCounters {
  uint64_t frames_added = 0;
  uint64_t span_frames = 0;        // held now
  uint64_t span_bytes = 0;         // held now
  uint64_t span_bytes_high = 0;    // the most ever held (never above the bound but for one frame larger than it)
  uint64_t definition_frames = 0;  // held (never dropped)
  uint64_t definition_bytes = 0;
  uint64_t frames_dropped = 0;     // spans aged or pushed out
  uint64_t bytes_dropped = 0;
  uint64_t records_dropped = 0;    // activity records in dropped chunks
  uint64_t open_ranges_carried = 0;  // ranges the ranges lead holds now (SetLead)
  uint64_t open_marks_carried = 0;   // marks the windows lead holds now (SetLead)
  // Open ranges (marks) the writer stopped carrying past its bound
  // (open_ranges.h, open_marks.h): a dump's trace may miss them.
  uint64_t open_ranges_forgotten = 0;
  uint64_t open_marks_forgotten = 0;
};

bool IsDefinitionFrame(FrameType type);

class FrameRing {
 public:
  explicit FrameRing(RingLimits limits, bool hold_dropped = false)
      : limits_(limits), hold_dropped_(hold_dropped) {}

  // Keeps a copy of the frame (`header` and the payload `pieces`). A span
  // frame larger than the whole bound is dropped at once (counted).
  // `definition` keeps a frame of a span type as a definition: the writer
  // batches NVTX's names and payload schemas (range events) apart, in
  // ranges frames of their own.
  void Add(const FrameHeader& header, std::span<const ByteSpan> pieces, uint64_t min_ts, uint64_t max_ts,
           uint64_t now_ns, uint64_t activity_records = 0, std::vector<KindCount> kind_counts = {},
           bool definition = false);
  // Drops spans older than the age bound at `now_ns` (Add does it too).
  void Age(uint64_t now_ns);

  // The order the next frame added gets, and the oldest span's held (the
  // next frame's when none is): every span below it was dropped (but one
  // larger than the bound, dropped at once, may be above it).
  uint64_t next_order() const { return next_order_; }
  uint64_t oldest_span_order() const { return spans_.empty() ? next_order_ : spans_.front().order; }

  // Makes the frame (`header`, the payload `pieces`; a ranges or windows
  // frame) the lead of its type, in place of the one before; `carried`: the
  // ranges or marks it holds, for the counters. ClearLead leaves none of
  // `type`. With hold_dropped, the replaced payload is retired as a dropped
  // frame's is (TakeRetired).
  void SetLead(const FrameHeader& header, std::span<const ByteSpan> pieces, uint64_t min_ts, uint64_t max_ts,
               uint64_t carried);
  void ClearLead(FrameType type);
  // The writer's count of open ranges and marks it stopped carrying (RingCounters).
  void NoteOpenForgotten(uint64_t ranges, uint64_t marks) {
    counters_.open_ranges_forgotten = ranges;
    counters_.open_marks_forgotten = marks;
  }
  const RingFrame* lead(FrameType type) const;

  // Every frame held, definitions and spans merged in the order they were
  // added, the leads (ranges, then windows) just before the first span
  // (after every definition when no span is held). Visit is the same walk with the visitor inlined
  // (the writer's crash snapshot walks the ring after every change).
  void ForEach(const std::function<void(const RingFrame&)>& fn) const { Visit(fn); }
  template <typename Fn>
  void Visit(Fn&& fn) const {
    size_t d = 0, s = 0;
    bool leads_due = !leads_.empty();
    while (d < definitions_.size() || s < spans_.size()) {
      bool take_definition =
          s == spans_.size() || (d < definitions_.size() && definitions_[d].order < spans_[s].order);
      if (!take_definition && leads_due) {
        for (const RingFrame& lead : leads_) fn(lead);
        leads_due = false;
      }
      fn(take_definition ? definitions_[d++] : spans_[s++]);
    }
    if (leads_due) {
      for (const RingFrame& lead : leads_) fn(lead);
    }
  }
  // Frames ForEach walks.
  uint64_t frames_held() const { return counters_.definition_frames + counters_.span_frames + leads_.size(); }
  // The activity records in the frames held, in all and per kind, kept as
  // frames come and go.
  uint64_t held_records() const { return held_records_; }
  const std::map<uint32_t, uint64_t>& held_per_kind() const { return held_per_kind_; }

  // With hold_dropped: the payloads of the frames dropped since the last
  // call, whose bytes a snapshot built before may still point to.
  std::vector<std::vector<uint8_t>> TakeRetired() { return std::move(retired_); }

  const RingCounters& counters() const { return counters_; }
  const RingLimits& limits() const { return limits_; }

 private:
  void DropOldestSpan();

  RingLimits limits_;
  void Count(const RingFrame& f, int sign);

  bool hold_dropped_ = false;
  uint64_t held_records_ = 0;
  std::map<uint32_t, uint64_t> held_per_kind_;
  std::vector<std::vector<uint8_t>> retired_;
  RingCounters counters_;
  std::vector<RingFrame> definitions_;
  std::deque<RingFrame> spans_;
  uint64_t* CarriedCounter(FrameType type);

  std::vector<RingFrame> leads_;  // at most one of each type, by type
  uint64_t next_order_ = 0;
};

// Writes what `ring` holds to `sink` as a complete capture: a file header
// (created at `created_realtime_ns`), every frame in ForEach's order,
// numbered afresh from 0, then `trailer` with the dump's own totals, index
// and frame counts, the ring's counters (ring_* in stats.extra) and
// clean_shutdown set, and the footer. The caller closes the sink.
Status WriteRingCapture(const FrameRing& ring, Trailer trailer, int64_t created_realtime_ns, Sink* sink);

// What WriteRingCapture's trailer holds for `ring`: `trailer` with the
// totals, index (frames laid out after the file header, in ForEach's
// order), frame counts and ring_* counters of a dump of it, clean_shutdown
// set. Shared with RingSnapshot, which lays the frames out the same way.
Trailer RingCaptureTrailer(const FrameRing& ring, Trailer trailer);
// `header` numbered `sequence`, its header checksum made anew (the payload
// and its checksum are as made).
FrameHeader Resequenced(const FrameHeader& header, uint32_t sequence);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_FRAME_RING_H_
