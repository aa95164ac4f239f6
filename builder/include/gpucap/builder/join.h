// Join: turns the rows decoded for one window into a trace.
//
//   - a GPU op finds its launch through the correlation id (runtime or
//     driver record), and so its CPU thread; a launch and its op drawn in
//     the same window are tied by an "ac2g" flow, as Kineto draws them (a
//     graph launch gets one flow per op it ran);
//   - the ranges open on the launching thread at launch time annotate the
//     op: the innermost as "annotation", the stack as "annotation stack";
//   - a graph-replayed op goes from its node (an instantiation clone) back to
//     the node created at capture time and takes the ranges open on the
//     capturing thread then, so replays carry capture-time annotations;
//   - per stream, each range spanning ops becomes a gpu_user_annotation slice;
//   - syncs, overheads, CUDA events, ranges, marks and counters join as
//     Kineto shows them; graph dependency arrows on request;
//   - NVTX seen by CUPTI (MARKER records) is drawn as ranges and instants;
//     annotations come from the recorder's own range events, not from these.
//
// Rows are rendered in the window holding their start; rows outside it (the
// lookback for launches) only answer lookups.
#ifndef GPUCAP_BUILDER_JOIN_H_
#define GPUCAP_BUILDER_JOIN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/decode.h"
#include "gpucap/builder/join_options.h"
#include "gpucap/builder/join_use.h"
#include "gpucap/builder/row_source.h"
#include "gpucap/builder/tables.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/builder/window.h"
#include "gpucap/status.h"

namespace gpucap::builder {

namespace join_internal {
struct JoinTables;
}  // namespace join_internal

// The join's large tables (ops, launches, slices, flows), kept from one
// window to the next. A window's tables run to tens of MB; allocated afresh
// each time, every page of them faults in again, which cost a build of many
// windows more than a tenth of its time. Holds at most the largest window's.
class JoinWorkspace {
 public:
  JoinWorkspace();
  ~JoinWorkspace();
  JoinWorkspace(const JoinWorkspace&) = delete;
  JoinWorkspace& operator=(const JoinWorkspace&) = delete;

  using Tables = join_internal::JoinTables;  // join_result.h
  Tables& tables() { return *tables_; }

 private:
  std::unique_ptr<Tables> tables_;
};

// Joins `window` from `parts` (decoded chunks, in chunk order) and streams it
// into `sink`, from Begin to End. `decode` describes what decoding skipped,
// for the trace's metadata. `workspace` is reused across windows. With
// `use`, also says what the window referenced (join_use.h). `rows` gives
// back the argument columns of parts whose kernels lack them (and then
// takes the kernel and API rows back while the join runs).
Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats,
                  JoinWorkspace* workspace, JoinUse* use = nullptr,
                  const RowSource& rows = RowSource());
// The same with a workspace of its own.
Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_JOIN_H_
