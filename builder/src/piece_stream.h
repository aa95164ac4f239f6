// The stage between a window's join and its renderer: slices described from
// their refs and handed to the sink, in the order the trace lists them.
//
// A window's refs come grouped in runs of one track (TrackRun), the runs in
// the order of their tracks' numbers. A small window, or one whose describing
// does more than read (it reports what it used, or has rows again from the
// capture), is described slice by slice on the caller's thread. A large one
// whose renderer takes pieces is cut into pieces of about kSlicesPerPiece
// slices, each described and rendered on the build's threads by a describer
// and renderer kept from piece to piece (warm caches), and the pieces' bytes
// go to the sink in order: the trace is the same bytes at every thread
// count, and the same as one described slice by slice.
//
// Knows refs, slices and sinks, not the join: a describer is anything that
// turns a ref into its slice.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_PIECE_STREAM_H_
#define GPUCAP_BUILDER_SRC_PIECE_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "gpucap/builder/output.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/builder/work_queue.h"
#include "gpucap/status.h"
#include "slice_order.h"

namespace gpucap::builder {

// Turns a ref back into the slice it stands for. Whatever the slice points
// to (args, names, flows) stays valid until the next Describe.
class Describer {
 public:
  virtual ~Describer() = default;
  virtual void Describe(const SliceRef& ref, Slice* slice) = 0;
  // Not ok once rows it had again were found damaged: the slice last
  // described is not to be written, nor the window.
  virtual const Status& status() const = 0;
};

// refs[begin, end) all on one track, numbered `track` in the trace.
struct TrackRun {
  uint32_t track;
  size_t begin, end;
};

struct PieceStreamOptions {
  // Makes a describer for pieces on other threads (called on the caller's
  // thread, before any piece runs); null: the window is described slice by
  // slice with the caller's describer, whatever its size.
  std::function<std::unique_ptr<Describer>()> new_describer;
  WorkQueue* queue = nullptr;  // null: pieces are rendered on the caller's thread
  BlockPool* blocks = nullptr;  // null: a pool of the window's own
};

// A window of more slices than this is described and rendered in pieces of
// this many (when options.new_describer is set and the sink takes pieces),
// at most kPiecesInFlight at once (each its slices' text, ~3.5 MB of JSON).
inline constexpr size_t kSlicesPerPiece = 1 << 14;
inline constexpr size_t kPiecesInFlight = 4;

// Describes the slices of `refs` run by run, as `runs` order them, and adds
// them to `sink` (between its Begin and End, which are the caller's):
// through `describer` one by one, or in pieces (see above). The first
// failure, the describer's or the sink's, ends it.
Status StreamSlices(std::span<const SliceRef> refs, std::span<const TrackRun> runs, Describer* describer,
                    const PieceStreamOptions& options, TraceSink* sink);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_PIECE_STREAM_H_
