#include "gpucap/builder/join.h"

#include <memory>

#include "piece_stream.h"
#include "slice_describer.h"
#include "window_join.h"

namespace gpucap::builder {

JoinWorkspace::JoinWorkspace() : tables_(std::make_unique<Tables>()) {}
JoinWorkspace::~JoinWorkspace() = default;

namespace join_internal {
namespace {

// A describer of its own rows for a piece of the window on another thread:
// the join's rows are read by the join's describer alone.
class PieceDescriber final : public Describer {
 public:
  PieceDescriber(const JoinResult& result, const RowSource& source)
      : rows_(result.parts, source), describer_(result, rows_, nullptr) {}
  void Describe(const SliceRef& ref, Slice* slice) override { describer_.Describe(ref, slice); }
  const Status& status() const override { return describer_.status(); }

 private:
  WindowRows rows_;
  SliceDescriber describer_;
};

}  // namespace

Status WindowJoin::Run(const DecodeStats& decode, TraceSink* sink) {
  IndexLaunches();
  CollectOps();
  JoinOps();
  LinkFlows();
  // A window too large to hold its rows gives them back as soon as it can
  // (rows_again.h): the kernels once its ops are joined, the API calls once
  // its slices are collected; the slices read them again as they are written.
  bool give_back = kernels_.CanRelease();
  if (give_back) kernels_.Release();
  CollectAnnotationSpans();
  CollectRefs();
  CollectMarkers();
  if (use_ != nullptr) ReportUse();
  // The sort reads only the refs: the API rows go before it, so they and its
  // permutation are never held at once (the 20M-event window's peak).
  if (give_back) api_rows_.Release();
  stats_.overflow_lanes += SortAndPackSlices(&r_.refs, &r_.tracks, &t_.refs_scratch);
  if (give_back) std::vector<uint32_t>().swap(t_.refs_scratch);  // 4 bytes a slice, kept for no next window this size

  // Tracks get the numbers of the order the trace lists them in. Slices are
  // grouped by track already (lanes aside): they are streamed by runs of one
  // track, the runs ordered by the track's new number, rather than moved.
  TrackRegistry::Ordered order = r_.tracks.Order();
  const std::vector<uint32_t>& track_id = order.track_id;
  std::vector<TrackRun> runs;
  for (size_t i = 0; i < r_.refs.size();) {
    size_t j = i + 1;
    while (j < r_.refs.size() && r_.refs[j].track == r_.refs[i].track) ++j;
    runs.push_back({track_id[r_.refs[i].track], i, j});
    i = j;
  }
  // Stable: a lane's runs, spread over its parent's, stay in time order.
  std::stable_sort(runs.begin(), runs.end(), [](const TrackRun& a, const TrackRun& b) { return a.track < b.track; });
  // Sorted once, after the tracks have their final numbers.
  for (Counter& c : r_.counters) c.track = track_id[c.track];
  std::stable_sort(r_.counters.begin(), r_.counters.end(), [](const Counter& a, const Counter& b) {
    return a.track != b.track ? a.track < b.track : a.ts < b.ts;
  });
  stats_.slices = r_.refs.size();

  if (!kernels_.status().ok()) return kernels_.status();  // met by ReportUse
  TraceHeader header = MakeHeader(decode);
  header.processes = std::move(order.processes);
  header.tracks = std::move(order.tracks);
  GPUCAP_RETURN_IF_ERROR(sink->Begin(header));
  // From here on the result is only read. A large window's slices may be
  // described and rendered in pieces, on the build's threads
  // (piece_stream.h), but only when describing only reads: not when it
  // reports what it uses, nor when its rows are had again (the 20M-event
  // `all`, rendered in pieces on its own thread, measured 33% slower on 16
  // cores: each piece's caches start cold).
  SliceDescriber describer(r_, window_rows_, use_);
  PieceStreamOptions pieces;
  if (use_ == nullptr && kernels_.AllWhole() && api_rows_.AllWhole()) {
    pieces.new_describer = [this] { return std::make_unique<PieceDescriber>(r_, rows_); };
  }
  pieces.queue = options_.queue;
  pieces.blocks = options_.blocks;
  GPUCAP_RETURN_IF_ERROR(StreamSlices(r_.refs, runs, &describer, pieces, sink));
  stats_.chunks_decoded_again += kernels_.decodes() + api_rows_.decodes();
  for (const Counter& c : r_.counters) {
    GPUCAP_RETURN_IF_ERROR(sink->AddCounter(CounterPoint{c.track, c.ts, c.value}));
  }
  return sink->End();
}

}  // namespace join_internal

Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats,
                  JoinWorkspace* workspace, JoinUse* use, const RowSource& rows) {
  if (parts.size() > 0xffff) {
    return Status::InvalidArgument("a window spans more than 65535 chunks; use smaller windows");
  }
  auto steps = index.Steps(options.steps);
  if (!steps.ok()) return steps.status();
  const StepRanges* window_steps = nullptr;
  if (window.range != Window::kNoRange) {
    auto matched = index.Steps(window.pattern);
    if (!matched.ok()) return matched.status();
    window_steps = *matched;
  }
  join_internal::WindowJoin join(index, window, parts, options, stats, &workspace->tables(), use, rows, **steps,
                                 window_steps);
  Status status = join.Run(decode, sink);
  workspace->tables().launch_flows.Release();
  return status;
}

Status JoinWindow(const CaptureIndex& index, const Window& window,
                  std::span<const ActivityTables* const> parts, const DecodeStats& decode,
                  const JoinOptions& options, TraceSink* sink, JoinStats* stats) {
  JoinWorkspace workspace;
  return JoinWindow(index, window, parts, decode, options, sink, stats, &workspace);
}

}  // namespace gpucap::builder
