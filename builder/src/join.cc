#include "window_join.h"

#include <deque>
#include <mutex>

#include "gpucap/builder/work_queue.h"

namespace gpucap::builder {

std::vector<std::pair<std::string, uint64_t>> JoinStats::Named() const {
  std::vector<std::pair<std::string, uint64_t>> named = {
      {"gpu ops", gpu_ops},
      {"api calls", api_calls},
      {"ranges", ranges},
      {"flows", flows},
      {"gpu ops without launch record", ops_without_launch},
      {"gpu ops launched in another window", launches_in_other_windows},
      {"gpu ops without timestamps", ops_without_timestamps},
      {"gpu ops without end", ops_without_end},
      {"graph ops", graph_ops},
      {"graph ops without capture-time node", graph_ops_without_node},
      {"annotated gpu ops", annotated_ops},
      {"overflow lanes", overflow_lanes},
  };
  // Only captures whose recorder timed host nodes have any: older traces keep their header.
  if (host_node_runs != 0) named.emplace_back("host node runs", host_node_runs);
  if (graph_ops_with_capture_stream != 0) {
    named.emplace_back("graph ops with capture stream", graph_ops_with_capture_stream);
    named.emplace_back("graph ops on capture-stream lanes", graph_ops_on_capture_lanes);
  }
  return named;
}

JoinWorkspace::JoinWorkspace() : tables_(std::make_unique<Tables>()) {}
JoinWorkspace::~JoinWorkspace() = default;

namespace join_internal {

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
  stats_.overflow_lanes += SortAndPackSlices(&refs_, &tracks_, &t_.refs_scratch);
  if (give_back) std::vector<uint32_t>().swap(t_.refs_scratch);  // 4 bytes a slice, kept for no next window this size

  // Tracks get the numbers of the order the trace lists them in. Slices are
  // grouped by track already (lanes aside): they are streamed by runs of one
  // track, the runs ordered by the track's new number, rather than moved.
  TrackRegistry::Ordered order = tracks_.Order();
  const std::vector<uint32_t>& track_id = order.track_id;
  std::vector<Segment> segments;
  for (size_t i = 0; i < refs_.size();) {
    size_t j = i + 1;
    while (j < refs_.size() && refs_[j].track == refs_[i].track) ++j;
    segments.push_back({track_id[refs_[i].track], i, j});
    i = j;
  }
  // Stable: a lane's segments, spread over its parent's, stay in time order.
  std::stable_sort(segments.begin(), segments.end(),
                   [](const Segment& a, const Segment& b) { return a.track < b.track; });
  // Sorted once, after the tracks have their final numbers.
  for (Counter& c : counters_) c.track = track_id[c.track];
  std::stable_sort(counters_.begin(), counters_.end(), [](const Counter& a, const Counter& b) {
    return a.track != b.track ? a.track < b.track : a.ts < b.ts;
  });
  stats_.slices = refs_.size();

