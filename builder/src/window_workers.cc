#include "window_workers.h"

#include "counting_sink.h"
#include "timed_sink.h"
#include "gpucap/builder/work_queue.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

namespace gpucap::builder {

WorkerPlan PlanWorkers(int threads, size_t windows) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  WorkerPlan plan;
  plan.workers = static_cast<int>(std::clamp<size_t>(windows, 1, static_cast<size_t>(threads)));
  plan.threads_each = std::max(1, threads / plan.workers);
  plan.threads = threads;
  return plan;
}

namespace {

// What the workers share: the next window to take, the results by window,
// and the progress callback, which is called under the lock.
class WindowQueue {
 public:
  WindowQueue(const CaptureIndex& index, const BuildOptions& options, const std::vector<Window>& windows,
              bool one_window, const BuildProgressFn& progress)
      : index_(index), options_(options), windows_(windows), one_(one_window), reports_(windows.size()),
        status_(windows.size(), Status::Ok()), progress_(progress), records_(windows.size()) {
    for (const Window& w : windows) last_index_ = std::max(last_index_, w.index);
    if (!progress_) return;
    for (size_t i = 0; i < windows.size(); ++i) {
      for (size_t c : index.ChunksOverlapping(windows[i].start_ns, windows[i].end_ns)) {
        records_[i] += index.capture().chunks[c].info.record_count;
      }
      records_left_ += records_[i];
    }
  }

  // One worker: builds windows until none is left or one failed.
  void Work(int worker, const BuildOptions& worker_options, std::map<size_t, Builder::ChunkDecode>* decodes) {
    Builder builder(index_, worker_options);
    while (true) {
      size_t i = next_.fetch_add(1);
      if (i >= windows_.size() || failed_.load()) break;
      Started(i);
      reports_[i].times.worker = worker;
      reports_[i].times.start_ns = BuildClockNs();
      status_[i] = BuildOne(&builder, worker_options, i);
      reports_[i].times.done_ns = BuildClockNs();
      if (!status_[i].ok()) failed_.store(true);
      Finished(i);
    }
    for (const auto& [chunk, d] : builder.chunk_decodes()) {
      Builder::ChunkDecode& mine = (*decodes)[chunk];
      if ((mine.families | d.families) == d.families) mine = d;
    }
  }

  Status Collect(BuildReport* report) {
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (!status_[i].ok()) return status_[i];
      if (i >= next_.load()) break;  // never taken (a worker could not start)
      report->chunks_decoded += reports_[i].chunks_decoded;
      report->peak_table_bytes = std::max(report->peak_table_bytes, reports_[i].table_bytes);
      report->windows.push_back(std::move(reports_[i]));
    }
    return Status::Ok();
  }

 private:
  Status BuildOne(Builder* builder, const BuildOptions& o, size_t i) {
    const Window& w = windows_[i];
    WindowReport& wr = reports_[i];
    wr.path = WindowOutputPath(options_.output, w, one_, last_index_);
    auto out = OpenOutput(wr.path, o.output_options);
    if (!out.ok()) return out.status();
    std::unique_ptr<TraceSink> sink = MakeRenderer(o.format, std::move(out).value());
    if (o.join.trace_name.empty()) {
      size_t slash = wr.path.find_last_of('/');
      builder->set_trace_name(slash == std::string::npos ? wr.path : wr.path.substr(slash + 1));
    }
    TraceSink* into = sink.get();
    std::unique_ptr<TimedSink> timed;
    if (o.phase_times) {
      timed = std::make_unique<TimedSink>(into, &wr.times);
      into = timed.get();
    }
    if (!progress_) return builder->BuildWindow(w, into, &wr);
    CountingSink counted(into, &events_, [this] { Tick(/*force=*/false); });
    return builder->BuildWindow(w, &counted, &wr);
  }

  void Started(size_t i) {
    if (!options_.on_window) return;
    std::lock_guard<std::mutex> lock(mu_);
    options_.on_window(windows_[i], finished_, windows_.size());
  }
  void Finished(size_t i) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_++;
      records_left_ -= records_[i];
      if (status_[i].ok()) {
        records_done_ += records_[i];
        events_done_ += reports_[i].join.slices + 2 * reports_[i].join.flows + reports_[i].join.counters;
      }
    }
    Tick(/*force=*/true);
  }

  // Tells progress_ where the workers are; skipped, unless forced, while
  // another worker is telling it.
  void Tick(bool force) {
    if (!progress_) return;
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    if (force) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return;
    }
    BuildProgress p;
    p.events = events_.load(std::memory_order_relaxed);
    double per_record = records_done_ > 0 && events_done_ > 0 ? double(events_done_) / records_done_ : 2.0;
    p.events_expected = events_done_ + static_cast<uint64_t>(per_record * records_left_);
    p.events_expected = std::max(p.events_expected, p.events);
    p.windows_done = finished_;
    p.windows = windows_.size();
    progress_(p);
  }

  const CaptureIndex& index_;
  const BuildOptions& options_;
  const std::vector<Window>& windows_;
  bool one_;
  uint32_t last_index_ = 0;  // the largest window index written (file names' width)
  std::vector<WindowReport> reports_;
  std::vector<Status> status_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  size_t finished_ = 0;
  // Progress: events written, records of each window's chunks (the estimate's
  // base), and of windows done and not yet done; under mu_ but events_.
  const BuildProgressFn& progress_;
  std::atomic<uint64_t> events_{0};
  std::vector<uint64_t> records_;
  uint64_t records_left_ = 0, records_done_ = 0, events_done_ = 0;
};

}  // namespace

Status BuildWindowFiles(const CaptureIndex& index, const BuildOptions& options, const std::vector<Window>& windows,
                        bool one_window, const BuildProgressFn& progress, BuildReport* report) {
  WorkerPlan plan = PlanWorkers(options.threads, windows.size());
  // The threads in all: the workers, and their decoding and gzip members.
  std::unique_ptr<WorkQueue> own;
  WorkQueue* threads = options.queue;
  if (threads == nullptr) {
    own = std::make_unique<WorkQueue>(plan.threads);
    threads = own.get();
  }
  BuildOptions each = options;
  each.queue = threads;
  each.output_options.queue = threads;
  BlockPool pieces;  // every window's pieces (join.h)
  if (each.join.blocks == nullptr) each.join.blocks = &pieces;
  // The lookback and lookahead decode chunks in batches of this many.
  each.threads = plan.threads_each;
  WindowQueue queue(index, options, windows, one_window, progress);
  std::vector<std::map<size_t, Builder::ChunkDecode>> decodes(plan.workers);
  report->times.workers_ns = BuildClockNs();
  GPUCAP_RETURN_IF_ERROR(threads->Each(plan.workers, [&](int t) {
    queue.Work(t, each, &decodes[t]);
    return Status::Ok();
  }));
  report->times.workers_done_ns = BuildClockNs();
  GPUCAP_RETURN_IF_ERROR(queue.Collect(report));
  // Each chunk's stats once, from its fullest decode by any worker.
  std::map<size_t, Builder::ChunkDecode> merged;
  for (const auto& worker : decodes) {
    for (const auto& [chunk, d] : worker) {
      Builder::ChunkDecode& m = merged[chunk];
      if ((m.families | d.families) == d.families) m = d;
    }
  }
  DecodeStats stats;
  for (const auto& [chunk, d] : merged) stats.Merge(d.stats);
  for (const std::string& line : index.decoder().Describe(stats)) {
    if (line != index.decoder().version_warning()) report->warnings.push_back(line);
  }
  return Status::Ok();
}

}  // namespace gpucap::builder
