// Where the capture writer leaves its ring's latest RingSnapshot for a crash
// handler, and the handshake that keeps the bytes a handler reads alive.
//
// The writer thread owns the ring and changes it while any thread may
// crash. It builds a new snapshot after each change (ring_snapshot.h) and
// hands it over with Publish, together with the payloads of the frames the
// change dropped: Publish makes the new snapshot current and frees the old
// one and those payloads, inside a short window marked `mutating`. A
// handler marks `reading` before it looks. Both flags are seq_cst, stored
// before the other's is loaded (Dekker's pattern), so at least one side
// sees the other: a writer that sees a reader frees nothing (it keeps the
// payloads until a later Publish finds no reader, and drops the unpublished
// snapshot, which no one has seen); a reader that sees the window waits for
// its end, bounded, then takes the snapshot current after it.
//
// A handler running on the writer's own thread (a crash inside the writer)
// cannot wait for itself: inside the window it gets nothing, outside it
// gets the snapshot, which no one can change while that thread is in the
// handler.
#ifndef GPUCAP_FORMAT_CRASH_SLOT_H_
#define GPUCAP_FORMAT_CRASH_SLOT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpucap/format/ring_snapshot.h"

namespace gpucap::format {

class RingCrashSlot {
 public:
  RingCrashSlot() = default;
  RingCrashSlot(const RingCrashSlot&) = delete;
  RingCrashSlot& operator=(const RingCrashSlot&) = delete;

  // --- the writer thread ---
  // The thread that calls Publish (an OS thread id, gettid).
  void SetWriterTid(int tid) { writer_tid_.store(tid, std::memory_order_relaxed); }
  // Makes `next` current (null: no snapshot) and frees the previous one and
  // `retired` (the payloads the previous one may point to), unless a
  // handler is reading: then nothing is freed and `next` is dropped. True
  // when `next` was made current.
  bool Publish(std::unique_ptr<RingSnapshot> next, std::vector<std::vector<uint8_t>> retired);
  // Payloads kept because a handler was reading (a test's view).
  size_t deferred() const { return deferred_.size(); }

  // --- a signal handler (async-signal-safe) ---
  // Marks a reader and returns the current snapshot, after waiting up to
  // `wait_ms` for a Publish under way to end; null when there is none,
  // the wait ran out, or `self_tid` is the writer's, inside its window.
  // Every BeginRead needs an EndRead, whatever it returned.
  RingSnapshot* BeginRead(int self_tid, int wait_ms);
  void EndRead() { reading_.store(false, std::memory_order_seq_cst); }

 private:
  std::atomic<RingSnapshot*> published_{nullptr};
  std::atomic<bool> reading_{false};
  std::atomic<bool> mutating_{false};
  std::atomic<int> writer_tid_{0};
  // The writer's alone.
  std::unique_ptr<RingSnapshot> current_;
  std::vector<std::vector<uint8_t>> deferred_;
};

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_CRASH_SLOT_H_
