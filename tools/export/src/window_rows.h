// One window's join, as rows: a TraceSink that takes the slices and counter
// points the join hands a renderer and files them into the schema's tables,
// so the database holds exactly what the window's trace shows (same ops,
// times, names and annotations) plus the join's results as columns: the
// window, the launching call (through the launch flow), the annotation stack.
//
// Rows go out as they are made: a batch that has grown past `batch_bytes`
// is handed to OrderedBatches and a fresh one continues the window
// (RowBatch::continues), so a window of millions of slices is held a batch
// at a time. What waits longer:
//  - NVTX ranges, compactly (PendingRange), until their thread's (or
//    start/end track's) last range: a range's row id and parent come from
//    the order (domain, start, longest first) among its track's ranges,
//    lanes included, which the join does not stream in. The join streams
//    track by track in track order, each track's lanes right after it
//    (TrackRegistry::Order), so the ranges of one track are written when
//    a range of a later track comes, and the rows have the ids a sort of
//    the window's ranges by (track, domain, start) gives them. (Were one
//    track's ranges to come apart, each part would be sorted apart: the
//    same rows, ids in another order, parents found within each part.)
//  - the batch itself while an op in it waits for its launching API call
//    (window_rows.cc, AddOp).
#ifndef GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_
#define GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucap/builder/builder.h"
#include "ordered_batches.h"
#include "row_batch.h"

namespace gpucap::tools::sqlite {

// What a capture's windows share: its interned strings and stacks, and its
// kernels' mangled and short names.
struct CaptureRows {
  // `texts`: where `ids` keeps the strings, alive until the export's last write.
  CaptureRows(const builder::CaptureIndex& index, uint32_t capture, int32_t rank, TextArena* texts)
      : index(index), capture(capture), rank(rank), ids(texts) {}
  const builder::CaptureIndex& index;
  uint32_t capture;
  int32_t rank;
  LocalIds ids;
  // Demangled name -> the capture string it came from, built on first need.
  std::unordered_map<std::string, uint32_t> mangled_of;
  bool mangled_built = false;

  struct KernelNames {
    uint32_t name = 0, mangled = 0, short_name = 0;
  };
  KernelNames NamesOf(std::string_view demangled);
};

class WindowRows : public builder::TraceSink {
 public:
  // A window's rows past this many bytes of cells and texts are handed
  // over. A batch costs ~3-4x its bound in memory (vectors grown by
  // doubling, the allocator's slack), and kPendingPerCapture + 2 batches of
  // each capture being joined may be alive at once: 4 MiB keeps that to
  // tens of MB, against a limit of 10x the capture + 256 MB, and is still
  // ~20k rows, beside which a hand-over (a lock, a vector's clearing) is
  // nothing. On the 1.6M-range capture of bench/README.md: peak RSS 900 MB
  // at 2 MiB, 912 at 4, 935 at 8, 1,057 at 32, wall time the same.
  static constexpr size_t kBatchBytes = size_t{4} << 20;

  // `batch_bytes`: 0 for kBatchBytes (tests make it tiny).
  WindowRows(CaptureRows* capture, const builder::Window& window, OrderedBatches* out, size_t batch_bytes = 0);
  Status Begin(const builder::TraceHeader& header) override;
  Status AddSlice(const builder::Slice& slice) override;
  Status AddCounter(const builder::CounterPoint& point) override;
  // Writes what waits and hands over the window's last batch.
  Status End() override;
  // The export stopped (a write or another capture failed) while this
  // window was handing over a batch: the errors this sink returned since
  // say only that, and the export's own error is the one to report.
  bool stopped() const { return stopped_; }

 private:
  struct Launch {
    int64_t row, tid, start, end;  // row: in the window's api_calls
  };
  struct WaitingOp {
    TableId table;
    size_t cell;  // launch_id's cell in batch_; launch_tid, _start_ns, _end_ns follow
  };
  // A range's row, all but its depth and parent: 56 bytes (a Slice copy
  // was ~150).
  struct PendingRange {
    int64_t ts, dur;      // as the slice's (dur < 0: an instant)
    union {
      int64_t i;
      double d;
    } payload;
    uint32_t name, domain;  // local strings; domain 0: none
    uint32_t track;         // the thread's (or start/end) track, not a lane
    uint32_t category;      // 0: none
    uint32_t tid, end_tid;  // valid per flags
    uint32_t seq;           // arrival, to keep the sort stable
    uint8_t flags;
  };
  enum : uint8_t {
    kInstant = 1,
    kStartEndRange = 2,
    kHasTid = 4,
    kHasEndTid = 8,
    kIntPayload = 16,
    kRealPayload = 32,
  };
  void AddOp(const builder::Slice& s);
  void AddApi(const builder::Slice& s);
  void AddRange(const builder::Slice& s);
  void WriteRanges();
  // device_rows.cc: per-stream annotation spans, CUPTI overheads, CUDA event records.
  void AddDeviceSpan(const builder::Slice& s);
  void StreamOf(uint32_t track, RowWriter& row) const;  // device, stream cells
  // The OS threads that started and ended a start/end range (its trace
  // slice's External id and name find it in the capture); -1 where unknown.
  std::pair<int64_t, int64_t> StartEndThreads(uint64_t external_id, std::string_view name) const;
  int64_t ThreadOf(uint32_t track) const;  // the OS tid, or -1
  // Row `row` (of this batch) of `table`, counted from the window's first.
  int64_t WindowRow(TableId table, size_t row) const {
    return static_cast<int64_t>(before_[static_cast<size_t>(table)] + row);
  }
  // Hands the batch over when it has grown past the bound and no cell of
  // it waits; HandOver: at once (`last`: the window's, no batch follows).
  void MaybeHandOver();
  void HandOver(bool last);
  Status Stopped() const;

  CaptureRows& c_;
  builder::Window window_;
  OrderedBatches& out_;
  size_t batch_bytes_;
  RowBatch batch_;
  std::array<size_t, kTableCount> before_{};  // rows of each table in the window's earlier batches
  bool stopped_ = false;
  std::vector<builder::Track> tracks_;
  std::vector<builder::Process> processes_;
  // Launch flows by id: a launch whose op is still to come, and an op whose
  // launch is (each flow has one op and one launch, both in the window).
  std::unordered_map<uint64_t, Launch> launches_;
  std::unordered_map<uint64_t, WaitingOp> waiting_;
  // Of one track; a deque: a thread's ranges run to millions, and a vector
  // grown to hold them held half as much again while it moved.
  std::deque<PendingRange> ranges_;
  // Slice::shared_id -> local stack: ids live kSharedIdsLive at a time
  // (trace_model.h), so a slot per id modulo that serves.
  struct StackRun {
    uint32_t shared_id = 0, stack = 0;
  };
  std::vector<StackRun> stack_of_run_;
  std::unordered_map<uint32_t, CaptureRows::KernelNames> names_of_id_;  // Slice::name_id
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_
