// A flight-recorder dump made ready before it is needed, for a crash
// handler (recorder/src/crash_dump.h): the capture writer's thread builds
// one after every change of its ring, and a handler writes it with open,
// write and close alone (no allocation, no lock, no Cap'n Proto).
//
// A snapshot is the ring laid out as the complete capture WriteRingCapture
// would write (frame_ring.h), without copying the frames: the file header;
// for each frame its header and a pointer to the payload the ring holds
// (the handler numbers the headers afresh as it writes them: their
// checksums are its work, not the writer's at every change); the trailer
// already encoded, with room for the trigger (at most kMaxTrigger
// characters, set by the handler in place); the footer. The payloads belong
// to the ring: they must outlive every reader of the snapshot (crash_slot.h
// says how the writer makes sure).
#ifndef GPUCAP_FORMAT_RING_SNAPSHOT_H_
#define GPUCAP_FORMAT_RING_SNAPSHOT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpucap/format/frame.h"
#include "gpucap/format/frame_ring.h"
#include "gpucap/format/model.h"

namespace capnp {
class MallocMessageBuilder;
}

namespace gpucap::format {

class RingSnapshot {
 public:
  static constexpr size_t kMaxTrigger = 23;

  // The ring as it is now; `trailer` gives the stats and stop reason (its
  // trigger is the handler's; its end_cupti_ns, where 0, is the latest
  // timestamp of the ring's frames). Null when the trailer cannot be laid out
  // with a trigger slot (it never is for a trailer Cap'n Proto encodes in
  // one segment; the caller then has no snapshot to offer).
  static std::unique_ptr<RingSnapshot> Build(const FrameRing& ring, Trailer trailer);
  ~RingSnapshot();

  // Async-signal-safe. Writes the capture to `fd` with write(2), its
  // trigger `trigger` (cut at kMaxTrigger) and its file header stamped
  // `created_realtime_ns`. Sets both in the snapshot itself: meant to be
  // called once. False when a write failed (the file then ends at the cut,
  // readable up to it).
  bool WriteTo(int fd, const char* trigger, int64_t created_realtime_ns);

  size_t frames() const { return frames_.size(); }
  uint64_t bytes() const;

 private:
  struct Frame {
    FrameHeader header;  // as the ring holds it; renumbered when written
    const uint8_t* payload;
  };
  RingSnapshot();
  void SetTrigger(const char* trigger);

  FileHeader file_header_{};
  std::vector<Frame> frames_;
  // The trailer: its frame header, then its payload, the segment table and
  // the one segment of the message, which stays in its builder.
  std::unique_ptr<capnp::MallocMessageBuilder> message_;
  FrameHeader trailer_header_{};
  uint32_t segment_table_[2] = {};
  uint8_t* segment_ = nullptr;
  size_t segment_bytes_ = 0;
  size_t trigger_text_ = 0;     // offsets in the segment: the trigger's bytes...
  size_t trigger_pointer_ = 0;  // ...and the list pointer that gives their count
  Footer footer_{};
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_RING_SNAPSHOT_H_
