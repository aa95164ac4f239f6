// A window's slices rendered in pieces on several threads. The join
// describes slices one after another (its caches and shared-argument ids
// depend on the order); rendering and formatting them is the larger part of
// the work and needs nothing but the slice. So a large window's slices are
// copied out in runs of kSlicesPerPiece, each run rendered by a renderer of
// its own (TraceSink::NewPiece) on a helper thread, and the runs' bytes
// handed to the window's renderer in order (AddPiece). Only when asked
// (JoinOptions::pieces, off by default: join.h says what it measured).
//
// Reproducible: whether a window is cut, and where, depends only on its
// slice count, never on the threads; with no helpers the same pieces are
// rendered on the caller's thread. So a trace is the same bytes at every
// thread count (gzip members end where pieces do: tests/builder/
// thread_count_test.cc compares). Windows of at most kSlicesPerPiece slices,
// and renderers without pieces (pftrace, for now), take slices one by one.
//
// Memory: at most helpers + 2 pieces are held at once (and kept for reuse
// until the window is done), each its slices' copy (~0.6 KB a slice) and
// its rendered bytes.
#ifndef GPUCAP_BUILDER_SRC_SLICE_PIECES_H_
#define GPUCAP_BUILDER_SRC_SLICE_PIECES_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gpucap/builder/trace_model.h"

namespace gpucap::builder {

class SlicePieces {
 public:
  static constexpr size_t kSlicesPerPiece = 1 << 14;

  // `slices`: how many slices the window will add; `helpers`: threads that
  // render pieces besides the caller (0: the caller renders them).
  SlicePieces(TraceSink* sink, size_t slices, int helpers);
  ~SlicePieces();

  // Renders `s` now, or copies it into the current piece.
  Status Add(const Slice& s);
  // Renders what is left and hands every piece to the sink, in order. The
  // sink then takes counters and End as usual.
  Status Finish();

 private:
  struct Piece;
  Status Submit();
  Status NewCurrent();  // the next piece to fill: a spare one, else a new one
  Status EmitOldest();  // waits for the oldest piece and hands it to the sink
  void Render(Piece* p);
  void Work();

  TraceSink* sink_;
  bool cut_ = false;  // pieces in use
  std::unique_ptr<Piece> current_;
  std::deque<std::unique_ptr<Piece>> in_flight_;  // submitted, in order
  std::vector<std::unique_ptr<Piece>> spare_;      // emitted, storage kept for reuse
  size_t max_in_flight_ = 1;
  std::vector<std::thread> helpers_;
  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<Piece*> queue_;  // submitted, not yet taken by a helper
  bool stop_ = false;
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_SLICE_PIECES_H_
