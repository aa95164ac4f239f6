// One window's join, as rows: a TraceSink that takes the slices and counter
// points the join hands a renderer and files them into the schema's tables,
// so the database holds exactly what the window's trace shows (same ops,
// times, names and annotations) plus the join's results as columns: the
// window, the launching call (through the launch flow), the annotation stack.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_
#define GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucap/builder/builder.h"
#include "row_batch.h"

namespace gpucap::tools::sqlite {

// What a capture's windows share: its interned strings and stacks, and its
// kernels' mangled and short names.
struct CaptureRows {
  CaptureRows(const builder::CaptureIndex& index, uint32_t capture, int32_t rank)
      : index(index), capture(capture), rank(rank) {}
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
  WindowRows(CaptureRows* capture, const builder::Window& window, RowBatch* out);
  Status Begin(const builder::TraceHeader& header) override;
  Status AddSlice(const builder::Slice& slice) override;
  Status AddCounter(const builder::CounterPoint& point) override;
  Status End() override;

 private:
  struct Launch {
    int64_t row, tid, start, end;
  };
  struct PendingLaunch {
    TableId table;
    size_t cell;  // launch_id's cell; launch_tid, _start_ns, _end_ns follow
    uint64_t flow;
  };
  struct PendingRange {
    builder::Slice slice;  // args emptied
    int64_t tid = -1;      // -1: no OS thread (a start/end range)
    int64_t end_tid = -1;  // a start/end range's ending thread; -1: not closed, or not one
    uint32_t track = 0, domain = 0, category = 0;
    bool instant = false, start_end = false;
    Cell payload;
  };
  void AddOp(const builder::Slice& s);
  void AddApi(const builder::Slice& s);
  void AddRange(const builder::Slice& s);
  void WriteRanges();
  // device_rows.cc: per-stream annotation spans, CUPTI overheads, CUDA event records.
  void AddDeviceSpan(const builder::Slice& s);
  void StreamOf(uint32_t track, RowWriter& row) const;  // device, stream cells
  // A start/end range's opening thread, from its slice's External id; -1 when unknown.
  // The OS threads that started and ended a start/end range (its trace
  // slice's External id and name find it in the capture); -1 where unknown.
  std::pair<int64_t, int64_t> StartEndThreads(uint64_t external_id, std::string_view name) const;
  int64_t ThreadOf(uint32_t track) const;  // the OS tid, or -1

  CaptureRows& c_;
  builder::Window window_;
  RowBatch& out_;
  std::vector<builder::Track> tracks_;
  std::vector<builder::Process> processes_;
  std::unordered_map<uint64_t, Launch> launches_;  // by launch flow id
  std::vector<PendingLaunch> pending_;
  std::vector<PendingRange> ranges_;
  std::unordered_map<uint32_t, uint32_t> stack_of_run_;  // Slice::shared_id -> local stack
  std::unordered_map<uint32_t, CaptureRows::KernelNames> names_of_id_;  // Slice::name_id
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_WINDOW_ROWS_H_
