// Writes a capture. One writer thread owns the sink; producers (CUPTI
// callbacks, NVTX hooks, the recorder's own threads) hand it work through a
// bounded lock-free queue and never wait for the disk. When the queue is full,
// or the writer stopped after a disk error or at the size cap, a submission is
// dropped and counted instead.
//
// Ring mode (StartRing, `gpucap record --ring-mb`): the frames go to a
// FrameRing in memory (frame_ring.h) instead of a file, and a dump, asked
// for with RequestDump, writes the ring as a complete capture to a new sink,
// on the writer thread, in queue order (after everything submitted before
// the request). A ranges frame that leaves the ring leaves the ranges it
// opened without their pushes: the writer keeps those still open, or
// closed in a frame the ring holds, as the ring's ranges lead frame, which a
// dump writes before its spans (open_ranges.h). A windows frame that leaves
// it leaves the `marks` windows it opened without their open marks: the
// writer keeps those the same way, with the latest instant mark, as the
// ring's windows lead frame (open_marks.h). With ring_crash_snapshots, the writer also keeps a
// RingSnapshot of the ring current after each change, for a crash handler
// to write (crash_slot.h, ring_snapshot.h).
#ifndef GPUCAP_FORMAT_CAPTURE_WRITER_H_
#define GPUCAP_FORMAT_CAPTURE_WRITER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gpucap/format/crash_slot.h"
#include "gpucap/format/frame_ring.h"
#include "gpucap/format/model.h"
#include "gpucap/format/sink.h"
#include "gpucap/status.h"

namespace gpucap::format {

struct WriterOptions {
  size_t queue_capacity = 1024;        // items between producers and the writer thread
  size_t batch_bytes = 256 << 10;      // a small-message batch is written at this size...
  uint32_t batch_max_age_ms = 1000;    // ...or at this age, so a crash loses little
  uint64_t max_file_bytes = 0;         // 0: no cap; at the cap the writer stops cleanly
  int lz4_acceleration = 1;
  int64_t created_realtime_ns = 0;     // 0: now
  // The trailer's queue_high_water: this writer's own (a recording), or,
  // false, the caller's trailer's as given (a rewrite of another capture,
  // `gpucap trim`: the figure is the recording's, and this writer's depends
  // on thread timing, which would make the same trim give other bytes).
  bool own_queue_high_water = true;
  // Ring mode: keep a snapshot of the ring for a crash handler (crash_slot).
  bool ring_crash_snapshots = false;
};

// One CUPTI activity buffer handed to the writer. `release` runs exactly
// once, on the writer thread or in Submit, once the bytes are written or
// dropped; it typically returns the buffer to its pool.
struct ActivityBuffer {
  const uint8_t* data = nullptr;
  size_t size = 0;
  ChunkInfo info;
  std::function<void()> release;
};

struct WriterCounters {
  uint64_t frames_written = 0;
  uint64_t bytes_written = 0;
  uint64_t chunks_written = 0;
  uint64_t chunk_raw_bytes = 0;       // CUPTI bytes in written chunks
  uint64_t chunk_stored_bytes = 0;    // the same after compression
  uint64_t buffers_dropped_queue_full = 0;
  uint64_t buffers_dropped_stopped = 0;
  uint64_t bytes_dropped = 0;         // CUPTI bytes in dropped buffers
  uint64_t messages_dropped = 0;
  uint64_t queue_high_water = 0;
  // Ring mode.
  uint64_t dumps_written = 0;
  uint64_t dumps_failed = 0;
};

// Ring mode: the sink for dump number `n` (1, 2, ...), called on the writer
// thread. It must never return a sink over an existing file.
using DumpSinkFactory = std::function<Result<std::unique_ptr<Sink>>(uint64_t n)>;

class CaptureWriter {
 public:
  // Writes the file header and starts the writer thread.
  static Result<std::unique_ptr<CaptureWriter>> Start(std::unique_ptr<Sink> sink,
                                                      const WriterOptions& options);
  // Ring mode: no file until a dump; max_file_bytes does not apply.
  static Result<std::unique_ptr<CaptureWriter>> StartRing(DumpSinkFactory dump_sink, RingLimits limits,
                                                          const WriterOptions& options);
  // Closes without a clean-shutdown mark if Close was not called.
  ~CaptureWriter();

  CaptureWriter(const CaptureWriter&) = delete;
  CaptureWriter& operator=(const CaptureWriter&) = delete;

  // Producer side: thread-safe, wait-free but for allocation. False means the
  // submission was dropped and counted.
  bool SubmitActivity(ActivityBuffer buffer);
  bool Submit(SmallMessage message);
  bool Submit(std::vector<SmallMessage> batch);

  // Waits up to `timeout` until everything submitted before the call,
  // pending batches included, has reached the sink. False on timeout or when
  // the writer has stopped.
  bool Flush(std::chrono::milliseconds timeout);

  // Drains the queue, writes the trailer (the caller's fields plus totals and
  // the frame index the writer kept) and the footer, and closes the sink.
  // Waits at most `timeout`; past it the writer thread is left to finish on
  // its own and Close reports the timeout. In ring mode it writes no file
  // (dumps queued before it are written first) and drops the ring.
  Status Close(Trailer trailer, std::chrono::milliseconds timeout);

  // Ring mode: queues a dump of the ring, written once the writer reaches
  // it. The dump's trailer is `trailer` (the caller's stats) with the
  // writer's totals, `trigger` and the ring's counters (ring_* in
  // stats.extra). False when not in ring mode, stopped, or the queue is full.
  bool RequestDump(std::string trigger, Trailer trailer);
  // Ring mode: the last dump's file name, or why it failed.
  std::string last_dump() const;
  // Ring mode: the ring's counters as of the last frame added.
  RingCounters ring_counters() const;
  // Ring mode with ring_crash_snapshots: where the ring's snapshot is kept
  // for a crash handler (it outlives the writer as long as it is held);
  // null otherwise. Empty once the writer closed.
  std::shared_ptr<RingCrashSlot> crash_slot() const;

  WriterCounters counters() const;
  // The error that stopped the writer (disk full, I/O error), or ok.
  Status error() const;
  // True once the writer no longer accepts work: after an error, at the size
  // cap, or after Close.
  bool stopped() const;

  class Impl;

 private:
  explicit CaptureWriter(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CAPTURE_WRITER_H_
