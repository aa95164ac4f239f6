#include "piece_stream.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <vector>

namespace gpucap::builder {
namespace {

// Where each piece starts: the first slice, in stream order, at least
// kSlicesPerPiece after the last start where every earlier slice of its
// track has ended (or a track begins), so a piece holds whole slices of each
// track (a pftrace piece's sequences close what they open). Counted on the
// slices alone: the trace, and where its gzip members end, is the same at
// every thread count.
struct Start {
  size_t run, ref;
  bool operator==(const Start&) const = default;
};

std::vector<Start> PieceStarts(std::span<const SliceRef> refs, std::span<const TrackRun> runs) {
  std::vector<Start> starts;
  size_t since = kSlicesPerPiece;
  int64_t track_open_until = 0;
  for (size_t g = 0; g < runs.size(); ++g) {
    bool new_track = g == 0 || runs[g].track != runs[g - 1].track;
    for (size_t i = runs[g].begin; i < runs[g].end; ++i) {
      const SliceRef& r = refs[i];
      bool track_starts = new_track && i == runs[g].begin;
      if (since >= kSlicesPerPiece && (track_starts || r.ts >= track_open_until)) {
        starts.push_back({g, i});
        since = 0;
      }
      int64_t end = r.ts + std::max<int64_t>(r.dur, 0);
      track_open_until = track_starts ? end : std::max(track_open_until, end);
      ++since;
    }
  }
  return starts;
}

Status OneByOne(std::span<const SliceRef> refs, std::span<const TrackRun> runs, Describer* describer,
                TraceSink* sink) {
  for (const TrackRun& g : runs) {
    for (size_t i = g.begin; i < g.end; ++i) {
      Slice s;
      describer->Describe(refs[i], &s);
      // A chunk found damaged when decoded again: the slice is not written,
      // nor the window (its file is committed only at End).
      if (!describer->status().ok()) [[unlikely]] return describer->status();
      s.track = g.track;
      GPUCAP_RETURN_IF_ERROR(sink->AddSlice(s));
    }
  }
  return Status::Ok();
}

// In pieces; *streamed false (and nothing written) when the sink renders
// no pieces.
Status InPieces(std::span<const SliceRef> refs, std::span<const TrackRun> runs, const PieceStreamOptions& options,
                TraceSink* sink, bool* streamed) {
  const std::vector<Start> starts = PieceStarts(refs, runs);
  const Start kDone{runs.size(), 0};
  // A describer and the renderer of what it describes, kept for the next
  // piece so that their caches stay warm (the float and shared-argument
  // texts, the runs of shared arguments): a renderer's caches are keyed by
  // its describer's ids, so the two stay together. As many as pieces may
  // be in flight, made here (NewPiece is called on this thread), taken and
  // given back by the pieces' tasks.
  struct PieceWorker {
    std::unique_ptr<Describer> describer;
    RenderedPiece rendered;
    std::unique_ptr<TraceSink> renderer;
  };
  BlockPool own_blocks;
  BlockPool& blocks = options.blocks != nullptr ? *options.blocks : own_blocks;
  std::vector<std::unique_ptr<PieceWorker>> workers;
  std::vector<PieceWorker*> idle;
  std::mutex idle_mu;
  for (size_t n = 0; n < std::min(starts.size(), kPiecesInFlight + 1); ++n) {
    auto worker = std::make_unique<PieceWorker>();
    worker->describer = options.new_describer();
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
    size_t g = starts[p].run, i = starts[p].ref;
    while (status.ok() && Start{g, i} != end) {
      Slice s;
      worker->describer->Describe(refs[i], &s);
      if (!worker->describer->status().ok()) [[unlikely]] status = worker->describer->status();
      s.track = runs[g].track;
      if (status.ok()) status = worker->renderer->AddSlice(s);
      if (++i == runs[g].end) {
        i = ++g < runs.size() ? runs[g].begin : 0;
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
  if (options.queue != nullptr) tasks = std::make_unique<WorkQueue::Ordered>(options.queue);
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

}  // namespace

Status StreamSlices(std::span<const SliceRef> refs, std::span<const TrackRun> runs, Describer* describer,
                    const PieceStreamOptions& options, TraceSink* sink) {
  bool streamed = false;
  if (options.new_describer && refs.size() > kSlicesPerPiece) {
    GPUCAP_RETURN_IF_ERROR(InPieces(refs, runs, options, sink, &streamed));
  }
  if (streamed) return Status::Ok();
  return OneByOne(refs, runs, describer, sink);
}

}  // namespace gpucap::builder