  if (!kernels_.status().ok()) return kernels_.status();  // met by ReportUse
  TraceHeader header = MakeHeader(decode);
  header.processes = std::move(order.processes);
  header.tracks = std::move(order.tracks);
  GPUCAP_RETURN_IF_ERROR(sink->Begin(header));
  // A large window's slices are described and rendered in pieces, on the
  // build's threads (StreamPieces); the rest, one by one here.
  // Only when describing only reads: a window whose rows are had again
  // (the 20M-event `all`) rendered in pieces on its own thread measured 33%
  // slower on 16 cores (each piece's caches start cold).
  bool streamed = false;
  bool apart = use_ == nullptr && kernels_.AllWhole() && api_rows_.AllWhole();
  if (apart && refs_.size() > kSlicesPerPiece) GPUCAP_RETURN_IF_ERROR(StreamPieces(segments, sink, &streamed));
  for (size_t n = 0; !streamed && n < segments.size(); ++n) {
    const Segment& g = segments[n];
    for (size_t i = g.begin; i < g.end; ++i) {
      Slice s;
      Describe(refs_[i], &s);
      // A chunk found damaged when decoded again: the slice is not written,
      // nor the window (its file is committed only at End).
      if (!kernels_.status().ok()) [[unlikely]] return kernels_.status();
      if (!api_rows_.status().ok()) [[unlikely]] return api_rows_.status();
      s.track = g.track;
      GPUCAP_RETURN_IF_ERROR(sink->AddSlice(s));
    }
  }
  stats_.chunks_decoded_again += kernels_.decodes() + api_rows_.decodes();
  for (const Counter& c : counters_) {
    GPUCAP_RETURN_IF_ERROR(sink->AddCounter(CounterPoint{c.track, c.ts, c.value}));
  }
  return sink->End();
}

Status WindowJoin::StreamPieces(const std::vector<Segment>& segments, TraceSink* sink, bool* streamed) {
  // Where each piece starts: the first slice, in stream order, at least
  // kSlicesPerPiece after the last start where every earlier slice of its
  // track has ended (or a track begins), so a piece holds whole slices of
  // each track (a pftrace piece's sequences close what they open). Counted
  // on the slices alone: the trace, and where its gzip members end, is the
  // same at every thread count.
  struct Start {
    size_t segment, ref;
    bool operator==(const Start&) const = default;
  };
  std::vector<Start> starts;
  size_t since = kSlicesPerPiece;
  int64_t track_open_until = 0;
  for (size_t g = 0; g < segments.size(); ++g) {
    bool new_track = g == 0 || segments[g].track != segments[g - 1].track;
    for (size_t i = segments[g].begin; i < segments[g].end; ++i) {
      const SliceRef& r = refs_[i];
      bool track_starts = new_track && i == segments[g].begin;
      if (since >= kSlicesPerPiece && (track_starts || r.ts >= track_open_until)) {
        starts.push_back({g, i});
        since = 0;
      }
      int64_t end = r.ts + std::max<int64_t>(r.dur, 0);
      track_open_until = track_starts ? end : std::max(track_open_until, end);
      ++since;
    }
  }
  const Start kDone{segments.size(), 0};
  // A describer and the renderer of what it describes, kept for the next
  // piece so that their caches stay warm (the float and shared-argument
  // texts, the runs of shared arguments): a renderer's caches are keyed by
  // its describer's ids, so the two stay together. As many as pieces may
  // be in flight, made here (NewPiece is called on this thread), taken and
  // given back by the pieces' tasks.
  struct PieceWorker {
    explicit PieceWorker(WindowJoin& join) : describer(join) {}
    WindowJoin describer;
    RenderedPiece rendered;
    std::unique_ptr<TraceSink> renderer;
  };
  BlockPool own_blocks;
  BlockPool& blocks = options_.blocks != nullptr ? *options_.blocks : own_blocks;
  std::vector<std::unique_ptr<PieceWorker>> workers;
  std::vector<PieceWorker*> idle;
  std::mutex idle_mu;
  for (size_t n = 0; n < std::min(starts.size(), kPiecesInFlight + 1); ++n) {
    auto worker = std::make_unique<PieceWorker>(*this);
    worker->rendered.pool = &blocks;
    worker->renderer = sink->NewPiece(&worker->rendered);
    if (worker->renderer == nullptr) {
      if (n == 0) return Status::Ok();  // a renderer without pieces: one by one
      return Status::Internal("the renderer stopped giving pieces");
    }
    idle.push_back(worker.get());
    workers.push_back(std::move(worker));
  }
  struct InFlight {
    RenderedPiece out;
    Status status = Status::Ok();  // rendered on this thread (no queue)
  };
  // Describes piece p with an idle worker, on whichever thread takes it,
  // and leaves its bytes in `out`. A worker is always idle: no more pieces
  // are in flight than there are workers.
  auto render = [&](size_t p, RenderedPiece* out) -> Status {
    PieceWorker* worker;
    {
      std::lock_guard<std::mutex> lock(idle_mu);
      worker = idle.back();
      idle.pop_back();
    }
    worker->rendered.index = static_cast<uint32_t>(p);
    Status status = Status::Ok();
    const Start end = p + 1 < starts.size() ? starts[p + 1] : kDone;
    size_t g = starts[p].segment, i = starts[p].ref;
    while (status.ok() && Start{g, i} != end) {
      Slice s;
      worker->describer.Describe(refs_[i], &s);
      if (!kernels_.status().ok()) [[unlikely]] status = kernels_.status();
      if (!api_rows_.status().ok()) [[unlikely]] status = api_rows_.status();
      s.track = segments[g].track;
      if (status.ok()) status = worker->renderer->AddSlice(s);
      if (++i == segments[g].end) {
        i = ++g < segments.size() ? segments[g].begin : 0;
      }
    }
    if (status.ok()) status = worker->renderer->End();
    out->blocks.swap(worker->rendered.blocks);  // out's were none
    std::lock_guard<std::mutex> lock(idle_mu);
    idle.push_back(worker);
    return status;
  };
  std::deque<std::unique_ptr<InFlight>> flight;
  // Declared last: destroyed first, waiting for pieces still rendering.
  std::unique_ptr<WorkQueue::Ordered> tasks;
  if (options_.queue != nullptr) tasks = std::make_unique<WorkQueue::Ordered>(options_.queue);
  auto emit_oldest = [&]() -> Status {
    InFlight& f = *flight.front();
    Status s = tasks != nullptr ? tasks->TakeOldest() : f.status;
    if (s.ok()) s = sink->AddPiece(&f.out);
    flight.pop_front();
    return s;
  };
  for (size_t p = 0; p < starts.size(); ++p) {
    auto f = std::make_unique<InFlight>();
    f->out.pool = &blocks;
    RenderedPiece* out = &f->out;
    if (tasks != nullptr) {
      tasks->Submit([&render, p, out] { return render(p, out); });
    } else {
      f->status = render(p, out);
    }
    flight.push_back(std::move(f));
    while (flight.size() > kPiecesInFlight) GPUCAP_RETURN_IF_ERROR(emit_oldest());
  }
  while (!flight.empty()) GPUCAP_RETURN_IF_ERROR(emit_oldest());
  *streamed = true;
  return Status::Ok();
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
